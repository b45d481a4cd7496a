package segment

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSort checks radixSort against a stable comparison sort for key
// widths that give 1 to 6 passes, with many equal keys (stability).
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, bits := range []int{1, 7, 11, 12, 22, 33, 50, 63, 64} {
		for _, n := range []int{0, 1, 2, 100, 5000, 40000} {
			keys := make([]uint64, n)
			for i := range keys {
				k := r.Uint64()
				if bits < 64 {
					k &= 1<<uint(bits) - 1
				}
				if i%3 == 0 && i > 0 {
					k = keys[r.IntN(i)] // duplicates
				}
				keys[i] = k
			}
			type pair struct {
				k uint64
				p int32
			}
			want := make([]pair, n)
			perm := make([]int32, n)
			for i := range keys {
				perm[i] = int32(i)
				want[i] = pair{keys[i], int32(i)}
			}
			slices.SortStableFunc(want, func(a, b pair) int {
				switch {
				case a.k < b.k:
					return -1
				case a.k > b.k:
					return 1
				}
				return 0
			})
			radixSort(keys, perm, bits)
			for i := range want {
				if keys[i] != want[i].k || perm[i] != want[i].p {
					t.Fatalf("bits %d n %d: position %d holds (%d, %d), want (%d, %d)", bits, n, i, keys[i], perm[i], want[i].k, want[i].p)
				}
			}
		}
	}
}
