package segment

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/blob"
)

const day = 86_400_000

// allKindsSpec covers every column kind, null pattern and encoding path.
func allKindsSpec(rowsPerBlock int) Spec {
	return Spec{
		Fields: []Field{
			{Name: "s", Kind: KindString}, {Name: "mv", Kind: KindString},
			{Name: "l", Kind: KindLong}, {Name: "d", Kind: KindDouble}, {Name: "f", Kind: KindFloat},
			{Name: "allnull", Kind: KindString}, {Name: "lnull", Kind: KindLong},
		},
		Dimensions: []Dimension{
			{Name: "s"}, {Name: "mv", MultiValue: true}, {Name: "l", Kind: KindLong},
			{Name: "d", Kind: KindDouble}, {Name: "f", Kind: KindFloat}, {Name: "allnull"},
			{Name: "lnull", Kind: KindLong},
		},
		Metrics: []Metric{
			{Type: "count", Name: "cnt"},
			{Type: "longSum", Name: "lsum", FieldName: "l"},
			{Type: "doubleSum", Name: "dsum", FieldName: "d"},
			{Type: "floatMax", Name: "fmax", FieldName: "f"},
			{Type: "longFirst", Name: "lfirst", FieldName: "l"},
			{Type: "stringLast", Name: "slast", FieldName: "s"},
			{Type: "doubleLast", Name: "dlast", FieldName: "d"},
			{Type: "HLLSketchBuild", Name: "hll", FieldName: "s"},
			{Type: "thetaSketch", Name: "theta", FieldName: "mv"},
			{Type: "longSum", Name: "allnullsum", FieldName: "lnull"},
		},
		Interval:     Interval{Start: 0, End: day},
		RowsPerBlock: rowsPerBlock,
	}
}

var testWords = []string{"", "a", "ab", "b", "ba", "héllo", "zz", "Z", "\x00x", "long-value-with-a-shared-prefix-1", "long-value-with-a-shared-prefix-2"}

func randRow(rng *rand.Rand, t int64) Row {
	v := make([]Value, 7)
	switch rng.IntN(5) {
	case 0:
		v[0] = Null()
	default:
		v[0] = String(testWords[rng.IntN(len(testWords))])
	}
	switch rng.IntN(6) {
	case 0:
		v[1] = Null()
	case 1:
		v[1] = Strings(nil)
	default:
		k := 1 + rng.IntN(3)
		ss := make([]string, k)
		for i := range ss {
			ss[i] = testWords[rng.IntN(len(testWords))]
		}
		v[1] = Strings(ss)
	}
	if rng.IntN(4) == 0 {
		v[2] = Null()
	} else {
		v[2] = Long(rng.Int64N(2000) - 1000)
	}
	switch rng.IntN(5) {
	case 0:
		v[3] = Null()
	case 1:
		v[3] = Double(rng.NormFloat64() * 1e6)
	default:
		v[3] = Double(float64(rng.IntN(100000)) / 100)
	}
	if rng.IntN(3) == 0 {
		v[4] = Null()
	} else {
		v[4] = Double(float64(float32(rng.Float64() * 10)))
	}
	v[5] = Null()
	v[6] = Null()
	return Row{Time: t, Values: v}
}

