package expr

import (
	"encoding/base64"
	"strings"
)

func init() {
	register([]string{"decode_base64_utf8"}, &funcDef{minArgs: 1, maxArgs: 1, outType: fixedType(TypeString), build: unaryFn(decodeBase64UTF8)})
}

// decodeBase64UTF8 is Druid's decode_base64_utf8: the argument's string
// form decoded as java.util.Base64 does (standard alphabet, padding
// optional) and read as UTF-8, malformed bytes replaced by U+FFFD as
// Java's String constructor does. Input that is not Base64 is an error,
// as in Druid.
func decodeBase64UTF8(v Value) (Value, error) {
	s, ok := v.AsString()
	if !ok || v.IsNull() {
		return NullOf(TypeString), nil
	}
	data := strings.TrimRight(s, "=")
	b, err := base64.RawStdEncoding.DecodeString(data)
	if err != nil || len(s)-len(data) > 2 {
		return Value{}, evalErrorf("decode_base64_utf8: input [%s] is not valid base64", s)
	}
	return String(strings.ToValidUTF8(string(b), "\uFFFD")), nil
}
