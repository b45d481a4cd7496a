package input

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"strata/expr"
)

// jsonCorpus holds records that put tokens of every kind across block
// boundaries: multi-line objects, several objects on a line, escapes,
// numbers, broken records and blank lines.
const jsonCorpus = `{"s":"a","l":"12","d":1.5,"tags":["x","y"],"b":true}
{"s":57,"l":3.9,"d":"2","tags":"z","n":null}

{"s":1.5e3,"l":"","d":7,"obj":{"k":[1,{"a":"}"}]}}  {"s":"esc\"\u00e9\ud83d\ude00\\","l":-4}
{"s":"bad","l":"x12"}
{"s" :
  "multi\nline",
  "l": 123456789012345678, "d": -0.0}
{"s":"ok","l":1,"d":1e400}
{"a": "y" oops}
{"s":"long-string-with-no-escapes-at-all-0123456789","d":12345678.123456789}
[1,2]
{"s":"x","d":0.1000000000000000055511151231257827,"l":-9223372036854775808}
{"d":.5}
{"d":1.}
{"s":"tail","l":7,"d":2.5`

var corpusCols = []Column{{"s", KindString}, {"l", KindLong}, {"d", KindDouble}, {"tags", KindString}, {"b", KindLong},
	{"obj", KindString}}

// readJSON reads every record of r, rendering rows and parse errors.
func readJSON(t testing.TB, r Reader, ncols int) []string {
	t.Helper()
	var out []string
	row := make([]expr.Value, ncols)
	for range 100000 {
		err := r.Next(row)
		if err == io.EOF {
			return out
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			out = append(out, pe.Error())
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(row))
		for i, v := range row {
			parts[i] = v.String()
		}
		out = append(out, strings.Join(parts, "|"))
	}
	t.Fatal("reader does not make progress")
	return nil
}

