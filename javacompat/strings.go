package javacompat

import "unicode/utf8"

// StringLength is Java's String.length() of s: its length in UTF-16 code
// units, so a character beyond U+FFFF counts 2. Druid's strlen, the length
// dimension spec and the strlen ordering all count this way.
func StringLength(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return n + stringLengthSlow(s[i:])
		}
		n++
	}
	return n
}

func stringLengthSlow(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
