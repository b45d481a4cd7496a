// Package input reads external data for ingestion (SQL-based, native batch and
// Kafka alike): Druid's input sources (inline, local, http) split into files,
// and input formats (json with a flattenSpec, csv, tsv) turned into typed rows
// of a declared signature.
// Compressed files are detected by extension or by their magic bytes.
package input

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Split is one unit of input: a file. A file is never divided between
// workers; a worker may read parts of a large local file in parallel (Ranges).
type Split struct {
	URI  string // what the file is called in messages and in __file_uri
	Path string // __file_path: the local path or URL path
	Size int64  // bytes, -1 when unknown
	open func(ctx context.Context) (io.ReadCloser, error)
	// openAt opens the file at a byte offset; nil when it cannot seek.
	openAt func(ctx context.Context, off int64) (io.ReadCloser, error)
}

// Source is an input source: it lists its files.
type Source interface {
	// Type is the Druid type name of the source ("inline", "local", "http").
	Type() string
	// Splits lists the files to read, in a stable order. Empty files are left out.
	Splits(ctx context.Context) ([]Split, error)
	// Spec is the source as JSON for reports, with secrets removed.
	Spec() map[string]any
	// SystemFields lists the system fields (__file_uri, __file_path) the
	// source offers as columns.
	SystemFields() []string
}

// Error is a problem with an input source or format specification, or a
// source the ingestion input policy refuses (then errors.Is(err,
// ErrNotAllowed) holds).
type Error struct {
	Msg     string
	refused bool
}

func (e *Error) Error() string { return e.Msg }

// Is makes a refusal of the policy match ErrNotAllowed.
func (e *Error) Is(target error) bool { return e.refused && target == ErrNotAllowed }

func errorf(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// ParseSource decodes an input source from its JSON form.
func ParseSource(raw []byte) (Source, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, errorf("invalid inputSource JSON: %v", err)
	}
	switch head.Type {
	case "inline":
		var s struct {
			Data *string `json:"data"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errorf("invalid inline inputSource: %v", err)
		}
		if s.Data == nil {
			return nil, errorf("inline inputSource requires 'data'")
		}
		return &InlineSource{Data: *s.Data}, nil
	case "local":
		var s struct {
			BaseDir      string   `json:"baseDir"`
			Filter       string   `json:"filter"`
			Files        []string `json:"files"`
			SystemFields []string `json:"systemFields"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errorf("invalid local inputSource: %v", err)
		}
		ls := &LocalSource{BaseDir: s.BaseDir, Filter: s.Filter, Files: s.Files, policy: ActivePolicy()}
		if err := ls.validate(); err != nil {
			return nil, err
		}
		sys, err := checkSystemFields(s.SystemFields)
		if err != nil {
			return nil, err
		}
		ls.System = sys
		return ls, nil
	case "http":
		var s struct {
			URIs           []string          `json:"uris"`
			User           string            `json:"httpAuthenticationUsername"`
			Password       json.RawMessage   `json:"httpAuthenticationPassword"`
			RequestHeaders map[string]string `json:"requestHeaders"`
			SystemFields   []string          `json:"systemFields"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errorf("invalid http inputSource: %v", err)
		}
		pw, err := parsePassword(s.Password)
		if err != nil {
			return nil, err
		}
		hs := &HTTPSource{URIs: s.URIs, User: s.User, Password: pw, Headers: s.RequestHeaders, policy: ActivePolicy()}
		if err := hs.validate(); err != nil {
			return nil, err
		}
		sys, err := checkSystemFields(s.SystemFields)
		if err != nil {
			return nil, err
		}
		hs.System = sys
		return hs, nil
	case "":
		return nil, errorf("inputSource has no 'type'")
	}
	return nil, errorf("unsupported inputSource type %q (supported: inline, local, http)", head.Type)
}

func checkSystemFields(list []string) ([]string, error) {
	for _, f := range list {
		if f != SystemFileURI && f != SystemFilePath {
			return nil, errorf("unknown system field %q (supported: %s, %s)", f, SystemFileURI, SystemFilePath)
		}
	}
	return list, nil
}

// System field names.
const (
	SystemFileURI  = "__file_uri"
	SystemFilePath = "__file_path"
)

// parsePassword accepts a plain string or a {"type":"default","password":...}
// password provider. Other providers (environment variables) are refused:
// a query must not read the server's environment.
func parsePassword(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errorf("invalid httpAuthenticationPassword: %v", err)
		}
		return s, nil
	}
	var p struct {
		Type     string `json:"type"`
		Password string `json:"password"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", errorf("invalid httpAuthenticationPassword: %v", err)
	}
	if p.Type != "default" && p.Type != "" {
		return "", errorf("unsupported password provider type %q (only 'default')", p.Type)
	}
	return p.Password, nil
}

// InlineSource is data given in the statement itself.
type InlineSource struct{ Data string }

func (s *InlineSource) Type() string           { return "inline" }
func (s *InlineSource) SystemFields() []string { return nil }
func (s *InlineSource) Spec() map[string]any   { return map[string]any{"type": "inline", "data": s.Data} }

// Splits returns one split holding the data (none when it is empty).
func (s *InlineSource) Splits(context.Context) ([]Split, error) {
	if s.Data == "" {
		return nil, nil
	}
	data := s.Data
	return []Split{{URI: "inline", Size: int64(len(data)), open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	}}}, nil
}

