package msq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"strata/expr"
)

// Rows move between stages in frames: byte buffers of encoded rows, grouped
// into partitions (a time chunk, a hash bucket, or the single partition of
// a result). Frames stay in memory up to a budget shared by the whole query;
// beyond it they are spilled to a temporary file.

// Row encoding: per column a tag byte and its payload.
const (
	tagNull   = 0
	tagLong   = 1
	tagDouble = 2
	tagString = 3
	tagArray  = 4 // element type byte, count, then tagged elements
)

// frameTarget is the size a frame is flushed at.
const frameTarget = 1 << 20

func appendValue(dst []byte, v expr.Value) []byte {
	if v.IsNull() {
		return append(dst, tagNull)
	}
	switch v.Type() {
	case expr.TypeLong:
		n, _ := v.AsLong()
		dst = append(dst, tagLong)
		return binary.AppendVarint(dst, n)
	case expr.TypeDouble:
		f, _ := v.AsDouble()
		dst = append(dst, tagDouble)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	case expr.TypeString:
		s, _ := v.AsString()
		dst = append(dst, tagString)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	elems := v.Elems()
	dst = append(dst, tagArray, byte(v.Type()))
	dst = binary.AppendUvarint(dst, uint64(len(elems)))
	for _, e := range elems {
		dst = appendValue(dst, e)
	}
	return dst
}

func appendRow(dst []byte, row []expr.Value) []byte {
	for _, v := range row {
		dst = appendValue(dst, v)
	}
	return dst
}

var errBadFrame = errors.New("msq: corrupt frame")

// decodeValue reads one value; null values take type t. Strings alias b.
func decodeValue(b []byte, t expr.Type) (expr.Value, []byte, error) {
	if len(b) == 0 {
		return expr.Value{}, nil, errBadFrame
	}
	tag := b[0]
	b = b[1:]
	switch tag {
	case tagNull:
		return expr.NullOf(t), b, nil
	case tagLong:
		n, k := binary.Varint(b)
		if k <= 0 {
			return expr.Value{}, nil, errBadFrame
		}
		return expr.Long(n), b[k:], nil
	case tagDouble:
		if len(b) < 8 {
			return expr.Value{}, nil, errBadFrame
		}
		return expr.Double(math.Float64frombits(binary.LittleEndian.Uint64(b))), b[8:], nil
	case tagString:
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return expr.Value{}, nil, errBadFrame
		}
		b = b[k:]
		if n == 0 {
			return expr.String(""), b, nil
		}
		return expr.String(unsafe.String(&b[0], int(n))), b[n:], nil
	case tagArray:
		if len(b) < 1 {
			return expr.Value{}, nil, errBadFrame
		}
		at := expr.Type(b[0])
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || n > uint64(len(b)) {
			return expr.Value{}, nil, errBadFrame
		}
		b = b[1+k:]
		elems := make([]expr.Value, n)
		for i := range elems {
			var err error
			if elems[i], b, err = decodeValue(b, at.Elem()); err != nil {
				return expr.Value{}, nil, err
			}
		}
		return expr.Array(at, elems), b, nil
	}
	return expr.Value{}, nil, errBadFrame
}

// decodeRow reads one row of len(types) values into dst.
func decodeRow(dst []expr.Value, types []expr.Type, b []byte) ([]byte, error) {
	var err error
	for i, t := range types {
		if dst[i], b, err = decodeValue(b, t); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// frame is a block of encoded rows.
type frame struct {
	data []byte
	rows int
}

// spiller is the memory budget of a query and its spill file.
type spiller struct {
	budget int64
	inMem  atomic.Int64
	dir    string
	mu     sync.Mutex
	file   *os.File
	off    int64
}

func (s *spiller) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		name := s.file.Name()
		s.file.Close()
		os.Remove(name)
		s.file = nil
	}
}

// write appends data to the spill file and returns its offset.
func (s *spiller) write(data []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "msq-spill-*")
		if err != nil {
			return 0, err
		}
		s.file = f
	}
	if _, err := s.file.WriteAt(data, s.off); err != nil {
		return 0, err
	}
	off := s.off
	s.off += int64(len(data))
	return off, nil
}

