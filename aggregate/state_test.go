package aggregate

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/apache/datasketches-go/hll"

	"strata/aggregate/blob"
)

// result renders group i's finalized value for comparisons.
func result(t *testing.T, s *State, i int) any {
	t.Helper()
	r, err := s.Result(i, true)
	if err != nil {
		t.Fatal(err)
	}
	switch r.Kind {
	case ResultLong:
		return r.Long
	case ResultDouble, ResultFloat:
		return r.Double
	case ResultString:
		return r.Str
	}
	return nil
}

// TestFold folds the same rows densely, through a selection and grouped,
// and checks Druid's answers: nulls skipped (null when no input), NaN
// winning min and max, -0 below +0.
func TestFold(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	cases := []struct {
		name    string
		spec    Spec
		longs   []int64
		doubles []float64
		nulls   []int // null rows
		want    any
	}{
		{"long sum", Spec{Kind: KindLong, Op: OpSum}, []int64{1, 2, 3, 4}, nil, nil, int64(10)},
		{"long sum with nulls", Spec{Kind: KindLong, Op: OpSum}, []int64{1, 2, 3, 4}, nil, []int{1}, int64(8)},
		{"long min", Spec{Kind: KindLong, Op: OpMin}, []int64{5, -2, 3, 4}, nil, nil, int64(-2)},
		{"long max", Spec{Kind: KindLong, Op: OpMax}, []int64{5, -2, 3, 4}, nil, []int{0}, int64(4)},
		{"long max all null", Spec{Kind: KindLong, Op: OpMax}, []int64{5, -2}, nil, []int{0, 1}, nil},
		{"double sum", Spec{Kind: KindDouble, Op: OpSum}, nil, []float64{0.5, 0.25, 1}, nil, 1.75},
		{"double min NaN wins", Spec{Kind: KindDouble, Op: OpMin}, nil, []float64{1, nan, -3}, nil, nan},
		{"double max NaN wins", Spec{Kind: KindDouble, Op: OpMax}, nil, []float64{1, nan, -3}, nil, nan},
		{"double min -0 below +0", Spec{Kind: KindDouble, Op: OpMin}, nil, []float64{0, negZero}, nil, negZero},
		{"double max +0 above -0", Spec{Kind: KindDouble, Op: OpMax}, nil, []float64{negZero, 0}, nil, 0.0},
		{"float sum", Spec{Kind: KindFloat, Op: OpSum}, nil, []float64{0.1, 0.2}, nil, float64(float32(0.1 + 0.2))},
		{"float32 sum", Spec{Kind: KindFloat, Op: OpSum, Float32: true}, nil, []float64{float64(float32(0.1)), float64(float32(0.2))},
			nil, float64(float32(0.1) + float32(0.2))},
	}
	for _, c := range cases {
		n := max(len(c.longs), len(c.doubles))
		var nulls []uint64
		if c.nulls != nil {
			nulls = make([]uint64, 1)
			for _, i := range c.nulls {
				nulls[0] |= 1 << i
			}
		}
		var bs, bg []int32
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		for _, shape := range []struct {
			name string
			rows Rows
		}{
			{"dense", Rows{From: 0, To: n}},
			{"selection", Rows{Sel: all}},
			{"grouped", Rows{From: 0, To: n, Groups: make([]int32, n)}},
			{"selection grouped", Rows{Sel: all, Groups: make([]int32, n)}},
		} {
			t.Run(c.name+"/"+shape.name, func(t *testing.T) {
				s := New(&c.spec, 1)
				rows := shape.rows
				if nulls != nil {
					rows = rows.Keep(nulls, true, &bs, &bg)
				}
				if c.longs != nil {
					s.AddLongs(c.longs, rows)
				} else {
					s.AddDoubles(c.doubles, rows)
				}
				same(t, result(t, s, 0), c.want)
				// One value at a time folds the same way.
				r := New(&c.spec, 1)
				for i := range n {
					if nulls != nil && BitSet(nulls, i) {
						continue
					}
					if c.longs != nil {
						_ = r.AddLong(0, c.longs[i])
					} else {
						_ = r.AddDouble(0, c.doubles[i])
					}
				}
				same(t, result(t, r, 0), c.want)
			})
		}
	}
}

