package aggregate

import (
	"math"
	"unicode/utf8"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/blob"
	"strata/aggregate/quantiles"
)

// Rows are the rows of one column block an add receives: From..To, or
// those listed in Sel (positions in the block's arrays); each goes to group
// G, or, when Groups is non-nil, the k-th row to Groups[k]. A nil Sel
// means the dense range; an empty non-nil one means no row.
type Rows struct {
	From, To int
	Sel      []int32
	G        int32
	Groups   []int32
}

// Len is the number of rows.
func (r Rows) Len() int {
	if r.Sel != nil {
		return len(r.Sel)
	}
	return max(r.To-r.From, 0)
}

// Each calls fn(k, i) for each row: k its position among the rows, i its
// position in the block.
func (r Rows) Each(fn func(k, i int) error) error {
	if r.Sel == nil {
		for i := r.From; i < r.To; i++ {
			if err := fn(i-r.From, i); err != nil {
				return err
			}
		}
		return nil
	}
	for k, i := range r.Sel {
		if err := fn(k, int(i)); err != nil {
			return err
		}
	}
	return nil
}

// Group is the group of the k-th row.
func (r Rows) Group(k int) int32 {
	if r.Groups != nil {
		return r.Groups[k]
	}
	return r.G
}

// BitSet reports whether bit i of a bitmap is set (a nil bitmap has none).
func BitSet(bits []uint64, i int) bool {
	return i>>6 < len(bits) && bits[i>>6]&(1<<(uint(i)&63)) != 0
}

// Keep narrows r to the rows whose bit is set in keep (drop false), or not
// set (drop true: keep holds nulls), returning the narrowed rows in the
// given buffers. The result's Sel is never nil.
func (r Rows) Keep(keep []uint64, drop bool, bsel, bgroups *[]int32) Rows {
	s, gs := (*bsel)[:0], (*bgroups)[:0]
	if s == nil {
		// The result must not be nil even when no row stays: a nil
		// selection means "every row of the block".
		s = make([]int32, 0, 64)
	}
	if r.Sel == nil {
		for i := r.From; i < r.To; i++ {
			if BitSet(keep, i) != drop {
				s = append(s, int32(i))
				if r.Groups != nil {
					gs = append(gs, r.Groups[i-r.From])
				}
			}
		}
	} else {
		for k, i := range r.Sel {
			if BitSet(keep, int(i)) != drop {
				s = append(s, i)
				if r.Groups != nil {
					gs = append(gs, r.Groups[k])
				}
			}
		}
	}
	*bsel, *bgroups = s, gs
	out := Rows{Sel: s, G: r.G}
	if r.Groups != nil {
		out.Groups = gs
	}
	return out
}

// AddCount counts the rows.
func (s *State) AddCount(r Rows) {
	if r.Groups != nil {
		countGrouped(s.Longs, r.Groups)
		return
	}
	s.Longs[r.G] += int64(r.Len())
}

// AddLongs folds a long column's values (the caller drops null rows) into
// a long sum, min or max.
func (s *State) AddLongs(vals []int64, r Rows) {
	if r.Len() == 0 {
		return
	}
	if IsBitOp(s.Op) {
		_ = r.Each(func(k, i int) error {
			s.foldBits(r.Group(k), vals[i], false)
			return nil
		})
		return
	}
	fold(s.Longs, s.Null, s.Op, vals, r)
}

// AddDoubles folds a double column's values (floats widened; the caller
// drops null rows) into a double or float sum, min or max.
func (s *State) AddDoubles(vals []float64, r Rows) {
	if r.Len() == 0 {
		return
	}
	if s.Kind == KindFloat && s.spec != nil && s.spec.Float32 && s.Op == OpSum {
		// Druid's stored float sum rounds to float32 after every input.
		_ = r.Each(func(k, i int) error {
			s.foldDouble(r.Group(k), vals[i])
			return nil
		})
		return
	}
	fold(s.Doubles, s.Null, s.Op, vals, r)
}

