package segment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func TestInternTable(t *testing.T) {
	tb := newInternTable()
	var vals []string
	for n := 0; n <= 40; n++ {
		vals = append(vals, strings.Repeat("x", n), strings.Repeat("\x00", n), "a"+strings.Repeat("\x00", n))
	}
	for i := 0; i < 5000; i++ {
		vals = append(vals, fmt.Sprintf("v%07d", i), fmt.Sprintf("long-shared-prefix-value-%d", i))
	}
	seen := map[string]int32{}
	for round := 0; round < 2; round++ {
		for _, v := range vals {
			id := tb.intern(v)
			if want, ok := seen[v]; ok {
				if id != want {
					t.Fatalf("%q: id %d, earlier %d", v, id, want)
				}
			} else {
				if int(id) != len(seen) {
					t.Fatalf("%q: new id %d, want %d", v, id, len(seen))
				}
				seen[v] = id
			}
			if tb.value(id) != v {
				t.Fatalf("value(%d) = %q, want %q", id, tb.value(id), v)
			}
		}
	}
	if tb.len() != len(seen) {
		t.Fatalf("len %d, want %d", tb.len(), len(seen))
	}
	ids := tb.sortedIDs()
	if len(ids) != tb.len() || !slices.IsSortedFunc(ids, tb.compare) {
		t.Fatal("sortedIDs not sorted")
	}
	got := map[int32]bool{}
	for _, id := range ids {
		got[id] = true
	}
	if len(got) != tb.len() {
		t.Fatal("sortedIDs lost ids")
	}
	tb.reset()
	if tb.len() != 0 || tb.intern("x") != 0 {
		t.Fatal("reset")
	}
}

// TestStringDimBatchedLookups feeds a single-value string dimension
// (without rollup, so short values wait for batched lookups) every form of
// input, from a buffer the caller overwrites after each row, and checks
// every row's value after finish.
func TestStringDimBatchedLookups(t *testing.T) {
	d := newStringDim(false, false)
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 2 {
		var want []*string // per committed row; nil is null
		buf := make([]byte, 0, 64)
		for i := range 3000 {
			var v Value
			var w *string
			str := func(s string) *string { return &s }
			switch k := rng.IntN(9); k {
			case 0:
				v = Null()
			case 1:
				v = Strings(nil)
			case 2:
				v = Bytes([]byte("sketch")) // not a string: null
			case 3:
				n := rng.Int64N(50)
				v, w = Long(n), str(fmt.Sprint(n))
			case 4:
				s := fmt.Sprintf("v%d", rng.IntN(40))
				v, w = Strings([]string{s}), str(s)
			case 5:
				v = Strings([]string{"a", "b"}) // an error: not committed
			case 6:
				s := fmt.Sprintf("a-value-longer-than-16-bytes-%d", rng.IntN(40))
				buf = append(buf[:0], s...)
				v, w = String(unsafe.String(unsafe.SliceData(buf), len(buf))), str(s)
			default:
				s := fmt.Sprintf("%0*d", rng.IntN(17), rng.IntN(1000))
				buf = append(buf[:0], s...)
				v, w = String(unsafe.String(unsafe.SliceData(buf), len(buf))), str(s)
			}
			if _, err := d.stage(v, nil); err != nil {
				if v.kind != vStrings || v.n < 2 {
					t.Fatalf("row %d: %v", i, err)
				}
				continue
			}
			d.commit()
			want = append(want, w)
			for j := range buf[:cap(buf)] { // the writer must have copied
				buf[:cap(buf)][j] = '#'
			}
		}
		d.finish()
		if len(d.ids) != len(want) {
			t.Fatalf("round %d: %d rows, want %d", round, len(d.ids), len(want))
		}
		for r, id := range d.ids {
			switch {
			case want[r] == nil:
				if !d.hasNull || id != 0 {
					t.Fatalf("round %d row %d: id %d, want null", round, r, id)
				}
			case d.hasNull && id == 0:
				t.Fatalf("round %d row %d: null, want %q", round, r, *want[r])
			default:
				if got := d.sorted[id-1]; got != *want[r] {
					t.Fatalf("round %d row %d: %q, want %q", round, r, got, *want[r])
				}
			}
		}
		if !slices.IsSorted(d.sorted) || len(slices.Compact(slices.Clone(d.sorted))) != len(d.sorted) {
			t.Fatalf("round %d: dictionary not strictly sorted", round)
		}
		d.reset()
	}
}
