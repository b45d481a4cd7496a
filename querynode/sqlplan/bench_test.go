package sqlplan

import (
	"context"
	"encoding/json"
	"testing"

	"strata/bench/benchsql"
)

// benchCatalog is the bench data set's wiki table (../shared/bench).
type benchCatalog struct{}

func (benchCatalog) Table(_ context.Context, schema, name string) (*Table, error) {
	if name != "wiki" {
		return nil, nil
	}
	cols := []Column{{"__time", "TIMESTAMP"}}
	for _, s := range []string{"channel", "city", "country", "isNew", "isRobot", "namespace", "page", "user"} {
		cols = append(cols, Column{s, "VARCHAR"})
	}
	for _, l := range []string{"added", "commentLength", "deleted", "delta"} {
		cols = append(cols, Column{l, "BIGINT"})
	}
	cols = append(cols, Column{"price", "DOUBLE"})
	return &Table{Columns: cols, DataSource: json.RawMessage(`{"type":"table","name":"wiki"}`)}, nil
}

// The ten bench queries plan to the native query types queries.json uses.
func TestBenchQueriesPlan(t *testing.T) {
	want := map[string]string{"Q1": "timeseries", "Q2": "timeseries", "Q3": "topN", "Q4": "topN", "Q5": "groupBy",
		"Q6": "timeseries", "Q7": "groupBy", "Q8": "timeseries", "Q9": "timeseries", "Q10": "groupBy"}
	for _, q := range benchsql.Queries {
		p, err := Plan(context.Background(), q.SQL, Request{}, benchCatalog{})
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		if p.b.queryType != want[q.ID] {
			t.Errorf("%s: %s, want %s\n%s", q.ID, p.b.queryType, want[q.ID], p.Native)
		}
		has(t, p.Native, `"intervals":["2024-01-01T00:00:00.000Z/2024-01-08T00:00:00.000Z"]`)
		if q.ID == "Q10" { // the day key is the granularity, not a virtual column
			has(t, p.Native, `"granularity":{"period":"P1D","timeZone":"UTC","type":"period"}`, `"dimensions":[{"dimension":"channel"`)
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	for _, q := range benchsql.Queries {
		b.Run(q.ID, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Plan(context.Background(), q.SQL, Request{}, benchCatalog{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