func fold[T number](acc []T, null []bool, op string, vals []T, r Rows) {
	g, sel, groups := r.G, r.Sel, r.Groups
	switch {
	case groups == nil && sel == nil:
		v := vals[r.From:r.To]
		switch op {
		case OpSum:
			acc[g] += sumDense(v)
		case OpMin:
			acc[g] = minDense(acc[g], v)
		default:
			acc[g] = maxDense(acc[g], v)
		}
		null[g] = false
	case groups == nil:
		switch op {
		case OpSum:
			acc[g] += sumSel(vals, sel)
		case OpMin:
			acc[g] = minSel(acc[g], vals, sel)
		default:
			acc[g] = maxSel(acc[g], vals, sel)
		}
		null[g] = false
	case sel == nil:
		v := vals[r.From:r.To]
		switch op {
		case OpSum:
			sumGrouped(acc, null, v, groups)
		case OpMin:
			minGrouped(acc, null, v, groups)
		default:
			maxGrouped(acc, null, v, groups)
		}
	default:
		switch op {
		case OpSum:
			sumSelGrouped(acc, null, vals, sel, groups)
		case OpMin:
			minSelGrouped(acc, null, vals, sel, groups)
		default:
			maxSelGrouped(acc, null, vals, sel, groups)
		}
	}
}

// AddLong folds one value into group g of a sum, min or max (of any
// numeric kind), or a sketch.
func (s *State) AddLong(g int32, v int64) error {
	switch s.Kind {
	case KindVariance:
		s.addVariance(g, float64(v))
		return nil
	case KindLong:
		s.foldLong(g, v)
		return nil
	case KindDouble, KindFloat:
		s.foldDouble(g, float64(v))
		return nil
	case KindHLL:
		u, sk, err := s.hllTarget(g)
		if err != nil {
			return err
		}
		if sk != nil {
			return sk.UpdateInt64(v)
		}
		return u.UpdateInt64(v)
	case KindTheta:
		sk, err := s.thetaSketch(g)
		if err == nil {
			blob.UpdateTheta(sk, v)
		}
		return err
	case KindQuantiles:
		return s.AddDouble(g, float64(v))
	}
	return nil
}

// AddDouble folds one value into group g of a sum, min or max (of any
// numeric kind), or a sketch.
func (s *State) AddDouble(g int32, v float64) error {
	switch s.Kind {
	case KindVariance:
		s.addVariance(g, v)
		return nil
	case KindLong:
		s.foldLong(g, int64(v))
		return nil
	case KindDouble, KindFloat:
		s.foldDouble(g, v)
		return nil
	case KindHLL:
		u, sk, err := s.hllTarget(g)
		if err != nil {
			return err
		}
		if v == 0 {
			v = 0 // fold -0 into +0, as blob.UpdateHLLDouble does
		}
		if sk != nil {
			return sk.UpdateInt64(int64(math.Float64bits(v)))
		}
		return u.UpdateInt64(int64(math.Float64bits(v)))
	case KindTheta:
		sk, err := s.thetaSketch(g)
		if err == nil {
			blob.UpdateTheta(sk, v)
		}
		return err
	case KindQuantiles:
		sk, err := s.quantilesAt(g)
		if err == nil {
			sk.Update(v)
		}
		return err
	}
	return nil
}

// AddString folds one string into group g of a string min or max (by
// UTF-8 bytes, as Druid orders strings) or a sketch.
func (s *State) AddString(g int32, v string) error {
	switch s.Kind {
	case KindString:
		if s.Null[g] || s.Op == OpMin && v < s.Strs[g] || s.Op == OpMax && v > s.Strs[g] {
			s.Strs[g], s.Null[g] = v, false
		}
		return nil
	case KindHLL:
		u, sk, err := s.hllTarget(g)
		if err != nil {
			return err
		}
		if sk != nil {
			return sk.UpdateString(v)
		}
		return u.UpdateString(v)
	case KindTheta:
		sk, err := s.thetaSketch(g)
		if err == nil {
			blob.UpdateTheta(sk, v)
		}
		return err
	}
	return nil
}

// AddBytes folds one binary value, hashed as its bytes, into group g of an
// HLL or theta sketch.
func (s *State) AddBytes(g int32, v []byte) error {
	switch s.Kind {
	case KindHLL:
		u, sk, err := s.hllTarget(g)
		if err != nil {
			return err
		}
		if sk != nil {
			return sk.UpdateSlice(v)
		}
		return u.UpdateSlice(v)
	case KindTheta:
		sk, err := s.thetaSketch(g)
		if err == nil {
			blob.UpdateTheta(sk, v)
		}
		return err
	}
	return nil
}

