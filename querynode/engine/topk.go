package engine

import (
	"container/heap"
	"sort"
)

// selectTop returns the indices 0..n-1 of the k best by cmp (negative:
// a before b), best first; ties keep index order. It selects with a heap
// when k is small against n.
func selectTop(n, k int, cmp func(a, b int) int) []int {
	order := func(a, b int) int {
		if c := cmp(a, b); c != 0 {
			return c
		}
		return a - b
	}
	if k >= n || k > n/4 {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return order(idx[a], idx[b]) < 0 })
		if k < n {
			idx = idx[:k]
		}
		return idx
	}
	h := &idxHeap{cmp: order}
	for i := range n {
		if len(h.idx) < k {
			heap.Push(h, i)
		} else if order(i, h.idx[0]) < 0 {
			h.idx[0] = i
			heap.Fix(h, 0)
		}
	}
	out := h.idx
	sort.Slice(out, func(a, b int) bool { return order(out[a], out[b]) < 0 })
	return out
}

// idxHeap keeps the worst selected index on top.
type idxHeap struct {
	idx []int
	cmp func(a, b int) int
}

func (h *idxHeap) Len() int           { return len(h.idx) }
func (h *idxHeap) Less(i, j int) bool { return h.cmp(h.idx[i], h.idx[j]) > 0 }
func (h *idxHeap) Swap(i, j int)      { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *idxHeap) Push(x any)         { h.idx = append(h.idx, x.(int)) }
func (h *idxHeap) Pop() any {
	v := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return v
}
