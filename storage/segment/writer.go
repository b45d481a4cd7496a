package segment

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"strata/aggregate/blob"
	"strata/storage/encoding"
)

// Writer accumulates the rows of one segment in memory (columnar, with
// dictionary-encoded strings and, with rollup, one row per distinct key) and
// writes them as a segment file. A Writer is not safe for concurrent use.
type Writer struct {
	r       *resolved
	times   longSource // truncated times
	dims    []dimAcc
	aggs    []*aggregator
	rollup  map[string]int32
	key     []byte
	minTime int64
	maxTime int64
}

// Info describes a written segment file.
type Info struct {
	Path      string
	Partition int // set by Builder; 0 for a lone Writer
	Rows      int
	Bytes     int64
	Interval  Interval
	MinTime   int64 // least stored (truncated) row time; 0 when empty
	MaxTime   int64
}

// NewWriter validates spec and returns an empty Writer.
func NewWriter(spec Spec) (*Writer, error) {
	r, err := spec.resolve()
	if err != nil {
		return nil, err
	}
	w := &Writer{r: r}
	for _, d := range r.spec.Dimensions {
		switch d.Kind {
		case KindString:
			w.dims = append(w.dims, newStringDim(d.MultiValue, r.spec.Rollup))
		case KindLong:
			w.dims = append(w.dims, &longDim{})
		case KindFloat:
			w.dims = append(w.dims, &doubleDim{float: true})
		case KindDouble:
			w.dims = append(w.dims, &doubleDim{})
		}
	}
	for _, m := range r.spec.Metrics {
		a, err := newAggregator(m, r.spec.Rollup)
		if err != nil {
			return nil, err
		}
		w.aggs = append(w.aggs, a)
	}
	if r.spec.Rollup {
		w.rollup = make(map[string]int32)
	}
	return w, nil
}

// Len is the number of rows accumulated (after rollup).
func (w *Writer) Len() int { return len(w.times.vals) }

// Add adds one input row. With rollup it may merge into an existing row.
func (w *Writer) Add(row Row) error {
	if len(row.Values) != len(w.r.spec.Fields) {
		return fmt.Errorf("segment: row has %d values, spec has %d fields", len(row.Values), len(w.r.spec.Fields))
	}
	if !w.r.spec.Interval.Contains(row.Time) {
		return fmt.Errorf("segment: row time %d outside interval [%d, %d)", row.Time, w.r.spec.Interval.Start, w.r.spec.Interval.End)
	}
	if len(w.times.vals) >= maxRows {
		return fmt.Errorf("segment: more than %d rows", maxRows)
	}
	t := row.Time
	if w.r.spec.Truncate != nil {
		if t = w.r.spec.Truncate(t); !w.r.spec.Interval.Contains(t) {
			return fmt.Errorf("segment: row time %d truncates to %d, outside the interval (query granularity coarser than the segment?)", row.Time, t)
		}
	}
	// The rollup key: truncated time and every dimension's staged value.
	// Without rollup stage gets a nil key and appends nothing.
	var key []byte
	if w.rollup != nil {
		key = encoding.AppendVarint(w.key[:0], t)
	}
	var err error
	for i, d := range w.dims {
		if key, err = d.stage(row.Values[w.r.dimField[i]], key); err != nil {
			return fmt.Errorf("segment: dimension %q: %w", w.r.spec.Dimensions[i].Name, err)
		}
	}
	if w.rollup != nil {
		w.key = key
	}
	if w.rollup != nil {
		if at, ok := w.rollup[string(key)]; ok {
			for i, a := range w.aggs {
				if err := a.fold(at, w.metricInput(row, i), row.Time); err != nil {
					return fmt.Errorf("segment: metric %q: %w", w.r.spec.Metrics[i].Name, err)
				}
			}
			return nil
		}
	}
	// Initialize the metrics first: an aggregator error must not leave a
	// half-added row behind.
	n := int32(len(w.times.vals))
	for i, a := range w.aggs {
		if err := a.init(w.metricInput(row, i), row.Time); err != nil {
			for _, b := range w.aggs[:i] {
				b.truncate(int(n))
			}
			return fmt.Errorf("segment: metric %q: %w", w.r.spec.Metrics[i].Name, err)
		}
	}
	for _, d := range w.dims {
		d.commit()
	}
	w.times.vals = push(w.times.vals, t)
	if n == 0 {
		w.minTime, w.maxTime = t, t
	} else {
		w.minTime, w.maxTime = min(w.minTime, t), max(w.maxTime, t)
	}
	if w.rollup != nil {
		w.rollup[string(key)] = n
	}
	return nil
}

