// Package props holds a node's runtime properties: every setting is an `svc.*`
// key, read from a Java-style properties file (Druid's runtime.properties) and
// overridable by command-line flags. The effective set is what /status/properties
// shows, so defaults are recorded here too.
package props

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"strata/config"
)

// Properties is a concurrency-safe string map of settings. Roles read
// their typed settings through config's parsers, never a key at a time.
type Properties struct {
	mu sync.RWMutex
	m  map[string]string
}

// New returns an empty property set.
func New() *Properties { return &Properties{m: map[string]string{}} }

// Defaults returns the documented defaults of the settings config.Keys marks
// Shown, so the effective set lists them even when no file sets them.
func Defaults() *Properties {
	p := New()
	for k, v := range config.ShownDefaults() {
		p.m[k] = v
	}
	return p
}

// Load reads a properties file in java.util.Properties syntax: `key=value`,
// `key: value` or `key value`, `#`/`!` comments, backslash line continuations
// and escapes.
func Load(path string) (*Properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open properties file: %w", err)
	}
	defer f.Close()
	p := New()
	if err := p.Read(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Read parses properties from r into p, overriding existing keys.
func (p *Properties) Read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var logical strings.Builder
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if logical.Len() == 0 {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		if continues(line) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		p.Set(k, v)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if logical.Len() > 0 {
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		p.Set(k, v)
	}
	return nil
}

// continues reports an odd number of trailing backslashes (a continuation).
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func splitProperty(s string) (string, string, error) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i > len(s) {
		i = len(s)
	}
	key := s[:i]
	rest := strings.TrimLeft(s[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescape(key)
	if err != nil {
		return "", "", err
	}
	v, err := unescape(rest)
	if err != nil {
		return "", "", err
	}
	if k == "" {
		return "", "", fmt.Errorf("empty property name")
	}
	return k, v, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\u escape")
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf("malformed \\u escape: %w", err)
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// Set stores a value.
func (p *Properties) Set(k, v string) {
	p.mu.Lock()
	p.m[k] = v
	p.mu.Unlock()
}

// Merge copies every key of o into p (o wins).
func (p *Properties) Merge(o *Properties) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range o.m {
		p.m[k] = v
	}
}

// Get returns a value and whether it is set.
func (p *Properties) Get(k string) (string, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.m[k]
	return v, ok
}

// String returns a value or "".
func (p *Properties) String(k string) string {
	v, _ := p.Get(k)
	return v
}

// List returns a list setting written either as a JSON array of strings or as a
// comma-separated string.
func (p *Properties) List(k string) []string {
	v := strings.TrimSpace(p.String(k))
	return ParseList(v)
}

// ParseList parses `["a","b"]` or `a,b`.
func ParseList(v string) []string { return config.ParseList(v) }

// Visible returns every property except those named in svc.server.hiddenProperties
// (exact key match, as Druid does; the hidden list itself stays visible). The
// internal client's password is hidden even when the list leaves it out: it
// opens every node's internal API; so are the initial admin's and internal
// client's passwords.
func (p *Properties) Visible() map[string]string {
	hidden := map[string]bool{
		"svc.escalator.internalClientPassword":                       true,
		"svc.auth.authenticator.basic.initialAdminPassword":          true,
		"svc.auth.authenticator.basic.initialInternalClientPassword": true,
	}
	for _, h := range p.List("svc.server.hiddenProperties") {
		hidden[h] = true
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make(map[string]string, len(p.m))
	for k, v := range p.m {
		if !hidden[k] {
			out[k] = v
		}
	}
	return out
}

// Keys returns all keys sorted.
func (p *Properties) Keys() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	keys := make([]string, 0, len(p.m))
	for k := range p.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
