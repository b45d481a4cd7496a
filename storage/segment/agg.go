package segment

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"

	"github.com/apache/datasketches-go/hll"

	"strata/aggregate"
	"strata/aggregate/blob"
)

// bitset is a growable set of row numbers (null flags).
type bitset struct {
	w []uint64
	n int // number of set bits
}

func (b *bitset) set(i int32) {
	for int(i>>6) >= len(b.w) {
		b.w = append(b.w, 0)
	}
	m := uint64(1) << (uint(i) & 63)
	if b.w[i>>6]&m == 0 {
		b.w[i>>6] |= m
		b.n++
	}
}

func (b *bitset) clear(i int32) {
	if int(i>>6) < len(b.w) {
		m := uint64(1) << (uint(i) & 63)
		if b.w[i>>6]&m != 0 {
			b.w[i>>6] &^= m
			b.n--
		}
	}
}

func (b *bitset) has(i int32) bool {
	return int(i>>6) < len(b.w) && b.w[i>>6]&(1<<(uint(i)&63)) != 0
}

func (b *bitset) reset() { b.w, b.n = b.w[:0], 0 }

// Column sources: what a writer hands to the column encoders. Values are
// indexed by (unsorted) row number; nulls holds the null rows.
type longSource struct {
	vals  []int64
	nulls bitset
}

type doubleSource struct {
	vals  []float64
	nulls bitset
}

type floatSource struct {
	vals  []float32
	nulls bitset
}

// blobSource serializes the value of a row for a complex column; ok=false
// means null.
type blobSource interface {
	appendBlob(dst []byte, row int32) (out []byte, ok bool, err error)
}

// aggregator keeps one metric's state per segment row in an
// aggregate.State (row i is group i), reading each input Value as the
// metric's type reads it. Without rollup, sketches are serialized as rows
// arrive (a sketch object per row would cost hundreds of bytes).
type aggregator struct {
	m      Metric
	typ    string // the complex type, for pairs and sketches
	st     *aggregate.State
	rows   int              // rows in use; st grows ahead, doubling
	perRow *aggregate.State // no rollup: one-group scratch state of a sketch
	arena  blobArena
	buf    []byte
}

// newAggregator returns the aggregator of m; rollup tells whether rows may
// be folded (without it, sketches are serialized as rows arrive).
func newAggregator(m Metric, rollup bool) (*aggregator, error) {
	info, ok := aggTypes[m.Type]
	if !ok {
		return nil, fmt.Errorf("segment: unknown aggregator %q", m.Type)
	}
	spec := &aggregate.Spec{Float32: true, MaxStringBytes: m.MaxStringBytes}
	switch m.Type {
	case "count":
		spec.Kind, spec.Op = aggregate.KindLong, aggregate.OpCount
	case "longSum", "longMin", "longMax":
		spec.Kind, spec.Op = aggregate.KindLong, strings.ToLower(m.Type[4:])
	case "doubleSum", "doubleMin", "doubleMax":
		spec.Kind, spec.Op = aggregate.KindDouble, strings.ToLower(m.Type[6:])
	case "floatSum", "floatMin", "floatMax":
		spec.Kind, spec.Op = aggregate.KindFloat, strings.ToLower(m.Type[5:])
	case "longFirst", "doubleFirst", "floatFirst", "stringFirst",
		"longLast", "doubleLast", "floatLast", "stringLast":
		spec.Op = aggregate.OpFirst
		if strings.HasSuffix(m.Type, "Last") {
			spec.Op = aggregate.OpLast
		}
		spec.Kind = map[string]string{blob.TypePairLongLong: aggregate.KindLong, blob.TypePairLongDouble: aggregate.KindDouble,
			blob.TypePairLongFloat: aggregate.KindFloat, blob.TypePairLongString: aggregate.KindString}[info.complexType]
	case "HLLSketchBuild", "HLLSketchMerge":
		spec.Kind, spec.LgK, spec.TgtHllType, spec.HLLBuild = aggregate.KindHLL, m.LgK, m.TgtHllType, m.Type == "HLLSketchBuild"
	case "thetaSketch":
		spec.Kind, spec.Size = aggregate.KindTheta, m.Size
	case "quantilesDoublesSketch":
		spec.Kind, spec.K = aggregate.KindQuantiles, m.K
	default:
		return nil, fmt.Errorf("segment: unknown aggregator %q", m.Type)
	}
	a := &aggregator{m: m, typ: info.complexType, st: aggregate.New(spec, 0)}
	if a.st.IsSketch() && !rollup {
		a.perRow = aggregate.New(spec, 0)
	}
	return a, nil
}