func (s *State) foldLong(g int32, v int64) {
	if IsBitOp(s.Op) {
		s.foldBits(g, v, false)
		return
	}
	switch {
	case s.Null[g] && s.Op != OpCount:
		s.Longs[g] = v
	case s.Op == OpCount || s.Op == OpSum:
		s.Longs[g] += v
	case s.Op == OpMin:
		s.Longs[g] = min(s.Longs[g], v)
	default:
		s.Longs[g] = max(s.Longs[g], v)
	}
	s.Null[g] = false
}

// foldDouble follows Java's Math.min/max (as Go's min and max do): NaN
// wins, -0 < +0.
func (s *State) foldDouble(g int32, v float64) {
	if s.Kind == KindFloat {
		v = float64(float32(v))
	}
	switch {
	case s.Null[g]:
		// The first value is kept as is (a lone -0 stays -0).
		s.Doubles[g] = v
	case s.Op == OpSum:
		s.Doubles[g] = s.float(s.Doubles[g] + v)
	case s.Op == OpMin:
		s.Doubles[g] = min(s.Doubles[g], v)
	default:
		s.Doubles[g] = max(s.Doubles[g], v)
	}
	s.Null[g] = false
}

// Offer tells whether a row at time t takes the place of group g's
// first/last/any value; if so its time is recorded and the caller sets the
// value with SetLong, SetDouble, SetString or SetNull. On equal times first
// keeps the earlier row and last takes the later one, as Druid does.
func (s *State) Offer(g int32, t int64) bool {
	switch s.Op {
	case OpFirst:
		if t >= s.Times[g] {
			return false
		}
	case OpLast:
		if t < s.Times[g] {
			return false
		}
	default:
		if s.Times[g] != math.MaxInt64 {
			return false
		}
	}
	s.Times[g] = t
	return true
}

// SetLong sets group g's first/last value.
func (s *State) SetLong(g int32, v int64) {
	s.Null[g] = false
	switch s.Kind {
	case KindLong:
		s.Longs[g] = v
	case KindString:
		s.Strs[g] = ""
		s.Null[g] = true
	default:
		s.Doubles[g] = float64(v)
	}
}

// SetDouble sets group g's first/last value.
func (s *State) SetDouble(g int32, v float64) {
	s.Null[g] = false
	switch s.Kind {
	case KindLong:
		s.Longs[g] = int64(v)
	case KindString:
		s.Strs[g] = ""
		s.Null[g] = true
	default:
		s.Doubles[g] = v
	}
}

// SetString sets group g's first/last string, cut to maxStringBytes.
func (s *State) SetString(g int32, v string) {
	s.Null[g] = false
	s.Strs[g] = ChopUTF8(v, s.spec.maxBytes())
}

// SetNull sets group g's first/last value to null.
func (s *State) SetNull(g int32) {
	s.Null[g] = true
	switch s.Kind {
	case KindLong:
		s.Longs[g] = 0
	case KindString:
		s.Strs[g] = ""
	default:
		s.Doubles[g] = 0
	}
}

// OfferPair folds a stored first/last pair into group g.
func (s *State) OfferPair(g int32, p blob.Pair) {
	if !s.Offer(g, p.Time) {
		return
	}
	s.Null[g] = p.Null
	switch s.Kind {
	case KindLong:
		s.Longs[g] = p.Long
	case KindString:
		s.Strs[g] = ChopUTF8(p.String, s.spec.maxBytes())
	default:
		s.Doubles[g] = p.Double
	}
}

// AddFirstLongs folds a long column into first/last/any by the time column
// (rows whose time is null take no part).
func (s *State) AddFirstLongs(times []int64, tnulls []uint64, vals []int64, nulls []uint64, r Rows) {
	addFirst(s, s.Longs, times, tnulls, vals, nulls, r)
}

// AddFirstDoubles is AddFirstLongs for double (and float) columns.
func (s *State) AddFirstDoubles(times []int64, tnulls []uint64, vals []float64, nulls []uint64, r Rows) {
	addFirst(s, s.Doubles, times, tnulls, vals, nulls, r)
}

