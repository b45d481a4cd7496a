package deep

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// FileKey names the stored file a load spec (the compact JSON that segment
// metadata holds) points at, so that load specs naming one file have the
// same FileKey however they are spelled: it is the load spec in the shape
// Put writes, with a cleaned local path. Load specs naming no file this
// package can store (null, tombstones, unknown types, malformed JSON) have
// FileKey "". The state machine indexes segments by it, which is what lets a
// kill tell whether another segment still needs a file.
func FileKey(loadSpec string) string {
	// Load specs written by Put are already in this shape; recognising them
	// without decoding keeps the index free of allocations at a million
	// segments.
	if canonicalLoadSpec(loadSpec) {
		return loadSpec
	}
	var ls LoadSpec
	if err := json.Unmarshal([]byte(loadSpec), &ls); err != nil {
		return ""
	}
	switch {
	case ls.Type == "local" && ls.Path != "":
		ls = LoadSpec{Type: ls.Type, Path: filepath.Clean(ls.Path)}
	case ls.Type == "s3_zip" && ls.Bucket != "" && ls.Key != "":
		ls = LoadSpec{Type: ls.Type, Bucket: ls.Bucket, Key: ls.Key}
	default:
		return ""
	}
	b, err := json.Marshal(ls)
	if err != nil {
		return ""
	}
	return string(b)
}

// canonicalLoadSpec reports whether s is exactly what json.Marshal writes for
// a local load spec with a clean path or for an s3_zip load spec, with no
// character that JSON would escape.
func canonicalLoadSpec(s string) bool {
	if rest, ok := strings.CutPrefix(s, `{"type":"local","path":"`); ok {
		p, ok := strings.CutSuffix(rest, `"}`)
		return ok && p != "" && plainJSON(p) && filepath.Clean(p) == p
	}
	if rest, ok := strings.CutPrefix(s, `{"type":"s3_zip","bucket":"`); ok {
		bucket, rest, ok := strings.Cut(rest, `","key":"`)
		key, ok2 := strings.CutSuffix(rest, `"}`)
		return ok && ok2 && bucket != "" && key != "" && plainJSON(bucket) && plainJSON(key)
	}
	return false
}

// plainJSON reports whether json.Marshal writes s unescaped: printable ASCII
// other than the quote, the backslash and the HTML characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// CheckedSegmentKey is SegmentKey for names that arrive from clients: the
// dataSource and the version must each be one path element, or the key of
// one segment could be made to land in another segment's directory (a
// version of "../../wiki/<interval>/v1" is cleaned by path.Join into wiki's
// key).
func CheckedSegmentKey(dataSource, start, end, version string, partition int) (string, error) {
	for _, el := range []struct{ what, v string }{{"dataSource", dataSource}, {"interval", start + "_" + end}, {"version", version}} {
		if el.v == "" || el.v == "." || el.v == ".." || strings.ContainsAny(el.v, "/\\\x00") {
			return "", fmt.Errorf("%w: %s %q cannot be a directory name in deep storage", ErrBadKey, el.what, el.v)
		}
	}
	return SegmentKey(dataSource, start, end, version, partition), nil
}

// CheckLoadSpec checks that spec names a segment file that the storage c
// configures keeps for key: the file right under key, or under one more
// element (ingestion tasks add their task id so that two attempts never
// write the same file). Anything else (another directory, another segment's
// key, another bucket, a path outside the storage) is refused, so that a
// segment's metadata can only ever point at its own file.
func (c Config) CheckLoadSpec(spec LoadSpec, key string) error {
	stored, err := c.keyOf(spec)
	if err != nil {
		return err
	}
	if stored != key && path.Dir(stored) != key {
		return fmt.Errorf("deep: the file is stored under %s, not under the segment's own key %s", stored, key)
	}
	return nil
}

// keyOf returns the key under which the segment file spec names is stored,
// or an error when spec names no segment file of this storage.
func (c Config) keyOf(spec LoadSpec) (string, error) {
	switch c.Type {
	case "", "local":
		if spec.Type != "local" {
			return "", fmt.Errorf("deep: load spec type %q is not local storage's \"local\"", spec.Type)
		}
		if c.StorageDirectory == "" {
			return "", fmt.Errorf("deep: local storage needs %s", PropStorageDirectory)
		}
		root, err := filepath.Abs(c.StorageDirectory)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(spec.Path) {
			return "", fmt.Errorf("deep: path %q is not absolute", spec.Path)
		}
		rel, err := filepath.Rel(root, filepath.Clean(spec.Path))
		if err != nil || !filepath.IsLocal(rel) {
			return "", fmt.Errorf("deep: path %q is outside storage directory %q", spec.Path, root)
		}
		dir, file := path.Split(filepath.ToSlash(rel))
		key := strings.TrimSuffix(dir, "/")
		if file != SegmentFile || checkKey(key) != nil {
			return "", fmt.Errorf("deep: path %q is not a segment file (<key>/%s) of storage directory %q", spec.Path, SegmentFile, root)
		}
		return key, nil
	case "s3":
		if spec.Type != "s3_zip" {
			return "", fmt.Errorf("deep: load spec type %q is not s3 storage's \"s3_zip\"", spec.Type)
		}
		s := &S3{bucket: c.Bucket, baseKey: strings.Trim(c.BaseKey, "/")}
		return s.keyOf(spec)
	}
	return "", fmt.Errorf("deep: unknown storage type %q (want local or s3)", c.Type)
}

// KeyLocation is where the storage c configures keeps the files of key, for
// messages: a directory, or an s3:// prefix.
func (c Config) KeyLocation(key string) string {
	if c.Type == "s3" {
		if base := strings.Trim(c.BaseKey, "/"); base != "" {
			key = base + "/" + key
		}
		return "s3://" + c.Bucket + "/" + key + "/"
	}
	root, err := filepath.Abs(c.StorageDirectory)
	if err != nil {
		root = c.StorageDirectory
	}
	return filepath.Join(root, filepath.FromSlash(key)) + string(filepath.Separator)
}
