package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/javacompat"
	"strata/querynode/query"
	"strata/storage/blob"
	"strata/storage/quantiles"
)

// AggState is the columnar state of one aggregator over the rows of a
// partial result: row i's state is element i of the slices the kind uses.
// States are combined across segments (and data servers) with Combine and
// turned into result values with Value.
type AggState struct {
	// Kind is the aggregator's value kind (query.KindLong, ...), Op its
	// operation: count, sum, min, max, first, last, any, or "" for sketches.
	Kind string
	Op   string
	// Longs (long kinds), Doubles (double and float kinds) or Strs (string
	// first/last) hold the values; Null marks rows without a value.
	Longs   []int64
	Doubles []float64
	Strs    []string
	Null    []bool
	// Times holds the row time of first/last/any values.
	Times []int64
	// HLL and Theta hold sketches (nil = empty).
	HLL   []hll.Union
	Theta []*theta.Union
	// Quant holds quantiles sketches (nil = empty).
	Quant []*quantiles.Sketch

	spec *query.Aggregator
}

func newAggState(a *query.Aggregator, n int) *AggState {
	s := &AggState{Kind: a.ValueKind(), Op: a.Op(), spec: a}
	if a.Base().Type == "count" {
		s.Op = "count"
	}
	s.grow(n)
	return s
}

// Len is the number of rows.
func (s *AggState) Len() int { return len(s.Null) }

func (s *AggState) sketch() bool {
	return s.Kind == query.KindHLL || s.Kind == query.KindTheta || s.Kind == query.KindQuantiles
}

// sketchLen is the number of rows of a sketch state.
func (s *AggState) sketchLen() int { return max(len(s.HLL), len(s.Theta), len(s.Quant)) }

// identity values make the hot loops branch-free: min starts at +max, and
// Null tells whether any input arrived.
func (s *AggState) grow(n int) {
	if n <= 0 {
		return
	}
	switch s.Kind {
	case query.KindHLL:
		s.HLL = append(s.HLL, make([]hll.Union, n)...)
	case query.KindTheta:
		s.Theta = append(s.Theta, make([]*theta.Union, n)...)
	case query.KindQuantiles:
		s.Quant = append(s.Quant, make([]*quantiles.Sketch, n)...)
	case query.KindLong:
		var id int64
		switch s.Op {
		case "min":
			id = math.MaxInt64
		case "max":
			id = math.MinInt64
		}
		for range n {
			s.Longs = append(s.Longs, id)
		}
	case query.KindDouble, query.KindFloat:
		id := 0.0
		switch s.Op {
		case "min":
			id = math.Inf(1)
		case "max":
			id = math.Inf(-1)
		}
		for range n {
			s.Doubles = append(s.Doubles, id)
		}
	case query.KindString:
		s.Strs = append(s.Strs, make([]string, n)...)
	}
	if s.Op == "first" || s.Op == "last" || s.Op == "any" {
		t := int64(math.MaxInt64)
		if s.Op == "last" {
			t = math.MinInt64
		}
		for range n {
			s.Times = append(s.Times, t)
		}
	}
	null := s.Op != "count" && !s.sketch()
	for range n {
		s.Null = append(s.Null, null)
	}
}

// hasValue reports whether row i received input (first/last track it with
// the time, since their value may be null).
func (s *AggState) hasValue(i int) bool {
	switch s.Op {
	case "first", "any":
		return s.Times[i] != math.MaxInt64
	case "last":
		return s.Times[i] != math.MinInt64
	}
	return !s.Null[i]
}

