package segmeta

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"strata/interval"
)

const day = 24 * hour

// fixture builds realistic segments: nDS datasources × nDays daily chunks ×
// nParts numbered partitions, each with its own load spec and a shared
// 20-dimension schema per datasource.
func fixture(nDS, nDays, nParts int, start int64) []*DataSegment {
	out := make([]*DataSegment, 0, nDS*nDays*nParts)
	slab := make([]DataSegment, nDS*nDays*nParts)
	var buf []byte
	for d := range nDS {
		ds := internString(fmt.Sprintf("datasource_%03d", d))
		dims := make([]string, 20)
		for i := range dims {
			dims[i] = fmt.Sprintf("dimension_%s_%d", ds, i)
		}
		dims = internList(dims)
		metrics := internList([]string{"count", "sum_added", "sum_deleted", "sum_delta", "unique_users"})
		for k := range nDays {
			iv := interval.Interval{Start: start + int64(k)*day, End: start + int64(k+1)*day}
			version := internString(interval.FormatMillis(iv.End + 3*hour + int64(k)))
			for p := range nParts {
				s := &slab[len(out)]
				buf = append(buf[:0], `{"type":"s3_zip","bucket":"strata-deep-storage","key":"`...)
				buf = append(buf, ds...)
				buf = append(buf, '/')
				buf = interval.AppendMillis(buf, iv.Start, nil)
				buf = append(buf, '/')
				buf = append(buf, version...)
				buf = append(buf, '/')
				buf = strconv.AppendInt(buf, int64(p), 10)
				buf = append(buf, `/index.zip","S3Schema":"s3n"}`...)
				*s = DataSegment{DataSource: ds, Interval: iv, Version: version, LoadSpec: RawJSON(buf),
					Dimensions: dims, Metrics: metrics, ShardSpec: NumberedShard(int32(p), int32(nParts)),
					BinaryVersion: NullInt32{V: 9, Valid: true}, Size: 5_000_000 + int64(p)}
				out = append(out, s)
			}
		}
	}
	return out
}

const epoch2020 = int64(1577836800000)

var bigIndex = sync.OnceValues(func() (*Index, []*DataSegment) {
	segs := fixture(100, 1000, 10, epoch2020)
	x := NewIndex()
	for i := 0; i < len(segs); i += 10_000 {
		if _, err := x.Add(segs[i:min(i+10_000, len(segs))]); err != nil {
			panic(err)
		}
	}
	return x, segs
})

// BenchmarkLookupDay: one day of one datasource, 1M segments in the index.
func BenchmarkLookupDay(b *testing.B) {
	x, _ := bigIndex()
	r := rand.New(rand.NewPCG(1, 1))
	b.ResetTimer()
	for b.Loop() {
		ds := fmt.Sprintf("datasource_%03d", r.IntN(100))
		d := epoch2020 + r.Int64N(1000)*day
		hs := x.Lookup(ds, interval.Interval{Start: d, End: d + day})
		if len(hs) != 1 || len(hs[0].Segments) != 10 {
			b.Fatalf("lookup: %d holders", len(hs))
		}
	}
}

// BenchmarkLookupMonthSingleTimeline: a 31-day lookup in one timeline that
// holds 1M hourly segments.
func BenchmarkLookupMonthSingleTimeline(b *testing.B) {
	tl := singleTimeline()
	r := rand.New(rand.NewPCG(1, 1))
	b.ResetTimer()
	for b.Loop() {
		d := epoch2020 + r.Int64N(4000)*day
		if hs := tl.Lookup(interval.Interval{Start: d, End: d + 31*day}); len(hs) != 31*24 {
			b.Fatalf("lookup: %d holders", len(hs))
		}
	}
}

var single = sync.OnceValue(func() *Timeline {
	// 100,000 hourly chunks × 10 partitions in one datasource.
	segs := fixture(1, 100_000, 10, epoch2020)
	for i, s := range segs {
		h := int64(i / 10)
		s.Interval = interval.Interval{Start: epoch2020 + h*hour, End: epoch2020 + (h+1)*hour}
	}
	tl := NewTimeline(segs[0].DataSource)
	for i := 0; i < len(segs); i += 10_000 {
		if _, err := tl.Add(segs[i:min(i+10_000, len(segs))]); err != nil {
			panic(err)
		}
	}
	return tl
})

func singleTimeline() *Timeline { return single() }

// newVersionBatch returns 1,000 segments re-publishing 100 days × 10
// partitions of one datasource under a newer version (a compaction or
// REPLACE), overshadowing what is there.
func newVersionBatch(ds string, firstDay int64, version string) []*DataSegment {
	segs := fixture(1, 100, 10, epoch2020+firstDay*day)
	for _, s := range segs {
		s.DataSource = ds
		s.Version = version
	}
	return segs
}

