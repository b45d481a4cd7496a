package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

// --url pointing at something that is not a Strata router (another HTTP
// service answering JSON) gets an error naming the answer, never a panic,
// whatever shape the answer has.
func TestQueryOfAStrangeAnswer(t *testing.T) {
	for _, answer := range []string{`[{"a":1}]`, `[1,2]`, `[[]]`, `[["a"],{"b":1}]`, `{"rows":[]}`, `[]`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer)
		}))
		code, out, errOut := capture(t, "query", "--url", srv.URL, "SELECT 1")
		srv.Close()
		if answer == `[[]]` { // a header of no columns and no rows: an empty table
			continue
		}
		if code != 1 || !strings.Contains(errOut, "unexpected answer") {
			t.Errorf("answer %s: exit %d\n%s%s", answer, code, out, errOut)
		}
	}
}

// The same for rows shorter than the header and for native queries, whose
// answers are printed as they come: a table or an error, no panic.
func TestStrangeAnswersDoNotPanic(t *testing.T) {
	for _, c := range []struct {
		args   []string
		answer string
	}{
		{[]string{"query", "SELECT 1"}, `[["a","b"],[1]]`},
		{[]string{"query", "SELECT 1"}, `[["a"],[1,2,3]]`},
		{[]string{"query", "--native", `{"queryType":"scan"}`}, `[1,2]`},
		{[]string{"query", "--native", `{"queryType":"scan"}`}, `"text"`},
		{[]string{"query", "--native", `{"queryType":"scan"}`}, `[[1],{"result":7},{"events":[1,[2]]},{"event":1},{"result":[1,{"a":2}]}]`},
		{[]string{"datasources"}, `[1,"a",[2],null]`},
		{[]string{"segments", "x"}, `{"a":{"b":[1]}}`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, c.answer)
		}))
		code, out, errOut := capture(t, append(c.args, "--url", srv.URL)...)
		srv.Close()
		if code != 0 && code != 1 {
			t.Errorf("%v answered %s: exit %d\n%s%s", c.args, c.answer, code, out, errOut)
		}
	}
}