// Combine folds row si of src into row di of s.
func (s *AggState) Combine(di int, src *AggState, si int) error {
	switch s.Kind {
	case query.KindHLL:
		if src.HLL[si] == nil {
			return nil
		}
		if s.HLL[di] == nil {
			u, err := hll.NewUnion(s.lgK())
			if err != nil {
				return err
			}
			s.HLL[di] = u
		}
		sk, err := src.HLL[si].GetResult(hll.TgtHllTypeHll8)
		if err != nil {
			return err
		}
		return s.HLL[di].UpdateSketch(sk)
	case query.KindTheta:
		if src.Theta[si] == nil {
			return nil
		}
		if s.Theta[di] == nil {
			u, err := newThetaUnion(s.spec)
			if err != nil {
				return err
			}
			s.Theta[di] = u
		}
		sk, err := src.Theta[si].Result(false)
		if err != nil {
			return err
		}
		return s.Theta[di].Update(sk)
	case query.KindQuantiles:
		if src.Quant[si] == nil {
			return nil
		}
		if s.Quant[di] == nil {
			sk, err := quantiles.New(s.quantilesK())
			if err != nil {
				return err
			}
			s.Quant[di] = sk
		}
		return s.Quant[di].Merge(src.Quant[si])
	}
	if !src.hasValue(si) {
		return nil
	}
	switch s.Op {
	case "count", "sum":
		if s.Kind == query.KindLong {
			s.Longs[di] += src.Longs[si]
		} else {
			s.Doubles[di] += src.Doubles[si]
		}
		s.Null[di] = false
		return nil
	case "min", "max":
		if s.Kind == query.KindLong {
			if s.Op == "min" {
				s.Longs[di] = min(s.Longs[di], src.Longs[si])
			} else {
				s.Longs[di] = max(s.Longs[di], src.Longs[si])
			}
		} else if s.Op == "min" {
			s.Doubles[di] = min(s.Doubles[di], src.Doubles[si])
		} else {
			s.Doubles[di] = max(s.Doubles[di], src.Doubles[si])
		}
		s.Null[di] = false
		return nil
	case "first", "any":
		if s.hasValue(di) && (s.Op == "any" || s.Times[di] <= src.Times[si]) {
			return nil
		}
	case "last":
		if s.Times[di] > src.Times[si] {
			return nil
		}
	}
	s.copyValue(di, src, si)
	return nil
}

func (s *AggState) copyValue(di int, src *AggState, si int) {
	s.Times[di] = src.Times[si]
	s.Null[di] = src.Null[si]
	switch s.Kind {
	case query.KindLong:
		s.Longs[di] = src.Longs[si]
	case query.KindString:
		s.Strs[di] = src.Strs[si]
	default:
		s.Doubles[di] = src.Doubles[si]
	}
}

func (s *AggState) lgK() int {
	if s.spec != nil && s.spec.Base().LgK > 0 {
		return s.spec.Base().LgK
	}
	return 12
}

// quantilesK is the aggregator's k (the union's maximum k).
func (s *AggState) quantilesK() int {
	if s.spec != nil && s.spec.Base().K > 0 {
		return s.spec.Base().K
	}
	return quantiles.DefaultK
}

// quantilesSketch returns row i's sketch, an empty one when no value came.
func (s *AggState) quantilesSketch(i int) (*quantiles.Sketch, error) {
	if s.Quant[i] != nil {
		return s.Quant[i], nil
	}
	return quantiles.New(s.quantilesK())
}

func newThetaUnion(a *query.Aggregator) (*theta.Union, error) {
	size := 16384
	if a != nil && a.Base().Size > 0 {
		size = a.Base().Size
	}
	lg := uint8(0)
	for 1<<lg < size {
		lg++
	}
	return theta.NewUnion(theta.WithUnionLgK(lg))
}

// Value returns the result value of row i; finalize turns sketches into
// estimates (else they are returned serialized).
func (s *AggState) Value(i int, finalize bool) (Value, error) {
	switch s.Kind {
	case query.KindHLL:
		if !finalize {
			b, err := s.hllBytes(i)
			return Value{K: KObject, S: b64(b)}, err
		}
		est := 0.0
		if s.HLL[i] != nil {
			// The union's own estimate is stale after merging sketches in
			// HLL mode (datasketches-go v0.2.0); its result's is not.
			sk, err := s.HLL[i].GetResult(hll.TgtHllTypeHll8)
			if err != nil {
				return Null, err
			}
			if est, err = sk.GetEstimate(); err != nil {
				return Null, err
			}
		}
		if s.spec != nil && s.spec.Base().Round {
			return Long(int64(math.Round(est))), nil
		}
		return Double(est), nil
	case query.KindTheta:
		if !finalize {
			b, err := s.thetaBytes(i)
			return Value{K: KObject, S: b64(b)}, err
		}
		est := 0.0
		if s.Theta[i] != nil {
			sk, err := s.Theta[i].Result(false)
			if err != nil {
				return Null, err
			}
			est = sk.Estimate()
		}
		return Double(est), nil
	case query.KindQuantiles:
		// Druid finalizes a quantiles sketch to its count of values; the
		// quantiles themselves come from the ToQuantile post-aggregators.
		if finalize {
			var n int64
			if s.Quant[i] != nil {
				n = s.Quant[i].N()
			}
			return Long(n), nil
		}
		sk, err := s.quantilesSketch(i)
		if err != nil {
			return Null, err
		}
		b, err := sk.MarshalBinary()
		return Value{K: KObject, S: b64(b)}, err
	}
	if s.Null[i] {
		return Null, nil
	}
	switch s.Kind {
	case query.KindLong:
		return Long(s.Longs[i]), nil
	case query.KindFloat:
		return Float(float32(s.Doubles[i])), nil
	case query.KindString:
		return Str(s.Strs[i]), nil
	}
	return Double(s.Doubles[i]), nil
}

