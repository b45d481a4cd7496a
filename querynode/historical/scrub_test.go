package historical

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// countingStore is a local deep storage that counts downloads.
type countingStore struct {
	*deep.Local
	gets atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, spec deep.LoadSpec, localPath string) error {
	c.gets.Add(1)
	return c.Local.Get(ctx, spec, localPath)
}

// shuffledSegment writes a segment of 1000 rows holding x=1..1000 in a
// shuffled order, uncompressed, so the values are bit-packed as they are
// (not delta-coded to nothing): damage to them changes values rather than
// failing to decode.
func shuffledSegment(t *testing.T) (*segmeta.DataSegment, string) {
	t.Helper()
	iv, _ := interval.Parse("2020-01-01/2020-01-02")
	w, err := segment.NewWriter(segment.Spec{Fields: []segment.Field{{Name: "x", Kind: segment.KindLong}},
		Metrics: []segment.Metric{{Type: "longSum", Name: "x", FieldName: "x"}}, Interval: segment.Interval{Start: iv.Start, End: iv.End},
		ColumnCompression: map[string]segment.Compression{"x": segment.CompressNone}})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range rand.New(rand.NewPCG(1, 2)).Perm(1000) {
		w.Add(segment.Row{Time: iv.Start + int64(i), Values: []segment.Value{segment.Long(int64(x + 1))}})
	}
	path := filepath.Join(t.TempDir(), "f.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &segmeta.DataSegment{DataSource: "ds", Interval: iv, Version: "v1", Metrics: []string{"x"},
		ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes}, path
}

// cachedNode starts a node whose coordinator assigns it one segment
// (shuffledSegment), and waits until it serves it.
func cachedNode(t *testing.T, scrub time.Duration) (*Node, *countingStore, *segmeta.DataSegment, string) {
	t.Helper()
	local, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Local: local}
	seg, path := shuffledSegment(t)
	spec, err := store.Put(context.Background(), "ds/v1/0", path)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	seg.LoadSpec = segmeta.RawJSON(ls)
	listing := append(append([]byte("["), seg.AppendJSON(nil)...), ']')
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(listing) }))
	t.Cleanup(coord.Close)
	dir := t.TempDir()
	n, err := New(Config{Name: "h:1", Locations: []Location{{dir, 1 << 20}}, Coordinators: []string{coord.URL},
		Storage: store, PollPeriod: 5 * time.Millisecond, ScrubPeriod: scrub})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	n.Start()
	waitServed(t, n, seg, 1)
	return n, store, seg, filepath.Join(dir, dirName(seg.ID().String()), segmentFile)
}

// waitServed waits until n serves seg and has downloaded it gets times.
func waitServed(t *testing.T, n *Node, seg *segmeta.DataSegment, gets int64) {
	t.Helper()
	store := n.cfg.Storage.(*countingStore)
	var served int
	eventually.True(t, fmt.Sprintf("the segment served after %d downloads", gets), func() bool {
		ann := n.Announce("")
		served = len(ann.Segments)
		return served == 1 && ann.Segments[0].ID() == seg.ID() && store.gets.Load() == gets
	}, eventually.Showing(func() string { return fmt.Sprintf("served %d, downloads %d", served, store.gets.Load()) }))
}

// damage flips two bytes near the end of the file's data area (values of
// column x, stored last) in place, through the file system, as a failing disk or a
// stray write would: the mapping sees them.
func damage(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	var trailer [24]byte
	if _, err := f.ReadAt(trailer[:], st.Size()-24); err != nil {
		t.Fatal(err)
	}
	end := int64(binary.LittleEndian.Uint64(trailer[:])) // the footer's offset
	var b [2]byte
	if _, err := f.ReadAt(b[:], end-100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^b[0], ^b[1]}, end-100); err != nil {
		t.Fatal(err)
	}
}

const sumQuery = `{"queryType":"timeseries","dataSource":"ds","intervals":["2020-01-01/2020-01-02"],"granularity":"all","aggregations":[{"type":"longSum","name":"x","fieldName":"x"}]}`

func sumOf(t *testing.T, n *Node, seg *segmeta.DataSegment) (string, []string) {
	t.Helper()
	res, err := n.Query(context.Background(), &protocol.SubQuery{Query: json.RawMessage(sumQuery), Finalize: true,
		Segments: []protocol.SegmentRef{{ID: seg.ID().String(), Interval: seg.Interval.String()}}})
	if err != nil {
		t.Fatalf("sub-query: %v", err)
	}
	if res.Final != nil {
		return string(res.Final), res.Missing
	}
	return string(res.Partial), res.Missing
}

