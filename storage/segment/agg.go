package segment

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/storage/blob"
	"strata/storage/quantiles"
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

// aggregator keeps one metric's state per segment row.
type aggregator interface {
	// init appends the state for a new row from one input row.
	init(in Value, t int64) error
	// fold combines one more input row into existing row.
	fold(row int32, in Value, t int64) error
	reset()
}

// newAggregator returns the aggregator of m; rollup tells whether rows may
// be folded (without it, sketches are serialized as rows arrive).
func newAggregator(m Metric, rollup bool) (aggregator, error) {
	switch m.Type {
	case "count":
		return &countAgg{}, nil
	case "longSum", "longMin", "longMax":
		return &longAgg{op: m.Type[4:]}, nil
	case "doubleSum", "doubleMin", "doubleMax":
		return &doubleAgg{op: m.Type[6:]}, nil
	case "floatSum", "floatMin", "floatMax":
		return &floatAgg{op: m.Type[5:]}, nil
	case "longFirst", "doubleFirst", "floatFirst", "stringFirst",
		"longLast", "doubleLast", "floatLast", "stringLast":
		info := aggTypes[m.Type]
		last := m.Type[len(m.Type)-4:] == "Last"
		return &pairAgg{typ: info.complexType, last: last, maxBytes: m.MaxStringBytes}, nil
	case "HLLSketchBuild", "HLLSketchMerge":
		t, _ := hllType(m.TgtHllType)
		return &hllAgg{lgK: m.LgK, tgt: t, merge: m.Type == "HLLSketchMerge", perRow: !rollup}, nil
	case "thetaSketch":
		return &thetaAgg{lgK: uint8(bits.TrailingZeros(uint(m.Size))), input: m.IsInputThetaSketch, perRow: !rollup}, nil
	case "quantilesDoublesSketch":
		return &quantilesAgg{k: m.K, perRow: !rollup}, nil
	}
	return nil, fmt.Errorf("segment: unknown aggregator %q", m.Type)
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

// countAgg counts input rows.
type countAgg struct{ longSource }

func (a *countAgg) init(Value, int64) error { a.vals = push(a.vals, 1); return nil }
func (a *countAgg) fold(row int32, _ Value, _ int64) error {
	a.vals[row]++
	return nil
}
func (a *countAgg) reset() { a.vals = a.vals[:0]; a.nulls.reset() }

// longAgg is longSum/Min/Max. With SQL-compatible null handling the result
// is null only when every input was null.
type longAgg struct {
	longSource
	op string // Sum, Min, Max
}

func (a *longAgg) init(in Value, _ int64) error {
	v, ok := in.AsLong()
	a.vals = push(a.vals, v)
	if !ok {
		a.nulls.set(int32(len(a.vals) - 1))
	}
	return nil
}

func (a *longAgg) fold(row int32, in Value, _ int64) error {
	v, ok := in.AsLong()
	if !ok {
		return nil
	}
	if a.nulls.has(row) {
		a.nulls.clear(row)
		a.vals[row] = v
		return nil
	}
	switch a.op {
	case "Sum":
		a.vals[row] += v
	case "Min":
		a.vals[row] = min(a.vals[row], v)
	case "Max":
		a.vals[row] = max(a.vals[row], v)
	}
	return nil
}

func (a *longAgg) reset() { a.vals = a.vals[:0]; a.nulls.reset() }

type doubleAgg struct {
	doubleSource
	op string
}

func (a *doubleAgg) init(in Value, _ int64) error {
	v, ok := in.AsDouble()
	a.vals = push(a.vals, v)
	if !ok {
		a.nulls.set(int32(len(a.vals) - 1))
	}
	return nil
}

func (a *doubleAgg) fold(row int32, in Value, _ int64) error {
	v, ok := in.AsDouble()
	if !ok {
		return nil
	}
	if a.nulls.has(row) {
		a.nulls.clear(row)
		a.vals[row] = v
		return nil
	}
	a.vals[row] = combineFloat(a.op, a.vals[row], v)
	return nil
}

func (a *doubleAgg) reset() { a.vals = a.vals[:0]; a.nulls.reset() }

// combineFloat follows Java's Math.min/max: NaN wins, -0 < +0.
func combineFloat(op string, a, b float64) float64 {
	switch op {
	case "Sum":
		return a + b
	case "Min":
		if a != a || b != b {
			return math.NaN()
		}
		return math.Min(a, b)
	default:
		if a != a || b != b {
			return math.NaN()
		}
		return math.Max(a, b)
	}
}

// floatAgg accumulates in float32, as Druid's float aggregators do.
type floatAgg struct {
	floatSource
	op string
}

func (a *floatAgg) init(in Value, _ int64) error {
	v, ok := in.AsDouble()
	a.vals = push(a.vals, float32(v))
	if !ok {
		a.nulls.set(int32(len(a.vals) - 1))
	}
	return nil
}

func (a *floatAgg) fold(row int32, in Value, _ int64) error {
	v, ok := in.AsDouble()
	if !ok {
		return nil
	}
	if a.nulls.has(row) {
		a.nulls.clear(row)
		a.vals[row] = float32(v)
		return nil
	}
	if a.op == "Sum" {
		a.vals[row] += float32(v)
	} else {
		a.vals[row] = float32(combineFloat(a.op, float64(a.vals[row]), float64(float32(v))))
	}
	return nil
}

func (a *floatAgg) reset() { a.vals = a.vals[:0]; a.nulls.reset() }

// pairAgg is the first/last family. Like Druid, the earliest (latest) row
// wins even when its value is null; on equal times first keeps the earlier
// input row and last takes the later one.
type pairAgg struct {
	typ      string
	last     bool
	maxBytes int
	times    []int64
	longs    []int64
	doubles  []float64
	strs     []string
	nulls    bitset
}

func (a *pairAgg) set(row int32, in Value, t int64) {
	a.times[row] = t
	ok := false
	switch a.typ {
	case blob.TypePairLongLong:
		a.longs[row], ok = in.AsLong()
	case blob.TypePairLongDouble, blob.TypePairLongFloat:
		a.doubles[row], ok = in.AsDouble()
		if a.typ == blob.TypePairLongFloat {
			a.doubles[row] = float64(float32(a.doubles[row]))
		}
	case blob.TypePairLongString:
		var s string
		s, ok = in.AsString()
		a.strs[row] = chopUTF8(s, a.maxBytes)
	}
	if ok {
		a.nulls.clear(row)
	} else {
		a.nulls.set(row)
	}
}

func (a *pairAgg) init(in Value, t int64) error {
	a.times = push(a.times, 0)
	switch a.typ {
	case blob.TypePairLongLong:
		a.longs = push(a.longs, 0)
	case blob.TypePairLongString:
		a.strs = push(a.strs, "")
	default:
		a.doubles = push(a.doubles, 0)
	}
	a.set(int32(len(a.times)-1), in, t)
	return nil
}

func (a *pairAgg) fold(row int32, in Value, t int64) error {
	if (a.last && t >= a.times[row]) || (!a.last && t < a.times[row]) {
		a.set(row, in, t)
	}
	return nil
}

func (a *pairAgg) reset() {
	a.times, a.longs, a.doubles = a.times[:0], a.longs[:0], a.doubles[:0]
	clear(a.strs)
	a.strs = a.strs[:0]
	a.nulls.reset()
}

func (a *pairAgg) appendBlob(dst []byte, row int32) ([]byte, bool, error) {
	p := blob.Pair{Time: a.times[row], Null: a.nulls.has(row)}
	switch a.typ {
	case blob.TypePairLongLong:
		p.Long = a.longs[row]
	case blob.TypePairLongString:
		p.String = a.strs[row]
	default:
		p.Double = a.doubles[row]
	}
	out, err := blob.AppendPair(dst, a.typ, p)
	return out, true, err
}

// chopUTF8 cuts s to at most n bytes without splitting a character. The
// result is cloned so the writer never keeps a caller's buffer.
func chopUTF8(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return cloneString(s)
}

func cloneString(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
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

// hllAgg is HLLSketchBuild (hash raw values) or HLLSketchMerge (union of
// serialized sketches). Strings are hashed as their UTF-8 bytes, longs as
// UpdateInt64 and doubles as the bits of the value with -0 folded into +0
// (see blob.UpdateHLLDouble). Null inputs are skipped. Without rollup each
// row's sketch is serialized at once into an arena (a sketch object per
// row would cost hundreds of bytes); with rollup the sketches stay live
// until the segment is written.
type hllAgg struct {
	lgK      int
	tgt      hll.TgtHllType
	merge    bool
	perRow   bool
	sketches []hll.HllSketch
	unions   []hll.Union
	arena    blobArena
	sk       hll.HllSketch // perRow scratch
	u        hll.Union
}

func (a *hllAgg) newState() (hll.HllSketch, hll.Union, error) {
	if a.merge {
		u, err := hll.NewUnion(a.lgK)
		return nil, u, err
	}
	sk, err := hll.NewHllSketch(a.lgK, a.tgt)
	return sk, nil, err
}

func (a *hllAgg) init(in Value, _ int64) error {
	if a.perRow {
		if a.sk == nil && a.u == nil {
			var err error
			if a.sk, a.u, err = a.newState(); err != nil {
				return err
			}
		} else if a.merge {
			if err := a.u.Reset(); err != nil {
				return err
			}
		} else if err := a.sk.Reset(); err != nil {
			return err
		}
		if err := a.add(a.sk, a.u, in); err != nil {
			return err
		}
		b, err := a.serialize(a.sk, a.u)
		if err != nil {
			return err
		}
		a.arena.add(b)
		return nil
	}
	sk, u, err := a.newState()
	if err != nil {
		return err
	}
	if err := a.add(sk, u, in); err != nil {
		return err
	}
	if a.merge {
		a.unions = append(a.unions, u)
	} else {
		a.sketches = append(a.sketches, sk)
	}
	return nil
}

func (a *hllAgg) fold(row int32, in Value, _ int64) error {
	if a.merge {
		return a.add(nil, a.unions[row], in)
	}
	return a.add(a.sketches[row], nil, in)
}

// add adds one input value to a sketch (build) or a union (merge).
func (a *hllAgg) add(sk hll.HllSketch, u hll.Union, in Value) error {
	if a.merge {
		b, ok, err := sketchBytes(in)
		if err != nil || !ok {
			return err
		}
		in, err := blob.DecodeHLL(b)
		if err != nil {
			return err
		}
		return u.UpdateSketch(in)
	}
	switch in.kind {
	case vString:
		return blob.UpdateHLLString(sk, in.str())
	case vStrings:
		for _, s := range in.strs() {
			if err := blob.UpdateHLLString(sk, s); err != nil {
				return err
			}
		}
	case vLong:
		return sk.UpdateInt64(int64(in.n))
	case vDouble:
		return blob.UpdateHLLDouble(sk, math.Float64frombits(in.n))
	case vBytes:
		return sk.UpdateSlice(in.bin())
	}
	return nil
}

func (a *hllAgg) serialize(sk hll.HllSketch, u hll.Union) ([]byte, error) {
	if a.merge {
		var err error
		if sk, err = u.GetResult(a.tgt); err != nil {
			return nil, err
		}
	}
	return sk.ToCompactSlice()
}

func (a *hllAgg) reset() {
	clear(a.sketches)
	clear(a.unions)
	a.sketches, a.unions = a.sketches[:0], a.unions[:0]
	a.arena.reset()
}

func (a *hllAgg) appendBlob(dst []byte, row int32) ([]byte, bool, error) {
	if a.perRow {
		return append(dst, a.arena.at(row)...), true, nil
	}
	var sk hll.HllSketch
	var u hll.Union
	if a.merge {
		u = a.unions[row]
	} else {
		sk = a.sketches[row]
	}
	b, err := a.serialize(sk, u)
	return append(dst, b...), true, err
}

// thetaAgg is thetaSketch: an update sketch over raw values, or a union of
// serialized sketches when the input holds sketches. Like hllAgg it
// serializes each row at once when there is no rollup.
type thetaAgg struct {
	lgK      uint8
	input    bool
	perRow   bool
	sketches []*theta.QuickSelectUpdateSketch
	unions   []*theta.Union
	arena    blobArena
	sk       *theta.QuickSelectUpdateSketch // perRow scratch
	u        *theta.Union
}

func (a *thetaAgg) newState() (*theta.QuickSelectUpdateSketch, *theta.Union, error) {
	if a.input {
		u, err := theta.NewUnion(theta.WithUnionLgK(a.lgK))
		return nil, u, err
	}
	sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(a.lgK))
	return sk, nil, err
}

func (a *thetaAgg) init(in Value, _ int64) error {
	if a.perRow {
		if a.sk == nil && a.u == nil {
			var err error
			if a.sk, a.u, err = a.newState(); err != nil {
				return err
			}
		} else if a.input {
			a.u.Reset()
		} else {
			a.sk.Reset()
		}
		if err := a.add(a.sk, a.u, in); err != nil {
			return err
		}
		b, err := a.serialize(a.sk, a.u)
		if err != nil {
			return err
		}
		a.arena.add(b)
		return nil
	}
	sk, u, err := a.newState()
	if err != nil {
		return err
	}
	if err := a.add(sk, u, in); err != nil {
		return err
	}
	if a.input {
		a.unions = append(a.unions, u)
	} else {
		a.sketches = append(a.sketches, sk)
	}
	return nil
}

func (a *thetaAgg) fold(row int32, in Value, _ int64) error {
	if a.input {
		return a.add(nil, a.unions[row], in)
	}
	return a.add(a.sketches[row], nil, in)
}

func (a *thetaAgg) add(sk *theta.QuickSelectUpdateSketch, u *theta.Union, in Value) error {
	if a.input {
		b, ok, err := sketchBytes(in)
		if err != nil || !ok {
			return err
		}
		in, err := blob.DecodeTheta(b)
		if err != nil {
			return err
		}
		return u.Update(in)
	}
	switch in.kind {
	case vString:
		blob.UpdateTheta(sk, in.str())
	case vStrings:
		for _, s := range in.strs() {
			blob.UpdateTheta(sk, s)
		}
	case vLong:
		blob.UpdateTheta(sk, int64(in.n))
	case vDouble:
		blob.UpdateTheta(sk, math.Float64frombits(in.n))
	case vBytes:
		blob.UpdateTheta(sk, in.bin())
	}
	return nil
}

func (a *thetaAgg) serialize(sk *theta.QuickSelectUpdateSketch, u *theta.Union) ([]byte, error) {
	var cs *theta.CompactSketch
	if a.input {
		var err error
		if cs, err = u.OrderedResult(); err != nil {
			return nil, err
		}
	} else {
		cs = sk.CompactOrdered()
	}
	return cs.MarshalBinary()
}

func (a *thetaAgg) reset() {
	clear(a.sketches)
	clear(a.unions)
	a.sketches, a.unions = a.sketches[:0], a.unions[:0]
	a.arena.reset()
}

func (a *thetaAgg) appendBlob(dst []byte, row int32) ([]byte, bool, error) {
	if a.perRow {
		return append(dst, a.arena.at(row)...), true, nil
	}
	var sk *theta.QuickSelectUpdateSketch
	var u *theta.Union
	if a.input {
		u = a.unions[row]
	} else {
		sk = a.sketches[row]
	}
	b, err := a.serialize(sk, u)
	return append(dst, b...), true, err
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

// quantilesAgg is quantilesDoublesSketch: a DataSketches quantiles sketch of
// the numeric input; input rows holding serialized sketches (bytes or base64)
// are merged instead. Like hllAgg it serializes each row at once when there
// is no rollup.
type quantilesAgg struct {
	k        int
	perRow   bool
	sketches []*quantiles.Sketch
	arena    blobArena
}

func (a *quantilesAgg) init(in Value, _ int64) error {
	sk, err := quantiles.New(a.k)
	if err != nil {
		return err
	}
	if err := a.add(sk, in); err != nil {
		return err
	}
	if a.perRow {
		b, err := sk.MarshalBinary()
		if err != nil {
			return err
		}
		a.arena.add(b)
		return nil
	}
	a.sketches = append(a.sketches, sk)
	return nil
}

func (a *quantilesAgg) fold(row int32, in Value, _ int64) error {
	return a.add(a.sketches[row], in)
}

// add adds a number, or merges a serialized sketch; nulls and text that is
// neither change nothing, as a null would not.
func (a *quantilesAgg) add(sk *quantiles.Sketch, in Value) error {
	if v, ok := in.AsDouble(); ok {
		sk.Update(v)
		return nil
	}
	if in.kind != vBytes && (in.kind != vString || in.str() == "") {
		return nil
	}
	b, ok, err := sketchBytes(in)
	if err != nil || !ok {
		return err
	}
	other, err := blob.DecodeQuantiles(b)
	if err != nil {
		return err
	}
	return sk.Merge(other)
}

func (a *quantilesAgg) reset() {
	clear(a.sketches)
	a.sketches = a.sketches[:0]
	a.arena.reset()
}

func (a *quantilesAgg) appendBlob(dst []byte, row int32) ([]byte, bool, error) {
	if a.perRow {
		return append(dst, a.arena.at(row)...), true, nil
	}
	b, err := a.sketches[row].MarshalBinary()
	return append(dst, b...), true, err
}
