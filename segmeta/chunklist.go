package segmeta

import "slices"

// chunkList is a sorted sequence stored as a list of small sorted arrays
// (leaves): a two-level B-tree without keys. Search is a binary search over
// leaves then within one leaf; replacing a run of elements rewrites only the
// leaves involved, and the leaf list itself moves only when a leaf is split
// or dropped. Ordering is the caller's business: callers insert at positions
// they found with search.
type chunkList[T any] struct {
	leaves  [][]T // never holds an empty leaf
	n       int
	scratch []T
}

const (
	leafMax    = 128
	leafTarget = leafMax * 3 / 4 // fill of leaves made by a split
)

// cpos is a position: element i of leaf. The end position is {len(leaves), 0}.
type cpos struct{ leaf, i int }

func (c *chunkList[T]) len() int { return c.n }

func (c *chunkList[T]) end() cpos { return cpos{len(c.leaves), 0} }

func (c *chunkList[T]) valid(p cpos) bool { return p.leaf < len(c.leaves) }

func (c *chunkList[T]) at(p cpos) *T { return &c.leaves[p.leaf][p.i] }

func (c *chunkList[T]) next(p cpos) cpos {
	p.i++
	if p.i == len(c.leaves[p.leaf]) {
		p.leaf++
		p.i = 0
	}
	return p
}

func (c *chunkList[T]) prev(p cpos) (cpos, bool) {
	if p.i > 0 {
		p.i--
		return p, true
	}
	if p.leaf == 0 {
		return p, false
	}
	p.leaf--
	p.i = len(c.leaves[p.leaf]) - 1
	return p, true
}

// search returns the position of the first element for which before is
// false; before must be true on a prefix of the sequence and false after.
func (c *chunkList[T]) search(before func(*T) bool) cpos {
	lo, hi := 0, len(c.leaves)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		l := c.leaves[m]
		if before(&l[len(l)-1]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(c.leaves) {
		return c.end()
	}
	l := c.leaves[lo]
	i, j := 0, len(l)
	for i < j {
		m := int(uint(i+j) >> 1)
		if before(&l[m]) {
			i = m + 1
		} else {
			j = m
		}
	}
	return cpos{lo, i} // i < len(l): the leaf's last element is not before
}

// replace removes k elements starting at p and inserts items in their place.
func (c *chunkList[T]) replace(p cpos, k int, items []T) {
	if k == 0 && len(items) == 0 {
		return
	}
	if len(c.leaves) == 0 { // start from one empty leaf, replaced below
		p = cpos{}
		c.leaves = append(c.leaves, make([]T, 0, leafMax))
	} else if p.leaf == len(c.leaves) { // append after the last element
		p = cpos{len(c.leaves) - 1, len(c.leaves[len(c.leaves)-1])}
	}
	// The last deleted element is at (e, j); with k == 0, j = p.i-1.
	e, j := p.leaf, p.i+k-1
	for k > 0 && j >= len(c.leaves[e]) {
		j -= len(c.leaves[e])
		e++
	}
	content := append(c.scratch[:0], c.leaves[p.leaf][:p.i]...)
	content = append(content, items...)
	content = append(content, c.leaves[e][j+1:]...)
	affected := e - p.leaf + 1
	// Absorb the following leaf when the result is small, so deletions do not
	// leave a trail of tiny leaves.
	if next := p.leaf + affected; len(content) < leafMax/4 && next < len(c.leaves) &&
		len(content)+len(c.leaves[next]) <= leafMax {
		content = append(content, c.leaves[next]...)
		affected++
	}
	c.n += len(items) - k

	n := 0
	switch {
	case len(content) == 0:
	case len(content) <= leafMax:
		n = 1
	default:
		n = (len(content) + leafTarget - 1) / leafTarget
	}
	// Content lives in scratch, so the affected leaves' arrays can be reused;
	// only a change in the number of leaves moves the leaf list.
	fresh := make([][]T, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := len(content)*i/n, len(content)*(i+1)/n
		var leaf []T
		if i < affected {
			leaf = c.leaves[p.leaf+i][:0]
		} else {
			leaf = make([]T, 0, leafMax)
		}
		leaf = append(leaf, content[lo:hi]...)
		clear(leaf[len(leaf):cap(leaf)])
		fresh = append(fresh, leaf)
	}
	for i := n; i < affected; i++ {
		old := c.leaves[p.leaf+i]
		clear(old[:cap(old)])
	}
	if n == affected {
		copy(c.leaves[p.leaf:], fresh)
	} else {
		c.leaves = slices.Replace(c.leaves, p.leaf, p.leaf+affected, fresh...)
	}
	clear(content)
	c.scratch = content[:0]
}