// expected builds, independently of the writer, the columns an unrolled-up
// segment of rows must read back as (in input order).
func expected(t *testing.T, spec Spec, rows []Row) (map[string]*colData, []string) {
	n := len(rows)
	cols := map[string]*colData{}
	names := []string{TimeColumn}
	tc := &colData{kind: KindLong, nulls: make([]bool, n)}
	cols[TimeColumn] = tc
	for _, r := range rows {
		tc.longs = append(tc.longs, r.Time)
	}
	strp := func(s string) *string { return &s }
	for di, d := range spec.Dimensions {
		names = append(names, d.Name)
		kind := d.Kind
		if kind == 0 {
			kind = KindString
		}
		c := &colData{kind: kind, nulls: make([]bool, n)}
		cols[d.Name] = c
		for i, r := range rows {
			v := r.Values[di]
			switch kind {
			case KindString:
				switch {
				case v.IsNull():
					c.strs = append(c.strs, []*string{nil})
					c.nulls[i] = true
				case d.MultiValue && v.kind == vString:
					c.strs = append(c.strs, []*string{strp(v.str())})
				case d.MultiValue:
					vals := []*string{}
					for _, s := range v.strs() {
						vals = append(vals, strp(s))
					}
					if len(vals) == 0 {
						c.nulls[i] = true
					}
					c.strs = append(c.strs, vals)
				default:
					c.strs = append(c.strs, []*string{strp(v.str())})
				}
			case KindLong:
				x, ok := v.AsLong()
				c.longs = append(c.longs, x)
				c.nulls[i] = !ok
			case KindDouble, KindFloat:
				x, ok := v.AsDouble()
				if kind == KindFloat {
					x = float64(float32(x))
				}
				c.doubles = append(c.doubles, x)
				c.nulls[i] = !ok
			}
		}
	}
	field := func(name string) int {
		for i, f := range spec.Fields {
			if f.Name == name {
				return i
			}
		}
		t.Fatalf("no field %s", name)
		return -1
	}
	for _, m := range spec.Metrics {
		names = append(names, m.Name)
		kind, _, _ := MetricKind(m.Type)
		c := &colData{kind: kind, nulls: make([]bool, n)}
		cols[m.Name] = c
		for i, r := range rows {
			var in Value
			if m.FieldName != "" {
				in = r.Values[field(m.FieldName)]
			}
			switch m.Type {
			case "count":
				c.longs = append(c.longs, 1)
			case "longSum":
				x, ok := in.AsLong()
				c.longs = append(c.longs, x)
				c.nulls[i] = !ok
			case "doubleSum":
				x, ok := in.AsDouble()
				c.doubles = append(c.doubles, x)
				c.nulls[i] = !ok
			case "floatMax":
				x, ok := in.AsDouble()
				c.doubles = append(c.doubles, float64(float32(x)))
				c.nulls[i] = !ok
			case "longFirst":
				x, ok := in.AsLong()
				b, _ := blob.AppendPair(nil, blob.TypePairLongLong, blob.Pair{Time: r.Time, Long: x, Null: !ok})
				c.blobs = append(c.blobs, b)
			case "doubleLast":
				x, ok := in.AsDouble()
				b, _ := blob.AppendPair(nil, blob.TypePairLongDouble, blob.Pair{Time: r.Time, Double: x, Null: !ok})
				c.blobs = append(c.blobs, b)
			case "stringLast":
				s, ok := in.AsString()
				b, _ := blob.AppendPair(nil, blob.TypePairLongString, blob.Pair{Time: r.Time, String: s, Null: !ok})
				c.blobs = append(c.blobs, b)
			case "HLLSketchBuild":
				sk, _ := hll.NewHllSketch(12, hll.TgtHllTypeHll4)
				if s, ok := in.AsString(); ok {
					sk.UpdateString(s)
				}
				b, _ := sk.ToCompactSlice()
				c.blobs = append(c.blobs, b)
			case "thetaSketch":
				sk, _ := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(14))
				for _, s := range in.strs() {
					sk.UpdateString(s)
				}
				if in.kind == vString {
					sk.UpdateString(in.str())
				}
				b, _ := sk.CompactOrdered().MarshalBinary()
				c.blobs = append(c.blobs, b)
			default:
				t.Fatalf("expected(): unhandled %s", m.Type)
			}
		}
	}
	return cols, names
}

// compareRows orders two read-back rows as the format promises: __time,
// then the dimensions with null first and strings in byte order.
func compareRows(cols map[string]*colData, dims []string, a, b int) int {
	if c := cmp.Compare(cols[TimeColumn].longs[a], cols[TimeColumn].longs[b]); c != 0 {
		return c
	}
	for _, d := range dims {
		c := cols[d]
		switch c.kind {
		case KindString:
			if x := slices.CompareFunc(c.strs[a], c.strs[b], func(x, y *string) int {
				switch {
				case x == nil && y == nil:
					return 0
				case x == nil:
					return -1
				case y == nil:
					return 1
				}
				return cmp.Compare(*x, *y)
			}); x != 0 {
				return x
			}
		default:
			na, nb := c.nulls[a], c.nulls[b]
			if na != nb {
				if na {
					return -1
				}
				return 1
			}
			if na {
				continue
			}
			var x int
			if c.kind == KindLong {
				x = cmp.Compare(c.longs[a], c.longs[b])
			} else {
				x = cmp.Compare(c.doubles[a], c.doubles[b])
			}
			if x != 0 {
				return x
			}
		}
	}
	return 0
}

