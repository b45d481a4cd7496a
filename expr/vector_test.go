package expr

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// vecColumns is an in-memory batch: VectorBindings for the vector path and,
// through row(i), Bindings for the row path.
type vecColumns map[string]*Vector

func (c vecColumns) Vector(name string) *Vector { return c[name] }

func (c vecColumns) row(i int) ValueBindings {
	b := ValueBindings{}
	for name, v := range c {
		b[name] = v.Value(i)
	}
	return b
}

func randomColumns(r *rand.Rand, n int) vecColumns {
	longPool := []int64{0, 1, -1, 2, 3, 7, -8, 100, 1377993600000, math.MaxInt64, math.MinInt64}
	doublePool := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 2.5, -3.75, 1e300, math.Inf(1), math.Inf(-1), math.NaN(), 1377993600000.5}
	mk := func(t Type, nullFrac float64) *Vector {
		v := &Vector{Type: t}
		if nullFrac > 0 {
			v.Nulls = make([]uint64, (n+63)/64)
		}
		for i := 0; i < n; i++ {
			if t == TypeLong {
				if r.Intn(3) == 0 {
					v.Longs = append(v.Longs, longPool[r.Intn(len(longPool))])
				} else {
					v.Longs = append(v.Longs, r.Int63n(2000)-1000)
				}
			} else {
				if r.Intn(3) == 0 {
					v.Doubles = append(v.Doubles, doublePool[r.Intn(len(doublePool))])
				} else {
					v.Doubles = append(v.Doubles, r.NormFloat64()*100)
				}
			}
			if nullFrac > 0 && r.Float64() < nullFrac {
				SetNull(v.Nulls, i)
			}
		}
		return v
	}
	return vecColumns{
		"a": mk(TypeLong, 0.2), "b": mk(TypeLong, 0), "c": mk(TypeLong, 0.5),
		"x": mk(TypeDouble, 0.2), "y": mk(TypeDouble, 0),
	}
}

func columnTypes(name string) (Type, bool) {
	switch name {
	case "a", "b", "c":
		return TypeLong, true
	case "x", "y", "missing":
		return TypeDouble, true
	}
	return TypeUnknown, false
}

var vectorExprs = []string{
	"a - b", "a + b", "a * b", "b * 2", "a + 1", "-a", "-x", "x - y", "x * 2.5", "a + x", "x / y", "a / 2.0",
	"x % y", "a ^ 2.0", "x ^ y", "a < b", "a <= x", "x > y", "x >= 1", "a == b", "x == y", "x != y", "a != 3",
	"a && b", "a || x", "x && y", "!a", "!x", "(a > b) && (x < y)", "a > 0 || c > 0", "a - b * c + 1",
	"abs(a)", "abs(x)", "ceil(x)", "floor(a)", "sqrt(x)", "cbrt(a)", "exp(x)", "log(x)", "log10(a)",
	"max(a, b)", "min(x, y)", "max(a, x)", "isnull(a)", "notnull(x)", "nvl(a, b)", "nvl(c, a)", "nvl(x, y)",
	"cast(x, 'LONG')", "cast(a, 'DOUBLE')", "cast(a, 'LONG')",
	"timestamp_floor(a, 'PT1H')", "timestamp_floor(x, 'P1D', null, 'America/Los_Angeles')",
	"timestamp_ceil(b, 'PT1M')", "timestamp_floor(a, 'P1M')",
	"missing + 1", "isnull(missing)", "(a - b) / 2.0 > x", "-(a * 2)", "a > 5 && b < 100 || !(x > 0)",
	// may fail at run time (integer division/modulo by zero, negative power)
	"a / b", "a % b", "a / c", "b ^ 2", "a ^ b", "a / (b + 1)",
}

func TestVectorMatchesRows(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const maxRows = 300
	for _, src := range vectorExprs {
		e := MustCompile(src)
		prog, ok := e.Vectorize(columnTypes, maxRows)
		if !ok {
			t.Errorf("%q did not vectorize", src)
			continue
		}
		for trial := 0; trial < 20; trial++ {
			n := []int{0, 1, 63, 64, 65, 200, maxRows}[trial%7]
			cols := randomColumns(r, n)
			out, verr := prog.Eval(cols, n)
			rowErr := false
			for i := 0; i < n; i++ {
				want, err := e.Eval(cols.row(i))
				if err != nil {
					rowErr = true
					continue
				}
				if verr != nil {
					continue
				}
				if out.Type != prog.OutputType() {
					t.Fatalf("%q: vector type %s, program says %s", src, out.Type, prog.OutputType())
				}
				got := out.Value(i)
				if want.IsNull() || got.IsNull() {
					if want.IsNull() != got.IsNull() {
						t.Fatalf("%q row %d (%v): vector %v, row %v", src, i, cols.row(i), got, want)
					}
					continue
				}
				if !sameValue(got, want) {
					t.Fatalf("%q row %d (%v): vector %v (%s), row %v (%s)", src, i, cols.row(i), got, got.Type(), want, want.Type())
				}
			}
			if rowErr != (verr != nil) {
				t.Fatalf("%q: row path error %v, vector error %v", src, rowErr, verr)
			}
		}
	}
}