// TestJSONBlockBoundaries checks that records read the same whatever sizes
// the input arrives in.
func TestJSONBlockBoundaries(t *testing.T) {
	f, _ := ParseFormat([]byte(`{"type":"json"}`))
	for _, keep := range []bool{false, true} {
		whole, _ := f.NewReader(strings.NewReader(jsonCorpus), corpusCols, "t")
		want := readJSON(t, whole, len(corpusCols))
		if len(want) != 14 {
			t.Fatalf("corpus reads as %d records:\n%s", len(want), strings.Join(want, "\n"))
		}
		for name, r := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(strings.NewReader(jsonCorpus)),
			"half":     iotest.HalfReader(strings.NewReader(jsonCorpus)),
		} {
			jr, _ := f.NewReader(r, corpusCols, "t")
			if keep {
				jr.(*jsonReader).keepValues()
			}
			if got := readJSON(t, jr, len(corpusCols)); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s (keep %v):\n%s\nwant\n%s", name, keep, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// fileSplit writes data to a temporary file and returns its split.
func fileSplit(t testing.TB, data []byte) Split {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	splits, err := (&LocalSource{Files: []string{p}}).Splits(context.Background())
	if err != nil || len(splits) != 1 {
		t.Fatalf("splits: %v %d", err, len(splits))
	}
	return splits[0]
}

// readRanges reads a split range by range the way a parallel reader must:
// a range whose first record is not where the range before stopped is
// dropped, and the rest of the file is read from that point. Parse errors
// are renumbered from the start of the file.
func readRanges(t testing.TB, sp Split, f Format, cols []Column, size int64) (out []string, restarted bool) {
	t.Helper()
	ranges, err := Ranges(context.Background(), sp, f, size)
	if err != nil {
		t.Fatal(err)
	}
	if ranges == nil {
		ranges = []Range{{0, sp.Size}}
	}
	var stop, base int64
	for i := 0; i < len(ranges); i++ {
		fr, err := OpenRange(context.Background(), sp, f, cols, nil, ranges[i])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		row := make([]expr.Value, len(cols))
		for {
			err := fr.Next(row)
			if err == io.EOF {
				break
			}
			var pe *ParseError
			if errors.As(err, &pe) {
				pe.Record += base
				got = append(got, pe.Error())
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(row))
			for i, v := range row {
				parts[i] = v.String()
			}
			got = append(got, strings.Join(parts, "|"))
		}
		first, end, ok := fr.Span()
		fr.Close()
		if !ok {
			t.Fatal("range reader without a span")
		}
		if i > 0 && first != stop {
			// Read the rest of the file from where the range before stopped.
			ranges = append(ranges[:i], Range{Start: stop, End: sp.Size})
			restarted = true
			i--
			continue
		}
		out = append(out, got...)
		stop, base = end, base+fr.Records()
	}
	return out, restarted
}

// TestRangesMatchWhole checks that reading a file in ranges gives the rows
// of reading it whole, for newline-delimited records and for records that
// span lines (which make a range start inside a record).
func TestRangesMatchWhole(t *testing.T) {
	f, _ := ParseFormat([]byte(`{"type":"json"}`))
	var nd strings.Builder
	for i := range 300 {
		if i%41 == 7 {
			nd.WriteString("{broken\n")
			continue
		}
		fmt.Fprintf(&nd, "{\"s\":\"v%d\",\"l\":%d,\"d\":%d.25}\n", i, i, i)
	}
	cases := map[string]string{"ndjson": nd.String(), "corpus": strings.Repeat(jsonCorpus+"\n", 20),
		"pretty": strings.Repeat("{\n  \"s\": \"p\",\n  \"l\": 1\n}\n", 200)}
	for name, data := range cases {
		sp := fileSplit(t, []byte(data))
		whole, _ := f.NewReader(strings.NewReader(data), corpusCols, sp.URI)
		want := readJSON(t, whole, len(corpusCols))
		for _, size := range []int64{1, 7, 64, 300, 4096} {
			got, restarted := readRanges(t, sp, f, corpusCols, size)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s, ranges of %d: got\n%s\nwant\n%s", name, size, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if name == "ndjson" && restarted {
				t.Fatalf("ndjson, ranges of %d: a range did not start at a record", size)
			}
			if name == "pretty" && size < 64 && !restarted {
				t.Fatalf("pretty, ranges of %d: no range started inside a record", size)
			}
		}
	}
}

// TestRangesRefuse checks the files Ranges leaves whole.
func TestRangesRefuse(t *testing.T) {
	f, _ := ParseFormat([]byte(`{"type":"json"}`))
	csv, _ := ParseFormat([]byte(`{"type":"csv","columns":["a"]}`))
	data := []byte(strings.Repeat("{\"a\":1}\n", 100))
	sp := fileSplit(t, data)
	for name, c := range map[string]struct {
		sp   Split
		f    Format
		size int64
	}{
		"small":  {sp, f, int64(len(data))},
		"csv":    {sp, csv, 10},
		"inline": {NewSplit("inline", int64(len(data)), nil), f, 10},
		"gzip":   {fileSplit(t, append([]byte{0x1f, 0x8b}, data...)), f, 10},
	} {
		r, err := Ranges(context.Background(), c.sp, c.f, c.size)
		if err != nil || r != nil {
			t.Fatalf("%s: ranges %v, err %v", name, r, err)
		}
	}
	r, err := Ranges(context.Background(), sp, f, 100)
	if err != nil || len(r) < 2 || r[0].Start != 0 || r[len(r)-1].End != int64(len(data)) {
		t.Fatalf("ranges %v, err %v", r, err)
	}
	for i := 1; i < len(r); i++ {
		if r[i].Start != r[i-1].End || data[r[i].Start-1] != '\n' {
			t.Fatalf("range %d = %v does not follow a line end", i, r[i])
		}
	}
}

func FuzzJSONRanges(f *testing.F) {
	f.Add([]byte(jsonCorpus), uint8(5))
	f.Add([]byte("{\"s\":\n\"x\"}\n{\"s\":\"y\"}\n{\"s\"\n:1}\n"), uint8(1))
	f.Add([]byte("{\"s\":\"a\\\"\n\"}\n\n\n{}\n"), uint8(2))
	format, _ := ParseFormat([]byte(`{"type":"json"}`))
	cols := corpusCols[:3]
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		if len(data) == 0 || len(data) > 4096 {
			return
		}
		whole, _ := format.NewReader(bytes.NewReader(data), cols, "x")
		want := readJSON(t, whole, len(cols))
		split, _ := format.NewReader(iotest.OneByteReader(bytes.NewReader(data)), cols, "x")
		if got := readJSON(t, split, len(cols)); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("byte by byte: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		sp := fileSplit(t, data)
		sp.URI = "x"
		got, _ := readRanges(t, sp, format, cols, int64(size)+1)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("ranges of %d: got\n%s\nwant\n%s", int(size)+1, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestFastNumber checks the numbers converted without strconv against it.
func TestFastNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "123456789012345678", "999999999999999999", "0.1", "-0.0", "1.", "-", "1.2.3", "4e2", "12x",
		"1.5", "14.38", "248.37", "3.14159265358979", "0.000000000000001", "123456789.012345", "-98765.4321",
		"1234567890123456", "1.23456789012345678", "1e5", "9223372036854775807"} {
		for _, k := range []Kind{KindLong, KindDouble, KindFloat} {
			checkFastNumber(t, s, k)
		}
	}
}

func checkFastNumber(t *testing.T, s string, k Kind) {
	var got expr.Value
	b := []byte(s + ",")
	n := scanFastNumber(&got, b, 0, k)
	if n < 0 {
		return
	}
	if end, err := scanNumber(b, 0); err != nil || end != n {
		t.Fatalf("%q as %d: fast path ends at %d, scanNumber at %d (%v)", s, k, n, end, err)
	}
	want, err := numberValue(s[:n], "c", k)
	if err != nil {
		t.Fatalf("%q as %d: fast path took a number strconv refuses: %v", s, k, err)
	}
	if got.Type() != want.Type() || got.Long() != want.Long() || math.Float64bits(got.Double()) != math.Float64bits(want.Double()) {
		t.Fatalf("%q as %d: fast %v, strconv %v", s, k, got, want)
	}
}

func FuzzFastNumber(f *testing.F) {
	f.Add(uint64(1438), uint8(2), true)
	f.Add(uint64(123456789012345), uint8(15), false)
	f.Fuzz(func(t *testing.T, m uint64, frac uint8, neg bool) {
		s := strconv.FormatUint(m, 10)
		if n := int(frac) % 20; n > 0 {
			for len(s) <= n {
				s = "0" + s
			}
			s = s[:len(s)-n] + "." + s[len(s)-n:]
		}
		if neg {
			s = "-" + s
		}
		for _, k := range []Kind{KindLong, KindDouble, KindFloat} {
			checkFastNumber(t, s, k)
		}
	})
}

func FuzzScanString(f *testing.F) {
	f.Add([]byte(`"plain string of some length"`))
	f.Add([]byte(`"esc\"aped\u00e9"`))
	f.Add([]byte("\"ctl\x01\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '"' {
			return
		}
		s, n, err := scanString(data, 0)
		// The reference: byte by byte.
		var ws string
		var wn int
		var werr error
		j := 1
		for ; j < len(data); j++ {
			c := data[j]
			if c == '"' {
				ws, wn = string(data[1:j]), j+1
				break
			}
			if c == '\\' {
				ws, wn, werr = unescape(data, 0)
				break
			}
			if c < 0x20 {
				werr = fmt.Errorf("control character in string")
				break
			}
		}
		if j == len(data) {
			werr = errIncomplete
		}
		if (err == nil) != (werr == nil) || s != ws || n != wn {
			t.Fatalf("scanString(%q) = %q, %d, %v; want %q, %d, %v", data, s, n, err, ws, wn, werr)
		}
	})
}