func writeSegment(t testing.TB, spec Spec, rows []Row) (string, Info) {
	t.Helper()
	w, err := NewWriter(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, info
}

func checkRoundTrip(t *testing.T, spec Spec, rows []Row) *Segment {
	t.Helper()
	path, info := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	if err := seg.Verify(); err != nil {
		t.Fatal(err)
	}
	if seg.NumRows() != len(rows) || info.Rows != len(rows) {
		t.Fatalf("rows: segment %d, info %d, want %d", seg.NumRows(), info.Rows, len(rows))
	}
	if st, _ := os.Stat(path); st.Size() != info.Bytes || seg.Size() != info.Bytes {
		t.Fatalf("size: file %d, info %d, segment %d", st.Size(), info.Bytes, seg.Size())
	}
	got, err := readAll(seg)
	if err != nil {
		t.Fatal(err)
	}
	want, names := expected(t, spec, rows)
	var gotFP, wantFP []string
	for r := range rows {
		gotFP = append(gotFP, fingerprint(got, names, r))
		wantFP = append(wantFP, fingerprint(want, names, r))
	}
	slices.Sort(gotFP)
	slices.Sort(wantFP)
	for i := range gotFP {
		if gotFP[i] != wantFP[i] {
			t.Fatalf("row multisets differ:\n got %s\nwant %s", gotFP[i], wantFP[i])
		}
	}
	var dims []string
	for _, d := range spec.Dimensions {
		dims = append(dims, d.Name)
	}
	for r := 1; r < len(rows); r++ {
		if compareRows(got, dims, r-1, r) > 0 {
			t.Fatalf("rows %d and %d out of order", r-1, r)
		}
	}
	// Footer statistics.
	if len(rows) > 0 {
		mn, mx := seg.TimeRange()
		if mn != slices.Min(got[TimeColumn].longs) || mx != slices.Max(got[TimeColumn].longs) {
			t.Fatalf("time range %d..%d wrong", mn, mx)
		}
	}
	return seg
}

func TestRoundTripAllKinds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rows   int
		block  int
		comp   Compression
		sorted bool
	}{
		{"empty", 0, 0, CompressAuto, true},
		{"one", 1, 0, CompressAuto, true},
		{"small-blocks-lz4", 1000, 64, CompressLZ4, false},
		{"zstd", 3000, 1024, CompressZstd, false},
		{"none", 2000, 100, CompressNone, true},
		{"auto-odd-block", 5000, 777, CompressAuto, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.rows)))
			spec := allKindsSpec(tc.block)
			spec.Compression = tc.comp
			spec.Metadata = map[string]string{"queryGranularity": "none"}
			rows := make([]Row, tc.rows)
			for i := range rows {
				ts := int64(i) * 1000
				if !tc.sorted {
					ts = rng.Int64N(100) * 60_000 // many ties
				}
				rows[i] = randRow(rng, ts)
			}
			seg := checkRoundTrip(t, spec, rows)
			if seg.Metadata()["queryGranularity"] != "none" {
				t.Fatal("metadata lost")
			}
			ci, _ := seg.Column("allnull")
			if tc.rows > 0 && (ci.NullCount != tc.rows || ci.Cardinality != 1) {
				t.Fatalf("all-null column: %+v", ci)
			}
			ci, _ = seg.Column("hll")
			if ci.ComplexType != blob.TypeHLL || ci.ComplexVersion != 1 || ci.Role != RoleMetric || ci.Aggregator == "" {
				t.Fatalf("hll column info: %+v", ci)
			}
		})
	}
}

