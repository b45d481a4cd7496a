package segment

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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
