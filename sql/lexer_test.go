package sql

import (
	"testing"
)

func TestLexer(t *testing.T) {
	toks, err := lex("SELECT \"a\"\"b\", 'x''y', 1.5e3, ? <> != <= >= => || -- c\n/* d */ x.y\r\nz")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind      tokKind
		text      string
		line, col int
	}{
		{tokWord, "SELECT", 1, 1}, {tokQuoted, `a"b`, 1, 8}, {tokComma, "", 1, 14}, {tokString, "x'y", 1, 16},
		{tokComma, "", 1, 22}, {tokNumber, "1.5e3", 1, 24}, {tokComma, "", 1, 29}, {tokParam, "", 1, 31},
		{tokNe, "", 1, 33}, {tokNe, "", 1, 36}, {tokLe, "", 1, 39}, {tokGe, "", 1, 42}, {tokArrow, "", 1, 45},
		{tokConcat, "", 1, 48}, {tokWord, "x", 2, 9}, {tokDot, "", 2, 10}, {tokWord, "y", 2, 11},
		{tokWord, "z", 3, 1}, {tokEOF, "", 3, 2},
	}
	if len(toks) != len(want) {
		t.Fatalf("%d tokens, want %d: %+v", len(toks), len(want), toks)
	}
	for i, w := range want {
		g := toks[i]
		if g.kind != w.kind || g.text != w.text || g.pos.Line != w.line || g.pos.Column != w.col {
			t.Errorf("token %d: %v %q at %d:%d, want %v %q at %d:%d", i, g.kind, g.text, g.pos.Line, g.pos.Column,
				w.kind, w.text, w.line, w.col)
		}
	}
	if toks[0].kw != kwSELECT || toks[14].kw != kwNone {
		t.Errorf("keyword lookup")
	}
}

func TestKeywordTable(t *testing.T) {
	for k := kwNone + 1; k < kwCount; k++ {
		if k == kwLastReserved {
			continue
		}
		name := k.String()
		if name == "" {
			t.Fatalf("keyword %d has no name", k)
		}
		if lookupKeyword(name) != k {
			t.Errorf("lookup %s", name)
		}
		if got := lookupKeyword(toLowerASCII(name)); got != k {
			t.Errorf("lower-case lookup %s", name)
		}
	}
	if !IsReserved("select") || IsReserved("timestamp") || IsReserved("page") {
		t.Errorf("IsReserved")
	}
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