func TestEmptyStringDistinctFromNull(t *testing.T) {
	spec := Spec{
		Fields:     []Field{{Name: "s", Kind: KindString}},
		Dimensions: []Dimension{{Name: "s"}},
		Interval:   Interval{Start: 0, End: day},
	}
	rows := []Row{
		{Time: 1, Values: []Value{String("")}},
		{Time: 1, Values: []Value{Null()}},
		{Time: 1, Values: []Value{String("x")}},
	}
	seg := checkRoundTrip(t, spec, rows)
	col, _ := seg.Strings("s")
	if col.Cardinality() != 3 {
		t.Fatalf("cardinality %d, want 3 (null, \"\", x)", col.Cardinality())
	}
	// Null sorts first, then "".
	if _, isNull, _ := col.Lookup(0); !isNull {
		t.Fatal("id 0 is not null")
	}
	if v, isNull, _ := col.Lookup(1); isNull || v != "" {
		t.Fatalf("id 1 = %q null=%v", v, isNull)
	}
	ids, _ := col.IDs(0, 3, nil)
	if !slices.Equal(ids, []int32{0, 1, 2}) {
		t.Fatalf("row order %v, want null, \"\", x", ids)
	}
	if id, found, _ := col.Find(""); !found || id != 1 {
		t.Fatalf("Find(\"\") = %d %v", id, found)
	}
	if id, found, _ := col.Find("a"); found || id != 2 {
		t.Fatalf("Find(a) = %d %v, want insertion point 2", id, found)
	}
}

