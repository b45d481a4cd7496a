package aggregate

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/blob"
	"strata/aggregate/quantiles"
	"strata/javacompat"
)

// stateJSON is the wire form of a State (docs/subquery-wire-format.md):
// sketches serialized, doubles as Floats (non-finite values as strings).
type stateJSON struct {
	Kind    string      `json:"kind"`
	Op      string      `json:"op,omitempty"`
	Longs   WireLongs   `json:"longs,omitempty"`
	Doubles Floats      `json:"doubles,omitempty"`
	M2      Floats      `json:"m2,omitempty"`
	Strs    WireStrings `json:"strs,omitempty"`
	Null    WireBools   `json:"null"`
	Times   WireLongs   `json:"times,omitempty"`
	Sketch  [][]byte    `json:"sketches,omitempty"`
	// Elem and Arrs: KindArray's element type and arrays.
	Elem string          `json:"elem,omitempty"`
	Arrs json.RawMessage `json:"arrs,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (s *State) MarshalJSON() ([]byte, error) {
	j := stateJSON{Kind: s.Kind, Op: s.Op, Longs: s.Longs, Doubles: s.Doubles, Strs: s.Strs, Null: s.Null, Times: s.Times}
	if s.Null == nil {
		j.Null = WireBools{}
	}
	if !s.IsSketch() {
		// Written directly: a nested json.Marshal would re-scan the packed
		// columns once more.
		b := append([]byte(`{"kind":`), javacompat.AppendJSONString(nil, s.Kind)...)
		if s.Op != "" {
			b = append(b, `,"op":`...)
			b = javacompat.AppendJSONString(b, s.Op)
		}
		b, err := AppendField(b, "longs", j.Longs)
		if err == nil {
			b, err = AppendField(b, "doubles", j.Doubles)
		}
		if err == nil && s.Kind == KindVariance {
			b, err = AppendField(b, "m2", Floats(s.M2), true)
		}
		if err == nil {
			b, err = AppendField(b, "strs", j.Strs)
		}
		if err == nil {
			b, err = AppendField(b, "null", j.Null, true)
		}
		if err == nil {
			b, err = AppendField(b, "times", j.Times)
		}
		if err == nil && s.Kind == KindArray {
			b = append(b, `,"elem":`...)
			b = javacompat.AppendJSONString(b, s.Elem)
			b, err = AppendField(b, "arrs", wireArrays(s.Arrs), true)
		}
		return append(b, '}'), err
	}
	n := s.SketchLen()
	j.Null = make([]bool, n)
	j.Sketch = make([][]byte, n)
	for i := range n {
		var b []byte
		var err error
		if s.Kind == KindHLL && s.HLL[i] != nil {
			b, err = s.HLL[i].ToCompactSlice()
		} else if s.Kind == KindTheta && s.Theta[i] != nil {
			b, err = s.thetaBytes(i)
		} else if s.Kind == KindQuantiles && s.Quant[i] != nil {
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
func (s *State) UnmarshalJSON(data []byte) error {
	var j stateJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*s = State{Kind: j.Kind, Op: j.Op, Longs: j.Longs, Doubles: j.Doubles, Strs: j.Strs, Null: j.Null, Times: j.Times}
	n := len(j.Null)
	bad := func(l int) bool { return l != 0 && l != n }
	if bad(len(j.Longs)) || bad(len(j.Doubles)) || bad(len(j.Strs)) || bad(len(j.Times)) || bad(len(j.Sketch)) {
		return fmt.Errorf("aggregator state: column lengths differ")
	}
	switch s.Kind {
	case KindVariance:
		s.M2 = j.M2
		if err := s.checkVariance(n); err != nil {
			return err
		}
	case KindHLL:
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
	case KindTheta:
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
	case KindQuantiles:
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
	case KindLong:
		if len(s.Longs) != n {
			return fmt.Errorf("aggregator state: missing longs")
		}
	case KindDouble, KindFloat:
		if len(s.Doubles) != n {
			return fmt.Errorf("aggregator state: missing doubles")
		}
	case KindString:
		if len(s.Strs) != n {
			s.Strs = make([]string, n)
		}
	case KindArray:
		switch j.Elem {
		case ElemLong, ElemDouble, ElemString, "":
		default:
			return fmt.Errorf("aggregator state: unknown array element type %q", j.Elem)
		}
		s.Elem = j.Elem
		arrs, err := decodeArrays(j.Arrs, j.Elem)
		if err != nil {
			return err
		}
		if len(arrs) != n {
			return fmt.Errorf("aggregator state: missing arrays")
		}
		s.Arrs, s.Sizes = arrs, make([]int, n)
		for i, a := range arrs {
			s.Sizes[i] = arraySize(a) - 5
			if a != nil && j.Null[i] {
				return fmt.Errorf("aggregator state: a null group holds an array")
			}
		}
	default:
		return fmt.Errorf("aggregator state: unknown kind %q", s.Kind)
	}
	if !validOp(s.Kind, s.Op) {
		return fmt.Errorf("aggregator state: no %q operation for kind %s", s.Op, s.Kind)
	}
	if s.pair() && len(s.Times) != n {
		return fmt.Errorf("aggregator state: missing times")
	}
	return nil
}

// validOp reports whether an aggregator of the kind can have the
// operation: a state decoded from the wire is combined with the query's
// own, whose columns the operation indexes.
func validOp(kind, op string) bool {
	switch kind {
	case KindHLL, KindTheta, KindQuantiles, KindVariance:
		return op == ""
	case KindString:
		return op == OpMin || op == OpMax || op == OpFirst || op == OpLast || op == OpAny
	case KindArray:
		return op == OpArrayAppend || op == OpArraySet
	case KindLong:
		return op == OpCount || op == OpSum || op == OpMin || op == OpMax || op == OpFirst || op == OpLast || op == OpAny || IsBitOp(op)
	}
	return op == OpSum || op == OpMin || op == OpMax || op == OpFirst || op == OpLast || op == OpAny
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
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, '"')
			b = javacompat.AppendDouble(b, v)
			b = append(b, '"')
			continue
		}
		b = javacompat.AppendDouble(b, v)
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
