package input

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"strata/expr"
)

// TestKeepValues checks that, once asked, the JSON reader leaves the strings
// of earlier rows intact while it reads on, across several buffers.
func TestKeepValues(t *testing.T) {
	var b strings.Builder
	n := 3 * keepBufSize / 40
	for i := range n {
		fmt.Fprintf(&b, "{\"s\":\"value-%08d\",\"n\":%d}\n", i, i)
	}
	f, err := ParseFormat([]byte(`{"type":"json"}`))
	if err != nil {
		t.Fatal(err)
	}
	data := b.String()
	sp := NewSplit("inline", int64(len(data)), func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	})
	fr, err := Open(context.Background(), sp, f, []Column{{Name: "s", Kind: KindString}, {Name: "n", Kind: KindLong}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	if !fr.KeepValues() {
		t.Fatal("json reader cannot keep values")
	}
	var held []expr.Value
	for {
		row := make([]expr.Value, 2)
		err := fr.Next(row)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, row[0])
	}
	if len(held) != n {
		t.Fatalf("read %d rows, want %d", len(held), n)
	}
	for i, v := range held {
		if s, _ := v.AsString(); s != fmt.Sprintf("value-%08d", i) {
			t.Fatalf("row %d holds %q", i, s)
		}
	}
}
