package input

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"strata/javacompat"
)

// javaString renders the JSON value b (an object or an array) as Druid's
// string dimension stores it: Jackson parses it into a LinkedHashMap or an
// ArrayList and the dimension keeps its Java toString ("{k=v, k2=v2}" in
// the document's key order, "[a, b]"; strings bare, integers as written,
// other numbers as Double.toString prints them).
func javaString(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var sb strings.Builder
	if err := writeJava(&sb, dec); err != nil {
		return "", err
	}
	return sb.String(), nil
}

func writeJava(sb *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		end := json.Delim(']')
		if t == '{' {
			end = '}'
		}
		sb.WriteByte(byte(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			if t == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				sb.WriteString(key.(string))
				sb.WriteByte('=')
			}
			if err := writeJava(sb, dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return err
		}
		sb.WriteByte(byte(end))
	case string:
		sb.WriteString(t)
	case json.Number:
		sb.WriteString(javaNumber(string(t)))
	case bool:
		sb.WriteString(strconv.FormatBool(t))
	case nil:
		sb.WriteString("null")
	}
	return nil
}

// javaNumber is the text of a JSON number as Jackson's Integer, Long or
// BigInteger (an integer literal) or Double (any other) prints it.
func javaNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return javacompat.FormatDouble(f)
}

// hasContainer reports whether v is a list holding an object or a list.
func hasContainer(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		switch e.(type) {
		case []any, map[string]any:
			return true
		}
	}
	return false
}
