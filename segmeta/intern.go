package segmeta

import (
	"encoding/binary"
	"runtime"
	"strings"
	"sync"
	"unsafe"
	"weak"
)

// The control plane holds around a million segments whose datasource names,
// versions and dimension/metric lists repeat heavily. The interners below keep
// one copy of each distinct value for as long as any segment references it.
// They hold their entries weakly (like the standard unique package) so that
// values of killed segments do not accumulate forever, but unlike unique they
// hand out plain strings and slices, which keeps DataSegment easy to use.

var strTable = struct {
	sync.Mutex
	m map[string]weak.Pointer[byte]
}{m: map[string]weak.Pointer[byte]{}}

// internString returns the canonical copy of s.
func internString(s string) string {
	if s == "" {
		return ""
	}
	strTable.Lock()
	defer strTable.Unlock()
	if wp, ok := strTable.m[s]; ok {
		if p := wp.Value(); p != nil {
			return unsafe.String(p, len(s))
		}
	}
	return newCanonicalString(s)
}

// internBytes is internString for bytes; a hit does not allocate.
func internBytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	strTable.Lock()
	defer strTable.Unlock()
	if wp, ok := strTable.m[string(b)]; ok {
		if p := wp.Value(); p != nil {
			return unsafe.String(p, len(b))
		}
	}
	return newCanonicalString(string(b))
}

// newCanonicalString must be called with strTable locked. The map key is a
// separate copy: a key sharing the canonical bytes would keep them alive.
func newCanonicalString(s string) string {
	buf := make([]byte, len(s))
	copy(buf, s)
	p := &buf[0]
	key := strings.Clone(s)
	strTable.m[key] = weak.Make(p)
	runtime.AddCleanup(p, dropString, key)
	return unsafe.String(p, len(buf))
}

func dropString(key string) {
	strTable.Lock()
	defer strTable.Unlock()
	if wp, ok := strTable.m[key]; ok && wp.Value() == nil {
		delete(strTable.m, key)
	}
}

type listRef struct {
	wp weak.Pointer[string]
	n  int
}

var listTable = struct {
	sync.Mutex
	m map[string]listRef
}{m: map[string]listRef{}}

// emptyList is the shared non-nil empty list ("present but empty").
var emptyList = []string{}

// appendListKey appends the binary form of a list (the same bytes the binary
// segment encoding uses), which is the interning key.
func appendListKey(dst []byte, list []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(list)))
	for _, s := range list {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// internList returns the canonical copy of list. nil stays nil (absent).
// Callers must never modify the returned slice.
func internList(list []string) []string {
	if list == nil {
		return nil
	}
	if len(list) == 0 {
		return emptyList
	}
	var buf [256]byte
	key := appendListKey(buf[:0], list)
	return internListKey(key, func() []string {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = internString(s)
		}
		return out
	})
}

// internListKey looks up the list by its binary key and calls build on a miss.
func internListKey(key []byte, build func() []string) []string {
	listTable.Lock()
	if ref, ok := listTable.m[string(key)]; ok {
		if p := ref.wp.Value(); p != nil {
			listTable.Unlock()
			return unsafe.Slice(p, ref.n)
		}
	}
	listTable.Unlock()
	out := build() // may take strTable's lock; never hold both
	if len(out) == 0 {
		return emptyList
	}
	listTable.Lock()
	defer listTable.Unlock()
	if ref, ok := listTable.m[string(key)]; ok { // lost a race: use the winner
		if p := ref.wp.Value(); p != nil {
			return unsafe.Slice(p, ref.n)
		}
	}
	k := string(key)
	p := &out[0]
	listTable.m[k] = listRef{wp: weak.Make(p), n: len(out)}
	runtime.AddCleanup(p, dropList, k)
	return out[:len(out):len(out)]
}

func dropList(key string) {
	listTable.Lock()
	defer listTable.Unlock()
	if ref, ok := listTable.m[key]; ok && ref.wp.Value() == nil {
		delete(listTable.m, key)
	}
}
