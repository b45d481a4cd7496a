package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"strata/interval"
	"strata/querynode/query"
	"strata/storage/segment"
)

// testRow is one generated input row; nil pointers are nulls.
type testRow struct {
	t       int64
	channel *string
	page    string
	tags    []string // nil: no value
	user    string
	added   *int64
	price   float64
	weight  float32
}

const day = int64(86_400_000)

var t0 = mustTime("2024-01-01T00:00:00Z")

func mustTime(s string) int64 {
	ms, err := interval.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return ms
}

// rng is splitmix64, deterministic across platforms.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func strp(s string) *string { return &s }
func i64p(v int64) *int64   { return &v }

// genRows makes n rows spread over days days from t0, in time order.
func genRows(n, days int, seed uint64) []testRow {
	r := &rng{s: seed}
	rows := make([]testRow, n)
	span := int64(days) * day
	tagVals := []string{"a", "b", "c", "d", "e", "f"}
	for i := range rows {
		row := &rows[i]
		row.t = t0 + span*int64(i)/int64(n) + int64(r.intn(1000))
		if r.intn(10) != 0 {
			row.channel = strp(fmt.Sprintf("#ch%d", r.intn(8)))
		}
		row.page = fmt.Sprintf("Page_%02d", r.intn(40)*r.intn(40)%40)
		if k := r.intn(4); k > 0 {
			for j := 0; j < k; j++ {
				row.tags = append(row.tags, tagVals[r.intn(len(tagVals))])
			}
		}
		row.user = fmt.Sprintf("u%03d", r.intn(200))
		if r.intn(20) != 0 {
			row.added = i64p(int64(r.intn(1000)) - 100)
		}
		row.price = float64(r.intn(100000)) / 100
		row.weight = float32(r.intn(1000)) / 8
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].t < rows[j].t })
	return rows
}

var testSpec = segment.Spec{
	Fields: []segment.Field{
		{Name: "channel", Kind: segment.KindString}, {Name: "page", Kind: segment.KindString},
		{Name: "tags", Kind: segment.KindString}, {Name: "user", Kind: segment.KindString},
		{Name: "added", Kind: segment.KindLong}, {Name: "price", Kind: segment.KindDouble},
		{Name: "weight", Kind: segment.KindFloat},
	},
	Dimensions: []segment.Dimension{
		{Name: "channel"}, {Name: "page"}, {Name: "tags", MultiValue: true}, {Name: "user"},
	},
	Metrics: []segment.Metric{
		{Type: "longSum", Name: "added", FieldName: "added"},
		{Type: "doubleSum", Name: "price", FieldName: "price"},
		{Type: "floatSum", Name: "weight", FieldName: "weight"},
		{Type: "HLLSketchBuild", Name: "users_hll", FieldName: "user"},
		{Type: "thetaSketch", Name: "users_theta", FieldName: "user"},
		{Type: "quantilesDoublesSketch", Name: "price_q", FieldName: "price"},
		{Type: "stringFirst", Name: "first_page", FieldName: "page"},
	},
	SortColumns: []string{"channel"},
}

func (r testRow) values() []segment.Value {
	v := make([]segment.Value, 7)
	if r.channel != nil {
		v[0] = segment.String(*r.channel)
	}
	v[1] = segment.String(r.page)
	if r.tags != nil {
		v[2] = segment.Strings(r.tags)
	}
	v[3] = segment.String(r.user)
	if r.added != nil {
		v[4] = segment.Long(*r.added)
	}
	v[5] = segment.Double(r.price)
	v[6] = segment.Double(float64(r.weight))
	return v
}

// buildSegments writes one segment per day of rows (rows must be sorted).
func buildSegments(t testing.TB, rows []testRow, rowsPerBlock int) []*Segment {
	t.Helper()
	dir := t.TempDir()
	var out []*Segment
	for lo := 0; lo < len(rows); {
		start := rows[lo].t - ((rows[lo].t-t0)%day+day)%day
		hi := lo
		for hi < len(rows) && rows[hi].t < start+day {
			hi++
		}
		spec := testSpec
		spec.Interval = segment.Interval{Start: start, End: start + day}
		spec.RowsPerBlock = rowsPerBlock
		w, err := segment.NewWriter(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[lo:hi] {
			if err := w.Add(segment.Row{Time: r.t, Values: r.values()}); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("seg%d", len(out)))
		if _, err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := segment.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { data.Close() })
		iv := interval.Interval{Start: start, End: start + day}
		out = append(out, NewSegment("test_"+iv.PathString()+"_v1", data))
		lo = hi
	}
	return out
}

// runJSON parses and runs a query, returning the decoded result.
func runJSON(t testing.TB, segs []*Segment, q string) any {
	t.Helper()
	out, err := runRaw(segs, q)
	if err != nil {
		t.Fatalf("query failed: %v\n%s", err, q)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", out, err)
	}
	return v
}

func runRaw(segs []*Segment, q string) ([]byte, error) {
	pq, err := query.Parse([]byte(q))
	if err != nil {
		return nil, err
	}
	return New(Options{}).Execute(context.Background(), pq, segs)
}

// num reads a JSON number (json.Number) as float64; nil stays NaN-free
// via ok=false.
func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func closeEnough(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// checkNum compares a JSON value with an expected number (nil = null).
func checkNum(t testing.TB, what string, got any, want *float64) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("%s: got %v, want null", what, got)
		}
		return
	}
	f, ok := num(got)
	if !ok || !closeEnough(f, *want) {
		t.Errorf("%s: got %v, want %v", what, got, *want)
	}
}

func f64p(v float64) *float64 { return &v }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func arr(v any) []any          { a, _ := v.([]any); return a }

func formatMs(ms int64) string { return interval.FormatMillis(ms) }

func jsonNum(s string) json.Number { return json.Number(s) }
