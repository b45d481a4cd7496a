package sqlplan

import (
	"context"
	"testing"
)

// A plan says whether it holds the time it was made: such a plan is for
// its own statement only (the server's plan cache keeps no such plan).
func TestPlanReadsClock(t *testing.T) {
	for q, want := range map[string]bool{
		`SELECT COUNT(*) AS c FROM wiki WHERE __time >= TIMESTAMP '2024-01-01 00:00:00'`:                     false,
		`SELECT COUNT(*) AS c FROM wiki WHERE __time >= CURRENT_TIMESTAMP - INTERVAL '1' DAY`:                true,
		`SELECT COUNT(*) AS c FROM wiki WHERE __time >= CURRENT_DATE`:                                        true,
		`SELECT COUNT(*) AS c FROM wiki WHERE __time >= LOCALTIMESTAMP - INTERVAL '1' DAY`:                   true,
		`SELECT channel, TIMESTAMPDIFF(DAY, MAX(__time), CURRENT_TIMESTAMP) AS d FROM wiki GROUP BY channel`: true,
	} {
		p, err := Plan(context.Background(), q, Request{}, benchCatalog{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if p.ReadsClock != want {
			t.Errorf("%s: ReadsClock %v, want %v", q, p.ReadsClock, want)
		}
	}
}
