package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"strata/querynode/query"
)

// BenchmarkJoin: revenue per region over 200k rows in 4 day segments, the
// channel (50 values) joined to a region by an inline table, against the
// same grouping without the join (by channel): the join on unique keys
// rewritten as lookups, and the same join through the join stage (reading
// the segment's needed columns, the hash probe, materializing the joined
// rows).
func BenchmarkJoin(b *testing.B) {
	segs := benchSegments(b, 200_000, 4)
	var rows []string
	for c := range 50 {
		rows = append(rows, fmt.Sprintf(`["#ch%02d","region%d"]`, c, c%7))
	}
	right := `{"type":"inline","columnNames":["channel","region"],"rows":[` + strings.Join(rows, ",") + `]}`
	plain := `{"queryType":"groupBy","dataSource":"wiki","intervals":["2024-01-01/2024-01-05"],"granularity":"all",
		"dimensions":["channel"],"aggregations":[{"type":"doubleSum","name":"p","fieldName":"price"},{"type":"count","name":"n"}]}`
	joined := strings.Replace(strings.Replace(plain, `"dataSource":"wiki"`, `"dataSource":{"type":"join","left":"wiki","right":`+right+
		`,"rightPrefix":"r.","condition":"channel == \"r.channel\"","joinType":"INNER"}`, 1), `"dimensions":["channel"]`, `"dimensions":["r.region"]`, 1)
	e := New(Options{})
	defer func(old bool) { rewriteJoins = old }(rewriteJoins)
	for _, c := range []struct {
		name, q string
		rewrite bool
	}{{"table", plain, true}, {"join-as-lookups", joined, true}, {"join-stage", joined, false}} {
		b.Run(c.name, func(b *testing.B) {
			rewriteJoins = c.rewrite
			for b.Loop() {
				q, err := query.Parse([]byte(c.q))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Execute(context.Background(), q, segs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
