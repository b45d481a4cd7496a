package aggregate

import (
	"math"
	"slices"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/quantiles"
	"strata/expr"
)

// Value kinds of aggregator states (the intermediate value an aggregator
// makes). The strings are those of the wire form.
const (
	KindLong   = "LONG"
	KindDouble = "DOUBLE"
	KindFloat  = "FLOAT"
	KindString = "STRING"
	KindHLL    = "HLL"   // cardinality, hyperUnique, HLLSketch*, APPROX_COUNT_DISTINCT
	KindTheta  = "THETA" // thetaSketch
	// KindQuantiles is quantilesDoublesSketch (DataSketches DoublesSketch).
	KindQuantiles = "QUANTILES"
)

// Operations of the simple kinds.
const (
	OpCount = "count"
	OpSum   = "sum"
	OpMin   = "min"
	OpMax   = "max"
	OpFirst = "first"
	OpLast  = "last"
	OpAny   = "any"
)

// Spec is what a state needs to know of its aggregator: the kind and
// operation, and the parameters of sketches and strings. Zero parameters
// take Druid's defaults.
type Spec struct {
	Kind string
	// Op is one of the Op constants, or "" for sketches.
	Op string
	// HLL: log2 of the buckets (12) and the target type of the serialized
	// sketch ("HLL_4", "HLL_6", "HLL_8"); Round finalizes the estimate to a
	// long.
	LgK        int
	TgtHllType string
	Round      bool
	// Theta: nominal entries (16384).
	Size int
	// Quantiles: k (quantiles.DefaultK).
	K int
	// Population makes a variance the population one (else the sample
	// one, Druid's default estimator).
	Population bool
	// BitInit is the value a bitwise fold starts from (bitwise.go).
	BitInit int64
	// MaxStringBytes cuts string first/last values (Druid's default is
	// 1024; 0 keeps nothing, so string first/last specs must set it).
	MaxStringBytes int
	// HLLBuild keeps raw values in an HLL sketch of the target type per
	// group (Druid's HLLSketchBuild at ingestion, whose stored bytes keep
	// the sketch's own estimator) rather than in a union.
	HLLBuild bool
	// Float32 accumulates float sums in float32 after every input, as
	// Druid's storage and SQL float aggregators do; without it (native
	// queries) a float sum is rounded to float32 only when finalized.
	Float32 bool
	// Arrays (KindArray): the element type (ElemLong, ElemDouble,
	// ElemString; "" takes the first value's), the largest serialized size
	// (DefaultMaxSizeBytes when zero), and an expression over the array,
	// bound to FinalizeIdentifier, that makes the finalized value.
	Elem               string
	MaxSizeBytes       int
	Finalize           *expr.Expr
	FinalizeIdentifier string
}

func (s *Spec) lgK() int {
	if s != nil && s.LgK > 0 {
		return s.LgK
	}
	return 12
}

func (s *Spec) tgt() hll.TgtHllType {
	if s != nil {
		switch s.TgtHllType {
		case "HLL_6":
			return hll.TgtHllTypeHll6
		case "HLL_8":
			return hll.TgtHllTypeHll8
		}
	}
	return hll.TgtHllTypeHll4
}

// thetaLgK is log2 of the theta sketch's nominal entries.
func (s *Spec) thetaLgK() uint8 {
	size := 16384
	if s != nil && s.Size > 0 {
		size = s.Size
	}
	lg := uint8(0)
	for 1<<lg < size {
		lg++
	}
	return lg
}

func (s *Spec) quantilesK() int {
	if s != nil && s.K > 0 {
		return s.K
	}
	return quantiles.DefaultK
}

func (s *Spec) maxBytes() int {
	if s == nil {
		return 1024
	}
	return s.MaxStringBytes
}

