package nativebatch

import (
	"fmt"
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