// init appends the state of a new row from one input row.
func (a *aggregator) init(in Value, t int64) error {
	if a.perRow != nil {
		a.perRow.Reset()
		a.perRow.Grow(1)
		if err := a.add(a.perRow, 0, in, t); err != nil {
			return err
		}
		b, _, err := a.perRow.AppendIntermediate(a.buf[:0], a.typ, 0)
		if err != nil {
			return err
		}
		a.buf = b
		a.arena.add(b)
		return nil
	}
	n := a.rows
	if n == a.st.Groups() {
		// Per-row columns grow to millions of entries: double them, as
		// push does, rather than copy them at every 1.25x step.
		a.st.Grow(max(n, 1024))
	}
	if err := a.add(a.st, int32(n), in, t); err != nil {
		a.truncate(n)
		return err
	}
	a.rows++
	return nil
}

// fold combines one more input row into an existing row.
func (a *aggregator) fold(row int32, in Value, t int64) error {
	return a.add(a.st, row, in, t)
}

// add folds input value in (of row time t) into group g of st.
func (a *aggregator) add(st *aggregate.State, g int32, in Value, t int64) error {
	switch {
	case st.Op == aggregate.OpCount:
		st.AddCount(aggregate.Rows{To: 1, G: g})
	case st.Op == aggregate.OpFirst || st.Op == aggregate.OpLast:
		// Like Druid, the earliest (latest) row wins even when its value
		// is null or does not convert.
		if !st.Offer(g, t) {
			return nil
		}
		switch st.Kind {
		case aggregate.KindLong:
			if v, ok := in.AsLong(); ok {
				st.SetLong(g, v)
				return nil
			}
		case aggregate.KindString:
			if v, ok := in.AsString(); ok {
				// Cloned: the writer never keeps a caller's buffer.
				st.SetString(g, strings.Clone(aggregate.ChopUTF8(v, a.m.MaxStringBytes)))
				return nil
			}
		case aggregate.KindFloat:
			if v, ok := in.AsDouble(); ok {
				st.SetDouble(g, float64(float32(v)))
				return nil
			}
		default:
			if v, ok := in.AsDouble(); ok {
				st.SetDouble(g, v)
				return nil
			}
		}
		st.SetNull(g)
	case st.Kind == aggregate.KindLong:
		if v, ok := in.AsLong(); ok {
			return st.AddLong(g, v)
		}
	case st.Kind == aggregate.KindDouble || st.Kind == aggregate.KindFloat:
		if v, ok := in.AsDouble(); ok {
			return st.AddDouble(g, v)
		}
	case st.Kind == aggregate.KindQuantiles:
		// A number, or a serialized sketch to merge; nulls and text that
		// is neither change nothing, as a null would not.
		if v, ok := in.AsDouble(); ok {
			return st.AddDouble(g, v)
		}
		if in.kind != vBytes && (in.kind != vString || in.str() == "") {
			return nil
		}
		return a.merge(st, g, in)
	case a.m.Type == "HLLSketchMerge" || a.m.IsInputThetaSketch:
		return a.merge(st, g, in)
	default:
		// HLLSketchBuild, thetaSketch: strings are hashed as their UTF-8
		// bytes, longs as longs and doubles as the bits of the value with
		// -0 folded into +0; null inputs are skipped.
		switch in.kind {
		case vString:
			return st.AddString(g, in.str())
		case vStrings, vStringsNull:
			return in.elems(func(s string, ok bool) error {
				if !ok {
					return nil
				}
				return st.AddString(g, s)
			})
		case vLong:
			return st.AddLong(g, int64(in.n))
		case vDouble:
			return st.AddDouble(g, math.Float64frombits(in.n))
		case vBytes:
			return st.AddBytes(g, in.bin())
		}
	}
	return nil
}

// merge folds a serialized sketch (raw bytes, or base64 text as found in
// JSON input) into group g.
func (a *aggregator) merge(st *aggregate.State, g int32, in Value) error {
	b, ok, err := sketchBytes(in)
	if err != nil || !ok {
		return err
	}
	return st.MergeIntermediate(g, a.typ, b)
}

