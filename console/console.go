// Package console is Strata's web console: the HTML, JavaScript and CSS under
// ui/, embedded in the binary as written (no build step, no front-end
// dependency) and served by the router at /, /unified-console.html (Druid's
// path) and /console/. The files are static: everything the console shows
// comes from the public API, called by the browser with the user's own
// credentials, so serving them needs none.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

//go:embed ui
var files embed.FS

// AssetPrefix is the path the assets are served under.
const AssetPrefix = "/console/"

// csp allows the console's own files and API calls only: no inline script
// or style, no other origin, no framing (clickjacking of the login form).
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one file, held as written and gzip-compressed once.
type asset struct {
	raw, gz     []byte
	contentType string
	etag        string // of the raw bytes; the gzip variant's adds "-gz"
}

var (
	loadOnce sync.Once
	assets   map[string]*asset // by path below ui/, "index.html", "lib/api.js", ...
)

// load reads and compresses every file once, the first time one is asked for.
func load() {
	assets = map[string]*asset{}
	err := fs.WalkDir(files, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		a := &asset{raw: raw, contentType: contentType(p), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(raw)
		zw.Close()
		// Tiny files can grow when compressed: serve them as they are.
		if buf.Len() < len(raw) {
			a.gz = buf.Bytes()
		}
		assets[strings.TrimPrefix(p, "ui/")] = a
		return nil
	})
	if err != nil {
		// The files are compiled in: failing to read them is a broken build.
		panic("console: reading the embedded files: " + err.Error())
	}
}

// contentType names a file's type from its extension; JavaScript modules
// must be text/javascript or the browser refuses to run them.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Index serves the console's page (at / and /unified-console.html).
func Index(w http.ResponseWriter, r *http.Request) { serve(w, r, "index.html") }

// Assets serves the files under AssetPrefix.
func Assets(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, AssetPrefix)
	// path.Clean keeps the lookup inside ui/: "../x" cleans to a name the
	// map does not hold.
	if name == "" || path.Clean("/"+name) != "/"+name {
		notFound(w, r)
		return
	}
	serve(w, r, name)
}

// Size is the gzip-compressed size of the named files (what a browser that
// accepts gzip downloads), and whether all exist.
func Size(names ...string) (int, bool) {
	loadOnce.Do(load)
	total := 0
	for _, n := range names {
		a := assets[n]
		if a == nil {
			return total, false
		}
		if a.gz != nil {
			total += len(a.gz)
		} else {
			total += len(a.raw)
		}
	}
	return total, true
}

// Names lists the embedded files (below ui/).
func Names() []string {
	loadOnce.Do(load)
	out := make([]string, 0, len(assets))
	for n := range assets {
		out = append(out, n)
	}
	return out
}

// Read returns an embedded file as written.
func Read(name string) ([]byte, bool) {
	loadOnce.Do(load)
	a := assets[name]
	if a == nil {
		return nil, false
	}
	return a.raw, true
}

func notFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"error":"no such console file"}` + "\n"))
}

func serve(w http.ResponseWriter, r *http.Request, name string) {
	loadOnce.Do(load)
	a := assets[name]
	if a == nil {
		notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	// The file names carry no version, so the browser revalidates every
	// time; the ETag makes that a 304 without a body.
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	body, etag := a.raw, a.etag
	if a.gz != nil && acceptsGzip(r) {
		body, etag = a.gz, strings.TrimSuffix(a.etag, `"`)+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	h.Set("Content-Type", a.contentType)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// ServeContent would redo ETag handling and sniff; the body is ready.
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// acceptsGzip: the Accept-Encoding header lists gzip without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") || strings.TrimSpace(name) == "*" {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/"))
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
