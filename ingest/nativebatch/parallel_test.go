package nativebatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata/ingest"
	"strata/storage/deep"
)

// writeFiles writes len(sizes) NDJSON files part_<i>.json under a new dir,
// file i holding sizes[i] rows over two days; every bad-th row of a file is
// unparseable (bad 0: none). It returns the dir.
func writeFiles(t testing.TB, sizes []int, bad int) string {
	t.Helper()
	dir := t.TempDir()
	for f, n := range sizes {
		var sb strings.Builder
		for i := range n {
			if bad > 0 && i%bad == bad-1 {
				sb.WriteString(`{"timestamp":"not a time","page":"x"}` + "\n")
				continue
			}
			k := f*7919 + i
			fmt.Fprintf(&sb, `{"timestamp":"2020-01-%02dT%02d:%02d:00Z","page":"p%d","user":"u%d","added":%d,"deleted":%d.5}`+"\n",
				1+k%2, k/60%24, k%60, k%13, k%5, k%100, k%7)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part_%d.json", f)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parallelTask is an index_parallel task over the part_*.json files of dir,
// rolled up by hour, with a transform and a filter (per-worker state).
func parallelTask(dir string, concurrency, maxRows int, maxParse int64) []byte {
	return []byte(fmt.Sprintf(`{"type":"index_parallel","spec":{
		"dataSchema":{"dataSource":"par","timestampSpec":{"column":"timestamp"},
			"dimensionsSpec":{"dimensions":["page","user","tag"]},
			"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"added","fieldName":"added"},
				{"type":"doubleSum","name":"deleted","fieldName":"deleted"}],
			"granularitySpec":{"segmentGranularity":"day","queryGranularity":"hour"},
			"transformSpec":{"transforms":[{"type":"expression","name":"tag","expression":"concat(page, '-', user)"}],
				"filter":{"type":"not","field":{"type":"selector","dimension":"page","value":"p0"}}}},
		"ioConfig":{"type":"index_parallel","inputSource":{"type":"local","baseDir":%q,"filter":"part_*.json"},"inputFormat":{"type":"json"}},
		"tuningConfig":{"type":"index_parallel","maxNumConcurrentSubTasks":%d,"maxParseExceptions":%d,
			"partitionsSpec":{"type":"dynamic","maxRowsPerSegment":%d}}}}`, dir, concurrency, maxParse, maxRows))
}

// rolledUp re-aggregates stored rows by time and dimensions, so that builds
// that rolled up differently compare equal when they stored the same data.
func rolledUp(rows []map[string]any) map[string][3]float64 {
	out := map[string][3]float64{}
	for _, r := range rows {
		k := fmt.Sprint(r["__time"], r["page"], r["user"], r["tag"])
		v := out[k]
		v[0] += float64(r["count"].(int64))
		v[1] += float64(r["added"].(int64))
		v[2] += r["deleted"].(float64)
		out[k] = v
	}
	return out
}

// checkNumbering checks that each chunk's segments are partitions 0..n-1 of
// n, in order, with distinct deep-storage files.
func checkNumbering(t *testing.T, b built) {
	t.Helper()
	count := map[string]int32{}
	seen := map[string]bool{}
	for _, s := range b.segs {
		iv := s.Interval.String()
		if s.ShardSpec.PartitionNum != count[iv] {
			t.Errorf("segment %s: partition %d, want %d", s.ID(), s.ShardSpec.PartitionNum, count[iv])
		}
		count[iv]++
		if seen[string(s.LoadSpec)] {
			t.Errorf("segment %s: loadSpec %s used twice", s.ID(), s.LoadSpec)
		}
		seen[string(s.LoadSpec)] = true
	}
	for _, s := range b.segs {
		if n := count[s.Interval.String()]; s.ShardSpec.CorePartitions != n {
			t.Errorf("segment %s: core partitions %d, want %d", s.ID(), s.ShardSpec.CorePartitions, n)
		}
	}
}

func TestParseMaxNumConcurrentSubTasks(t *testing.T) {
	dir := t.TempDir()
	s, err := ParseSpec(parallelTask(dir, 3, 10, 0))
	if err != nil || s.MaxConcurrency != 3 {
		t.Fatalf("MaxConcurrency = %v, err %v; want 3", s, err)
	}
	for _, bad := range []string{`0`, `-2`} {
		p := strings.Replace(string(parallelTask(dir, 3, 10, 0)), `"maxNumConcurrentSubTasks":3`, `"maxNumConcurrentSubTasks":`+bad, 1)
		if _, err := ParseSpec([]byte(p)); err == nil || !strings.Contains(err.Error(), "maxNumConcurrentSubTasks must be > 0") {
			t.Errorf("maxNumConcurrentSubTasks %s: err = %v", bad, err)
		}
	}
	p := strings.Replace(string(parallelTask(dir, 3, 10, 0)), `"maxNumConcurrentSubTasks":3`, `"maxNumConcurrentSubTasks":"many"`, 1)
	if _, err := ParseSpec([]byte(p)); err == nil || !strings.Contains(err.Error(), "maxNumConcurrentSubTasks") {
		t.Errorf("non-integer maxNumConcurrentSubTasks: err = %v", err)
	}
	// Default 1; index tasks have no such setting and stay sequential.
	p = strings.Replace(string(parallelTask(dir, 3, 10, 0)), `"maxNumConcurrentSubTasks":3,`, ``, 1)
	if s, err := ParseSpec([]byte(p)); err != nil || s.MaxConcurrency != 1 {
		t.Errorf("default: %v, err %v; want 1", s, err)
	}
	if s, err := ParseSpec(inlineTask(animals, `{"dataSource":"a","timestampSpec":{}}`, `{"type":"index","maxNumConcurrentSubTasks":4}`)); err != nil || s.MaxConcurrency != 1 {
		t.Errorf("index task: %v, err %v; want 1", s, err)
	}
}

func TestParallelBuildMatchesSequential(t *testing.T) {
	// Uneven files, several partitions per worker and chunk, some bad rows.
	dir := writeFiles(t, []int{900, 50, 1300, 10, 400, 700, 1, 250}, 97)
	seq := build(t, parallelTask(dir, 1, 300, 1000))
	for _, workers := range []int{2, 4, 16} {
		par := build(t, parallelTask(dir, workers, 300, 1000))
		if par.stats != seq.stats {
			t.Errorf("%d workers: stats %+v, sequential %+v", workers, par.stats, seq.stats)
		}
		checkNumbering(t, par)
		want, got := rolledUp(seq.rows(t)), rolledUp(par.rows(t))
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d distinct rows, sequential %d", workers, len(got), len(want))
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%d workers: row %s = %v, sequential %v", workers, k, got[k], w)
			}
		}
	}
	checkNumbering(t, seq)
	if seq.stats.Unparseable == 0 || seq.stats.ThrownAway == 0 || seq.stats.Processed == 0 {
		t.Errorf("test data exercise too little: %+v", seq.stats)
	}
}

func TestParallelSingleSplitIsSequential(t *testing.T) {
	// One split leaves one worker: the output is the sequential one exactly.
	dir := writeFiles(t, []int{500}, 0)
	a, b := build(t, parallelTask(dir, 1, 100, 0)), build(t, parallelTask(dir, 8, 100, 0))
	if len(a.segs) != len(b.segs) || a.stats != b.stats {
		t.Fatalf("segments %d vs %d, stats %+v vs %+v", len(a.segs), len(b.segs), a.stats, b.stats)
	}
	for i := range a.segs {
		if a.segs[i].ID() != b.segs[i].ID() || a.segs[i].Size != b.segs[i].Size {
			t.Errorf("segment %d: %s (%d bytes) vs %s (%d bytes)", i, a.segs[i].ID(), a.segs[i].Size, b.segs[i].ID(), b.segs[i].Size)
		}
	}
}

func TestParallelParseExceptionLimit(t *testing.T) {
	// 6 files × 40 rows, every 10th bad: 24 unparseable rows in all.
	dir := writeFiles(t, []int{40, 40, 40, 40, 40, 40}, 10)
	run := func(maxParse int64) (RowStats, []string, error) {
		s, err := ParseSpec(parallelTask(dir, 3, 1000, maxParse))
		if err != nil {
			t.Fatal(err)
		}
		store, err := deep.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string // appended without a lock: Build serializes the hook
		_, stats, err := Build(t.Context(), s, BuildOptions{Version: "v", TempDir: filepath.Join(t.TempDir(), "b"),
			Uploader: ingest.DeepUploader{Storage: store}, Logf: t.Logf,
			OnParseError: func(msg string) { msgs = append(msgs, msg) }})
		return stats, msgs, err
	}
	stats, msgs, err := run(24)
	if err != nil || stats.Unparseable != 24 || len(msgs) != 24 {
		t.Fatalf("limit 24: err %v, stats %+v, %d messages", err, stats, len(msgs))
	}
	// One over the limit in total, though no worker alone exceeds it.
	stats, msgs, err = run(23)
	var pe *ParseExceptionsError
	if !errors.As(err, &pe) || pe.Max != 23 {
		t.Fatalf("limit 23: err = %v", err)
	}
	if stats.Unparseable < 24 || int64(len(msgs)) != stats.Unparseable {
		t.Fatalf("limit 23: stats %+v, %d messages", stats, len(msgs))
	}
	if pe.Last != msgs[23] {
		t.Errorf("limit 23: failed on %q, want the 24th exception %q", pe.Last, msgs[23])
	}
}

func TestParallelBuildStopsOnError(t *testing.T) {
	dir := writeFiles(t, []int{3000, 3000, 3000, 3000}, 0)
	// A file that cannot be opened (not gzip despite its name) fails the job
	// with its own error, not the cancellation the other workers see.
	if err := os.WriteFile(filepath.Join(dir, "part_9.json.gz"), []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ParseSpec([]byte(strings.Replace(string(parallelTask(dir, 3, 1000, 0)), `"part_*.json"`, `"part_*"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "b")
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	up := ingest.DeepUploader{Storage: store}
	segs, _, err := Build(t.Context(), s, BuildOptions{Version: "v", TempDir: tmp, Uploader: up})
	if err == nil || !strings.Contains(err.Error(), "part_9.json.gz") || errors.Is(err, context.Canceled) || segs != nil {
		t.Fatalf("err = %v, %d segments", err, len(segs))
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp dir left behind: %v", err)
	}

	// Cancelling the job, before or while the workers read, stops them all
	// and leaves nothing behind.
	for _, during := range []bool{false, true} {
		s, err := ParseSpec(parallelTask(writeFiles(t, []int{3000, 3000, 3000, 3000}, 500), 3, 1000, 1<<30))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		opts := BuildOptions{Version: "v", TempDir: tmp, Uploader: up}
		if during {
			opts.OnParseError = func(string) { cancel() } // row 500 of some file
		} else {
			opts.Logf = func(string, ...any) { cancel() } // before any split is read
		}
		segs, _, err := Build(ctx, s, opts)
		cancel()
		if !errors.Is(err, context.Canceled) || segs != nil {
			t.Fatalf("cancelled (during %v): err = %v, %d segments", during, err, len(segs))
		}
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("temp dir left behind after cancel: %v", err)
		}
	}
}
