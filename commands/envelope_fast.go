package commands

import "bytes"

// decodeEnvelopeFast parses the exact bytes Encode writes, without reflection:
// every node decodes every entry it applies, and encoding/json's two passes over
// the envelope were a fifth of a follower's CPU under write load. It reports false
// for anything else (whitespace, other key orders, escaped or non-ASCII strings,
// numbers encoding/json would read differently), and Decode then falls back to
// encoding/json, so both paths accept the same inputs with the same result
// (FuzzDecodeFastPath checks this).
func decodeEnvelopeFast(b []byte) (Envelope, bool) {
	var env Envelope
	s := envScanner{b: b}
	if !s.lit(`{"v":`) {
		return env, false
	}
	v, ok := s.int()
	if !ok || v != int64(int(v)) {
		return env, false
	}
	env.Version = int(v)
	if !s.lit(`,"type":`) {
		return env, false
	}
	if env.Type, ok = s.str(); !ok {
		return env, false
	}
	env.Ignorable = s.lit(`,"ignorable":true`)
	if !s.lit(`,"time":`) {
		return env, false
	}
	if env.TimeMs, ok = s.int(); !ok {
		return env, false
	}
	if !s.lit(`,"audit":{"author":`) {
		return env, false
	}
	if env.Audit.Author, ok = s.str(); !ok || !s.lit(`,"comment":`) {
		return env, false
	}
	if env.Audit.Comment, ok = s.str(); !ok || !s.lit(`,"ip":`) {
		return env, false
	}
	if env.Audit.IP, ok = s.str(); !ok || !s.lit(`},"payload":`) {
		return env, false
	}
	// The payload runs to the closing brace. Whether it is one JSON value is
	// settled by the caller: it falls back when the payload does not decode.
	rest := b[s.i:]
	if len(rest) < 2 || rest[len(rest)-1] != '}' || isSpace(rest[0]) || isSpace(rest[len(rest)-2]) {
		return env, false // encoding/json would trim the spaces off the raw payload
	}
	env.Payload = bytes.Clone(rest[:len(rest)-1])
	return env, true
}

type envScanner struct {
	b []byte
	i int
}

// lit consumes lit if the input continues with it.
func (s *envScanner) lit(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// int reads a JSON integer as encoding/json reads one into an int64: an optional
// minus, no leading zeros, no fraction or exponent, no overflow.
func (s *envScanner) int() (int64, bool) {
	i, neg := s.i, false
	if i < len(s.b) && s.b[i] == '-' {
		neg = true
		i++
	}
	start := i
	var n uint64
	for ; i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9'; i++ {
		if n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(s.b[i]-'0')
	}
	digits := i - start
	if digits == 0 || digits > 19 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	if (!neg && n > 1<<63-1) || (neg && n > 1<<63) {
		return 0, false
	}
	s.i = i
	if neg {
		return int64(-n), true
	}
	return int64(n), true
}

// str reads a JSON string made of printable ASCII with no escapes, which is what
// AppendJSONString writes for plain text; anything else is left to encoding/json.
func (s *envScanner) str() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	for i := s.i + 1; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			out := string(s.b[s.i+1 : i])
			s.i = i + 1
			return out, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", false
		}
	}
	return "", false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
