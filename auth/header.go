package auth

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// MaxAuthorizationLength bounds the Authorization header ParseBasic decodes:
// a longer one is refused before any work, so that a client cannot make the
// server decode (and an authenticator hash) megabytes per request.
const MaxAuthorizationLength = 4096

// ParseBasic reads an HTTP Basic Authorization header value (RFC 7617):
// the scheme, case-insensitive, one or more spaces, then base64 of
// "user:password". The user is what precedes the first colon; both must be
// valid UTF-8 without control characters, and the user must not be empty.
// ok is false for anything else, including another scheme.
func ParseBasic(header string) (user, password string, ok bool) {
	if len(header) > MaxAuthorizationLength {
		return "", "", false
	}
	const scheme = "basic "
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", "", false
	}
	enc := strings.TrimLeft(header[len(scheme):], " ")
	// The decoder skips CR and LF; a header value holds neither.
	if strings.ContainsAny(enc, "\r\n") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", "", false
	}
	user, password, ok = strings.Cut(string(raw), ":")
	if !ok || user == "" || !printable(user) || !printable(password) {
		return "", "", false
	}
	return user, password, true
}

// printable reports whether s is valid UTF-8 without control characters
// (RFC 7617 excludes them from both parts).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// BasicHeader is the Authorization header value for user and password.
func BasicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}