func addFirst[T number](s *State, acc []T, times []int64, tnulls []uint64, vals []T, nulls []uint64, r Rows) {
	_ = r.Each(func(k, i int) error {
		if BitSet(tnulls, i) {
			return nil
		}
		g := r.Group(k)
		if s.Offer(g, times[i]) {
			s.Null[g] = BitSet(nulls, i)
			acc[g] = vals[i]
		}
		return nil
	})
}

// Dict is a string column's dictionary.
type Dict interface {
	// Card is the number of ids.
	Card() int
	// Value is the string of an id; ok false for null.
	Value(id int32) (s string, ok bool)
}

// AddFirstIDs folds a dictionary-encoded string column into first/last/any
// by the time column. offs is nil for a single-valued column (row i has id
// ids[i]); else row i has ids[offs[i]:offs[i+1]] and its first one counts.
func (s *State) AddFirstIDs(times []int64, tnulls []uint64, offs, ids []int32, dict Dict, r Rows) {
	_ = r.Each(func(k, i int) error {
		if BitSet(tnulls, i) {
			return nil
		}
		g := r.Group(k)
		if !s.Offer(g, times[i]) {
			return nil
		}
		id := int32(-1)
		if offs == nil {
			id = ids[i]
		} else if offs[i+1] > offs[i] {
			id = ids[offs[i]]
		}
		v, ok := "", false
		if id >= 0 {
			v, ok = dict.Value(id)
		}
		if ok {
			s.SetString(g, v)
		} else {
			s.SetNull(g)
		}
		return nil
	})
}

// MergeIntermediate folds a stored intermediate value (the blob of a
// complex column or an SQL stage's frame) into group g: a sketch or a
// first/last pair of the given stored type.
func (s *State) MergeIntermediate(g int32, typ string, b []byte) error {
	switch s.Kind {
	case KindHLL:
		sk, err := blob.DecodeHLL(b)
		if err != nil {
			return err
		}
		u, err := s.hllUnion(g)
		if err != nil {
			return err
		}
		return u.UpdateSketch(sk)
	case KindTheta:
		sk, err := blob.DecodeTheta(b)
		if err != nil {
			return err
		}
		u, err := s.thetaUnion(g)
		if err != nil {
			return err
		}
		return u.Update(sk)
	case KindQuantiles:
		in, err := blob.DecodeQuantiles(b)
		if err != nil {
			return err
		}
		sk, err := s.quantilesAt(g)
		if err != nil {
			return err
		}
		return sk.Merge(in)
	}
	if s.pair() {
		p, err := blob.DecodePair(typ, b)
		if err != nil {
			return err
		}
		s.OfferPair(g, p)
	}
	return nil
}

// Finish folds what is pending (theta update sketches, HLL build
// sketches) into the state; called once the rows of a source are added.
func (s *State) Finish() error {
	for g := range max(len(s.hllUpd), len(s.thetaUpd)) {
		if err := s.finishGroup(int32(g)); err != nil {
			return err
		}
	}
	return nil
}

// finishGroup is Finish for group g.
func (s *State) finishGroup(g int32) error {
	if int(g) < len(s.hllUpd) && s.hllUpd[g] != nil {
		u, err := s.hllUnion(g)
		if err != nil {
			return err
		}
		if err := u.UpdateSketch(s.hllUpd[g]); err != nil {
			return err
		}
		s.hllUpd[g] = nil
	}
	if int(g) < len(s.thetaUpd) && s.thetaUpd[g] != nil {
		u, err := s.thetaUnion(g)
		if err != nil {
			return err
		}
		if err := u.Update(s.thetaUpd[g].Compact(false)); err != nil {
			return err
		}
		s.thetaUpd[g] = nil
	}
	return nil
}

// hllTarget is where group g's raw values go: its union, or with
// HLLBuild its build sketch (then non-nil). Two results rather than one
// interface: converting the union to another interface costs a lookup on
// every value.
func (s *State) hllTarget(g int32) (hll.Union, hll.HllSketch, error) {
	if s.spec == nil || !s.spec.HLLBuild {
		u, err := s.hllUnion(g)
		return u, nil, err
	}
	if n := len(s.HLL); len(s.hllUpd) < n {
		s.hllUpd = append(s.hllUpd, make([]hll.HllSketch, n-len(s.hllUpd))...)
	}
	if s.hllUpd[g] == nil {
		sk, err := hll.NewHllSketch(s.spec.lgK(), s.spec.tgt())
		if err != nil {
			return nil, nil, err
		}
		s.hllUpd[g] = sk
	}
	return nil, s.hllUpd[g], nil
}

