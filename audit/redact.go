package audit

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Redacted replaces a secret's value wherever history is shown.
const Redacted = "<redacted>"

// Redact returns the JSON value raw with the value of every object key that
// names a credential replaced by Redacted, at any depth: passwords, secrets,
// tokens, access keys, private keys, SASL/JAAS configs (Kafka consumer
// properties) and the like. Specs and task payloads carry such keys; the
// audit endpoints never show them. raw that is not JSON is returned as is.
func Redact(raw []byte) []byte {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	v, changed := redactValue(v)
	if !changed {
		return raw
	}
	// Unescaped, so that "<redacted>" reads as written.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

func redactValue(v any) (any, bool) {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if IsSecretKey(k) {
				if e != nil && e != Redacted {
					x[k] = Redacted
					changed = true
				}
				continue
			}
			var c bool
			x[k], c = redactValue(e)
			changed = changed || c
		}
	case []any:
		for i, e := range x {
			var c bool
			x[i], c = redactValue(e)
			changed = changed || c
		}
	}
	return v, changed
}

// IsSecretKey reports whether an object key names a credential.
func IsSecretKey(k string) bool {
	l := strings.ToLower(k)
	for _, s := range []string{"password", "passwd", "pwd", "secret", "token", "credential", "jaas", "privatekey", "private_key", "private.key", "accesskey", "access_key", "access.key", "apikey", "api_key", "api.key", "sessionkey"} {
		if strings.Contains(l, s) {
			return true
		}
	}
	// "key" alone, "*.key" (ssl.key.password is caught above), or
	// "…Key" names like secretKey (above) or keyId.
	return l == "key" || strings.HasSuffix(l, ".key") || l == "keyid" || l == "key_id"
}
