package nativebatch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata/ingest"
	"strata/storage/deep"
)

// BenchmarkBuild ingests 20k JSON rows with a transform, a filter and rollup.
func BenchmarkBuild(b *testing.B) {
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, `{"timestamp":"2020-01-01T%02d:%02d:%02dZ","page":"p%d","user":"u%d","added":%d,"deleted":%d}`+"\n",
			i/3600%24, i/60%60, i%60, i%100, i%37, i, i%7)
	}
	payload := inlineTask(sb.String(), `{"dataSource":"bench","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":["page","user","tag"]},
		"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"added","fieldName":"added"},
			{"type":"doubleSum","name":"deleted","fieldName":"deleted"},{"type":"stringLast","name":"last_user","fieldName":"user"}],
		"granularitySpec":{"segmentGranularity":"day","queryGranularity":"minute"},
		"transformSpec":{"transforms":[{"type":"expression","name":"tag","expression":"concat(page, '-', user)"}],
			"filter":{"type":"not","field":{"type":"selector","dimension":"page","value":"p0"}}}}`, "")
	s, err := ParseSpec(payload)
	if err != nil {
		b.Fatal(err)
	}
	store, err := deep.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		if _, _, err := Build(b.Context(), s, BuildOptions{Version: "v", TempDir: b.TempDir(), Uploader: ingest.DeepUploader{Storage: store}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildParallel ingests 8 local files of 20k rows (the spec of
// parallelTask: a transform, a filter, hourly rollup) sequentially and with
// 2 and 4 workers (maxNumConcurrentSubTasks).
func BenchmarkBuildParallel(b *testing.B) {
	sizes := make([]int, 8)
	for i := range sizes {
		sizes[i] = 20000
	}
	dir := writeFiles(b, sizes, 0)
	var bytes int64
	for i := range sizes {
		st, err := os.Stat(filepath.Join(dir, fmt.Sprintf("part_%d.json", i)))
		if err != nil {
			b.Fatal(err)
		}
		bytes += st.Size()
	}
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s, err := ParseSpec(parallelTask(dir, workers, 5_000_000, 0))
			if err != nil {
				b.Fatal(err)
			}
			store, err := deep.NewLocal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(bytes)
			for b.Loop() {
				if _, _, err := Build(b.Context(), s, BuildOptions{Version: "v", TempDir: b.TempDir(), Uploader: ingest.DeepUploader{Storage: store}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
