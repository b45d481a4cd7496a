package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withPolicy makes p the process's policy for the test.
func withPolicy(t *testing.T, p *Policy) {
	t.Helper()
	SetPolicy(p)
	t.Cleanup(func() { SetPolicy(nil) })
}

// readSource parses src under the active policy and reads every split to the
// end, returning the bytes read or the first error (parse, list or open).
func readSource(t *testing.T, src string) (string, error) {
	t.Helper()
	s, err := ParseSource([]byte(src))
	if err != nil {
		return "", err
	}
	splits, err := s.Splits(context.Background())
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, sp := range splits {
		rc, err := sp.open(context.Background())
		if err != nil {
			return out.String(), err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		out.Write(b)
		if err != nil {
			return out.String(), err
		}
	}
	return out.String(), nil
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLocalPolicyEscapes tries every way out of the allowed directory a
// local input source has: each must be refused with ErrNotAllowed and
// nothing of the secret read, whether it comes through files or baseDir.
func TestLocalPolicyEscapes(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.json")
	write(t, secret, `{"password":"hunter2"}`+"\n")
	write(t, filepath.Join(allowed, "ok.json"), `{"ok":1}`+"\n")
	if err := os.Symlink(secret, filepath.Join(allowed, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(allowed, "dirlink")); err != nil {
		t.Fatal(err)
	}
	withPolicy(t, &Policy{LocalBaseDirs: []string{allowed}})
	rel, err := filepath.Rel(mustGetwd(t), secret)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"absolute path outside":       fmt.Sprintf(`{"type":"local","files":[%q]}`, secret),
		"relative path outside":       fmt.Sprintf(`{"type":"local","files":[%q]}`, rel),
		"dot-dot out of the allowed":  fmt.Sprintf(`{"type":"local","files":[%q]}`, allowed+"/../"+filepath.Base(outside)+"/secret.json"),
		"symlinked file pointing out": fmt.Sprintf(`{"type":"local","files":[%q]}`, filepath.Join(allowed, "link.json")),
		"through a symlinked dir":     fmt.Sprintf(`{"type":"local","files":[%q]}`, filepath.Join(allowed, "dirlink", "secret.json")),
		"allowed file, then secret":   fmt.Sprintf(`{"type":"local","files":[%q,%q]}`, filepath.Join(allowed, "ok.json"), secret),
		"baseDir outside":             fmt.Sprintf(`{"type":"local","baseDir":%q,"filter":"*.json"}`, outside),
		"baseDir dot-dot":             fmt.Sprintf(`{"type":"local","baseDir":%q,"filter":"*.json"}`, allowed+"/.."),
		"baseDir symlink pointing out": fmt.Sprintf(`{"type":"local","baseDir":%q,"filter":"*.json"}`,
			filepath.Join(allowed, "dirlink")),
		"baseDir root":      `{"type":"local","baseDir":"/","filter":"secret.json"}`,
		"etc/passwd":        `{"type":"local","files":["/etc/passwd"]}`,
		"proc self environ": `{"type":"local","files":["/proc/self/environ"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := readSource(t, src)
			if !errors.Is(err, ErrNotAllowed) {
				t.Fatalf("want a refusal, got err=%v and %q", err, got)
			}
			if strings.Contains(got, "hunter2") {
				t.Fatalf("the secret was read: %q", got)
			}
			var ie *Error
			if !errors.As(err, &ie) {
				t.Fatalf("the refusal is not an input error (400): %T", err)
			}
			s, perr := ParseSource([]byte(src))
			if perr == nil {
				if err := ActivePolicy().Check(context.Background(), s); !errors.Is(err, ErrNotAllowed) {
					t.Fatalf("Check: want a refusal, got %v", err)
				}
			}
		})
	}
}

// TestLocalPolicyKeepsWhatIsAllowed: files and baseDirs under an allowed
// directory still read, URL-encoded names are names (never decoded into a
// way out), and a baseDir walk skips a symlink leading out.
func TestLocalPolicyKeepsWhatIsAllowed(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.json"), `{"password":"hunter2"}`+"\n")
	write(t, filepath.Join(allowed, "a", "1.json"), `{"n":1}`+"\n")
	write(t, filepath.Join(allowed, "a", "2.json"), `{"n":2}`+"\n")
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(allowed, "a", "3.json")); err != nil {
		t.Fatal(err)
	}
	// A symlink inside pointing inside is fine.
	if err := os.Symlink(filepath.Join(allowed, "a", "1.json"), filepath.Join(allowed, "in.json")); err != nil {
		t.Fatal(err)
	}
	// The allowed directory named through a symlink to it is the directory.
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(allowed, via); err != nil {
		t.Fatal(err)
	}
	withPolicy(t, &Policy{LocalBaseDirs: []string{via}})
	got, err := readSource(t, fmt.Sprintf(`{"type":"local","baseDir":%q,"filter":"*.json"}`, filepath.Join(allowed, "a")))
	if err != nil || got != "{\"n\":1}\n{\"n\":2}\n" {
		t.Fatalf("baseDir: %q, %v", got, err)
	}
	got, err = readSource(t, fmt.Sprintf(`{"type":"local","files":[%q,%q]}`, filepath.Join(via, "a", "2.json"), filepath.Join(allowed, "in.json")))
	if err != nil || got != "{\"n\":2}\n{\"n\":1}\n" {
		t.Fatalf("files: %q, %v", got, err)
	}
	// A filter matches names, never paths: it cannot climb out.
	for _, f := range []string{"../*/secret.json", "../*", "*/../../*"} {
		got, err = readSource(t, fmt.Sprintf(`{"type":"local","baseDir":%q,"filter":%q}`, filepath.Join(allowed, "a"), f))
		if strings.Contains(got, "hunter2") {
			t.Fatalf("filter %s read the secret (%v)", f, err)
		}
	}
	enc := filepath.Join(allowed, "%2e%2e", filepath.Base(outside), "secret.json")
	got, err = readSource(t, fmt.Sprintf(`{"type":"local","files":[%q]}`, enc))
	if err == nil || strings.Contains(got, "hunter2") {
		t.Fatalf("an URL-encoded .. was decoded: %q, %v", got, err)
	}
	// Without allowed directories nothing local is read.
	withPolicy(t, &Policy{})
	if _, err := readSource(t, fmt.Sprintf(`{"type":"local","files":[%q]}`, filepath.Join(allowed, "a", "1.json"))); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("no allowed dirs: %v", err)
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestForbiddenAddresses(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::", "169.254.169.254",
		"fe80::1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1",
		"64:ff9b::7f00:1", "2002:7f00:1::1", "100.64.0.1", "224.0.0.1", "ff02::1"} {
		if forbiddenAddr(netip.MustParseAddr(a)) == "" {
			t.Errorf("%s is allowed", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "172.32.0.1", "2001:4860:4860::8888", "1.1.1.1"} {
		if why := forbiddenAddr(netip.MustParseAddr(a)); why != "" {
			t.Errorf("%s is refused: %s", a, why)
		}
	}
}

// TestHTTPPolicyEscapes points http input sources at a server on loopback
// in every way that reaches it; each must be refused, at connect time too
// (the source is parsed under the policy, then fetched).
func TestHTTPPolicyEscapes(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"secret":"internal"}`+"\n")
	}))
	defer inside.Close()
	_, port, _ := net.SplitHostPort(inside.Listener.Addr().String())
	// A server the policy allows by name that redirects inside.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
	}))
	defer redirector.Close()
	withPolicy(t, &Policy{HTTPProtocols: []string{"http", "https"}, HTTPAllowedHosts: []string{"example.com"}})
	for name, uri := range map[string]string{
		"loopback IPv4":        "http://127.0.0.1:" + port + "/",
		"name resolving to it": "http://localhost:" + port + "/",
		"IPv6 loopback":        "http://[::1]:" + port + "/",
		"IPv4-mapped IPv6":     "http://[::ffff:127.0.0.1]:" + port + "/",
		"unspecified":          "http://0.0.0.0:" + port + "/",
		"URL-encoded host":     "http://%6c%6f%63%61%6c%68%6f%73%74:" + port + "/",
		"cloud metadata":       "http://169.254.169.254/latest/meta-data/",
		"private":              "http://10.0.0.1:" + port + "/",
		"userinfo before host": "http://127.0.0.2@127.0.0.1:" + port + "/",
		"IPv6 link-local zone": "http://[fe80::1%25lo]:" + port + "/",
	} {
		t.Run(name, func(t *testing.T) {
			src := fmt.Sprintf(`{"type":"http","uris":[%q]}`, uri)
			got, err := readSource(t, src)
			if err == nil || strings.Contains(got, "internal") {
				t.Fatalf("fetched %q (err %v)", got, err)
			}
			if !errors.Is(err, ErrNotAllowed) && !strings.Contains(err.Error(), "invalid URI") {
				t.Fatalf("want a refusal, got %v", err)
			}
		})
	}
	// A listed host reads.
	withPolicy(t, &Policy{HTTPProtocols: []string{"http"}, HTTPAllowedHosts: []string{"127.0.0.1"}})
	got, err := readSource(t, fmt.Sprintf(`{"type":"http","uris":[%q]}`, inside.URL))
	if err != nil || !strings.Contains(got, "internal") {
		t.Fatalf("an allowed host: %q, %v", got, err)
	}
	// A redirect from an allowed host to a name that is not allowed is refused.
	_, err = readSource(t, fmt.Sprintf(`{"type":"http","uris":[%q]}`, redirector.URL))
	if !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("redirect from an allowed host to localhost: %v", err)
	}
}

// TestHTTPPolicyProtocols: only the listed protocols, and never a scheme the
// HTTP client would not treat as a web fetch.
func TestHTTPPolicyProtocols(t *testing.T) {
	withPolicy(t, &Policy{HTTPProtocols: []string{"https"}})
	for _, uri := range []string{"http://example.com/x.json", "file:///etc/passwd", "ftp://example.com/x", "jar:file:///x!/y"} {
		_, err := ParseSource([]byte(fmt.Sprintf(`{"type":"http","uris":[%q]}`, uri)))
		if err == nil {
			t.Errorf("%s accepted", uri)
		}
	}
	if _, err := ParseSource([]byte(`{"type":"http","uris":["https://example.com/x.json"]}`)); err != nil {
		t.Errorf("https refused: %v", err)
	}
}
