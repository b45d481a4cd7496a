package msq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"strata/expr"
	"strata/ingest/input"
)

func openInline(t *testing.T, format, data string, cols []input.Column) *input.FileReader {
	t.Helper()
	f, err := input.ParseFormat([]byte(format))
	if err != nil {
		t.Fatal(err)
	}
	sp := input.NewSplit("inline", int64(len(data)), func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	})
	fr, err := input.Open(context.Background(), sp, f, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

// TestPrefetcherMatchesReader checks that prefetched rows (spanning several
// batches) and parse errors
// come out as the reader produces them, for a format that keeps its values
// (json) and one that does not (csv).
func TestPrefetcherMatchesReader(t *testing.T) {
	var b, c strings.Builder
	for i := range 3*prefetchRows + 7 {
		fmt.Fprintf(&c, "v%d,%d,a%d|b\n", i, i, i)
	}
	comparePrefetch(t, `{"type":"csv","columns":["s","n","m"],"listDelimiter":"|"}`, c.String())
	for i := range 3*prefetchRows + 7 {
		if i%97 == 5 {
			b.WriteString("{not json\n")
			continue
		}
		fmt.Fprintf(&b, `{"s":"v%d","n":%d,"m":["a%d","b"]}`+"\n", i, i, i)
	}
	comparePrefetch(t, `{"type":"json"}`, b.String())
}

func comparePrefetch(t *testing.T, format, data string) {
	cols := []input.Column{{Name: "s", Kind: input.KindString}, {Name: "n", Kind: input.KindLong},
		{Name: "m", Kind: input.KindStringArray}}
	render := func(row []expr.Value, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprint(row)
	}
	var want []string
	fr := openInline(t, format, data, cols)
	row := make([]expr.Value, len(cols))
	for {
		err := fr.Next(row)
		if err == io.EOF {
			break
		}
		want = append(want, render(row, err))
	}
	fr.Close()

	fr = openInline(t, format, data, cols)
	pf := newPrefetcher(fr, len(cols))
	var got []string
	for {
		r, err := pf.Next(context.Background(), len(cols))
		if err == io.EOF {
			break
		}
		var pe *input.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatal(err)
		}
		got = append(got, render(r, err))
	}
	pf.Close()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: got %s, want %s", i, got[i], want[i])
		}
	}
}

// TestPrefetcherStopsEarly checks that Close ends the decoding goroutine
// when the consumer stops before the end, and that a cancelled context ends Next.
func TestPrefetcherStopsEarly(t *testing.T) {
	data := strings.Repeat(`{"s":"x"}`+"\n", 10*prefetchRows)
	cols := []input.Column{{Name: "s", Kind: input.KindString}}
	fr := openInline(t, `{"type":"json"}`, data, cols)
	pf := newPrefetcher(fr, len(cols))
	if _, err := pf.Next(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		if _, err := pf.Next(ctx, 1); err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			break
		}
	}
	pf.Close()
}

// TestOwnStrings checks that strings and string array elements are copied
// out of a buffer that is overwritten afterwards.
func TestOwnStrings(t *testing.T) {
	buf := []byte("abcdef")
	s := unsafe.String(&buf[0], 3)
	e := unsafe.String(&buf[3], 3)
	row := []expr.Value{expr.String(s), expr.Long(7), expr.StringArray(e, "x"), expr.Null}
	ownStrings(row, nil)
	copy(buf, "ZZZZZZ")
	if got := fmt.Sprint(row); got != fmt.Sprint([]expr.Value{expr.String("abc"), expr.Long(7), expr.StringArray("def", "x"), expr.Null}) {
		t.Fatalf("row after overwrite = %s", got)
	}
}

// TestPrefetcherRangesMatchReader checks that a file read in parallel ranges
// yields the rows and parse errors (with their record numbers) of a single
// reader, for records on one line and records spanning lines.
func TestPrefetcherRangesMatchReader(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		switch {
		case i%97 == 5:
			b.WriteString("{not json\n")
		case i > 2500 && i%4 == 0:
			fmt.Fprintf(&b, "{\"s\":\n \"v%d\",\n \"n\": %d}\n", i, i)
		case i%7 == 2:
			fmt.Fprintf(&b, `{"s":null,"n":%d,"m":["a%d",null,"b"],"f":%d.5}`+"\n", i, i, i)
		default:
			fmt.Fprintf(&b, `{"s":"v%d","n":%d,"m":"x","f":%d}`+"\n", i, i, -i)
		}
	}
	path := filepath.Join(t.TempDir(), "rows.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src, _ := input.ParseSource([]byte(`{"type":"local","files":[` + strconv.Quote(path) + `]}`))
	splits, _ := src.Splits(context.Background())
	f, _ := input.ParseFormat([]byte(`{"type":"json"}`))
	cols := []input.Column{{Name: "s", Kind: input.KindString}, {Name: "n", Kind: input.KindLong},
		{Name: "m", Kind: input.KindStringArray}, {Name: "f", Kind: input.KindFloat}}
	fs := fileSource{split: splits[0], format: f, cols: cols}
	read := func() []string {
		pf, err := openPrefetcher(context.Background(), fs)
		if err != nil {
			t.Fatal(err)
		}
		defer pf.Close()
		var out []string
		for {
			r, err := pf.Next(context.Background(), len(cols))
			if err == io.EOF {
				if pf.Bytes() != int64(b.Len()) {
					t.Fatalf("read %d bytes of %d", pf.Bytes(), b.Len())
				}
				return out
			}
			var pe *input.ParseError
			if err != nil && !errors.As(err, &pe) {
				t.Fatal(err)
			}
			if err != nil {
				out = append(out, err.Error())
			} else {
				out = append(out, fmt.Sprint(r))
			}
		}
	}
	var want, got []string
	withRanges(0, func() { want = read() })
	withRanges(1000, func() { got = read() })
	if len(want) != 3000 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d records, want %d (of 3000), or they differ", len(got), len(want))
	}
}
