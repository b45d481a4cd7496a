package msq

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"strata/ingest/msq/msqtest"
)

// benchFile returns an NDJSON file of the shared benchmark data set: the file
// named by STRATA_BENCH_FILE, or rows rows made by ../shared/bench/gen.
func benchFile(b *testing.B, rows int) (string, int) {
	b.Helper()
	if f := os.Getenv("STRATA_BENCH_FILE"); f != "" {
		n := 0
		if s := os.Getenv("STRATA_BENCH_ROWS"); s != "" {
			n, _ = strconv.Atoi(s)
		}
		return f, n
	}
	gen := filepath.Join("..", "..", "shared", "bench", "gen")
	if _, err := os.Stat(filepath.Join(gen, "main.go")); err != nil {
		b.Skipf("benchmark generator not found at %s (set STRATA_BENCH_FILE)", gen)
	}
	out := filepath.Join(b.TempDir(), "bench.json")
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("go", "run", ".", "-rows", strconv.Itoa(rows))
	cmd.Dir = gen
	cmd.Stdout = f
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Skipf("cannot run the benchmark generator: %v", err)
	}
	f.Close()
	return out, rows
}

// BenchmarkInsertNDJSON ingests the benchmark data set (no rollup, DAY
// segments) from a local NDJSON file and reports rows per second.
func BenchmarkInsertNDJSON(b *testing.B) {
	file, rows := benchFile(b, 200_000)
	src, _ := json.Marshal(map[string]any{"type": "local", "files": []string{file}})
	sig := `[{"name":"timestamp","type":"string"},{"name":"channel","type":"string"},{"name":"page","type":"string"},` +
		`{"name":"user","type":"string"},{"name":"country","type":"string"},{"name":"city","type":"string"},` +
		`{"name":"namespace","type":"string"},{"name":"isRobot","type":"string"},{"name":"isNew","type":"string"},` +
		`{"name":"added","type":"long"},{"name":"deleted","type":"long"},{"name":"delta","type":"long"},` +
		`{"name":"commentLength","type":"long"},{"name":"price","type":"double"}]`
	q := `REPLACE INTO wiki OVERWRITE ALL
SELECT TIME_PARSE("timestamp") AS __time, channel, page, "user", country, city, namespace, isRobot, isNew,
  added, deleted, delta, commentLength, price
FROM TABLE(EXTERN(` + sqlString(string(src)) + `, '{"type":"json"}', ` + sqlString(sig) + `))
PARTITIONED BY DAY`
	env := msqtest.New(b.TempDir())
	tmp := b.TempDir()
	b.ResetTimer()
	var total time.Duration
	var ingested int64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := Run(context.Background(), Request{SQL: q, Context: map[string]any{"maxNumTasks": 2},
			TaskID: fmt.Sprintf("query-bench%d", i), Version: fmt.Sprintf("2030-01-01T00:00:00.%03dZ", i%1000), TempDir: tmp}, env, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		for _, st := range r.MultiStageQuery.Payload.Stages {
			if st.Duration != nil {
				b.Logf("stage %d: %d ms", st.StageNumber, *st.Duration)
			}
		}
		g := r.MultiStageQuery.Payload.Counters
		for _, w := range g[strconv.Itoa(len(r.MultiStageQuery.Payload.Stages)-1)] {
			ingested += w["segmentGenerationProgress"].(map[string]any)["rowsPushed"].(int64)
		}
	}
	if rows > 0 && ingested != int64(rows)*int64(b.N) {
		b.Fatalf("ingested %d rows, want %d", ingested, int64(rows)*int64(b.N))
	}
	b.ReportMetric(float64(ingested)/total.Seconds(), "rows/s")
}
