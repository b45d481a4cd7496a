package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.HandlerFunc, url string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", url, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h(w, r)
	return w
}

// TestServesFiles: the page and the assets with their types (a module that
// is not text/javascript does not run), gzip when accepted and the same
// bytes once unzipped, a 304 for a known ETag, the CSP on every answer, and
// 404 for what is not there, dot segments included.
func TestServesFiles(t *testing.T) {
	for _, c := range []struct {
		h     http.HandlerFunc
		url   string
		file  string
		ctype string
	}{
		{Index, "/", "index.html", "text/html; charset=utf-8"},
		{Index, "/unified-console.html", "index.html", "text/html; charset=utf-8"},
		{Assets, "/console/app.js", "app.js", "text/javascript; charset=utf-8"},
		{Assets, "/console/lib/api.js", "lib/api.js", "text/javascript; charset=utf-8"},
		{Assets, "/console/style.css", "style.css", "text/css; charset=utf-8"},
		{Assets, "/console/favicon.svg", "favicon.svg", "image/svg+xml"},
	} {
		raw, ok := Read(c.file)
		if !ok {
			t.Fatalf("%s is not embedded", c.file)
		}
		plain := get(t, c.h, c.url, nil)
		if plain.Code != 200 || plain.Header().Get("Content-Type") != c.ctype || !bytes.Equal(plain.Body.Bytes(), raw) ||
			plain.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: %d %q encoding %q, %d bytes; want 200 %q with the file's %d bytes",
				c.url, plain.Code, plain.Header().Get("Content-Type"), plain.Header().Get("Content-Encoding"), plain.Body.Len(), c.ctype, len(raw))
		}
		if csp := plain.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", c.url, csp)
		}
		if plain.Header().Get("Cache-Control") != "no-cache" || plain.Header().Get("ETag") == "" {
			t.Errorf("%s: Cache-Control %q ETag %q", c.url, plain.Header().Get("Cache-Control"), plain.Header().Get("ETag"))
		}
		zipped := get(t, c.h, c.url, map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
		if len(raw) > 1000 { // tiny files are served as they are
			if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= len(raw) {
				t.Errorf("%s: gzip accepted, answered encoding %q with %d bytes", c.url, zipped.Header().Get("Content-Encoding"), zipped.Body.Len())
			} else {
				zr, err := gzip.NewReader(zipped.Body)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(zr)
				if !bytes.Equal(got, raw) {
					t.Errorf("%s: the gzip body unzips to other bytes", c.url)
				}
			}
			if zipped.Header().Get("ETag") == plain.Header().Get("ETag") {
				t.Errorf("%s: the gzip and plain bodies share the ETag %s", c.url, plain.Header().Get("ETag"))
			}
		}
		if again := get(t, c.h, c.url, map[string]string{"If-None-Match": plain.Header().Get("ETag")}); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
			t.Errorf("%s: If-None-Match its ETag: %d with %d bytes, want 304", c.url, again.Code, again.Body.Len())
		}
		if q0 := get(t, c.h, c.url, map[string]string{"Accept-Encoding": "gzip;q=0"}); q0.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: gzip;q=0 still got gzip", c.url)
		}
	}
	for _, url := range []string{"/console/", "/console/nope.js", "/console/../console.go", "/console/lib/../../console.go", "/console/lib/"} {
		if w := get(t, Assets, url, nil); w.Code != 404 || !strings.Contains(w.Body.String(), `"error"`) {
			t.Errorf("%s: %d %s, want a JSON 404", url, w.Code, w.Body.String())
		}
	}
}

var (
	htmlRefRe   = regexp.MustCompile(`(?:src|href)="(/console/[^"]+)"`)
	jsImportRe  = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'`)
	firstRoutes = []string{"views/home.js"} // the default route, #/home, loads with the page
)

// firstLoad lists what a browser fetches to show the console's first page:
// index.html, what it references, the modules those import (transitively)
// and the default view's.
func firstLoad(t *testing.T) []string {
	t.Helper()
	html, _ := Read("index.html")
	seen := map[string]bool{"index.html": true}
	var queue []string
	for _, m := range htmlRefRe.FindAllStringSubmatch(string(html), -1) {
		queue = append(queue, strings.TrimPrefix(m[1], "/console/"))
	}
	queue = append(queue, firstRoutes...)
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if seen[f] {
			continue
		}
		seen[f] = true
		src, ok := Read(f)
		if !ok {
			t.Fatalf("the first load needs %s, which is not embedded", f)
		}
		if path.Ext(f) != ".js" {
			continue
		}
		for _, m := range jsImportRe.FindAllStringSubmatch(string(src), -1) {
			spec := m[1] + m[2]
			queue = append(queue, path.Join(path.Dir(f), spec))
		}
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	return out
}

// TestFirstLoadUnder300KB: the budget, the page and everything it
// loads first, gzip-compressed as served.
func TestFirstLoadUnder300KB(t *testing.T) {
	files := firstLoad(t)
	for _, want := range []string{"index.html", "app.js", "style.css", "lib/api.js", "lib/dom.js", "views/home.js"} {
		found := false
		for _, f := range files {
			found = found || f == want
		}
		if !found {
			t.Fatalf("the first load %v lacks %s: the import scan is broken", files, want)
		}
	}
	size, ok := Size(files...)
	if !ok {
		t.Fatalf("files %v not all embedded", files)
	}
	all, _ := Size(Names()...)
	t.Logf("first load: %d files, %d bytes compressed; all %d embedded files: %d bytes compressed", len(files), size, len(Names()), all)
	if size > 300<<10 {
		t.Fatalf("the first load is %d bytes compressed, over the 300 KB budget: %v", size, files)
	}
}