// State is the columnar state of one aggregator over many groups (the rows
// of a partial result): group i's state is element i of the slices the
// kind uses. States are combined across segments (and data servers) with
// Combine and turned into result values with Result.
type State struct {
	// Kind is the value kind (KindLong, ...), Op the operation (OpCount,
	// ...), or "" for sketches.
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
	// M2 holds a variance's sums of squared differences from the mean
	// (its counts are in Longs, its sums in Doubles).
	M2 []float64
	// Arrs holds the arrays of KindArray, Sizes their serialized sizes
	// less the header, and Elem their element type.
	Arrs  [][]any
	Sizes []int
	Elem  string

	spec *Spec
	// thetaUpd holds the update sketches raw values go to, folded into
	// Theta by Finish; hllUpd the HLLBuild sketches.
	thetaUpd []*theta.QuickSelectUpdateSketch
	hllUpd   []hll.HllSketch
}

// New returns the state of n groups, each at the aggregator's identity.
func New(spec *Spec, n int) *State {
	s := &State{Kind: spec.Kind, Op: spec.Op, spec: spec, Elem: spec.Elem}
	s.Grow(n)
	return s
}

// Spec is the state's aggregator spec.
func (s *State) Spec() *Spec { return s.spec }

// Bind sets the spec of a decoded state (the wire form carries only the
// kind and operation).
func (s *State) Bind(spec *Spec) { s.spec = spec }

// Empty returns a state of no groups with the kind and spec of s.
func (s *State) Empty() *State { return &State{Kind: s.Kind, Op: s.Op, spec: s.spec, Elem: s.Elem} }

// Len is the number of groups of a non-sketch state.
func (s *State) Len() int { return len(s.Null) }

// IsSketch reports whether the state holds sketches.
func (s *State) IsSketch() bool {
	return s.Kind == KindHLL || s.Kind == KindTheta || s.Kind == KindQuantiles
}

// SketchLen is the number of groups of a sketch state.
func (s *State) SketchLen() int { return max(len(s.HLL), len(s.Theta), len(s.Quant)) }

// Groups is the number of groups, whatever the kind.
func (s *State) Groups() int {
	if s.IsSketch() {
		return s.SketchLen()
	}
	return s.Len()
}

func (s *State) pair() bool { return s.Op == OpFirst || s.Op == OpLast || s.Op == OpAny }

// Grow adds n groups. Identity values make the hot loops branch-free: min
// starts at +max, and Null tells whether any input arrived.
func (s *State) Grow(n int) {
	if n <= 0 {
		return
	}
	switch s.Kind {
	case KindVariance:
		s.Longs, s.Doubles, s.M2 = fill(s.Longs, n, 0), fill(s.Doubles, n, 0), fill(s.M2, n, 0)
	case KindHLL:
		s.HLL = append(s.HLL, make([]hll.Union, n)...)
	case KindTheta:
		s.Theta = append(s.Theta, make([]*theta.Union, n)...)
	case KindQuantiles:
		s.Quant = append(s.Quant, make([]*quantiles.Sketch, n)...)
	case KindLong:
		var id int64
		switch s.Op {
		case OpMin:
			id = math.MaxInt64
		case OpMax:
			id = math.MinInt64
		}
		s.Longs = fill(s.Longs, n, id)
	case KindDouble, KindFloat:
		id := 0.0
		switch s.Op {
		case OpMin:
			id = math.Inf(1)
		case OpMax:
			id = math.Inf(-1)
		}
		s.Doubles = fill(s.Doubles, n, id)
	case KindString:
		s.Strs = append(s.Strs, make([]string, n)...)
	case KindArray:
		s.Arrs = append(s.Arrs, make([][]any, n)...)
		s.Sizes = append(s.Sizes, make([]int, n)...)
	}
	if s.pair() {
		t := int64(math.MaxInt64)
		if s.Op == OpLast {
			t = math.MinInt64
		}
		s.Times = fill(s.Times, n, t)
	}
	null := s.Op != OpCount && !s.IsSketch()
	s.Null = fill(s.Null, n, null)
}