func (s *AggState) hllBytes(i int) ([]byte, error) {
	u := s.HLL[i]
	if u == nil {
		var err error
		if u, err = hll.NewUnion(s.lgK()); err != nil {
			return nil, err
		}
	}
	tgt := hll.TgtHllTypeHll4
	if s.spec != nil {
		switch s.spec.Base().TgtHllType {
		case "HLL_6":
			tgt = hll.TgtHllTypeHll6
		case "HLL_8":
			tgt = hll.TgtHllTypeHll8
		}
	}
	sk, err := u.GetResult(tgt)
	if err != nil {
		return nil, err
	}
	return sk.ToCompactSlice()
}

func (s *AggState) thetaBytes(i int) ([]byte, error) {
	u := s.Theta[i]
	if u == nil {
		var err error
		if u, err = newThetaUnion(s.spec); err != nil {
			return nil, err
		}
	}
	sk, err := u.Result(true)
	if err != nil {
		return nil, err
	}
	return sk.MarshalBinary()
}

// gather returns a state holding rows idx of s, in that order.
func (s *AggState) gather(idx []int) *AggState {
	out := &AggState{Kind: s.Kind, Op: s.Op, spec: s.spec}
	for _, i := range idx {
		out.Null = append(out.Null, s.Null[i])
		if s.Longs != nil {
			out.Longs = append(out.Longs, s.Longs[i])
		}
		if s.Doubles != nil {
			out.Doubles = append(out.Doubles, s.Doubles[i])
		}
		if s.Strs != nil {
			out.Strs = append(out.Strs, s.Strs[i])
		}
		if s.Times != nil {
			out.Times = append(out.Times, s.Times[i])
		}
		if s.HLL != nil {
			out.HLL = append(out.HLL, s.HLL[i])
		}
		if s.Theta != nil {
			out.Theta = append(out.Theta, s.Theta[i])
		}
		if s.Quant != nil {
			out.Quant = append(out.Quant, s.Quant[i])
		}
	}
	return out
}