func (w *Writer) metricInput(row Row, i int) Value {
	if f := w.r.metField[i]; f >= 0 {
		return row.Values[f]
	}
	return Value{}
}

// Reset discards all rows, keeping allocated memory for reuse.
func (w *Writer) Reset() {
	w.times.vals = w.times.vals[:0]
	for _, d := range w.dims {
		d.reset()
	}
	for _, a := range w.aggs {
		a.reset()
	}
	clear(w.rollup)
}

// WriteFile sorts the accumulated rows and writes them as a segment file at
// path, atomically (a temporary file in the same directory, synced, then
// renamed). The Writer is reset afterwards, also on error.
func (w *Writer) WriteFile(path string) (Info, error) {
	defer w.Reset()
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return Info{}, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	info, err := w.write(tmp)
	if err != nil {
		return Info{}, err
	}
	if err := tmp.Sync(); err != nil {
		return Info{}, err
	}
	if err := tmp.Close(); err != nil {
		return Info{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return Info{}, err
	}
	ok = true
	syncDir(dir)
	info.Path = path
	return info, nil
}

// syncDir makes a rename durable; failures are ignored (not all file
// systems support syncing directories).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func (w *Writer) write(f *os.File) (Info, error) {
	n := w.Len()
	for _, d := range w.dims {
		d.finish()
	}
	perm := w.sortRows()
	fw := &fileWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20), numRows: n, rowsPerBlock: w.r.rowsPerBlk}
	if err := fw.write(encodeHeader()); err != nil {
		return Info{}, err
	}
	ft := &footer{
		numRows:      n,
		rowsPerBlock: w.r.rowsPerBlk,
		interval:     w.r.spec.Interval,
		rollup:       w.r.spec.Rollup,
		sortColumns:  w.r.spec.SortColumns,
	}
	if n > 0 {
		ft.minTime, ft.maxTime = w.minTime, w.maxTime
	}
	keys := make([]string, 0, len(w.r.spec.Metadata))
	for k := range w.r.spec.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ft.meta = append(ft.meta, [2]string{k, w.r.spec.Metadata[k]})
	}

	// __time
	tc := columnMeta{name: TimeColumn, kind: KindLong, role: RoleTime}
	if err := fw.writeLongs(&tc, w.r.compressionFor(TimeColumn), &w.times, perm, true); err != nil {
		return Info{}, err
	}
	ft.columns = append(ft.columns, tc)

	for i, d := range w.r.spec.Dimensions {
		c := columnMeta{name: d.Name, kind: d.Kind, role: RoleDimension}
		comp := w.r.compressionFor(d.Name)
		var err error
		switch acc := w.dims[i].(type) {
		case *stringDim:
			err = fw.writeStrings(&c, comp, acc, perm)
		case *longDim:
			err = fw.writeLongs(&c, comp, &acc.longSource, perm, true)
		case *doubleDim:
			if acc.float {
				fs := floatSource{vals: make([]float32, len(acc.vals)), nulls: acc.nulls}
				for j, v := range acc.vals {
					fs.vals[j] = float32(v)
				}
				err = fw.writeFloats(&c, comp, &fs, perm)
			} else {
				err = fw.writeDoubles(&c, comp, &acc.doubleSource, perm)
			}
		}
		if err != nil {
			return Info{}, fmt.Errorf("segment: column %q: %w", d.Name, err)
		}
		ft.columns = append(ft.columns, c)
	}
	for i, m := range w.r.spec.Metrics {
		info := aggTypes[m.Type]
		c := columnMeta{name: m.Name, kind: info.kind, role: RoleMetric, aggregator: w.r.aggJSON[i]}
		comp := w.r.compressionFor(m.Name)
		if err := w.aggs[i].write(fw, &c, comp, perm); err != nil {
			return Info{}, fmt.Errorf("segment: column %q: %w", m.Name, err)
		}
		ft.columns = append(ft.columns, c)
	}

	footOff := fw.off
	fb := ft.encode()
	if err := fw.write(fb); err != nil {
		return Info{}, err
	}
	if err := fw.write(encodeTrailer(footOff, fb)); err != nil {
		return Info{}, err
	}
	if err := fw.bw.Flush(); err != nil {
		return Info{}, err
	}
	return Info{
		Rows:     n,
		Bytes:    int64(fw.off),
		Interval: w.r.spec.Interval,
		MinTime:  ft.minTime,
		MaxTime:  ft.maxTime,
	}, nil
}

