package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"strata/aggregate"
	"strata/aggregate/blob"
)

// TestSegmentCursor reads a segment through the exported cursor with time
// clips inside, across and outside it, and compares every row (time, a
// nullable long, a nullable string, a multi-value string, a float and a
// complex first/last pair) with the rows written.
func TestSegmentCursor(t *testing.T) {
	rows := genRows(700, 1, 7)
	seg := buildSegments(t, rows, 64)[0]
	lo, hi := rows[100].t, rows[600].t
	for _, c := range []struct {
		name       string
		start, end int64
	}{
		{"inside", lo, hi},
		{"whole", t0 - day, t0 + 2*day},
		{"before", t0 - day, t0},
		{"empty", lo, lo},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			for _, r := range rows {
				if r.t < c.start || r.t >= c.end {
					continue
				}
				added, channel := "null", "null"
				if r.added != nil {
					added = fmt.Sprint(*r.added)
				}
				if r.channel != nil {
					channel = *r.channel
				}
				want = append(want, fmt.Sprintf("%d %s %s %v %g %s", r.t, added, channel, r.tags, r.weight, r.page))
			}
			cur, err := NewSegmentCursor(context.Background(), seg.Data, c.start, c.end)
			if err != nil {
				t.Fatal(err)
			}
			_, channelValue, err := cur.Dictionary("channel")
			if err != nil {
				t.Fatal(err)
			}
			_, tagValue, err := cur.Dictionary("tags")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				ok, err := cur.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				times, err := cur.Times()
				if err != nil {
					t.Fatal(err)
				}
				longs, nulls, err := cur.Longs("added")
				if err != nil {
					t.Fatal(err)
				}
				weights, _, err := cur.Doubles("weight")
				if err != nil {
					t.Fatal(err)
				}
				_, chIDs, err := cur.StringIDs("channel")
				if err != nil {
					t.Fatal(err)
				}
				tagOffs, tagIDs, err := cur.StringIDs("tags")
				if err != nil {
					t.Fatal(err)
				}
				err = cur.Each(func(i int) error {
					added := "null"
					if !aggregate.BitSet(nulls, i) {
						added = fmt.Sprint(longs[i])
					}
					channel, ok := channelValue(chIDs[i])
					if !ok {
						channel = "null"
					}
					var tags []string
					for _, id := range tagIDs[tagOffs[i]:tagOffs[i+1]] {
						s, _ := tagValue(id)
						tags = append(tags, s)
					}
					b, ok, err := cur.Blob("first_page", i)
					if err != nil || !ok {
						return fmt.Errorf("first_page: %v %v", ok, err)
					}
					p, err := blob.DecodePair(blob.TypePairLongString, b)
					if err != nil {
						return err
					}
					got = append(got, fmt.Sprintf("%d %s %s %v %g %s", times[i], added, channel, tags, float32(weights[i]), p.String))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			// Multi-value rows keep their values' order; rows may come in
			// another order than written (the segment sorts them).
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%d rows, want %d; first differences:\n got %s\nwant %s", len(got), len(want),
					strings.Join(got[:min(3, len(got))], "; "), strings.Join(want[:min(3, len(want))], "; "))
			}
		})
	}
}