// BenchmarkAdd1000 adds 1,000 segments (100 new complete chunks) to the
// index of 1M segments; the batch is removed again outside the timer.
func BenchmarkAdd1000(b *testing.B) {
	x, _ := bigIndex()
	batch := newVersionBatch("datasource_042", 300, "9999-new-version")
	ids := make([]ID, len(batch))
	for i, s := range batch {
		ids[i] = s.ID()
	}
	b.ResetTimer()
	for b.Loop() {
		if n, err := x.Add(batch); n != 1000 || err != nil {
			b.Fatal(n, err)
		}
		b.StopTimer()
		if x.Remove(ids) != 1000 {
			b.Fatal("remove")
		}
		b.StartTimer()
	}
}

// BenchmarkRemove1000 is the reverse: marking 1,000 segments unused.
func BenchmarkRemove1000(b *testing.B) {
	x, _ := bigIndex()
	batch := newVersionBatch("datasource_042", 300, "9999-new-version")
	ids := make([]ID, len(batch))
	for i, s := range batch {
		ids[i] = s.ID()
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if n, err := x.Add(batch); n != 1000 || err != nil {
			b.Fatal(n, err)
		}
		b.StartTimer()
		if x.Remove(ids) != 1000 {
			b.Fatal("remove")
		}
	}
}

// BenchmarkAdd1000SingleTimeline adds 1,000 single-partition chunks, each
// overshadowing a different hour, to a timeline that alone holds 1M segments.
func BenchmarkAdd1000SingleTimeline(b *testing.B) {
	tl := singleTimeline()
	batch := make([]*DataSegment, 0, 1000)
	for h := range int64(1000) {
		iv := interval.Interval{Start: epoch2020 + (5000+h*37)*hour, End: epoch2020 + (5001+h*37)*hour}
		batch = append(batch, mk(tl.DataSource(), iv, "9999-new-version", num(0, 1)))
	}
	ids := make([]ID, len(batch))
	for i, s := range batch {
		ids[i] = s.ID()
	}
	b.ResetTimer()
	for b.Loop() {
		if n, err := tl.Add(batch); n != 1000 || err != nil {
			b.Fatal(n, err)
		}
		b.StopTimer()
		tl.Remove(ids)
		b.StartTimer()
	}
}

// BenchmarkSnapshotRestore1M encodes 1M segments as a stream (shared
// dictionary) and decodes them back, as an FSM snapshot and restore would.
func BenchmarkSnapshotRestore1M(b *testing.B) {
	_, segs := bigIndex()
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		enc := NewEncoder()
		for _, s := range segs {
			buf = enc.Append(buf, s)
		}
		slab := make([]DataSegment, len(segs))
		dec := NewDecoder()
		rest := buf
		for i := range slab {
			var err error
			if rest, err = dec.Decode(&slab[i], rest); err != nil {
				b.Fatal(err)
			}
		}
		if len(rest) != 0 {
			b.Fatal("trailing bytes")
		}
	}
	b.ReportMetric(float64(len(buf))/float64(len(segs)), "snapshot-B/segment")
}

// BenchmarkSelfContainedRecords1M is the same with self-contained records
// (AppendBinary / DecodeBinary), the form used inside single commands.
func BenchmarkSelfContainedRecords1M(b *testing.B) {
	_, segs := bigIndex()
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for _, s := range segs {
			buf = s.AppendBinary(buf)
		}
		slab := make([]DataSegment, len(segs))
		rest := buf
		for i := range slab {
			var err error
			if rest, err = slab[i].DecodeBinary(rest); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(buf))/float64(len(segs)), "record-B/segment")
}

// BenchmarkHeapPerSegment builds 1M decoded segments and their index and
// reports the live heap they take.
func BenchmarkHeapPerSegment(b *testing.B) {
	const n = 1_000_000
	src := fixture(100, 1000, 10, epoch2020)
	var enc []byte
	e := NewEncoder()
	for _, s := range src {
		enc = e.Append(enc, s)
	}
	src = nil
	for b.Loop() {
		before := liveHeap()
		// Decode as a restore would, one allocation per segment.
		segs := make([]*DataSegment, 0, n)
		rest := enc
		dec := NewDecoder()
		for range n {
			s := new(DataSegment)
			var err error
			if rest, err = dec.Decode(s, rest); err != nil {
				b.Fatal(err)
			}
			segs = append(segs, s)
		}
		mid := liveHeap()
		x := NewIndex()
		if _, err := x.Add(segs); err != nil {
			b.Fatal(err)
		}
		after := liveHeap()
		b.ReportMetric(float64(mid-before)/n, "segment-B/segment")
		b.ReportMetric(float64(after-mid)/n, "index-B/segment")
		b.ReportMetric(float64(after-before)/n, "B/segment")
		runtime.KeepAlive(x)
		runtime.KeepAlive(segs)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