// LocalSource reads files of the local file system: either the files listed,
// or the files under BaseDir (recursively) whose name matches Filter.
type LocalSource struct {
	BaseDir string
	Filter  string
	Files   []string
	System  []string
	// policy is the process's input policy when the source was parsed;
	// nil reads anything.
	policy *Policy
}

func (s *LocalSource) Type() string           { return "local" }
func (s *LocalSource) SystemFields() []string { return s.System }

func (s *LocalSource) validate() error {
	if s.BaseDir == "" && len(s.Files) == 0 {
		return errorf("local inputSource requires 'baseDir' or 'files'")
	}
	if s.BaseDir != "" && s.Filter == "" {
		return errorf("local inputSource requires 'filter' with 'baseDir'")
	}
	if s.Filter != "" {
		if _, err := path.Match(s.Filter, "x"); err != nil {
			return errorf("invalid local inputSource filter %q: %v", s.Filter, err)
		}
	}
	return nil
}

func (s *LocalSource) Spec() map[string]any {
	m := map[string]any{"type": "local"}
	if s.BaseDir != "" {
		m["baseDir"] = s.BaseDir
		m["filter"] = s.Filter
	}
	if s.Files != nil {
		m["files"] = s.Files
	}
	if len(s.System) > 0 {
		m["systemFields"] = s.System
	}
	return m
}

// Splits lists the files: the listed ones in order, then the matching files
// under BaseDir in path order. Empty files are skipped.
func (s *LocalSource) Splits(ctx context.Context) ([]Split, error) {
	var out []Split
	add := func(p string, size int64) {
		if size == 0 {
			return
		}
		abs := p
		if a, err := filepath.Abs(p); err == nil {
			abs = a
		}
		out = append(out, Split{URI: "file:" + filepath.ToSlash(abs), Path: p, Size: size,
			open:   func(context.Context) (io.ReadCloser, error) { return s.openLocal(p) },
			openAt: func(_ context.Context, off int64) (io.ReadCloser, error) { return s.openLocalAt(p, off) }})
	}
	for _, f := range s.Files {
		if s.policy != nil {
			if _, _, err := s.policy.localPath(f); err != nil {
				return nil, err
			}
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, errorf("local inputSource: %v", err)
		}
		if st.IsDir() {
			return nil, errorf("local inputSource: %s is a directory", f)
		}
		add(f, st.Size())
	}
	if s.BaseDir != "" {
		base := s.BaseDir
		if s.policy != nil {
			// Walk the resolved directory: a baseDir that is a symlink
			// is followed once, here, where it is checked.
			root, rel, err := s.policy.localPath(base)
			if err != nil {
				return nil, err
			}
			base = filepath.Join(root, rel)
		}
		st, err := os.Stat(base)
		if err != nil {
			return nil, errorf("local inputSource: %v", err)
		}
		if !st.IsDir() {
			return nil, errorf("local inputSource: baseDir %s is not a directory", s.BaseDir)
		}
		var found []string
		sizes := map[string]int64{}
		err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if ok, _ := path.Match(s.Filter, d.Name()); !ok {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			found = append(found, p)
			sizes[p] = info.Size()
			return nil
		})
		if err != nil {
			return nil, errorf("local inputSource: %v", err)
		}
		slices.Sort(found)
		for _, p := range found {
			add(p, sizes[p])
		}
	}
	return out, nil
}