// aggStateJSON is the wire form of an AggState: sketches serialized,
// doubles as Floats (non-finite values as strings).
type aggStateJSON struct {
	Kind    string      `json:"kind"`
	Op      string      `json:"op,omitempty"`
	Longs   wireLongs   `json:"longs,omitempty"`
	Doubles Floats      `json:"doubles,omitempty"`
	Strs    wireStrings `json:"strs,omitempty"`
	Null    wireBools   `json:"null"`
	Times   wireLongs   `json:"times,omitempty"`
	Sketch  [][]byte    `json:"sketches,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (s *AggState) MarshalJSON() ([]byte, error) {
	j := aggStateJSON{Kind: s.Kind, Op: s.Op, Longs: s.Longs, Doubles: s.Doubles, Strs: s.Strs, Null: s.Null, Times: s.Times}
	if s.Null == nil {
		j.Null = wireBools{}
	}
	if !s.sketch() {
		// Written directly: a nested json.Marshal would re-scan the packed
		// columns once more.
		b := append([]byte(`{"kind":`), javacompat.AppendJSONString(nil, s.Kind)...)
		if s.Op != "" {
			b = append(b, `,"op":`...)
			b = javacompat.AppendJSONString(b, s.Op)
		}
		b, err := appendField(b, "longs", j.Longs)
		if err == nil {
			b, err = appendField(b, "doubles", j.Doubles)
		}
		if err == nil {
			b, err = appendField(b, "strs", j.Strs)
		}
		if err == nil {
			b, err = appendField(b, "null", j.Null, true)
		}
		if err == nil {
			b, err = appendField(b, "times", j.Times)
		}
		return append(b, '}'), err
	}
	n := s.sketchLen()
	j.Null = make([]bool, n)
	j.Sketch = make([][]byte, n)
	for i := range n {
		var b []byte
		var err error
		if s.Kind == query.KindHLL && s.HLL[i] != nil {
			b, err = s.HLL[i].ToCompactSlice()
		} else if s.Kind == query.KindTheta && s.Theta[i] != nil {
			b, err = s.thetaBytes(i)
		} else if s.Kind == query.KindQuantiles && s.Quant[i] != nil {
			b, err = s.Quant[i].MarshalBinary()
		}
		if err != nil {
			return nil, err
		}
		j.Sketch[i] = b
		j.Null[i] = b == nil
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *AggState) UnmarshalJSON(data []byte) error {
	var j aggStateJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*s = AggState{Kind: j.Kind, Op: j.Op, Longs: j.Longs, Doubles: j.Doubles, Strs: j.Strs, Null: j.Null, Times: j.Times}
	n := len(j.Null)
	bad := func(l int) bool { return l != 0 && l != n }
	if bad(len(j.Longs)) || bad(len(j.Doubles)) || bad(len(j.Strs)) || bad(len(j.Times)) || bad(len(j.Sketch)) {
		return fmt.Errorf("aggregator state: column lengths differ")
	}
	switch s.Kind {
	case query.KindHLL:
		s.HLL = make([]hll.Union, n)
		for i, b := range j.Sketch {
			if b == nil {
				continue
			}
			sk, err := blob.DecodeHLL(b)
			if err != nil {
				return err
			}
			u, err := hll.NewUnion(sk.GetLgConfigK())
			if err != nil {
				return err
			}
			if err := u.UpdateSketch(sk); err != nil {
				return err
			}
			s.HLL[i] = u
		}
	case query.KindTheta:
		s.Theta = make([]*theta.Union, n)
		for i, b := range j.Sketch {
			if b == nil {
				continue
			}
			sk, err := blob.DecodeTheta(b)
			if err != nil {
				return err
			}
			u, err := theta.NewUnion()
			if err != nil {
				return err
			}
			if err := u.Update(sk); err != nil {
				return err
			}
			s.Theta[i] = u
		}
	case query.KindQuantiles:
		s.Quant = make([]*quantiles.Sketch, n)
		for i, b := range j.Sketch {
			if b == nil {
				continue
			}
			sk, err := blob.DecodeQuantiles(b)
			if err != nil {
				return err
			}
			s.Quant[i] = sk
		}
	case query.KindLong:
		if len(s.Longs) != n {
			return fmt.Errorf("aggregator state: missing longs")
		}
	case query.KindDouble, query.KindFloat:
		if len(s.Doubles) != n {
			return fmt.Errorf("aggregator state: missing doubles")
		}
	case query.KindString:
		if len(s.Strs) != n {
			s.Strs = make([]string, n)
		}
	default:
		return fmt.Errorf("aggregator state: unknown kind %q", s.Kind)
	}
	if (s.Op == "first" || s.Op == "last" || s.Op == "any") && len(s.Times) != n {
		return fmt.Errorf("aggregator state: missing times")
	}
	return nil
}

// Floats is a []float64 whose JSON form writes NaN and infinities as the
// strings "NaN", "Infinity" and "-Infinity".
type Floats []float64

// MarshalJSON implements json.Marshaler.
func (f Floats) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = Double(v).AppendJSON(b)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Floats) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make([]float64, len(raw))
	for i, r := range raw {
		s := string(r)
		if len(s) > 0 && s[0] == '"' {
			if err := json.Unmarshal(r, &s); err != nil {
				return err
			}
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("bad double %s", r)
		}
		out[i] = v
	}
	*f = out
	return nil
}

// truncate cuts the state to n rows (grouping allocates in chunks).
func (s *AggState) truncate(n int) {
	cut := func(l int) int { return min(l, n) }
	s.Null = s.Null[:cut(len(s.Null))]
	s.Longs = s.Longs[:cut(len(s.Longs))]
	s.Doubles = s.Doubles[:cut(len(s.Doubles))]
	s.Strs = s.Strs[:cut(len(s.Strs))]
	s.Times = s.Times[:cut(len(s.Times))]
	s.HLL = s.HLL[:cut(len(s.HLL))]
	s.Theta = s.Theta[:cut(len(s.Theta))]
	s.Quant = s.Quant[:cut(len(s.Quant))]
}
