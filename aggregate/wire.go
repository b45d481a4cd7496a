package aggregate

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"strata/javacompat"
)

// Fast JSON codecs for the large columns of partial results (a groupBy on
// a high-cardinality dimension ships one string, long and bool per group
// from data server to broker). Short columns are plain JSON arrays; from
// PackMin rows on, a column is one base64 JSON string of a compact binary
// form (front-coded strings, delta varint longs, bit-packed bools), which
// cuts the bytes encoding/json has to scan on both sides several times.
// Decoders accept both forms.

// PackMin is the row count from which columns are packed.
var PackMin = 64

// maxUnpacked bounds the bytes a packed string column may expand to.
const maxUnpacked = 1 << 30

// WireStrings is a []string with a direct JSON codec (the packed form
// from PackMin rows on).
type WireStrings []string

// WireLongs is a []int64 with a direct JSON codec.
type WireLongs []int64

// WireBools is a []bool with a direct JSON codec.
type WireBools []bool

// MarshalJSON implements json.Marshaler.
func (s WireStrings) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	if len(s) >= PackMin {
		b := binary.AppendUvarint(nil, uint64(len(s)))
		prev := ""
		for _, v := range s {
			c := commonPrefix(prev, v)
			b = binary.AppendUvarint(b, uint64(c))
			b = binary.AppendUvarint(b, uint64(len(v)-c))
			b = append(b, v[c:]...)
			prev = v
		}
		return packed(b), nil
	}
	n := 2
	for _, v := range s {
		n += len(v) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, v)
	}
	return append(b, ']'), nil
}

// MarshalJSON implements json.Marshaler.
func (s WireLongs) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	if len(s) >= PackMin {
		b := binary.AppendUvarint(nil, uint64(len(s)))
		var prev int64
		for _, v := range s {
			b = binary.AppendVarint(b, v-prev)
			prev = v
		}
		return packed(b), nil
	}
	b := make([]byte, 0, 2+len(s)*8)
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return append(b, ']'), nil
}

// MarshalJSON implements json.Marshaler.
func (s WireBools) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	if len(s) >= PackMin {
		b := binary.AppendUvarint(nil, uint64(len(s)))
		bits := make([]byte, (len(s)+7)/8)
		for i, v := range s {
			if v {
				bits[i/8] |= 1 << (i % 8)
			}
		}
		return packed(append(b, bits...)), nil
	}
	b := make([]byte, 0, 2+len(s)*6)
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendBool(b, v)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *WireStrings) UnmarshalJSON(data []byte) error {
	if b, n, ok, err := unpack(data); ok {
		if err != nil {
			return err
		}
		out, err := unpackStrings(b, n)
		*s = out
		return err
	}
	out, err := decodeArray(data, *s, func(tok []byte) (string, error) {
		if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
			return "", fmt.Errorf("bad string %.20q", tok)
		}
		body := tok[1 : len(tok)-1]
		for _, c := range body {
			if c == '\\' || c < 0x20 || c >= 0x80 {
				// Escapes and non-ASCII (UTF-8 validation): the
				// standard decoder.
				var v string
				err := json.Unmarshal(tok, &v)
				return v, err
			}
		}
		return string(body), nil
	})
	*s = out
	return err
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *WireLongs) UnmarshalJSON(data []byte) error {
	if b, n, ok, err := unpack(data); ok {
		if err != nil {
			return err
		}
		out := make([]int64, n)
		var prev int64
		for i := range out {
			d, k := binary.Varint(b)
			if k <= 0 {
				return errPacked
			}
			b = b[k:]
			prev += d
			out[i] = prev
		}
		if len(b) != 0 {
			return errPacked
		}
		*s = out
		return nil
	}
	out, err := decodeArray(data, *s, func(tok []byte) (int64, error) {
		v, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad long %.20q", tok)
		}
		return v, nil
	})
	*s = out
	return err
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *WireBools) UnmarshalJSON(data []byte) error {
	if b, n, ok, err := unpack(data); ok {
		if err != nil {
			return err
		}
		if uint64(len(b)) != (uint64(n)+7)/8 {
			return errPacked
		}
		out := make([]bool, n)
		for i := range out {
			out[i] = b[i/8]&(1<<(i%8)) != 0
		}
		*s = out
		return nil
	}
	out, err := decodeArray(data, *s, func(tok []byte) (bool, error) {
		switch string(tok) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("bad bool %.20q", tok)
	})
	*s = out
	return err
}