func (s *spiller) read(off int64, n int) ([]byte, error) {
	s.mu.Lock()
	f := s.file
	s.mu.Unlock()
	if f == nil {
		return nil, errBadFrame
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// spilled is a frame written to the spill file.
type spilled struct {
	off  int64
	n    int
	rows int
}

// partition holds the frames of one output partition of a stage.
type partition struct {
	key     int64
	mu      sync.Mutex
	frames  []frame
	spills  []spilled
	rows    int64
	bytes   int64
	nframes int64
	arrays  []bool // columns that held an array value (multi-value strings)
}

// add stores a finished frame, spilling it when the budget is exhausted.
// arrays marks the columns that held arrays in the frame.
func (p *partition) add(sp *spiller, f frame, arrays []bool) error {
	n := int64(len(f.data))
	if sp.inMem.Add(n) > sp.budget {
		sp.inMem.Add(-n)
		off, err := sp.write(f.data)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.spills = append(p.spills, spilled{off: off, n: len(f.data), rows: f.rows})
	} else {
		p.mu.Lock()
		p.frames = append(p.frames, f)
	}
	p.rows += int64(f.rows)
	p.bytes += n
	p.nframes++
	for i, a := range arrays {
		if a {
			for len(p.arrays) <= i {
				p.arrays = append(p.arrays, false)
			}
			p.arrays[i] = true
		}
	}
	p.mu.Unlock()
	return nil
}

// each calls fn with every frame of the partition. Frames read back from the
// spill file are fresh buffers, so values decoded from them stay valid.
func (p *partition) each(sp *spiller, fn func(f frame) error) error {
	for _, f := range p.frames {
		if err := fn(f); err != nil {
			return err
		}
	}
	for _, s := range p.spills {
		data, err := sp.read(s.off, s.n)
		if err != nil {
			return err
		}
		if err := fn(frame{data: data, rows: s.rows}); err != nil {
			return err
		}
	}
	return nil
}

// eachRow decodes every row of the partition into a reused row slice.
func (p *partition) eachRow(sp *spiller, types []expr.Type, fn func(row []expr.Value) error) error {
	row := make([]expr.Value, len(types))
	return p.each(sp, func(f frame) error {
		b := f.data
		for i := 0; i < f.rows; i++ {
			var err error
			if b, err = decodeRow(row, types, b); err != nil {
				return err
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// release drops the partition's in-memory frames.
func (p *partition) release(sp *spiller) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, f := range p.frames {
		n += int64(len(f.data))
	}
	sp.inMem.Add(-n)
	p.frames = nil
	p.spills = nil
}

// partitionSet is the output of a stage: partitions by key.
type partitionSet struct {
	sp    *spiller
	mu    sync.Mutex
	parts map[int64]*partition
	types []expr.Type
}

func newPartitionSet(sp *spiller, sig Signature) *partitionSet {
	types := make([]expr.Type, len(sig))
	for i, c := range sig {
		types[i] = c.Type.exprType()
	}
	return &partitionSet{sp: sp, parts: map[int64]*partition{}, types: types}
}

func (s *partitionSet) get(key int64) *partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[key]
	if p == nil {
		p = &partition{key: key}
		s.parts[key] = p
	}
	return p
}

// sorted returns the partitions in key order.
func (s *partitionSet) sorted() []*partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*partition, 0, len(s.parts))
	for _, p := range s.parts {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *partition) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	return out
}

func (s *partitionSet) release() {
	for _, p := range s.sorted() {
		p.release(s.sp)
	}
}

// partWriter is one worker's writer into a partition set: it buffers a frame
// per partition and counts what it wrote.
type partWriter struct {
	set   *partitionSet
	bufs  map[int64]*frameBuf
	last  *frameBuf
	stats map[int64]*chanStats
}

type frameBuf struct {
	key    int64
	p      *partition
	data   []byte
	rows   int
	st     *chanStats
	arrays []bool
}

// chanStats counts rows, bytes and frames of one partition of a channel.
type chanStats struct {
	rows, bytes, frames int64
}

func newPartWriter(set *partitionSet) *partWriter {
	return &partWriter{set: set, bufs: map[int64]*frameBuf{}, stats: map[int64]*chanStats{}}
}

func (w *partWriter) buf(key int64) *frameBuf {
	if w.last != nil && w.last.key == key {
		return w.last
	}
	b := w.bufs[key]
	if b == nil {
		st := &chanStats{}
		w.stats[key] = st
		b = &frameBuf{key: key, p: w.set.get(key), st: st}
		w.bufs[key] = b
	}
	w.last = b
	return b
}

// write appends a row to partition key.
func (w *partWriter) write(key int64, row []expr.Value) error {
	b := w.buf(key)
	n := len(b.data)
	for i, v := range row {
		if !v.IsNull() && v.Type().IsArray() {
			for len(b.arrays) <= i {
				b.arrays = append(b.arrays, false)
			}
			b.arrays[i] = true
		}
	}
	b.data = appendRow(b.data, row)
	b.rows++
	b.st.rows++
	b.st.bytes += int64(len(b.data) - n)
	if len(b.data) >= frameTarget {
		return w.flushBuf(b)
	}
	return nil
}

func (w *partWriter) flushBuf(b *frameBuf) error {
	if b.rows == 0 {
		return nil
	}
	f := frame{data: b.data, rows: b.rows}
	b.data, b.rows = make([]byte, 0, min(2*len(f.data), frameTarget+frameTarget/4)), 0
	b.st.frames++
	return b.p.add(w.set.sp, f, b.arrays)
}

// flush hands every partly filled frame to its partition.
func (w *partWriter) flush() error {
	for _, b := range w.bufs {
		if err := w.flushBuf(b); err != nil {
			return err
		}
	}
	return nil
}

func (w *partWriter) String() string { return fmt.Sprintf("partWriter(%d partitions)", len(w.bufs)) }