func TestMultiValueEmptyAndNull(t *testing.T) {
	spec := Spec{
		Fields:     []Field{{Name: "m", Kind: KindString}},
		Dimensions: []Dimension{{Name: "m", MultiValue: true}},
		Interval:   Interval{Start: 0, End: day},
	}
	rows := []Row{
		{Time: 5, Values: []Value{Strings([]string{"b", "a", "b"})}},
		{Time: 4, Values: []Value{Strings(nil)}},
		{Time: 3, Values: []Value{Null()}},
		{Time: 2, Values: []Value{Strings([]string{})}},
		{Time: 1, Values: []Value{String("c")}},
	}
	seg := checkRoundTrip(t, spec, rows)
	col, _ := seg.Strings("m")
	offs, ids, err := col.MultiIDs(1, 5, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rows by time: c | [] | null | [] | b a b.
	if !slices.Equal(offs, []int32{0, 0, 1, 1, 4}) {
		t.Fatalf("offsets %v", offs)
	}
	if len(ids) != 4 || ids[0] != 0 {
		t.Fatalf("ids %v", ids)
	}
	empty, _ := col.EmptyRows()
	if !slices.Equal(empty.ToArray(), []uint32{1, 3}) {
		t.Fatalf("empty rows %v", empty.ToArray())
	}
	nb, _ := col.NullBitmap()
	if !slices.Equal(nb.ToArray(), []uint32{1, 2, 3}) {
		t.Fatalf("null bitmap %v", nb.ToArray())
	}
	// "b" appears twice in one row but once in its posting.
	id, _, _ := col.Find("b")
	if n, _ := col.BitmapCardinality(id); n != 1 {
		t.Fatalf("posting of b has %d rows", n)
	}
}

func TestTruncateAndSortColumns(t *testing.T) {
	spec := Spec{
		Fields:      []Field{{Name: "a", Kind: KindString}, {Name: "b", Kind: KindString}},
		Dimensions:  []Dimension{{Name: "a"}, {Name: "b"}},
		SortColumns: []string{"b"},
		Truncate:    func(ms int64) int64 { return ms - ms%3_600_000 },
		Interval:    Interval{Start: 0, End: day},
	}
	rows := []Row{
		{Time: 7_200_500, Values: []Value{String("x"), String("2")}},
		{Time: 3_600_001, Values: []Value{String("y"), String("1")}},
		{Time: 3_700_000, Values: []Value{String("x"), String("1")}},
		{Time: 10, Values: []Value{String("z"), String("9")}},
	}
	path, _ := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	times, _ := seg.Times(nil)
	if !slices.Equal(times, []int64{0, 3_600_000, 3_600_000, 7_200_000}) {
		t.Fatalf("times %v", times)
	}
	got, err := readAll(seg)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for r := range 4 {
		order = append(order, *got["a"].strs[r][0]+*got["b"].strs[r][0])
	}
	// Within hour 1, b sorts first: (x,1) before (y,1).
	if !slices.Equal(order, []string{"z9", "x1", "y1", "x2"}) {
		t.Fatalf("order %v", order)
	}
	if !slices.Equal(seg.SortColumns(), []string{"b"}) {
		t.Fatalf("sort columns %v", seg.SortColumns())
	}
}

func TestWriterRejectsBadInput(t *testing.T) {
	spec := allKindsSpec(0)
	w, err := NewWriter(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	r := randRow(rng, day) // outside [0, day)
	if err := w.Add(r); err == nil {
		t.Fatal("row outside the interval accepted")
	}
	r = randRow(rng, 5)
	r.Values = r.Values[:3]
	if err := w.Add(r); err == nil {
		t.Fatal("short row accepted")
	}
	r = randRow(rng, 5)
	r.Values[0] = Strings([]string{"a", "b"})
	if err := w.Add(r); err == nil {
		t.Fatal("several values for a single-value dimension accepted")
	}
	if w.Len() != 0 {
		t.Fatalf("failed adds left %d rows", w.Len())
	}
	coarse := allKindsSpec(0)
	coarse.Interval = Interval{Start: day, End: 2 * day}
	coarse.Truncate = func(ms int64) int64 { return ms - ms%(7*day) } // week granularity in a day chunk
	cw, _ := NewWriter(coarse)
	if err := cw.Add(randRow(rng, day+5)); err == nil {
		t.Fatal("truncation outside the interval accepted")
	}
	bad := []Spec{
		{Interval: Interval{0, 0}},
		{Interval: Interval{0, 1}, Dimensions: []Dimension{{Name: "x"}}},
		{Interval: Interval{0, 1}, Fields: []Field{{Name: "x"}}, Dimensions: []Dimension{{Name: "x"}, {Name: "x"}}},
		{Interval: Interval{0, 1}, Metrics: []Metric{{Type: "nope", Name: "m"}}},
		{Interval: Interval{0, 1}, Fields: []Field{{Name: "x"}}, Metrics: []Metric{{Type: "HLLSketchBuild", Name: "m", FieldName: "x", LgK: 30}}},
		{Interval: Interval{0, 1}, Fields: []Field{{Name: "x"}}, Dimensions: []Dimension{{Name: "x"}}, SortColumns: []string{"y"}},
		{Interval: Interval{0, 1}, RowsPerBlock: -1},
	}
	for i, s := range bad {
		if _, err := NewWriter(s); err == nil {
			t.Errorf("bad spec %d accepted", i)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	path, _ := writeSegment(t, allKindsSpec(0), []Row{randRow(rand.New(rand.NewPCG(1, 1)), 1)})
	seg := mustOpen(t, path)
	if _, err := seg.Numeric("nope"); !errors.Is(err, ErrNoColumn) {
		t.Fatalf("missing column: %v", err)
	}
	if _, err := seg.Numeric("s"); err == nil {
		t.Fatal("string column opened as numeric")
	}
	col, _ := seg.Strings("s")
	if _, err := col.Bitmap(99); err == nil {
		t.Fatal("id out of range accepted")
	}
	if _, err := col.IDs(0, 2, nil); err == nil {
		t.Fatal("row range out of range accepted")
	}
	mv, _ := seg.Strings("mv")
	if _, err := mv.IDs(0, 1, nil); err == nil {
		t.Fatal("IDs on a multi-value column accepted")
	}
	if _, err := seg.Time().Longs(5, nil); err == nil {
		t.Fatal("block out of range accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file opened")
	}
}

func TestNumericConversions(t *testing.T) {
	spec := Spec{
		Fields:     []Field{{Name: "d", Kind: KindDouble}, {Name: "l", Kind: KindLong}},
		Dimensions: []Dimension{{Name: "d", Kind: KindDouble}, {Name: "l", Kind: KindLong}},
		Interval:   Interval{Start: 0, End: day},
	}
	vals := []float64{-2.5, 1.99, math.Inf(1), math.NaN(), 1e300}
	var rows []Row
	for i, v := range vals {
		rows = append(rows, Row{Time: int64(i), Values: []Value{Double(v), Long(int64(i) - 2)}})
	}
	path, _ := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	d, _ := seg.Numeric("d")
	longs, err := d.Longs(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(longs, []int64{-2, 1, math.MaxInt64, 0, math.MaxInt64}) {
		t.Fatalf("double to long: %v", longs)
	}
	l, _ := seg.Numeric("l")
	dbl, _ := l.Doubles(0, make([]float64, 0, 1))
	if !slices.Equal(dbl, []float64{-2, -1, 0, 1, 2}) {
		t.Fatalf("long to double: %v", dbl)
	}
	st := d.BlockStats(0)
	// A NaN widens the block range to everything, so pruning stays safe.
	if !math.IsInf(st.MinDouble, -1) || !math.IsInf(st.MaxDouble, 1) {
		t.Fatalf("stats with NaN: %+v", st)
	}
}

func TestRowRangesAcrossBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	rows := make([]Row, 700)
	for i := range rows {
		rows[i] = randRow(rng, int64(i))
	}
	path, _ := writeSegment(t, allKindsSpec(50), rows)
	seg := mustOpen(t, path)
	s, _ := seg.Strings("s")
	mv, _ := seg.Strings("mv")
	allS, err := s.IDs(0, seg.NumRows(), nil)
	if err != nil {
		t.Fatal(err)
	}
	allOffs, allIDs, err := mv.MultiIDs(0, seg.NumRows(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf, offs, ids := make([]int32, 0, 8), make([]int32, 0, 8), make([]int32, 0, 8)
	for k := 0; k < 200; k++ {
		from := rng.IntN(seg.NumRows() + 1)
		to := from + rng.IntN(seg.NumRows()-from+1)
		if buf, err = s.IDs(from, to, buf); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(buf, allS[from:to]) {
			t.Fatalf("IDs(%d, %d) differ", from, to)
		}
		if offs, ids, err = mv.MultiIDs(from, to, offs, ids); err != nil {
			t.Fatal(err)
		}
		if len(offs) != to-from+1 {
			t.Fatalf("MultiIDs(%d, %d): %d offsets", from, to, len(offs))
		}
		for r := from; r < to; r++ {
			got := ids[offs[r-from]:offs[r-from+1]]
			want := allIDs[allOffs[r]:allOffs[r+1]]
			if !slices.Equal(got, want) {
				t.Fatalf("MultiIDs(%d, %d) row %d: %v, want %v", from, to, r, got, want)
			}
		}
	}
}

// A multi-value row keeps its null elements (Druid stores [null, "", "1"]
// as three values): each is the null id, distinct from "".
func TestMultiValueNullElements(t *testing.T) {
	spec := Spec{
		Fields:     []Field{{Name: "m", Kind: KindString}},
		Dimensions: []Dimension{{Name: "m", MultiValue: true}},
		Interval:   Interval{Start: 0, End: day},
	}
	rows := []Row{
		{Time: 1, Values: []Value{StringsWithNulls([]string{"", "", "1"}, []bool{true, false, false})}},
		{Time: 2, Values: []Value{StringsWithNulls([]string{"", ""}, []bool{true, true})}},
		{Time: 3, Values: []Value{StringsWithNulls([]string{"a"}, []bool{false})}},
	}
	path, _ := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	col, _ := seg.Strings("m")
	offs, ids, err := col.MultiIDs(0, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range 3 {
		var vals []string
		for _, id := range ids[offs[r]:offs[r+1]] {
			v, isNull, err := col.Lookup(int(id))
			if err != nil {
				t.Fatal(err)
			}
			if isNull {
				v = "<null>"
			}
			vals = append(vals, fmt.Sprintf("%q", v))
		}
		got = append(got, strings.Join(vals, ","))
	}
	want := []string{`"<null>","","1"`, `"<null>","<null>"`, `"a"`}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if v, ok := StringsWithNulls([]string{""}, []bool{true}).AsString(); ok {
		t.Fatalf("a one-element null list as a string: %q", v)
	}
}
