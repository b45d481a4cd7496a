package javacompat

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"plain", "wikipedia", `"wikipedia"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\b\t\n\f\r", `"\b\t\n\f\r"`},
		// Jackson writes the other control characters as \u00XX in upper case.
		{"other controls", "\x00\x01\x0b\x1f", `"\u0000\u0001\u000B\u001F"`},
		{"DEL is not escaped", "\x7f", "\"\x7f\""},
		{"slash is not escaped", "a/b", `"a/b"`},
		// No HTML escaping, unlike encoding/json's default.
		{"html", "<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		// Jackson leaves the JavaScript line terminators alone.
		{"line and paragraph separators", "a\u2028b\u2029c", "\"a\u2028b\u2029c\""},
		{"two-byte", "é", `"é"`},
		{"four-byte", "😀x", `"😀x"`},
		{"invalid byte", "a\xffb", "\"a\uFFFDb\""},
		{"truncated sequence", "\xf0\x9f\x98", "\"\uFFFD\uFFFD\uFFFD\""},
		{"encoded surrogate", "\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\""},
		{"mixed", "a\"b\\c\n\t\x01<>&\u2028é\xff", `"a\"b\\c\n\t\u0001<>&` + "\u2028é\uFFFD" + `"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(AppendJSONString(nil, c.in)); got != c.want {
				t.Errorf("AppendJSONString(%q) = %s, want %s", c.in, got, c.want)
			}
			content := string(AppendJSONStringContent([]byte("x"), c.in))
			if want := "x" + c.want[1:len(c.want)-1]; content != want {
				t.Errorf("AppendJSONStringContent(%q) = %s, want %s", c.in, content, want)
			}
		})
	}
}

func TestAppendJSONStringAppends(t *testing.T) {
	b := make([]byte, 0, 64)
	b = append(b, '[')
	b = AppendJSONString(b, "a")
	b = append(b, ',')
	b = AppendJSONString(b, "b\n")
	if got := string(append(b, ']')); got != `["a","b\n"]` {
		t.Errorf("got %s", got)
	}
	if n := testing.AllocsPerRun(100, func() { b = AppendJSONString(b[:0], "plain\ttext é") }); n != 0 {
		t.Errorf("%v allocations with room in dst", n)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "wiki", `a"b\c`, "tab\there", "<&>", "\u00e9\u2028", "\xff\xfe", "nul\x00", "\x7f\x1f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendJSONString(nil, s)
		if !utf8.Valid(b) {
			t.Fatalf("%q encodes to invalid UTF-8 %q", s, b)
		}
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, b, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q round-trips to %q", s, back)
		}
	})
}

func BenchmarkAppendJSONString(b *testing.B) {
	dst := make([]byte, 0, 128)
	for b.Loop() {
		dst = AppendJSONString(dst[:0], "wikipedia_2016-06-27T00:00:00.000Z_2016-06-28T00:00:00.000Z_v1")
	}
}