func same(t *testing.T, got, want any) {
	t.Helper()
	g, gok := got.(float64)
	w, wok := want.(float64)
	if gok && wok {
		if math.Float64bits(g) != math.Float64bits(w) && !(math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("got %v, want %v", got, want)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// TestCountAndCombine counts grouped rows, then merges partial states of
// every simple kind: the merge equals one state over all rows.
func TestCountAndCombine(t *testing.T) {
	c := New(&Spec{Kind: KindLong, Op: OpCount}, 3)
	c.AddCount(Rows{From: 0, To: 5, Groups: []int32{0, 1, 1, 2, 1}})
	c.AddCount(Rows{Sel: []int32{3, 4}, G: 0})
	if !reflect.DeepEqual(c.Longs, []int64{3, 3, 1}) {
		t.Fatalf("counts %v", c.Longs)
	}
	for _, spec := range []Spec{
		{Kind: KindLong, Op: OpCount}, {Kind: KindLong, Op: OpSum}, {Kind: KindLong, Op: OpMin}, {Kind: KindLong, Op: OpMax},
		{Kind: KindDouble, Op: OpSum}, {Kind: KindDouble, Op: OpMin}, {Kind: KindFloat, Op: OpMax},
		{Kind: KindLong, Op: OpFirst}, {Kind: KindDouble, Op: OpLast}, {Kind: KindString, Op: OpAny, MaxStringBytes: 8},
	} {
		t.Run(spec.Kind+"/"+spec.Op, func(t *testing.T) {
			whole, parts := New(&spec, 1), []*State{New(&spec, 1), New(&spec, 1), New(&spec, 1)}
			add := func(s *State, i int) {
				switch {
				case spec.Op == OpCount:
					s.AddCount(Rows{From: 0, To: 1})
				case s.pair():
					if !s.Offer(0, int64(i%4)) {
						break
					}
					if spec.Kind == KindString {
						s.SetString(0, fmt.Sprint(i))
					} else {
						s.SetLong(0, int64(i))
					}
				default:
					_ = s.AddLong(0, int64(i*7%11-5))
				}
			}
			for i := range 12 {
				add(whole, i)
				if i%3 != 2 { // the third part stays empty
					add(parts[i%3], i)
				}
			}
			// The third part got no input: merging it changes nothing.
			merged := New(&spec, 1)
			for _, p := range parts {
				if err := merged.Combine(0, p, 0); err != nil {
					t.Fatal(err)
				}
			}
			if spec.Op == OpAny {
				// Any value of some row; both have one.
				if !merged.HasValue(0) || !whole.HasValue(0) {
					t.Fatal("any: no value")
				}
				return
			}
			// Rows went to parts in another order than to whole: the
			// first/last ties of equal times may differ, so compare
			// times for those.
			if s := whole; s.pair() {
				if merged.Times[0] != whole.Times[0] {
					t.Errorf("time %d, want %d", merged.Times[0], whole.Times[0])
				}
				return
			}
			want := New(&spec, 1)
			for i := range 12 {
				if i%3 != 2 {
					add(want, i)
				}
			}
			same(t, result(t, merged, 0), result(t, want, 0))
		})
	}
}

// TestFirstLast covers time ties (first keeps the earlier row, last takes
// the later), null values winning by time, null times skipped, and strings
// cut without splitting a character.
func TestFirstLast(t *testing.T) {
	times := []int64{5, 3, 3, 9, 9}
	vals := []int64{10, 20, 30, 40, 50}
	nulls := []uint64{1 << 1}  // row 1's value is null
	tnulls := []uint64{1 << 4} // row 4 has no time
	cases := []struct {
		op       string
		wantNull bool
		want     int64
		wantT    int64
	}{
		{OpFirst, true, 0, 3},
		{OpLast, false, 40, 9},
		{OpAny, false, 10, 5},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			s := New(&Spec{Kind: KindLong, Op: c.op}, 1)
			s.AddFirstLongs(times, tnulls, vals, nulls, Rows{From: 0, To: 5})
			if s.Times[0] != c.wantT || s.Null[0] != c.wantNull || !c.wantNull && s.Longs[0] != c.want {
				t.Errorf("time %d null %v value %d, want %d %v %d", s.Times[0], s.Null[0], s.Longs[0], c.wantT, c.wantNull, c.want)
			}
		})
	}
	t.Run("string cut", func(t *testing.T) {
		s := New(&Spec{Kind: KindString, Op: OpLast, MaxStringBytes: 4}, 1)
		dict := testDict{"ab", "aéé", ""}
		s.AddFirstIDs([]int64{1, 2}, nil, nil, []int32{0, 1}, dict, Rows{From: 0, To: 2})
		if s.Strs[0] != "aé" {
			t.Errorf("got %q, want %q", s.Strs[0], "aé")
		}
	})
	t.Run("pair", func(t *testing.T) {
		s := New(&Spec{Kind: KindDouble, Op: OpFirst}, 1)
		for _, p := range []blob.Pair{{Time: 7, Double: 1}, {Time: 2, Null: true}, {Time: 4, Double: 3}} {
			b, err := blob.AppendPair(nil, blob.TypePairLongDouble, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.MergeIntermediate(0, blob.TypePairLongDouble, b); err != nil {
				t.Fatal(err)
			}
		}
		if s.Times[0] != 2 || !s.Null[0] {
			t.Errorf("time %d null %v, want 2 true", s.Times[0], s.Null[0])
		}
	})
}

type testDict []string

func (d testDict) Card() int { return len(d) }
func (d testDict) Value(id int32) (string, bool) {
	if d[id] == "" {
		return "", false
	}
	return d[id], true
}

// TestSketches feeds the sketch kinds values and serialized sketches, and
// round-trips them through the intermediate form.
func TestSketches(t *testing.T) {
	for _, spec := range []Spec{{Kind: KindHLL, Round: true}, {Kind: KindHLL, TgtHllType: "HLL_8"}, {Kind: KindTheta, Size: 1024}, {Kind: KindQuantiles, K: 32}} {
		t.Run(spec.Kind+"/"+spec.TgtHllType, func(t *testing.T) {
			s := New(&spec, 2)
			for i := range 1000 {
				var err error
				switch i % 3 {
				case 0:
					err = s.AddLong(0, int64(i))
				case 1:
					err = s.AddDouble(0, float64(i))
				default:
					if spec.Kind == KindQuantiles {
						err = s.AddDouble(0, float64(i))
					} else {
						err = s.AddString(0, fmt.Sprint("v", i))
					}
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
			est := result(t, s, 0)
			want := 1000.0
			if f, ok := est.(float64); !ok && spec.Kind != KindQuantiles && !spec.Round || ok && math.Abs(f-want) > 50 {
				t.Errorf("estimate %v, want about %v", est, want)
			}
			if spec.Kind == KindQuantiles && est != int64(1000) {
				t.Errorf("count %v, want 1000", est)
			}
			// The serialized sketch of group 0 merged into group 1 gives
			// the same estimate; an empty group stays empty.
			r, err := s.Result(0, false)
			if err != nil || r.Kind != ResultSketch {
				t.Fatalf("intermediate %v %v", r.Kind, err)
			}
			if err := s.MergeIntermediate(1, "", r.Sketch); err != nil {
				t.Fatal(err)
			}
			same(t, result(t, s, 1), est)
			e := New(&spec, 1)
			if v := result(t, e, 0); v != 0.0 && v != int64(0) {
				t.Errorf("empty estimate %v", v)
			}
			// Through the wire form.
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var back State
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			back.Bind(&spec)
			same(t, result(t, &back, 0), est)
		})
	}
}

// TestWireState round-trips simple states, short and packed.
func TestWireState(t *testing.T) {
	for _, n := range []int{0, 3, PackMin + 5} {
		for _, spec := range []Spec{{Kind: KindLong, Op: OpSum}, {Kind: KindDouble, Op: OpMin}, {Kind: KindString, Op: OpLast, MaxStringBytes: 10}} {
			t.Run(fmt.Sprintf("%s-%s-%d", spec.Kind, spec.Op, n), func(t *testing.T) {
				s := New(&spec, n)
				for i := range n {
					switch spec.Kind {
					case KindLong:
						_ = s.AddLong(int32(i), int64(i)-3)
					case KindDouble:
						_ = s.AddDouble(int32(i), []float64{math.NaN(), math.Inf(1), 1.5}[i%3])
					default:
						if i%2 == 0 && s.Offer(int32(i), int64(i)) {
							s.SetString(int32(i), fmt.Sprint("s", i))
						}
					}
				}
				raw, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				var back State
				if err := json.Unmarshal(raw, &back); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					same(t, result(t, &back, i), result(t, s, i))
				}
			})
		}
	}
}

// FuzzUnmarshalState feeds arbitrary bytes as a state's wire form (as a
// data server's partial carries it): decoding fails cleanly or yields a
// state whose every group can be combined and rendered, never a panic.
func FuzzUnmarshalState(f *testing.F) {
	for _, spec := range []Spec{{Kind: KindLong, Op: OpSum}, {Kind: KindDouble, Op: OpMin}, {Kind: KindString, Op: OpFirst, MaxStringBytes: 4},
		{Kind: KindHLL}, {Kind: KindTheta}, {Kind: KindQuantiles}} {
		s := New(&spec, 2)
		_ = s.AddLong(0, 7)
		raw, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"kind":"LONG","op":"sum","longs":"AQI=","null":[false]}`))
	f.Add([]byte(`{"kind":"ARRAY","op":"arrayAppend","null":[false,true,false],"elem":"LONG","arrs":[[1,null,3],null,[]]}`))
	f.Add([]byte(`{"kind":"ARRAY","op":"arraySet","null":[false],"elem":"DOUBLE","arrs":[[null,"NaN",1.5,"-Infinity"]]}`))
	f.Add([]byte(`{"kind":"ARRAY","op":"arraySet","null":[false],"elem":"STRING","arrs":[["a",null,"b"]]}`))
	f.Add([]byte(`{"kind":"HLL","null":[false],"sketches":["AgEHDAMIAQAGuHIF"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		s.Bind(&Spec{Kind: s.Kind, Op: s.Op, MaxStringBytes: 8})
		into := New(s.Spec(), 1)
		for i := range s.Groups() {
			if _, err := s.Result(i, true); err != nil {
				continue
			}
			if _, err := s.Result(i, false); err != nil {
				continue
			}
			if into.Kind == s.Kind && into.Op == s.Op {
				_ = into.Combine(0, &s, i)
			}
		}
	})
}

// TestIntermediate checks the stored intermediate form: a first/last pair
// read back by MergeIntermediate, and HLLBuild's bytes equal to those of a
// sketch built directly (Druid's HLLSketchBuild at ingestion).
func TestIntermediate(t *testing.T) {
	t.Run("pair", func(t *testing.T) {
		s := New(&Spec{Kind: KindString, Op: OpLast, MaxStringBytes: 100}, 2)
		if s.Offer(0, 42) {
			s.SetString(0, "héllo")
		}
		b, ok, err := s.AppendIntermediate(nil, blob.TypePairLongString, 0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := s.MergeIntermediate(1, blob.TypePairLongString, b); err != nil {
			t.Fatal(err)
		}
		if s.Times[1] != 42 || s.Strs[1] != "héllo" || s.Null[1] {
			t.Errorf("got %d %q %v", s.Times[1], s.Strs[1], s.Null[1])
		}
		if _, ok, _ := New(&Spec{Kind: KindLong, Op: OpSum}, 1).AppendIntermediate(nil, "", 0); ok {
			t.Errorf("a sum has intermediate bytes")
		}
	})
	t.Run("HLLBuild", func(t *testing.T) {
		for _, tgt := range []string{"HLL_4", "HLL_6", "HLL_8"} {
			spec := Spec{Kind: KindHLL, LgK: 11, TgtHllType: tgt, HLLBuild: true}
			s := New(&spec, 2)
			sk, err := hll.NewHllSketch(11, spec.tgt())
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3000 {
				_ = s.AddString(0, fmt.Sprint(i))
				_ = sk.UpdateString(fmt.Sprint(i))
			}
			got, _, err := s.AppendIntermediate(nil, blob.TypeHLL, 0)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := sk.ToCompactSlice()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: bytes differ from a directly built sketch", tgt)
			}
			empty, _, _ := s.AppendIntermediate(nil, blob.TypeHLL, 1)
			e, _ := hll.NewHllSketch(11, spec.tgt())
			if eb, _ := e.ToCompactSlice(); !reflect.DeepEqual(empty, eb) {
				t.Errorf("%s: empty group's bytes differ from an empty sketch's", tgt)
			}
		}
	})
}

// TestStringMinMax orders strings by their UTF-8 bytes (SQL MIN/MAX of
// strings), null when no value came, through Combine as well.
func TestStringMinMax(t *testing.T) {
	for _, c := range []struct{ op, want string }{{OpMin, "Zebra"}, {OpMax, "é"}} {
		t.Run(c.op, func(t *testing.T) {
			s := New(&Spec{Kind: KindString, Op: c.op}, 3)
			for _, v := range []string{"apple", "Zebra", "é", "b"} {
				_ = s.AddString(0, v)
			}
			if got := result(t, s, 0); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if got := result(t, s, 1); got != nil {
				t.Errorf("no input: got %v, want null", got)
			}
			if err := s.Combine(2, s, 0); err != nil || result(t, s, 2) != c.want {
				t.Errorf("combined: %v %v", result(t, s, 2), err)
			}
		})
	}
}