// fill appends n copies of v, growing s at most once.
func fill[T any](s []T, n int, v T) []T {
	s = slices.Grow(s, n)
	for range n {
		s = append(s, v)
	}
	return s
}

// HasValue reports whether group i received input (first/last track it
// with the time, since their value may be null).
func (s *State) HasValue(i int) bool {
	switch s.Op {
	case OpFirst, OpAny:
		return s.Times[i] != math.MaxInt64
	case OpLast:
		return s.Times[i] != math.MinInt64
	}
	return !s.Null[i]
}

// Combine folds group si of src into group di of s.
func (s *State) Combine(di int, src *State, si int) error {
	switch s.Kind {
	case KindVariance:
		s.combineVariance(di, src, si)
		return nil
	case KindHLL:
		if src.HLL[si] == nil {
			return nil
		}
		u, err := s.hllUnion(int32(di))
		if err != nil {
			return err
		}
		sk, err := src.HLL[si].GetResult(hll.TgtHllTypeHll8)
		if err != nil {
			return err
		}
		return u.UpdateSketch(sk)
	case KindTheta:
		if src.Theta[si] == nil {
			return nil
		}
		u, err := s.thetaUnion(int32(di))
		if err != nil {
			return err
		}
		sk, err := src.Theta[si].Result(false)
		if err != nil {
			return err
		}
		return u.Update(sk)
	case KindQuantiles:
		if src.Quant[si] == nil {
			return nil
		}
		sk, err := s.quantilesAt(int32(di))
		if err != nil {
			return err
		}
		return sk.Merge(src.Quant[si])
	case KindArray:
		return s.combineArray(di, src, si)
	}
	if !src.HasValue(si) {
		return nil
	}
	switch s.Op {
	case OpCount, OpSum:
		if s.Kind == KindLong {
			s.Longs[di] += src.Longs[si]
		} else {
			s.Doubles[di] = s.float(s.Doubles[di] + src.Doubles[si])
		}
		s.Null[di] = false
		return nil
	case OpBitAnd, OpBitOr, OpBitXor:
		s.foldBits(int32(di), src.Longs[si], true)
		return nil
	case OpMin, OpMax:
		if s.Kind == KindLong {
			if s.Op == OpMin {
				s.Longs[di] = min(s.Longs[di], src.Longs[si])
			} else {
				s.Longs[di] = max(s.Longs[di], src.Longs[si])
			}
		} else if s.Kind == KindString {
			return s.AddString(int32(di), src.Strs[si])
		} else if s.Op == OpMin {
			s.Doubles[di] = min(s.Doubles[di], src.Doubles[si])
		} else {
			s.Doubles[di] = max(s.Doubles[di], src.Doubles[si])
		}
		s.Null[di] = false
		return nil
	case OpFirst, OpAny:
		if s.HasValue(di) && (s.Op == OpAny || s.Times[di] <= src.Times[si]) {
			return nil
		}
	case OpLast:
		if s.Times[di] > src.Times[si] {
			return nil
		}
	}
	s.copyValue(di, src, si)
	return nil
}

// float rounds a float kind's accumulated value to float32 when the spec
// asks for float32 accumulation.
func (s *State) float(v float64) float64 {
	if s.Kind == KindFloat && s.spec != nil && s.spec.Float32 {
		return float64(float32(v))
	}
	return v
}

func (s *State) copyValue(di int, src *State, si int) {
	s.Times[di] = src.Times[si]
	s.Null[di] = src.Null[si]
	switch s.Kind {
	case KindLong:
		s.Longs[di] = src.Longs[si]
	case KindString:
		s.Strs[di] = src.Strs[si]
	default:
		s.Doubles[di] = src.Doubles[si]
	}
}

// QuantilesSketch returns group i's quantiles sketch, an empty one when no
// value came.
func (s *State) QuantilesSketch(i int) (*quantiles.Sketch, error) {
	if s.Quant[i] != nil {
		return s.Quant[i], nil
	}
	return quantiles.New(s.spec.quantilesK())
}

