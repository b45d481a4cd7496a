package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"strata/granularity"
	"strata/segmeta"
	"strata/storage/segment"
)

// keyUploader records the keys and the row counts of what it is given.
type keyUploader struct {
	keys []string
	rows []int
	fail int // fail the fail-th upload (1-based; 0 never)
}

func (u *keyUploader) Put(_ context.Context, key, file string) (json.RawMessage, error) {
	if len(u.keys)+1 == u.fail {
		return nil, errors.New("store down")
	}
	f, err := segment.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u.keys = append(u.keys, key)
	u.rows = append(u.rows, f.NumRows())
	return json.Marshal(map[string]string{"type": "test", "key": key})
}

// twoBuilders returns builders with overlapping chunks, 2 rows a partition:
// a: day 1 × 3 rows, day 2 × 1; b: day 1 × 1, day 3 × 2.
func twoBuilders(t *testing.T, version string) []*Builder {
	t.Helper()
	fields := []segment.Field{{Name: "k", Kind: segment.KindString}}
	dims := []segment.Dimension{{Name: "k", Kind: segment.KindString}}
	day := func(d, h int) int64 { return time.Date(2024, 1, d, h, 0, 0, 0, time.UTC).UnixMilli() }
	rows := [][]int64{{day(1, 1), day(1, 2), day(1, 3), day(2, 0)}, {day(3, 5), day(1, 4), day(3, 1)}}
	var bs []*Builder
	for i, times := range rows {
		b, err := NewBuilder(Spec{DataSource: "ds", Fields: fields, Dimensions: dims, SegmentGranularity: granularity.Day,
			RowsPerSegment: 2, Version: version, TempDir: filepath.Join(t.TempDir(), "w")})
		if err != nil {
			t.Fatal(err)
		}
		for j, ts := range times {
			if err := b.Add(segment.Row{Time: ts, Values: []segment.Value{segment.String(string(rune('a' + i*10 + j)))}}); err != nil {
				t.Fatal(err)
			}
		}
		bs = append(bs, b)
	}
	return bs
}

func TestFinishAllNumbersAcrossBuilders(t *testing.T) {
	bs := twoBuilders(t, "v1")
	up := &keyUploader{}
	segs, err := FinishAll(t.Context(), up, bs)
	if err != nil {
		t.Fatal(err)
	}
	// Day 1: a's two partitions (2 rows, 1 row) then b's (1 row), of 3.
	type want struct {
		day, part, core int32
		rows            int
	}
	wants := []want{{1, 0, 3, 2}, {1, 1, 3, 1}, {1, 2, 3, 1}, {2, 0, 1, 1}, {3, 0, 1, 2}}
	if len(segs) != len(wants) {
		t.Fatalf("got %d segments, want %d", len(segs), len(wants))
	}
	keys := map[string]bool{}
	for i, w := range wants {
		s := segs[i]
		start := time.Date(2024, 1, int(w.day), 0, 0, 0, 0, time.UTC).UnixMilli()
		if s.Interval.Start != start || s.ShardSpec != segmeta.NumberedShard(w.part, w.core) || up.rows[i] != w.rows {
			t.Errorf("segment %d = %s %+v with %d rows, want day %d partition %d of %d with %d rows",
				i, s.ID(), s.ShardSpec, up.rows[i], w.day, w.part, w.core, w.rows)
		}
		if keys[up.keys[i]] {
			t.Errorf("key %s used twice", up.keys[i])
		}
		keys[up.keys[i]] = true
		var ls struct{ Key string }
		if json.Unmarshal([]byte(s.LoadSpec), &ls); ls.Key != up.keys[i] {
			t.Errorf("segment %d: loadSpec %s, uploaded as %s", i, s.LoadSpec, up.keys[i])
		}
	}
	for _, b := range bs {
		if _, err := os.Stat(b.spec.TempDir); !os.IsNotExist(err) {
			t.Errorf("temp dir %s left behind", b.spec.TempDir)
		}
	}
	// The key of partition 2 of day 1 names partition 2.
	if k := up.keys[2]; path.Base(k) != "2" {
		t.Errorf("key %s does not name partition 2", k)
	}
}

func TestFinishAllOneBuilderIsFinish(t *testing.T) {
	// Finish of a builder equals FinishAll of it alone: numbering per builder.
	bs := twoBuilders(t, "v1")
	up := &keyUploader{}
	segs, err := bs[1].Finish(t.Context(), up)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 2 || segs[0].ShardSpec != segmeta.NumberedShard(0, 1) || segs[1].ShardSpec != segmeta.NumberedShard(0, 1) {
		t.Errorf("segments %v", segs)
	}
	bs[0].Abort()
}

func TestFinishAllErrorsCleanUp(t *testing.T) {
	// An upload failing midway discards every builder's files.
	bs := twoBuilders(t, "v1")
	if _, err := FinishAll(t.Context(), &keyUploader{fail: 3}, bs); err == nil {
		t.Fatal("upload failure not reported")
	}
	for _, b := range bs {
		if _, err := os.Stat(b.spec.TempDir); !os.IsNotExist(err) {
			t.Errorf("temp dir %s left behind", b.spec.TempDir)
		}
	}

	// Builders of different versions cannot be finished as one.
	a, b := twoBuilders(t, "v1"), twoBuilders(t, "v2")
	if _, err := FinishAll(t.Context(), &keyUploader{}, []*Builder{a[0], b[1]}); err == nil {
		t.Error("builders of two versions finished together")
	}
	for _, x := range []*Builder{a[0], b[1]} {
		if _, err := os.Stat(x.spec.TempDir); !os.IsNotExist(err) {
			t.Errorf("temp dir %s left behind", x.spec.TempDir)
		}
	}
	a[1].Abort()
	b[0].Abort()
	if _, err := FinishAll(t.Context(), &keyUploader{}, []*Builder{a[1], a[1]}); err == nil {
		t.Error("a builder listed twice was accepted")
	}
	if _, err := FinishAll(t.Context(), &keyUploader{}, []*Builder{nil}); err == nil {
		t.Error("a nil builder was accepted")
	}
	if segs, err := FinishAll(t.Context(), &keyUploader{}, nil); err != nil || segs != nil {
		t.Errorf("no builders: %v, %v", segs, err)
	}
}
