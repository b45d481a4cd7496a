package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Source is a property set (*props.Properties).
type Source interface {
	Get(key string) (string, bool)
}

// reader parses keys of Keys from a Source, taking an unset or empty key's
// default from the table and collecting one error per malformed key.
type reader struct {
	src  Source
	errs []error
}

// raw returns the trimmed value of key, or its default when it is unset or
// empty. Reading a key Keys does not describe is a programming error.
func (r *reader) raw(key string) string {
	k, ok := byName[key]
	if !ok {
		panic("config: undocumented key " + key)
	}
	v, _ := r.src.Get(key)
	if v = strings.TrimSpace(v); v == "" {
		return k.Default
	}
	return v
}

func (r *reader) fail(key, v, what string) {
	r.errs = append(r.errs, fmt.Errorf("property %s=%q is not %s", key, v, what))
}

func (r *reader) str(key string) string { return r.raw(key) }

// secret returns key's value as written, untrimmed, or its default when
// it is unset or empty.
func (r *reader) secret(key string) string {
	k, ok := byName[key]
	if !ok {
		panic("config: undocumented key " + key)
	}
	if v, _ := r.src.Get(key); v != "" {
		return v
	}
	return k.Default
}

// password reads a secret that may be a password provider (ResolvePassword).
func (r *reader) password(key string) string {
	v := r.secret(key)
	pw, err := ResolvePassword(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("property %s: %w", key, err))
		return ""
	}
	return pw
}

// ResolvePassword returns the password v stands for. As in Druid, a value
// that is a JSON object is a password provider:
// {"type":"environment","variable":"X"} reads the environment variable X
// (which must be set and not empty), {"type":"default","password":"p"} is p.
// Any other value is the password itself.
func ResolvePassword(v string) (string, error) {
	t := strings.TrimSpace(v)
	if !strings.HasPrefix(t, "{") {
		return v, nil
	}
	var p struct {
		Type     string `json:"type"`
		Variable string `json:"variable"`
		Password string `json:"password"`
	}
	if err := json.Unmarshal([]byte(t), &p); err != nil {
		return "", fmt.Errorf("a password starting with '{' is a password provider, and this one is not valid JSON: %v", err)
	}
	switch p.Type {
	case "environment":
		if p.Variable == "" {
			return "", errors.New(`password provider {"type":"environment"} needs "variable"`)
		}
		pw := os.Getenv(p.Variable)
		if pw == "" {
			return "", fmt.Errorf("password provider: environment variable %s is not set or empty", p.Variable)
		}
		return pw, nil
	case "default":
		return p.Password, nil
	}
	return "", fmt.Errorf("password provider type %q is not one of environment, default", p.Type)
}

func (r *reader) list(key string) []string { return ParseList(r.raw(key)) }

func (r *reader) int(key string) int64 {
	v := r.raw(key)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		r.fail(key, v, "an integer")
	}
	return n
}

func (r *reader) bool(key string) bool {
	v := r.raw(key)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(key, v, "a boolean")
	}
	return b
}

// duration reads a Go duration ("300ms", "2s"); a bare integer means
// milliseconds.
func (r *reader) duration(key string) time.Duration {
	d, err := ParseDuration(r.raw(key))
	if err != nil {
		r.fail(key, r.raw(key), "a duration (use e.g. 300ms or 2s)")
	}
	return d
}

// millis reads an integer number of milliseconds.
func (r *reader) millis(key string) time.Duration {
	return time.Duration(r.int(key)) * time.Millisecond
}

func (r *reader) err() error { return errors.Join(r.errs...) }

// ParseDuration parses a Go duration ("300ms", "2s"); a bare integer means
// milliseconds, "" is zero.
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	return time.ParseDuration(v)
}

// ParseList parses a list setting written either as a JSON array of strings
// (`["a","b"]`) or comma-separated (`a,b`).
func ParseList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		v = v[1 : len(v)-1]
	}
	var out []string
	for _, part := range strings.Split(v, ",") {
		part = strings.Trim(strings.TrimSpace(part), `"`)
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// IsSet reports whether key has a non-empty value in src (a role that fills
// in its own default asks this before setting it).
func IsSet(src Source, key string) bool {
	if _, ok := byName[key]; !ok {
		panic("config: undocumented key " + key)
	}
	v, _ := src.Get(key)
	return strings.TrimSpace(v) != ""
}