func TestVectorizeRejects(t *testing.T) {
	for _, src := range []string{
		"concat(a, 'x')", "s + 1", "a + 'x'", "map(z -> z, [1])", "x > 0 || a / b > 1", "timestamp_floor(a, s)",
		"nvl(a, x)", "strlen(s)", "a + null", "cast(a, 'STRING')",
	} {
		if _, ok := MustCompile(src).Vectorize(columnTypes, 16); ok {
			t.Errorf("%q vectorized", src)
		}
	}
	if _, ok := MustCompile("a + 1").Vectorize(columnTypes, 0); ok {
		t.Error("maxRows 0 accepted")
	}
	prog, _ := MustCompile("a + 1").Vectorize(columnTypes, 8)
	if _, err := prog.Eval(vecColumns{}, 9); err == nil {
		t.Error("oversized batch accepted")
	}
	short := vecColumns{"a": {Type: TypeLong, Longs: []int64{1}}}
	if _, err := prog.Eval(short, 4); err == nil {
		t.Error("short column accepted")
	}
	wrong := vecColumns{"a": {Type: TypeDouble, Doubles: make([]float64, 8)}}
	if _, err := prog.Eval(wrong, 4); err == nil {
		t.Error("mistyped column accepted")
	}
}

func TestVectorNoAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cols := randomColumns(r, 1024)
	for _, src := range []string{"a - b", "x * 2", "a > b && x < y", "timestamp_floor(b, 'PT1H')"} {
		prog, ok := MustCompile(src).Vectorize(columnTypes, 1024)
		if !ok {
			t.Fatalf("%q did not vectorize", src)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := prog.Eval(cols, 1024); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per batch", src, allocs)
		}
	}
}

// --- benchmarks over 1M rows ------------------------------------------------

const benchRows = 1 << 20

type benchData struct {
	added, deleted []int64
	page           []string
}

func newBenchData() *benchData {
	r := rand.New(rand.NewSource(3))
	d := &benchData{added: make([]int64, benchRows), deleted: make([]int64, benchRows), page: make([]string, benchRows)}
	pages := make([]string, 1000)
	for i := range pages {
		pages[i] = "Page_" + strconv.Itoa(i) + "_Gypsy Danger"
	}
	for i := 0; i < benchRows; i++ {
		d.added[i] = r.Int63n(10000)
		d.deleted[i] = r.Int63n(1000)
		d.page[i] = pages[r.Intn(len(pages))]
	}
	return d
}

// benchRow binds one row of benchData by index, as a segment cursor would.
type benchRow struct {
	d *benchData
	i int
}

func (b *benchRow) Get(name string) Value {
	switch name {
	case "added":
		return Long(b.d.added[b.i])
	case "deleted":
		return Long(b.d.deleted[b.i])
	case "page":
		return String(b.d.page[b.i])
	}
	return Null
}

func benchmarkRows(b *testing.B, src string) {
	d := newBenchData()
	e := MustCompile(src)
	row := &benchRow{d: d}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := 0; i < benchRows; i++ {
			row.i = i
			if _, err := e.Eval(row); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

func BenchmarkRowAddedMinusDeleted(b *testing.B) { benchmarkRows(b, "added - deleted") }

func BenchmarkRowStringFunction(b *testing.B) {
	benchmarkRows(b, "concat(upper(substring(page, 0, 4)), '-', strlen(page))")
}

func BenchmarkRowLike(b *testing.B) { benchmarkRows(b, "like(page, 'Page_1%')") }

func BenchmarkVectorAddedMinusDeleted(b *testing.B) {
	d := newBenchData()
	const batch = 1024
	prog, ok := MustCompile("added - deleted").Vectorize(func(string) (Type, bool) { return TypeLong, true }, batch)
	if !ok {
		b.Fatal("not vectorized")
	}
	added := &Vector{Type: TypeLong}
	deleted := &Vector{Type: TypeLong}
	cols := vecColumns{"added": added, "deleted": deleted}
	var sink int64
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for off := 0; off < benchRows; off += batch {
			added.Longs = d.added[off : off+batch]
			deleted.Longs = d.deleted[off : off+batch]
			out, err := prog.Eval(cols, batch)
			if err != nil {
				b.Fatal(err)
			}
			sink += out.Longs[0]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
	_ = sink
}
