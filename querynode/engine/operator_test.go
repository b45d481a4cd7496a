package engine

import (
	"context"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/querynode/query"
)

// TestPipelineRowsMatchSelection checks that a query's pipeline head (block
// source over the index-answered rows, then the row filters refining its
// batches) yields exactly the rows of the filter evaluated as a whole into
// a bitmap, for every filter case alone and combined with row filters, over
// intervals that cut blocks.
func TestPipelineRowsMatchSelection(t *testing.T) {
	rows := genRows(3000, 2, 11)
	segs := buildSegments(t, rows, 128)
	numeric := `{"type":"bound","dimension":"added","lower":"50","ordering":"numeric"}`
	expression := `{"type":"expression","expression":"added * 2 > 300"}`
	var filters []string
	for _, c := range filterCases {
		filters = append(filters, c.filter,
			`{"type":"and","fields":[`+c.filter+`,`+numeric+`]}`,
			`{"type":"and","fields":[`+expression+`,`+c.filter+`,`+numeric+`]}`)
	}
	for _, ivs := range []string{`["2024-01-01/2024-01-03"]`, `["2024-01-01T03:17:00Z/2024-01-01T20:00:00Z","2024-01-02T07:00:00Z/2024-01-02T07:30:00Z"]`} {
		for _, f := range filters {
			q, err := query.Parse([]byte(`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":` + ivs +
				`,"filter":` + f + `,"aggregations":[{"type":"count","name":"c"}]}`))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, s := range segs {
				sq := newSegQuery(context.Background(), q, s)
				op, _, err := sq.rows()
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				got, err := collectRows(op, s.Data)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				sel, _, err := newSegQuery(context.Background(), q, s).selection()
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if want := sel.bitmap(); !got.Equals(want) {
					t.Errorf("%s over %s on %s: pipeline has %d rows, selection %d", f, ivs, s.ID, got.GetCardinality(), want.GetCardinality())
				}
			}
		}
	}
}

// TestBlockSource checks the cursor: every selected row once, in order, a
// block per batch, dense batches for whole blocks and range pieces, and the
// same batches again after Init.
func TestBlockSource(t *testing.T) {
	segs := buildSegments(t, genRows(2000, 1, 5), 100)
	s := segs[0]
	n := s.Data.NumRows()
	bm := roaring.New()
	for r := 0; r < n; r++ {
		if r%7 == 0 || (r >= 200 && r < 300) || r > n-150 {
			bm.Add(uint32(r))
		}
	}
	cases := map[string]selection{
		"ranges": {ranges: []rowRange{{5, 250}, {250, 260}, {777, n}}},
		"bitmap": {bm: bm},
	}
	for name, sel := range cases {
		t.Run(name, func(t *testing.T) {
			src := newBlockSource(context.Background(), newColumns(s, nil), sel)
			for pass := range 2 {
				got := roaring.New()
				dense := 0
				err := drain(src, sinkFunc(func(b Batch) error {
					start, end := s.Data.BlockRows(b.Block)
					if b.Sel == nil {
						dense++
						if b.From < 0 || b.To > end-start || b.From >= b.To {
							t.Fatalf("pass %d: bad dense batch %+v", pass, b)
						}
						got.AddRange(uint64(start+b.From), uint64(start+b.To))
						return nil
					}
					for k, i := range b.Sel {
						if int(i) >= end-start || (k > 0 && i <= b.Sel[k-1]) {
							t.Fatalf("pass %d: bad selection %v in block %d", pass, b.Sel, b.Block)
						}
						got.Add(uint32(start + int(i)))
					}
					return nil
				}))
				if err != nil {
					t.Fatal(err)
				}
				if want := sel.bitmap(); !got.Equals(want) {
					t.Fatalf("pass %d: %d rows, want %d", pass, got.GetCardinality(), want.GetCardinality())
				}
				if dense == 0 {
					t.Errorf("pass %d: no dense batch", pass)
				}
			}
		})
	}
}

// TestBlockSourceCancelled checks that the cursor stops on a cancelled
// query.
func TestBlockSourceCancelled(t *testing.T) {
	segs := buildSegments(t, genRows(500, 1, 5), 100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := newBlockSource(ctx, newColumns(segs[0], nil), selection{ranges: []rowRange{{0, segs[0].Data.NumRows()}}})
	err := drain(src, sinkFunc(func(Batch) error { return nil }))
	if query.AsError(err).Kind != query.Cancelled {
		t.Fatalf("err %v, want cancelled", err)
	}
}