// sortRows returns the row order: by truncated time, then the sort
// dimensions (null first), then the remaining dimensions. It radix-sorts on
// a 64-bit key packing the time offset and as many leading single-value
// string dimensions as fit, and finishes ties with a full comparison.
func (w *Writer) sortRows() []int32 {
	n := w.Len()
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	if n < 2 {
		return perm
	}
	times := w.times.vals
	tw := encoding.BitsFor(uint64(w.maxTime - w.minTime))
	bitsUsed := tw
	covered := 0 // sort dims fully represented in the key
	var widths []int
	for _, di := range w.r.sortDims {
		kw, ok := w.dims[di].sortKeyWidth()
		if !ok || bitsUsed+kw > 64 {
			break
		}
		widths = append(widths, kw)
		bitsUsed += kw
		covered++
	}
	keys := make([]uint64, n)
	for r := range keys {
		k := uint64(times[r] - w.minTime)
		for j := 0; j < covered; j++ {
			k = k<<uint(widths[j]) | w.dims[w.r.sortDims[j]].sortKey(int32(r))
		}
		keys[r] = k
	}
	radixSort(keys, perm, bitsUsed)
	if covered == len(w.r.sortDims) {
		return perm
	}
	rest := w.r.sortDims[covered:]
	cmpRows := func(a, b int32) int {
		for _, di := range rest {
			if c := w.dims[di].compare(a, b); c != 0 {
				return c
			}
		}
		return 0
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[j] == keys[i] {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(perm[i:j], cmpRows)
		}
		i = j
	}
	return perm
}

// radixSort sorts keys ascending (stable), applying the same permutation
// to perm. Only the low `bits` bits are examined.
//
// It is a most-significant-digit radix sort: each level distributes by the
// next 8 or 11 bits, then sorts every bucket on its own, and small buckets
// by insertion. Keys lead with the time, so the first level already splits
// a segment into short time windows that later levels sort in cache; a
// least-significant-digit sort would stream the whole permutation through
// memory once per digit.
func radixSort(keys []uint64, perm []int32, bits int) {
	if len(keys) < 2 || bits <= 0 {
		return
	}
	msdSort(keys, perm, make([]uint64, len(keys)), make([]int32, len(keys)), bits)
}

// msdSort sorts keys whose bits from `bits` up are all equal; tmpK and
// tmpP are scratch of the same length.
func msdSort(keys []uint64, perm []int32, tmpK []uint64, tmpP []int32, bits int) {
	n := len(keys)
	if n <= 32 {
		insertionSort(keys, perm)
		return
	}
	var count [1 << 11]uint32
	for bits > 0 {
		width := 8
		if n > 1<<14 {
			width = 11
		}
		width = min(width, bits)
		shift := uint(bits - width)
		mask := uint64(1)<<uint(width) - 1
		bits -= width
		c := count[:1<<uint(width)]
		clear(c)
		for _, k := range keys {
			c[k>>shift&mask]++
		}
		if c[keys[0]>>shift&mask] == uint32(n) {
			continue // one bucket: go on with the next digit
		}
		sum := uint32(0)
		for i, x := range c {
			c[i] = sum
			sum += x
		}
		for i, k := range keys {
			d := k >> shift & mask
			tmpK[c[d]] = k
			tmpP[c[d]] = perm[i]
			c[d]++
		}
		copy(keys, tmpK)
		copy(perm, tmpP)
		// c[d] is now the end of bucket d.
		start := uint32(0)
		for _, end := range c {
			if end-start > 1 {
				msdSort(keys[start:end], perm[start:end], tmpK[start:end], tmpP[start:end], bits)
			}
			start = end
		}
		return
	}
}

func insertionSort(keys []uint64, perm []int32) {
	for i := 1; i < len(keys); i++ {
		k, p := keys[i], perm[i]
		j := i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j], perm[j] = keys[j-1], perm[j-1]
		}
		keys[j], perm[j] = k, p
	}
}

func mustVersion(typ string) int {
	v, _ := blob.Version(typ)
	return v
}

// WriteTemp sorts the accumulated rows and writes them as a segment to f,
// from its current position, without syncing: for a transient segment (a
// query's in-memory table) that is read back at once and never persisted,
// where WriteFile's fsync would cost more than the write. The Writer is
// reset afterwards, also on error.
func (w *Writer) WriteTemp(f *os.File) (Info, error) {
	defer w.Reset()
	return w.write(f)
}
