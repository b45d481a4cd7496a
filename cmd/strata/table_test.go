package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestUnderline(t *testing.T) {
	for _, c := range []struct {
		q    string
		l, c int
		want string
	}{
		{"SELECT x FROM t", 1, 8, "  SELECT x FROM t\n         ^"},
		{"SELECT a,\n\tnosuch + 1\nFROM t", 2, 2, "  \tnosuch + 1\n  \t^~~~~~"},
		{"SELECT 1 +", 1, 11, "  SELECT 1 +\n            ^"}, // just past the end: the statement ended early
		{"SELECT 1", 3, 1, ""}, // a position the statement does not have
	} {
		if got := underline(c.q, c.l, c.c); got != c.want {
			t.Errorf("underline(%q, %d, %d)\n got %q\nwant %q", c.q, c.l, c.c, got, c.want)
		}
	}
}

// A table keeps one line per row and lines up multi-byte text by runes;
// CSV writes null as an empty field and quotes what needs it.
func TestTableFormats(t *testing.T) {
	tb := table{cols: []string{"name", "n"}, rows: [][]any{{"Zürich", json.Number("12")}, {"a\nb", nil}}}
	var b bytes.Buffer
	tb.write(&b, "table")
	if want := "name    n\n------  ----\nZürich    12\na\\nb    null\n"; b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	tb.write(&b, "csv")
	if want := "name,n\nZürich,12\n\"a\nb\",\n"; b.String() != want {
		t.Errorf("csv %q, want %q", b.String(), want)
	}
}