func (s *State) hllUnion(g int32) (hll.Union, error) {
	u := s.HLL[g]
	if u == nil {
		var err error
		if u, err = hll.NewUnion(s.spec.lgK()); err != nil {
			return nil, err
		}
		s.HLL[g] = u
	}
	return u, nil
}

func (s *State) thetaUnion(g int32) (*theta.Union, error) {
	if s.Theta[g] == nil {
		u, err := theta.NewUnion(theta.WithUnionLgK(s.spec.thetaLgK()))
		if err != nil {
			return nil, err
		}
		s.Theta[g] = u
	}
	return s.Theta[g], nil
}

func (s *State) thetaSketch(g int32) (*theta.QuickSelectUpdateSketch, error) {
	if n := len(s.Theta); len(s.thetaUpd) < n {
		s.thetaUpd = append(s.thetaUpd, make([]*theta.QuickSelectUpdateSketch, n-len(s.thetaUpd))...)
	}
	if s.thetaUpd[g] == nil {
		sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(s.spec.thetaLgK()))
		if err != nil {
			return nil, err
		}
		s.thetaUpd[g] = sk
	}
	return s.thetaUpd[g], nil
}

func (s *State) quantilesAt(g int32) (*quantiles.Sketch, error) {
	if sk := s.Quant[g]; sk != nil {
		return sk, nil
	}
	sk, err := quantiles.New(s.spec.quantilesK())
	if err != nil {
		return nil, err
	}
	s.Quant[g] = sk
	return sk, nil
}

// ChopUTF8 cuts s to at most n bytes without splitting a character.
func ChopUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// AppendIntermediate appends group g's stored intermediate value: the
// serialized sketch (an empty one when no value came) or first/last pair
// of the given stored type, as a complex column or an SQL stage's frame
// holds it. Numbers have no intermediate bytes: ok is false for them.
func (s *State) AppendIntermediate(dst []byte, typ string, g int32) (out []byte, ok bool, err error) {
	switch s.Kind {
	case KindHLL:
		var b []byte
		if int(g) < len(s.hllUpd) && s.hllUpd[g] != nil && s.HLL[g] == nil {
			b, err = s.hllUpd[g].ToCompactSlice()
		} else {
			if err := s.finishGroup(g); err != nil {
				return dst, false, err
			}
			b, err = s.hllBytes(int(g))
		}
		return append(dst, b...), err == nil, err
	case KindTheta:
		var cs *theta.CompactSketch
		switch {
		case int(g) < len(s.thetaUpd) && s.thetaUpd[g] != nil && s.Theta[g] == nil:
			cs = s.thetaUpd[g].CompactOrdered()
		case s.Theta[g] == nil && (int(g) >= len(s.thetaUpd) || s.thetaUpd[g] == nil):
			sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(s.spec.thetaLgK()))
			if err != nil {
				return dst, false, err
			}
			cs = sk.CompactOrdered()
		default:
			if err := s.finishGroup(g); err != nil {
				return dst, false, err
			}
			if cs, err = s.Theta[g].OrderedResult(); err != nil {
				return dst, false, err
			}
		}
		b, err := cs.MarshalBinary()
		return append(dst, b...), err == nil, err
	case KindQuantiles:
		sk, err := s.QuantilesSketch(int(g))
		if err != nil {
			return dst, false, err
		}
		b, err := sk.MarshalBinary()
		return append(dst, b...), err == nil, err
	}
	if !s.pair() {
		return dst, false, nil
	}
	p := blob.Pair{Time: s.Times[g], Null: s.Null[g]}
	switch s.Kind {
	case KindLong:
		p.Long = s.Longs[g]
	case KindString:
		p.String = s.Strs[g]
	default:
		p.Double = s.Doubles[g]
	}
	out, err = blob.AppendPair(dst, typ, p)
	return out, err == nil, err
}