// truncate drops rows from n on; used to undo a failed Add.
func (a *aggregator) truncate(n int) {
	if a.perRow != nil {
		a.arena.truncate(n)
		return
	}
	// Rows past n go back to their identity, ready for reuse.
	a.st.Truncate(n)
	a.rows = n
}

func (a *aggregator) reset() {
	a.st.Reset()
	a.rows = 0
	a.arena.reset()
}

// appendBlob serializes row's value of a complex metric.
func (a *aggregator) appendBlob(dst []byte, row int32) ([]byte, bool, error) {
	if a.perRow != nil {
		return append(dst, a.arena.at(row)...), true, nil
	}
	return a.st.AppendIntermediate(dst, a.typ, row)
}

// write writes the metric's column.
func (a *aggregator) write(fw *fileWriter, c *columnMeta, comp Compression, perm []int32) error {
	if a.typ != "" {
		c.complexType = a.typ
		c.complexVersion = mustVersion(a.typ)
		return fw.writeBlobs(c, comp, a, perm)
	}
	a.st.Truncate(a.rows)
	st := a.st
	var nulls bitset
	for i, null := range st.Null {
		if null {
			// Null rows store 0, whatever the state's identity value.
			nulls.set(int32(i))
			if st.Kind == aggregate.KindLong {
				st.Longs[i] = 0
			} else {
				st.Doubles[i] = 0
			}
		}
	}
	switch st.Kind {
	case aggregate.KindLong:
		return fw.writeLongs(c, comp, &longSource{vals: st.Longs, nulls: nulls}, perm, true)
	case aggregate.KindFloat:
		fs := floatSource{vals: make([]float32, len(st.Doubles)), nulls: nulls}
		for i, v := range st.Doubles {
			fs.vals[i] = float32(v)
		}
		return fw.writeFloats(c, comp, &fs, perm)
	}
	return fw.writeDoubles(c, comp, &doubleSource{vals: st.Doubles, nulls: nulls}, perm)
}

func hllType(s string) (hll.TgtHllType, error) {
	switch s {
	case "HLL_4":
		return hll.TgtHllTypeHll4, nil
	case "HLL_6":
		return hll.TgtHllTypeHll6, nil
	case "HLL_8":
		return hll.TgtHllTypeHll8, nil
	}
	return 0, fmt.Errorf("unknown tgtHllType %q", s)
}

// sketchBytes returns the serialized sketch an input value carries: raw
// bytes, or a base64 string as found in JSON input.
func sketchBytes(in Value) ([]byte, bool, error) {
	if b, ok := in.AsBytes(); ok {
		return b, true, nil
	}
	if s, ok := in.AsString(); ok && in.kind == vString {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, false, fmt.Errorf("segment: sketch input is not base64: %v", err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// blobArena keeps one serialized value per row, back to back.
type blobArena struct {
	data []byte
	ends []int
}

func (b *blobArena) add(v []byte) {
	b.data = append(b.data, v...)
	b.ends = push(b.ends, len(b.data))
}

func (b *blobArena) at(row int32) []byte {
	start := 0
	if row > 0 {
		start = b.ends[row-1]
	}
	return b.data[start:b.ends[row]]
}

func (b *blobArena) reset() { b.data, b.ends = b.data[:0], b.ends[:0] }

// truncate keeps the first n rows.
func (b *blobArena) truncate(n int) {
	if n < len(b.ends) {
		b.ends = b.ends[:n]
		if n == 0 {
			b.data = b.data[:0]
		} else {
			b.data = b.data[:b.ends[n-1]]
		}
	}
}

// push appends v, doubling the capacity when full. Per-row columns grow to
// millions of entries; append's 1.25x growth for large slices would copy
// each of them several times over.
func push[T any](s []T, v T) []T {
	if len(s) < cap(s) {
		return append(s, v)
	}
	return growPush(s, v)
}

// extend lengthens s by k elements (unspecified values), growing it as
// push does.
func extend[T any](s []T, k int) []T {
	if len(s)+k > cap(s) {
		ns := make([]T, len(s), max(2*cap(s), len(s)+k, 1024))
		copy(ns, s)
		s = ns
	}
	return s[:len(s)+k]
}

func growPush[T any](s []T, v T) []T {
	ns := make([]T, len(s), max(2*cap(s), 1024))
	copy(ns, s)
	return append(ns, v)
}