// openLocal opens a file of the source, through the policy when there is one.
func (s *LocalSource) openLocal(p string) (*os.File, error) {
	if s.policy != nil {
		return s.policy.openLocal(p)
	}
	return os.Open(p)
}

func (s *LocalSource) openLocalAt(p string, off int64) (*os.File, error) {
	f, err := s.openLocal(p)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// HTTPSource fetches files over HTTP(S), one per URI.
type HTTPSource struct {
	URIs     []string
	User     string
	Password string
	Headers  map[string]string
	System   []string
	// Client is the HTTP client used without a policy; nil means
	// http.DefaultClient. Under a policy its guarded client is used.
	Client *http.Client
	policy *Policy
}

func (s *HTTPSource) Type() string           { return "http" }
func (s *HTTPSource) SystemFields() []string { return s.System }

func (s *HTTPSource) validate() error {
	if len(s.URIs) == 0 {
		return errorf("http inputSource requires 'uris'")
	}
	for _, u := range s.URIs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return errorf("http inputSource: invalid URI %q (only http and https)", u)
		}
		if s.policy != nil && !s.policy.protocolAllowed(p.Scheme) {
			return policyErrorf("http inputSource: protocol %q of %s is not allowed (svc.ingestion.http.allowedProtocols: %s)",
				p.Scheme, u, strings.Join(s.policy.HTTPProtocols, ", "))
		}
	}
	return nil
}

func (s *HTTPSource) Spec() map[string]any {
	m := map[string]any{"type": "http", "uris": s.URIs, "httpAuthenticationUsername": nil, "httpAuthenticationPassword": nil}
	if s.User != "" {
		m["httpAuthenticationUsername"] = s.User
	}
	if s.Password != "" {
		m["httpAuthenticationPassword"] = map[string]any{"type": "default"} // the secret stays out of reports
	}
	if len(s.Headers) > 0 {
		m["requestHeaders"] = s.Headers
	}
	return m
}

// Splits returns one split per URI; sizes are unknown until fetched.
func (s *HTTPSource) Splits(context.Context) ([]Split, error) {
	out := make([]Split, 0, len(s.URIs))
	for _, u := range s.URIs {
		p, _ := url.Parse(u) // validated
		out = append(out, Split{URI: u, Path: p.Path, Size: -1, open: func(ctx context.Context) (io.ReadCloser, error) {
			return s.fetch(ctx, u)
		}})
	}
	return out, nil
}

func (s *HTTPSource) fetch(ctx context.Context, u string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	if s.User != "" || s.Password != "" {
		req.SetBasicAuth(s.User, s.Password)
	}
	c := s.Client
	if s.policy != nil {
		c = s.policy.httpClient()
	} else if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return resp.Body, nil
}

// ErrNoSplitOpener is returned when a Split built outside this package is opened.
var ErrNoSplitOpener = errors.New("input: split cannot be opened")

// NewSplit returns a split whose content comes from open; for callers that
// supply data of their own (tests, other sources).
func NewSplit(uri string, size int64, open func(ctx context.Context) (io.ReadCloser, error)) Split {
	return Split{URI: uri, Path: uri, Size: size, open: open}
}
