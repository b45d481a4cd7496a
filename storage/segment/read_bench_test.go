package segment

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	benchSegOnce sync.Once
	benchSegPath string
	benchSegErr  error
)

// benchSegment builds (once per process) the first DAY segment of the
// bench data set, or a smaller one with STRATA_BENCH_ROWS.
func benchSegment(b *testing.B) *Segment {
	benchSegOnce.Do(func() {
		dir, err := os.MkdirTemp("", "strata-read-bench")
		if err != nil {
			benchSegErr = err
			return
		}
		g := newBenchGen(envInt("STRATA_BENCH_ROWS", 10_000_000), 7)
		rows, _ := dayRows(g, 0, nil)
		w, err := NewWriter(wikiSpec(benchStart))
		if err != nil {
			benchSegErr = err
			return
		}
		row := Row{Values: make([]Value, 13)}
		for i := range rows {
			g.t.fill(&row, &rows[i])
			if benchSegErr = w.Add(row); benchSegErr != nil {
				return
			}
		}
		benchSegPath = filepath.Join(dir, "day0.seg")
		_, benchSegErr = w.WriteFile(benchSegPath)
	})
	if benchSegErr != nil {
		b.Fatal(benchSegErr)
	}
	s, err := Open(benchSegPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Verify(); err != nil { // checksums verified outside the timing
		b.Fatal(err)
	}
	return s
}

func rowsPerSec(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkReadTime(b *testing.B) {
	s := benchSegment(b)
	buf := make([]int64, s.RowsPerBlock())
	b.ResetTimer()
	for range b.N {
		for blk := range s.NumBlocks() {
			var err error
			if buf, err = s.Time().Longs(blk, buf); err != nil {
				b.Fatal(err)
			}
		}
	}
	rowsPerSec(b, s.NumRows())
}

func BenchmarkReadLongs(b *testing.B) {
	s := benchSegment(b)
	col, _ := s.Numeric("added")
	buf := make([]int64, s.RowsPerBlock())
	b.ResetTimer()
	for range b.N {
		for blk := range col.NumBlocks() {
			buf, _ = col.Longs(blk, buf)
		}
	}
	rowsPerSec(b, s.NumRows())
}

func BenchmarkReadDoubles(b *testing.B) {
	s := benchSegment(b)
	col, _ := s.Numeric("price")
	buf := make([]float64, s.RowsPerBlock())
	b.ResetTimer()
	for range b.N {
		for blk := range col.NumBlocks() {
			buf, _ = col.Doubles(blk, buf)
		}
	}
	rowsPerSec(b, s.NumRows())
}

func BenchmarkReadIDs(b *testing.B) {
	s := benchSegment(b)
	for _, name := range []string{"channel", "page", "user", "isNew"} {
		col, _ := s.Strings(name)
		buf := make([]int32, s.RowsPerBlock())
		b.Run(name+"/"+col.Info().Codec, func(b *testing.B) {
			for range b.N {
				for blk := range col.NumBlocks() {
					buf, _ = col.BlockIDs(blk, buf)
				}
			}
			rowsPerSec(b, s.NumRows())
		})
	}
}

func BenchmarkBitmap(b *testing.B) {
	s := benchSegment(b)
	for _, tc := range []struct{ col, val string }{{"channel", "#ch07"}, {"isRobot", "false"}, {"page", "Page_000500"}, {"user", "user0001234"}} {
		col, _ := s.Strings(tc.col)
		id, found, err := col.Find(tc.val)
		if err != nil || !found {
			b.Fatalf("%s=%s: %v %v", tc.col, tc.val, found, err)
		}
		n, _ := col.BitmapCardinality(id)
		b.Run(tc.col+"="+tc.val, func(b *testing.B) {
			for range b.N {
				if _, err := col.Bitmap(id); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "rows")
		})
	}
}

func BenchmarkFind(b *testing.B) {
	s := benchSegment(b)
	col, _ := s.Strings("user")
	d, _ := col.Dictionary()
	b.ResetTimer()
	for i := range b.N {
		d.Find(d.Value(i % d.Len()))
	}
}

func BenchmarkOpen(b *testing.B) {
	s := benchSegment(b)
	path := benchSegPath
	_ = s
	b.ResetTimer()
	for range b.N {
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