// ResultKind is the kind of a result value.
type ResultKind uint8

// Result kinds.
const (
	ResultNull ResultKind = iota
	ResultLong
	ResultDouble
	ResultFloat
	ResultString
	// ResultSketch is a serialized sketch (an intermediate value).
	ResultSketch
	// ResultArray is an array (KindArray): Arr, of Druid type ArrType.
	ResultArray
)

// Result is one group's value: finalized, or a sketch's serialized form.
type Result struct {
	Kind   ResultKind
	Long   int64
	Double float64 // also a float's value, widened
	Str    string
	Sketch []byte
	// Arr holds int64, float64, string or nil elements.
	Arr     []any
	ArrType string
}

// Result returns the value of group i; finalize turns sketches into
// estimates (else they are returned serialized).
func (s *State) Result(i int, finalize bool) (Result, error) {
	switch s.Kind {
	case KindVariance:
		return s.varianceResult(i), nil
	case KindHLL:
		if !finalize {
			b, err := s.hllBytes(i)
			return Result{Kind: ResultSketch, Sketch: b}, err
		}
		est := 0.0
		if s.HLL[i] != nil {
			// The union's own estimate is stale after merging sketches in
			// HLL mode (datasketches-go v0.2.0); its result's is not.
			sk, err := s.HLL[i].GetResult(hll.TgtHllTypeHll8)
			if err != nil {
				return Result{}, err
			}
			if est, err = sk.GetEstimate(); err != nil {
				return Result{}, err
			}
		}
		if s.spec != nil && s.spec.Round {
			return Result{Kind: ResultLong, Long: int64(math.Round(est))}, nil
		}
		return Result{Kind: ResultDouble, Double: est}, nil
	case KindTheta:
		if !finalize {
			b, err := s.thetaBytes(i)
			return Result{Kind: ResultSketch, Sketch: b}, err
		}
		est := 0.0
		if i < len(s.thetaUpd) && s.thetaUpd[i] != nil && s.Theta[i] == nil {
			// Raw values only: the update sketch's own estimate (a union
			// would first cut it to the nominal entries).
			est = s.thetaUpd[i].CompactOrdered().Estimate()
		} else if err := s.finishGroup(int32(i)); err != nil {
			return Result{}, err
		}
		if s.Theta[i] != nil {
			sk, err := s.Theta[i].Result(false)
			if err != nil {
				return Result{}, err
			}
			est = sk.Estimate()
		}
		if s.spec != nil && s.spec.Round {
			return Result{Kind: ResultLong, Long: int64(math.Round(est))}, nil
		}
		return Result{Kind: ResultDouble, Double: est}, nil
	case KindQuantiles:
		// Druid finalizes a quantiles sketch to its count of values; the
		// quantiles themselves come from the ToQuantile post-aggregators.
		if finalize {
			var n int64
			if s.Quant[i] != nil {
				n = s.Quant[i].N()
			}
			return Result{Kind: ResultLong, Long: n}, nil
		}
		sk, err := s.QuantilesSketch(i)
		if err != nil {
			return Result{}, err
		}
		b, err := sk.MarshalBinary()
		return Result{Kind: ResultSketch, Sketch: b}, err
	case KindArray:
		return s.arrayResult(i)
	}
	if s.Null[i] {
		return Result{}, nil
	}
	switch s.Kind {
	case KindLong:
		return Result{Kind: ResultLong, Long: s.Longs[i]}, nil
	case KindFloat:
		return Result{Kind: ResultFloat, Double: float64(float32(s.Doubles[i]))}, nil
	case KindString:
		return Result{Kind: ResultString, Str: s.Strs[i]}, nil
	}
	return Result{Kind: ResultDouble, Double: s.Doubles[i]}, nil
}

