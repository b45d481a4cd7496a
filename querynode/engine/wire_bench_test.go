package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"strata/querynode/query"
)

// BenchmarkWirePath times the stages a historical and a broker run for
// benchmark query Q7: run and merge on the data server, encode the
// partial, decode it on the broker, merge and render. 1M rows
// (BENCH_ROWS overrides) in seven DAY segments.
func BenchmarkWirePath(b *testing.B) {
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
	var q *query.Query
	for _, x := range qs {
		if x.ID == "Q7" {
			if q, err = query.Parse(x.Native); err != nil {
				b.Fatal(err)
			}
		}
	}
	if q == nil {
		b.Skip("no Q7")
	}
	rows := 1_000_000
	if s := os.Getenv("BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	segs := benchSegments(b, rows, 7)
	e := New(Options{})
	var run, enc, dec, fin time.Duration
	for b.Loop() {
		t := time.Now()
		p, err := e.Run(context.Background(), q, segs)
		if err != nil {
			b.Fatal(err)
		}
		run += time.Since(t)
		t = time.Now()
		data, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		enc += time.Since(t)
		t = time.Now()
		var back Partial
		if err := json.Unmarshal(data, &back); err != nil {
			b.Fatal(err)
		}
		if err := back.Attach(q); err != nil {
			b.Fatal(err)
		}
		dec += time.Since(t)
		t = time.Now()
		m, err := e.Merge(q, []*Partial{&back})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Finalize(q, m); err != nil {
			b.Fatal(err)
		}
		fin += time.Since(t)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64(run/n)/1e6, "run-ms")
	b.ReportMetric(float64(enc/n)/1e6, "encode-ms")
	b.ReportMetric(float64(dec/n)/1e6, "decode-ms")
	b.ReportMetric(float64(fin/n)/1e6, "merge+final-ms")
}
