package javacompat

import "unicode/utf8"

// AppendJSONString appends s as a JSON string the way Jackson's generator
// writes it (so Druid's responses and metadata): '"' and '\\' escaped with a
// backslash; control characters U+0000..U+001F as \b, \t, \n, \f, \r or
// \u00XX with upper-case hex digits; everything else, including DEL, '/',
// '<', '>', '&', U+2028 and U+2029, written as UTF-8 without escaping (unlike
// encoding/json, which escapes the last five).
//
// Bytes that are not valid UTF-8 become U+FFFD, which is what a Java string
// decoded from them holds, so the output is always valid UTF-8 and valid JSON.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendJSONStringContent(dst, s)
	return append(dst, '"')
}

const upperHex = "0123456789ABCDEF"

// AppendJSONStringContent is AppendJSONString without the enclosing quotes,
// for a string value built from several pieces (Druid's comma-joined
// dimension lists, a segment id).
func AppendJSONStringContent(dst []byte, s string) []byte {
	start := 0 // s[start:i] is pending, needing no escape
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, string(utf8.RuneError)...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xF])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}