func (s *State) hllBytes(i int) ([]byte, error) {
	if err := s.finishGroup(int32(i)); err != nil {
		return nil, err
	}
	u := s.HLL[i]
	if u == nil {
		var err error
		if u, err = hll.NewUnion(s.spec.lgK()); err != nil {
			return nil, err
		}
	}
	sk, err := u.GetResult(s.spec.tgt())
	if err != nil {
		return nil, err
	}
	return sk.ToCompactSlice()
}

func (s *State) thetaBytes(i int) ([]byte, error) {
	if err := s.finishGroup(int32(i)); err != nil {
		return nil, err
	}
	u := s.Theta[i]
	if u == nil {
		var err error
		if u, err = theta.NewUnion(theta.WithUnionLgK(s.spec.thetaLgK())); err != nil {
			return nil, err
		}
	}
	sk, err := u.Result(true)
	if err != nil {
		return nil, err
	}
	return sk.MarshalBinary()
}

// Gather returns a state holding groups idx of s, in that order.
func (s *State) Gather(idx []int) *State {
	out := s.Empty()
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
		if s.M2 != nil {
			out.M2 = append(out.M2, s.M2[i])
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
		if s.Arrs != nil {
			out.Arrs = append(out.Arrs, s.Arrs[i])
			out.Sizes = append(out.Sizes, s.Sizes[i])
		}
	}
	return out
}

// Truncate cuts the state to n groups (grouping allocates in chunks).
func (s *State) Truncate(n int) {
	cut := func(l int) int { return min(l, n) }
	s.Null = s.Null[:cut(len(s.Null))]
	s.Longs = s.Longs[:cut(len(s.Longs))]
	s.Doubles = s.Doubles[:cut(len(s.Doubles))]
	s.Strs = s.Strs[:cut(len(s.Strs))]
	s.Times = s.Times[:cut(len(s.Times))]
	s.M2 = s.M2[:cut(len(s.M2))]
	s.HLL = s.HLL[:cut(len(s.HLL))]
	s.Theta = s.Theta[:cut(len(s.Theta))]
	s.Quant = s.Quant[:cut(len(s.Quant))]
	s.Arrs = s.Arrs[:cut(len(s.Arrs))]
	s.Sizes = s.Sizes[:cut(len(s.Sizes))]
	s.thetaUpd = s.thetaUpd[:cut(len(s.thetaUpd))]
	s.hllUpd = s.hllUpd[:cut(len(s.hllUpd))]
}

// Slice returns groups [lo, hi) of a state of n groups, sharing its
// arrays.
func (s *State) Slice(n, lo, hi int) *State {
	out := s.Empty()
	out.Longs, out.Doubles, out.Strs = sliceRows(s.Longs, n, lo, hi), sliceRows(s.Doubles, n, lo, hi), sliceRows(s.Strs, n, lo, hi)
	out.Null, out.Times = sliceRows(s.Null, n, lo, hi), sliceRows(s.Times, n, lo, hi)
	out.M2 = sliceRows(s.M2, n, lo, hi)
	out.HLL, out.Theta, out.Quant = sliceRows(s.HLL, n, lo, hi), sliceRows(s.Theta, n, lo, hi), sliceRows(s.Quant, n, lo, hi)
	out.Arrs, out.Sizes = sliceRows(s.Arrs, n, lo, hi), sliceRows(s.Sizes, n, lo, hi)
	return out
}

// sliceRows cuts rows [lo, hi) of a column of n rows (nil when the column
// is unused).
func sliceRows[T any](x []T, n, lo, hi int) []T {
	if len(x) != n {
		return nil
	}
	return x[lo:hi]
}

// Reset drops every group, keeping the arrays' memory for reuse.
func (s *State) Reset() {
	clear(s.Strs)
	clear(s.HLL)
	clear(s.Theta)
	clear(s.Quant)
	clear(s.Arrs)
	clear(s.thetaUpd)
	clear(s.hllUpd)
	s.Truncate(0)
}