var errPacked = errors.New("malformed packed column")

// packed renders binary column data as a JSON string.
func packed(b []byte) []byte {
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"')
}

// unpack decodes a packed column (ok false when data is not a JSON
// string), returning its payload after the row count n.
func unpack(data []byte) (b []byte, n int, ok bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '"' {
		return nil, 0, false, nil
	}
	if len(data) < 2 || data[len(data)-1] != '"' {
		return nil, 0, true, errPacked
	}
	b, err = base64.StdEncoding.AppendDecode(nil, data[1:len(data)-1])
	if err != nil {
		return nil, 0, true, errPacked
	}
	c, k := binary.Uvarint(b)
	// Every row takes at least one bit of payload, so the count is bounded
	// by the input size.
	if k <= 0 || c > uint64(len(b))*8 {
		return nil, 0, true, errPacked
	}
	return b[k:], int(c), true, nil
}

// unpackStrings decodes n front-coded strings into substrings of one
// backing string.
func unpackStrings(b []byte, n int) ([]string, error) {
	type span struct{ off, n int }
	spans := make([]span, n)
	var buf []byte
	prev := span{}
	for i := range spans {
		c, k := binary.Uvarint(b)
		if k <= 0 || c > uint64(prev.n) {
			return nil, errPacked
		}
		b = b[k:]
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, errPacked
		}
		b = b[k:]
		if len(buf)+int(c)+int(l) > maxUnpacked {
			return nil, errPacked
		}
		cur := span{len(buf), int(c) + int(l)}
		buf = append(buf, buf[prev.off:prev.off+int(c)]...)
		buf = append(buf, b[:l]...)
		b = b[l:]
		spans[i], prev = cur, cur
	}
	if len(b) != 0 {
		return nil, errPacked
	}
	all := string(buf)
	out := make([]string, n)
	for i, sp := range spans {
		out[i] = all[sp.off : sp.off+sp.n]
	}
	return out, nil
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// decodeArray splits a JSON array of scalars (already validated by
// encoding/json) into tokens and converts each; null leaves old as is.
func decodeArray[T any](data []byte, old []T, conv func([]byte) (T, error)) ([]T, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		return old, nil
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, fmt.Errorf("expected an array")
	}
	out := make([]T, 0, len(data)/8)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return out, nil
	}
	for {
		start := i
		if i < len(data) && data[i] == '"' {
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++
				}
				i++
			}
			i++
		} else {
			for i < len(data) && data[i] != ',' && data[i] != ']' && !isSpace(data[i]) {
				i++
			}
		}
		if i > len(data) || start == i {
			return nil, fmt.Errorf("truncated array")
		}
		v, err := conv(data[start:i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		i = skipSpace(data, i)
		if i >= len(data) {
			return nil, fmt.Errorf("truncated array")
		}
		if data[i] == ']' {
			return out, nil
		}
		if data[i] != ',' {
			return nil, fmt.Errorf("expected a comma")
		}
		i = skipSpace(data, i+1)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// AppendField appends ,"name":value when the column is not empty (or
// always, as [] for an empty one).
func AppendField[T any, M interface {
	~[]T
	json.Marshaler
}](b []byte, name string, v M, always ...bool) ([]byte, error) {
	if len(v) == 0 && len(always) == 0 {
		return b, nil
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	if len(v) == 0 {
		return append(b, '[', ']'), nil
	}
	x, err := v.MarshalJSON()
	return append(b, x...), err
}
