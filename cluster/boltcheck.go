package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkBoltFile reads a bbolt file with plain reads (no mmap) and reports the
// first structural problem that would make bbolt panic or fault. bbolt trusts
// its file: a page id beyond the end of a truncated file is read through the
// memory map (SIGSEGV or SIGBUS, which no recover() catches), and the page
// walk bbolt runs on open (the freelist is not synced, so it is rebuilt by
// visiting every reachable page) asserts in a goroutine of its own. So the
// file is checked before bbolt sees it, against what that walk and later reads
// rely on: a valid meta page, every page bbolt can reach inside the file and
// the high-water mark, page headers that name their own id and a branch or
// leaf type, each page referenced once, elements inside their page, keys in
// order. A missing file is not an error (a fresh node creates it).
func checkBoltFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		// bbolt would initialize it as a new, empty store: a node that had
		// a term, a vote and a log would silently start without them.
		return errors.New("the file is empty")
	}
	c := &boltChecker{f: f, size: st.Size(), reachable: map[uint64]bool{}}
	return c.check()
}

// The bbolt file format (go.etcd.io/bbolt, internal/common), in the byte
// order of the machine that wrote it.
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	boltPageHeaderSize = 16 // id uint64, flags uint16, count uint16, overflow uint32
	boltElemSize       = 16 // branch: pos, ksize uint32, pgid uint64; leaf: flags, pos, ksize, vsize uint32
	boltBucketHeader   = 16 // root pgid uint64, sequence uint64
	boltMetaSize       = 64 // magic, version, pageSize, flags uint32; root bucket; freelist, pgid, txid, checksum uint64
	boltBranchFlag     = 0x01
	boltLeafFlag       = 0x02
	boltFreelistFlag   = 0x10
	boltBucketLeafFlag = 0x01
	boltNoFreelist     = ^uint64(0)
	boltMinPageSize    = 1024
	boltMaxPageSize    = 1 << 24 // the largest page size bbolt looks for
)

var ne = binary.NativeEndian

type boltMeta struct {
	pageSize uint64
	root     uint64
	freelist uint64
	hwm      uint64 // pages [0, hwm) are in use or free; none beyond
	txid     uint64
}

type boltChecker struct {
	f         io.ReaderAt
	size      int64
	pageSize  uint64
	hwm       uint64
	reachable map[uint64]bool
}

func (c *boltChecker) check() error {
	m, err := c.meta()
	if err != nil {
		return err
	}
	c.pageSize, c.hwm = m.pageSize, m.hwm
	if m.hwm < 3 {
		return fmt.Errorf("its meta page says it has %d pages, fewer than a store can have", m.hwm)
	}
	// Pages are written before the meta page that makes them part of the store,
	// so every page below the high-water mark lies inside the file; a shorter
	// file has lost pages (it was truncated).
	if need := m.hwm * m.pageSize; m.hwm > uint64(c.size)/m.pageSize || uint64(c.size) < need {
		return fmt.Errorf("the file is %d bytes but its pages extend to %d bytes (%d pages of %d bytes): it was truncated", c.size, m.hwm*m.pageSize, m.hwm, m.pageSize)
	}
	c.reachable[0], c.reachable[1] = true, true
	if m.freelist != boltNoFreelist {
		if err := c.checkFreelist(m.freelist); err != nil {
			return err
		}
	}
	if m.root < 2 {
		return fmt.Errorf("its root bucket is at page %d, a meta page", m.root)
	}
	_, err = c.walk(m.root, nil, nil, nil)
	return err
}

// meta returns the meta page bbolt would use: of the two, the valid one with
// the higher transaction id. The page size comes from the first valid one, as
// bbolt reads it.
func (c *boltChecker) meta() (boltMeta, error) {
	if c.size < 2*boltMinPageSize {
		return boltMeta{}, fmt.Errorf("the file is %d bytes, shorter than its two meta pages", c.size)
	}
	m0, err0 := c.readMeta(0)
	pageSize := m0.pageSize
	if err0 != nil {
		// bbolt then looks for the second meta page at each possible page size.
		for ps := uint64(boltMinPageSize); ps <= boltMaxPageSize && int64(ps) < c.size; ps *= 2 {
			if m1, err := c.readMeta(int64(ps)); err == nil && m1.pageSize == ps {
				pageSize = ps
				break
			}
		}
		if pageSize == 0 {
			return boltMeta{}, fmt.Errorf("neither meta page is valid (first: %v)", err0)
		}
	}
	m1, err1 := c.readMeta(int64(pageSize))
	best := m0
	switch {
	case err0 != nil && err1 != nil:
		return boltMeta{}, fmt.Errorf("neither meta page is valid (first: %v; second: %v)", err0, err1)
	case err0 != nil || (err1 == nil && m1.txid > m0.txid):
		best = m1
	}
	if best.pageSize != pageSize {
		return boltMeta{}, fmt.Errorf("its meta pages disagree on the page size (%d, %d)", pageSize, best.pageSize)
	}
	if int64(2*pageSize) > c.size {
		return boltMeta{}, fmt.Errorf("the file is %d bytes, shorter than its two meta pages of %d bytes", c.size, pageSize)
	}
	return best, nil
}