// A cached file damaged after a query read and checked its blocks: the
// same query answers as before (from the verified copies of the block
// cache, never from the changed bytes).
func TestDamagedCachedFileDoesNotChangeAnswers(t *testing.T) {
	n, _, seg, path := cachedNode(t, -1)
	want, missing := sumOf(t, n, seg)
	if !strings.Contains(want, `"x":500500`) || len(missing) != 0 {
		t.Fatalf("intact: %s, missing %v", want, missing)
	}
	damage(t, path)
	if got, missing := sumOf(t, n, seg); got != want || len(missing) != 0 {
		t.Fatalf("after damage: answered %s, missing %v; want %s", got, missing, want)
	}
}

// A sub-query that meets damage (here with the block cache off, so every
// read checks the file) does not answer from the segment but reports it
// missing (the broker reads it from a replica), and the node drops the copy
// and downloads it again.
func TestDamagedCachedFileIsReportedMissingAndDownloadedAgain(t *testing.T) {
	segment.SetBlockCacheBytes(0)
	defer segment.SetBlockCacheBytes(segment.DefaultBlockCacheBytes)
	n, store, seg, path := cachedNode(t, -1)
	want, missing := sumOf(t, n, seg)
	if !strings.Contains(want, `"x":500500`) || len(missing) != 0 {
		t.Fatalf("intact: %s, missing %v", want, missing)
	}
	damage(t, path)
	got, missing := sumOf(t, n, seg)
	if !slices.Equal(missing, []string{seg.ID().String()}) || strings.Contains(got, `"x":`) {
		t.Fatalf("after damage: answered %s, missing %v; want the segment reported missing and nothing answered from it", got, missing)
	}
	waitServed(t, n, seg, 2)
	if got, missing := sumOf(t, n, seg); got != want || len(missing) != 0 {
		t.Fatalf("after the new download: %s, missing %v; want %s", got, missing, want)
	}
	orig, _ := os.ReadFile(filepath.Join(store.Root(), "ds/v1/0/index.seg"))
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, orig) {
		t.Fatalf("the cache does not hold a fresh copy: %v", err)
	}
}

// The scrub finds damage no query has read and has the file downloaded
// again.
func TestScrubDropsAndDownloadsDamagedFile(t *testing.T) {
	n, store, seg, path := cachedNode(t, 10*time.Millisecond)
	damage(t, path)
	waitServed(t, n, seg, 2)
	orig, _ := os.ReadFile(filepath.Join(store.Root(), "ds/v1/0/index.seg"))
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, orig) {
		t.Fatalf("the cache does not hold a fresh copy: %v", err)
	}
	if got, missing := sumOf(t, n, seg); !strings.Contains(got, `"x":500500`) || len(missing) != 0 {
		t.Fatalf("after the new download: %s, missing %v", got, missing)
	}
	// The damaged copy, moved aside, is deleted once the scrub lets go of it.
	var entries []os.DirEntry
	eventually.True(t, "only the new copy in the cache location", func() bool {
		entries, _ = os.ReadDir(filepath.Dir(filepath.Dir(path)))
		return len(entries) == 1
	}, eventually.Showing(func() string { return fmt.Sprintf("%d entries", len(entries)) }))
}

// A task's own file (realtime rows) has no replica: the sub-query that meets
// damage in it fails, naming it, rather than answering or reporting it
// missing (which a broker takes for a hand-off).
func TestDamagedTaskFileFailsTheSubQuery(t *testing.T) {
	segment.SetBlockCacheBytes(0)
	defer segment.SetBlockCacheBytes(segment.DefaultBlockCacheBytes)
	n, err := New(Config{Name: "mm:1", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	seg, path := shuffledSegment(t)
	if err := n.ServeLocal("task1", []Served{{Segment: seg, Path: path, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	if got, missing := sumOf(t, n, seg); !strings.Contains(got, `"x":500500`) || len(missing) != 0 {
		t.Fatalf("intact: %s, missing %v", got, missing)
	}
	damage(t, path)
	res, err := n.Query(context.Background(), &protocol.SubQuery{Query: json.RawMessage(sumQuery),
		Segments: []protocol.SegmentRef{{ID: seg.ID().String(), Interval: seg.Interval.String()}}})
	if err == nil || !strings.Contains(err.Error(), "damaged segment file ("+seg.ID().String()+")") {
		t.Fatalf("sub-query over a damaged task file: %+v, %v; want an error naming it", res, err)
	}
}
