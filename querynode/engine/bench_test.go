package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"strata/interval"
	"strata/querynode/query"
	"strata/storage/segment"
)

// The benchmark data set of shared/bench/gen (same distributions and
// random stream), built in-process as DAY segments.

type zipf struct{ cdf []float64 }

func newZipf(n int, s float64) *zipf {
	cdf := make([]float64, n)
	sum := 0.0
	for k := 0; k < n; k++ {
		sum += 1 / math.Pow(float64(k+1), s)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	return &zipf{cdf}
}

func (z *zipf) draw(r *rng) int {
	u := float64(r.next()>>11) / (1 << 53)
	lo, hi := 0, len(z.cdf)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if z.cdf[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func benchSegments(b *testing.B, rows, days int) []*Segment {
	b.Helper()
	dir := b.TempDir()
	fields := []segment.Field{}
	var dims []segment.Dimension
	for _, n := range []string{"channel", "page", "user", "country", "city", "namespace", "isRobot", "isNew"} {
		fields = append(fields, segment.Field{Name: n, Kind: segment.KindString})
		dims = append(dims, segment.Dimension{Name: n})
	}
	var mets []segment.Metric
	for _, n := range []string{"added", "deleted", "delta", "commentLength"} {
		fields = append(fields, segment.Field{Name: n, Kind: segment.KindLong})
		mets = append(mets, segment.Metric{Type: "longSum", Name: n, FieldName: n})
	}
	fields = append(fields, segment.Field{Name: "price", Kind: segment.KindDouble})
	mets = append(mets, segment.Metric{Type: "doubleSum", Name: "price", FieldName: "price"})
	r := &rng{s: 1}
	fl := func() float64 { return float64(r.next()>>11) / (1 << 53) }
	channels, pages, users := newZipf(50, 1.2), newZipf(100_000, 1.1), newZipf(1_000_000, 1.05)
	countries, cities := newZipf(200, 1.3), newZipf(5_000, 1.1)
	span := int64(days) * 86400
	start := mustTime("2024-01-01T00:00:00Z")
	// One writer per day: the ±30 s jitter moves rows across midnight, and
	// a writer per run of days would cut hundreds of tiny segments there.
	var out []*Segment
	writers := map[int64]*segment.Writer{}
	var order []int64
	flush := func(d int64, w *segment.Writer) {
		path := filepath.Join(dir, fmt.Sprintf("d%d", len(out)))
		if _, err := w.WriteFile(path); err != nil {
			b.Fatal(err)
		}
		data, err := segment.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { data.Close() })
		iv := interval.Interval{Start: d, End: d + day}
		out = append(out, NewSegment("wiki_"+iv.PathString()+"_v1", data))
	}
	vals := make([]segment.Value, len(fields))
	for i := 0; i < rows; i++ {
		sec := int64(float64(i)/float64(rows)*float64(span)) + int64(r.next()%60) - 30
		sec = max(0, min(sec, span-1))
		ts := start + sec*1000
		d := start + (ts-start)/day*day
		w := writers[d]
		if w == nil {
			var err error
			w, err = segment.NewWriter(segment.Spec{Fields: fields, Dimensions: dims, Metrics: mets,
				Interval: segment.Interval{Start: d, End: d + day}})
			if err != nil {
				b.Fatal(err)
			}
			writers[d] = w
			order = append(order, d)
		}
		added := int64(-math.Log(1-fl()) * 300)
		deleted := int64(-math.Log(1-fl()) * 80)
		price := math.Round(math.Exp(fl()*6)*100) / 100
		vals[0] = segment.String(fmt.Sprintf("#ch%02d", channels.draw(r)))
		vals[1] = segment.String(fmt.Sprintf("Page_%06d", pages.draw(r)))
		vals[2] = segment.String(fmt.Sprintf("user%07d", users.draw(r)))
		vals[3] = segment.String(fmt.Sprintf("C%03d", countries.draw(r)))
		vals[4] = segment.String(fmt.Sprintf("City%04d", cities.draw(r)))
		vals[5] = segment.String(fmt.Sprintf("ns%d", r.next()%10))
		vals[6] = segment.String(fmt.Sprint(r.next()%5 == 0))
		vals[7] = segment.String(fmt.Sprint(r.next()%10 == 0))
		vals[8] = segment.Long(added)
		vals[9] = segment.Long(deleted)
		vals[10] = segment.Long(added - deleted)
		vals[11] = segment.Long(int64(r.next() % 500))
		vals[12] = segment.Double(price)
		if err := w.Add(segment.Row{Time: ts, Values: vals}); err != nil {
			b.Fatal(err)
		}
	}
	for _, d := range order {
		flush(d, writers[d])
	}
	return out
}

// benchQueriesFile finds shared/bench/queries.json beside the repository.
func benchQueriesFile() string {
	dir, _ := os.Getwd()
	for range 6 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "bench", "queries.json")
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// BenchmarkBenchQueries runs the ten shared benchmark queries over 1M rows
// (BENCH_ROWS overrides) in seven DAY segments.
func BenchmarkBenchQueries(b *testing.B) {
	raw, err := os.ReadFile(benchQueriesFile())
	if err != nil {
		b.Skipf("no benchmark queries: %v", err)
	}
	var qs []struct {
		ID     string          `json:"id"`
		Native json.RawMessage `json:"native"`
	}
	if err := json.Unmarshal(raw, &qs); err != nil {
		b.Fatal(err)
	}
	rows := 1_000_000
	if s := os.Getenv("BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	t := time.Now()
	segs := benchSegments(b, rows, 7)
	b.Logf("built %d rows in %d segments in %v", rows, len(segs), time.Since(t))
	e := New(Options{})
	for _, q := range qs {
		pq, err := query.Parse(q.Native)
		if err != nil {
			b.Fatalf("%s: %v", q.ID, err)
		}
		b.Run(q.ID, func(b *testing.B) {
			var out []byte
			for b.Loop() {
				if out, err = e.Execute(context.Background(), pq, segs); err != nil {
					b.Fatal(err)
				}
			}
			if len(out) > 300 {
				out = append(out[:300:300], "..."...)
			}
			b.Logf("%s", out)
		})
	}
}
