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
	return appendValueAt(dst, &v)
}

// appendValueAt is appendValue reading the value in place (a Value passed
// by value is copied around the stack at every method call).
func appendValueAt(dst []byte, v *expr.Value) []byte {
	if v.IsNull() {
		return append(dst, tagNull)
	}
	switch v.Type() {
	case expr.TypeLong:
		return binary.AppendVarint(append(dst, tagLong), v.Long())
	case expr.TypeDouble:
		return binary.LittleEndian.AppendUint64(append(dst, tagDouble), math.Float64bits(v.Double()))
	case expr.TypeString:
		s := v.Str()
		if len(s) < 0x80 {
			dst = append(dst, tagString, byte(len(s)))
		} else {
			dst = binary.AppendUvarint(append(dst, tagString), uint64(len(s)))
		}
		return append(dst, s...)
	}
	elems := v.Elems()
	dst = append(dst, tagArray, byte(v.Type()))
	dst = binary.AppendUvarint(dst, uint64(len(elems)))
	for i := range elems {
		dst = appendValueAt(dst, &elems[i])
	}
	return dst
}

func appendRow(dst []byte, row []expr.Value) []byte {
	for i := range row {
		dst = appendValueAt(dst, &row[i])
	}
	return dst
}

// appendRowMarking is appendRow that also marks in *arrays the columns
// holding arrays.
func appendRowMarking(dst []byte, row []expr.Value, arrays *[]bool) []byte {
	for i := range row {
		dst = appendValueMarking(dst, &row[i], i, arrays)
	}
	return dst
}

// appendValueMarking appends the value of column i, marking the column in
// *arrays when the value is an array.
func appendValueMarking(dst []byte, v *expr.Value, i int, arrays *[]bool) []byte {
	if !v.IsNull() && v.Type().IsArray() {
		for len(*arrays) <= i {
			*arrays = append(*arrays, false)
		}
		(*arrays)[i] = true
	}
	return appendValueAt(dst, v)
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
	buf := make([]byte, n)
	return buf, s.readInto(buf, off)
}

// readInto reads len(buf) bytes of the spill file at off.
func (s *spiller) readInto(buf []byte, off int64) error {
	s.mu.Lock()
	f := s.file
	s.mu.Unlock()
	if f == nil {
		return errBadFrame
	}
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return err
	}
	return nil
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
// arrays marks the columns that held arrays in the frame. It reports whether
// the frame was spilled: its buffer is then free again.
func (p *partition) add(sp *spiller, f frame, arrays []bool) (bool, error) {
	n := int64(len(f.data))
	spill := sp.inMem.Add(n) > sp.budget
	if spill {
		sp.inMem.Add(-n)
		off, err := sp.write(f.data)
		if err != nil {
			return false, err
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
	return spill, nil
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

// consume calls fn with every frame of a partition that is read only once,
// letting go of each frame after fn: in-memory frames go back to the budget
// at once, and frames read back from the spill file share one buffer, so fn
// must not keep what it decodes.
func (p *partition) consume(sp *spiller, fn func(f frame) error) error {
	p.mu.Lock()
	frames, spills := p.frames, p.spills
	p.frames, p.spills = nil, nil
	p.mu.Unlock()
	for i, f := range frames {
		err := fn(f)
		frames[i] = frame{}
		sp.inMem.Add(-int64(len(f.data)))
		if err != nil {
			for _, g := range frames[i+1:] {
				sp.inMem.Add(-int64(len(g.data)))
			}
			return err
		}
	}
	var buf []byte
	for _, s := range spills {
		if cap(buf) < s.n {
			buf = make([]byte, s.n)
		}
		buf = buf[:s.n]
		if err := sp.readInto(buf, s.off); err != nil {
			return err
		}
		if err := fn(frame{data: buf, rows: s.rows}); err != nil {
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
	b.data = appendRowMarking(b.data, row, &b.arrays)
	b.rows++
	b.st.rows++
	b.st.bytes += int64(len(b.data) - n)
	if len(b.data) >= frameTarget {
		return w.flushBuf(b)
	}
	return nil
}

// writeEncoded appends rows encoded elsewhere to their partition, cutting
// frames after the same rows as write would.
func (w *partWriter) writeEncoded(p *encodedPart) error {
	b := w.buf(p.key)
	for i, a := range p.arrays {
		if a {
			for len(b.arrays) <= i {
				b.arrays = append(b.arrays, false)
			}
			b.arrays[i] = true
		}
	}
	start, r := 0, 0
	for r < len(p.ends) {
		// The frame is cut after the first row that brings it to frameTarget.
		room := frameTarget - len(b.data)
		e := r
		for e < len(p.ends) && p.ends[e]-start < room {
			e++
		}
		cut := e < len(p.ends)
		if !cut {
			e--
		}
		b.data = append(b.data, p.data[start:p.ends[e]]...)
		b.rows += e - r + 1
		b.st.rows += int64(e - r + 1)
		b.st.bytes += int64(p.ends[e] - start)
		start, r = p.ends[e], e+1
		if cut {
			if err := w.flushBuf(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *partWriter) flushBuf(b *frameBuf) error {
	if b.rows == 0 {
		return nil
	}
	f := frame{data: b.data, rows: b.rows}
	b.rows = 0
	b.st.frames++
	spilled, err := b.p.add(w.set.sp, f, b.arrays)
	if spilled {
		b.data = f.data[:0] // written out: the buffer takes the next frame
	} else {
		b.data = make([]byte, 0, min(2*len(f.data), frameTarget+frameTarget/4))
	}
	return err
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