func (c *boltChecker) readMeta(off int64) (boltMeta, error) {
	var b [boltPageHeaderSize + boltMetaSize]byte
	if _, err := c.f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, fmt.Errorf("read meta page at byte %d: %w", off, err)
	}
	mb := b[boltPageHeaderSize:]
	if ne.Uint32(mb[0:]) != boltMagic {
		return boltMeta{}, errors.New("not a bbolt meta page (bad magic)")
	}
	if v := ne.Uint32(mb[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("unknown bbolt version %d", v)
	}
	h := fnv.New64a()
	h.Write(mb[:56])
	if h.Sum64() != ne.Uint64(mb[56:]) {
		return boltMeta{}, errors.New("meta page checksum mismatch")
	}
	m := boltMeta{
		pageSize: uint64(ne.Uint32(mb[8:])),
		root:     ne.Uint64(mb[16:]),
		freelist: ne.Uint64(mb[32:]),
		hwm:      ne.Uint64(mb[40:]),
		txid:     ne.Uint64(mb[48:]),
	}
	if m.pageSize < boltMinPageSize || m.pageSize > boltMaxPageSize {
		return boltMeta{}, fmt.Errorf("page size %d out of range", m.pageSize)
	}
	return m, nil
}

// page reads page id with its overflow pages, after checking that they lie
// below the high-water mark, that the header names the page and that no
// other reference reached it already.
func (c *boltChecker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("a reference to page %d, outside the store's pages [2, %d)", id, c.hwm)
	}
	var h [boltPageHeaderSize]byte
	if _, err := c.f.ReadAt(h[:], int64(id*c.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	if got := ne.Uint64(h[0:]); got != id {
		return nil, fmt.Errorf("page %d identifies itself as page %d", id, got)
	}
	overflow := uint64(ne.Uint32(h[12:]))
	if overflow >= c.hwm-id {
		return nil, fmt.Errorf("page %d spans %d pages, past the store's %d pages", id, overflow+1, c.hwm)
	}
	for i := id; i <= id+overflow; i++ {
		if c.reachable[i] {
			return nil, fmt.Errorf("page %d is referenced twice", i)
		}
		c.reachable[i] = true
	}
	p := make([]byte, (overflow+1)*c.pageSize)
	if _, err := c.f.ReadAt(p, int64(id*c.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	return p, nil
}

func (c *boltChecker) checkFreelist(id uint64) error {
	p, err := c.page(id)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if flags := ne.Uint16(p[8:]); flags != boltFreelistFlag {
		return fmt.Errorf("freelist page %d has type %#x", id, flags)
	}
	start, count := uint64(boltPageHeaderSize), uint64(ne.Uint16(p[10:]))
	if count == 0xFFFF { // the real count is the first id slot
		if len(p) < boltPageHeaderSize+8 {
			return fmt.Errorf("freelist page %d is too short", id)
		}
		count = ne.Uint64(p[boltPageHeaderSize:])
		start += 8
	}
	if count > (uint64(len(p))-start)/8 {
		return fmt.Errorf("freelist page %d lists %d ids, more than it holds", id, count)
	}
	for i := range count {
		if free := ne.Uint64(p[start+8*i:]); free < 2 || free >= c.hwm {
			return fmt.Errorf("freelist page %d frees page %d, outside the store", id, free)
		}
	}
	return nil
}

// walk checks the B+tree rooted at page id, whose keys must lie in [lo, hi)
// (nil: unbounded), and the buckets nested in it. It returns the subtree's
// largest key, as bbolt's own check does. bucket names the top-level bucket
// the tree belongs to (nil: the top level itself, the meta page's root).
func (c *boltChecker) walk(id uint64, lo, hi, bucket []byte) ([]byte, error) {
	p, err := c.page(id)
	if err != nil {
		return nil, err
	}
	flags, count := ne.Uint16(p[8:]), int(ne.Uint16(p[10:]))
	switch flags {
	case boltBranchFlag:
		if count == 0 {
			return nil, fmt.Errorf("branch page %d is empty", id)
		}
		keys, children, err := branchElems(p, count)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", id, err)
		}
		if err := keysInOrder(keys, lo, hi); err != nil {
			return nil, fmt.Errorf("page %d: %w", id, err)
		}
		var max []byte
		runningMin := lo
		for i, child := range children {
			next := hi
			if i+1 < len(keys) {
				next = keys[i+1]
			}
			if err := keysInOrder([][]byte{keys[i]}, runningMin, nil); err != nil {
				return nil, fmt.Errorf("page %d: %w", id, err)
			}
			if max, err = c.walk(child, keys[i], next, bucket); err != nil {
				return nil, err
			}
			runningMin = max
		}
		return max, nil
	case boltLeafFlag:
		return c.leaf(id, p, count, lo, hi, bucket)
	}
	return nil, fmt.Errorf("page %d has type %#x, not a branch or leaf page", id, flags)
}

// leaf checks a leaf page (of the file, or inline in its bucket's value) and
// the buckets it holds.
func (c *boltChecker) leaf(id uint64, p []byte, count int, lo, hi, bucket []byte) ([]byte, error) {
	keys, values, isBucket, err := leafElems(p, count)
	if err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if err := keysInOrder(keys, lo, hi); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	for i, v := range values {
		if !isBucket[i] {
			if err := checkRaftEntry(bucket, keys[i], v); err != nil {
				return nil, fmt.Errorf("page %d: %w", id, err)
			}
			continue
		}
		name := bucket
		if name == nil {
			name = keys[i]
		}
		if err := c.bucket(v, name); err != nil {
			return nil, fmt.Errorf("bucket %q: %w", keys[i], err)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return keys[len(keys)-1], nil
}

// bucket checks a bucket from its value: a header and either a root page or,
// for a small bucket, its leaf page inline.
func (c *boltChecker) bucket(v, name []byte) error {
	if len(v) < boltBucketHeader {
		return fmt.Errorf("bucket value of %d bytes is shorter than its header", len(v))
	}
	if root := ne.Uint64(v); root != 0 {
		_, err := c.walk(root, nil, nil, name)
		return err
	}
	p := v[boltBucketHeader:]
	if len(p) < boltPageHeaderSize {
		return errors.New("inline bucket is shorter than a page header")
	}
	if flags := ne.Uint16(p[8:]); flags != boltLeafFlag {
		return fmt.Errorf("inline bucket page has type %#x, not a leaf page", flags)
	}
	_, err := c.leaf(0, p, int(ne.Uint16(p[10:])), nil, nil, name)
	return err
}

// branchElems returns a branch page's keys and child page ids, each key
// inside the page.
func branchElems(p []byte, count int) (keys [][]byte, children []uint64, err error) {
	if boltPageHeaderSize+count*boltElemSize > len(p) {
		return nil, nil, fmt.Errorf("%d elements do not fit in the page", count)
	}
	for i := range count {
		e := boltPageHeaderSize + i*boltElemSize
		pos, ksize := uint64(ne.Uint32(p[e:])), uint64(ne.Uint32(p[e+4:]))
		if uint64(e)+pos+ksize > uint64(len(p)) {
			return nil, nil, fmt.Errorf("element %d points past the page", i)
		}
		start := uint64(e) + pos
		keys = append(keys, p[start:start+ksize])
		children = append(children, ne.Uint64(p[e+8:]))
	}
	return keys, children, nil
}

// leafElems returns a leaf page's keys and values, each inside the page, and
// which values are buckets.
func leafElems(p []byte, count int) (keys, values [][]byte, bucket []bool, err error) {
	if boltPageHeaderSize+count*boltElemSize > len(p) {
		return nil, nil, nil, fmt.Errorf("%d elements do not fit in the page", count)
	}
	for i := range count {
		e := boltPageHeaderSize + i*boltElemSize
		flags := ne.Uint32(p[e:])
		pos, ksize, vsize := uint64(ne.Uint32(p[e+4:])), uint64(ne.Uint32(p[e+8:])), uint64(ne.Uint32(p[e+12:]))
		if uint64(e)+pos+ksize+vsize > uint64(len(p)) {
			return nil, nil, nil, fmt.Errorf("element %d points past the page", i)
		}
		start := uint64(e) + pos
		keys = append(keys, p[start:start+ksize])
		values = append(values, p[start+ksize:start+ksize+vsize])
		bucket = append(bucket, flags&boltBucketLeafFlag != 0)
	}
	return keys, values, bucket, nil
}

// keysInOrder checks that keys rise strictly and lie in [lo, hi).
func keysInOrder(keys [][]byte, lo, hi []byte) error {
	for i, k := range keys {
		if i == 0 && lo != nil && bytes.Compare(k, lo) < 0 {
			return fmt.Errorf("key %d (%x) sorts before its parent's key (%x)", i, k, lo)
		}
		if i > 0 && bytes.Compare(keys[i-1], k) >= 0 {
			return fmt.Errorf("key %d (%x) does not sort after the key before it (%x)", i, k, keys[i-1])
		}
		if hi != nil && bytes.Compare(k, hi) >= 0 {
			return fmt.Errorf("key %d (%x) does not sort before the next key of its parent (%x)", i, k, hi)
		}
	}
	return nil
}

// checkRaftEntry checks a key and value of raft-boltdb's layout that it
// decodes without a length check (a short one panics): the top level holds
// only buckets, the "logs" bucket's keys are 8-byte indexes, and Raft's terms
// in the "conf" bucket are 8-byte numbers.
func checkRaftEntry(bucket, k, v []byte) error {
	switch {
	case bucket == nil:
		return fmt.Errorf("the top level holds a value (%q), not a bucket", k)
	case string(bucket) == "logs" && len(k) != 8:
		return fmt.Errorf("a log entry's key is %d bytes, not an 8-byte index", len(k))
	case string(bucket) == "conf" && (string(k) == "CurrentTerm" || string(k) == "LastVoteTerm") && len(v) != 8:
		return fmt.Errorf("the stable store's %s is %d bytes, not an 8-byte number", k, len(v))
	}
	return nil
}
