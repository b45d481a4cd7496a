package msq

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// inlineExtern is an EXTERN over inline JSON lines with the given signature.
func inlineExtern(data, sig string) string {
	src, _ := json.Marshal(map[string]any{"type": "inline", "data": data})
	return `TABLE(EXTERN(` + sqlString(string(src)) + `, '{"type":"json"}', ` + sqlString(sig) + `))`
}

const tsSig = `[{"name":"ts","type":"string"},{"name":"v","type":"long"}]`

func TestFaultCodes(t *testing.T) {
	env := newEnv(t)
	data := `{"ts":"2024-01-01T01:00:00Z","v":1}` + "\n" + `{"ts":"2024-01-02T01:00:00Z","v":2}`
	ext := inlineExtern(data, tsSig)
	cases := []struct {
		name, sql string
		ctx       map[string]any
		code      string
	}{
		{"time null", `INSERT INTO t SELECT TIME_PARSE('nope') AS __time, v FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeInsertTimeNull},
		{"out of bounds", `REPLACE INTO t OVERWRITE WHERE __time >= TIMESTAMP '2024-01-01' AND __time < TIMESTAMP '2024-01-02'
			SELECT TIME_PARSE(ts) AS __time, v FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeInsertTimeOutOfBounds},
		{"empty", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, v FROM ` + ext + ` WHERE v > 10 PARTITIONED BY DAY`,
			map[string]any{"failOnEmptyInsert": true}, CodeInsertCannotBeEmpty},
		{"restricted", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, v AS __bucket FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeColumnNameRestricted},
		{"restricted extern", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time FROM ` +
			inlineExtern(data, `[{"name":"ts","type":"string"},{"name":"__boost","type":"long"}]`) + ` PARTITIONED BY DAY`, nil, CodeColumnNameRestricted},
		{"join", `SELECT * FROM ` + ext + ` a JOIN ` + ext + ` b ON a.v = b.v`, nil, CodeQueryNotSupported},
		{"union distinct", `SELECT v FROM ` + ext + ` UNION SELECT v FROM ` + ext, nil, CodeQueryNotSupported},
		{"window", `SELECT v, SUM(v) OVER (PARTITION BY ts) FROM ` + ext, nil, CodeQueryNotSupported},
		{"histogram quantile", `SELECT APPROX_QUANTILE(v, 0.5) FROM ` + ext, nil, CodeQueryNotSupported},
		{"unknown column", `SELECT nope FROM ` + ext, nil, CodeDruidException},
		{"syntax", `SELEC 1`, nil, CodeDruidException},
		{"time type", `INSERT INTO t SELECT v AS __time FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeDruidException},
		{"no time", `INSERT INTO t SELECT v FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeDruidException},
		{"order by", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, v FROM ` + ext + ` ORDER BY v PARTITIONED BY DAY`, nil, CodeDruidException},
		{"limit", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, v FROM ` + ext + ` LIMIT 1 PARTITIONED BY DAY`, nil, CodeDruidException},
		{"misaligned", `REPLACE INTO t OVERWRITE WHERE __time >= TIMESTAMP '2024-01-01 05:00:00' AND __time < TIMESTAMP '2024-01-02'
			SELECT TIME_PARSE(ts) AS __time, v FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeDruidException},
		{"not grouped", `SELECT ts, SUM(v) FROM ` + ext + ` GROUP BY v`, nil, CodeDruidException},
		{"duplicate", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, v, v FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeDruidException},
		{"bad source", `SELECT * FROM TABLE(EXTERN('{"type":"s3","uris":["s3://b/k"]}', '{"type":"json"}', '[{"name":"a","type":"string"}]'))`, nil, CodeDruidException},
		{"numeric array", `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, ARRAY[v, v] AS a FROM ` + ext + ` PARTITIONED BY DAY`, nil, CodeColumnTypeNotSupported},
		{"bad context", `SELECT 1`, map[string]any{"maxNumTasks": 1}, CodeDruidException},
		// Read in UTC, it would answer otherwise than interactive SQL does.
		{"time zone", `SELECT TIME_FLOOR(TIMESTAMP '2024-01-01 02:00:00', 'P1D') AS d`, map[string]any{"sqlTimeZone": "America/Los_Angeles"}, CodeQueryNotSupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, f := faultCode(t, env, c.sql, c.ctx)
			if code != c.code {
				t.Fatalf("code %s (%v), want %s", code, f, c.code)
			}
		})
	}
	if n := len(env.Segments("t")); n != 0 {
		t.Fatalf("failed queries published %d segments", n)
	}
	// Validate reports planning errors up front.
	if _, err := Validate(context.Background(), Request{SQL: `SELECT nope FROM ` + ext}, env); err == nil || !err.(*Fault).Validation {
		t.Fatalf("Validate: %v", err)
	}
	info, err := Validate(context.Background(), Request{SQL: `SET x = 1; REPLACE INTO t OVERWRITE ALL SELECT TIME_PARSE(ts) AS __time FROM ` + ext + ` PARTITIONED BY DAY`}, env)
	if err != nil || info.Kind != "REPLACE" || info.DataSource != "t" || info.Context["x"] != 1.0 {
		t.Fatalf("Validate: %+v %v", info, err)
	}
}

func TestTooManyColumns(t *testing.T) {
	env := newEnv(t)
	var cols []string
	for i := 0; i <= maxColumns; i++ {
		cols = append(cols, fmt.Sprintf("%d AS c%d", i, i))
	}
	code, f := faultCode(t, env, `SELECT `+strings.Join(cols, ", "), nil)
	if code != CodeTooManyColumns || f.Fields["numColumns"] != maxColumns+1 {
		t.Fatalf("%s %v", code, f)
	}
}

func TestParseExceptions(t *testing.T) {
	env := newEnv(t)
	data := `{"ts":"2024-01-01T01:00:00Z","v":1}` + "\n" + `{"ts":` + "\n" + `{"ts":"2024-01-01T02:00:00Z","v":"x"}` + "\n" + `{"ts":"2024-01-01T03:00:00Z","v":3}`
	q := `INSERT INTO p SELECT TIME_PARSE(ts) AS __time, v FROM ` + inlineExtern(data, tsSig) + ` PARTITIONED BY DAY`
	code, f := faultCode(t, env, q, nil)
	if code != CodeCannotParseExternalData || !strings.Contains(f.Message, "Record") {
		t.Fatalf("%s %v", code, f)
	}
	code, f = faultCode(t, env, q, map[string]any{"maxParseExceptions": 1})
	if code != CodeTooManyWarnings || f.Fields["rootErrorCode"] != CodeCannotParseExternalData || f.Fields["maxWarnings"] != int64(1) {
		t.Fatalf("%s %v", code, f)
	}
	r := run(t, env, q, map[string]any{"maxParseExceptions": 2})
	st := r.MultiStageQuery.Payload.Status
	if len(st.Warnings) != 2 || st.Warnings[0].Error["errorCode"] != CodeCannotParseExternalData {
		t.Fatalf("warnings %+v", st.Warnings)
	}
	w := r.MultiStageQuery.Payload.Counters["0"]["0"]["warnings"].(map[string]any)
	if w[CodeCannotParseExternalData] != int64(2) {
		t.Fatalf("warning counters %v", w)
	}
	if n := len(storedRows(t, env, "p")); n != 2 {
		t.Fatalf("%d rows stored, want 2", n)
	}
	// Unlimited.
	run(t, env, q, map[string]any{"maxParseExceptions": -1})
}

func TestInsertCannotAllocateMixedGranularity(t *testing.T) {
	env := newEnv(t)
	ext := inlineExtern(`{"ts":"2024-01-01T01:00:00Z","v":1}`, tsSig)
	run(t, env, `INSERT INTO m SELECT TIME_PARSE(ts) AS __time, v FROM `+ext+` PARTITIONED BY DAY`, nil)
	code, f := faultCode(t, env, `INSERT INTO m SELECT TIME_PARSE(ts) AS __time, v FROM `+ext+` PARTITIONED BY HOUR`, nil)
	if code != CodeInsertCannotAllocate || f.Fields["dataSource"] != "m" {
		t.Fatalf("%s %v", code, f)
	}
	// REPLACE may lay a finer granularity over existing data.
	run(t, env, `REPLACE INTO m OVERWRITE WHERE __time >= TIMESTAMP '2024-01-01 01:00:00' AND __time < TIMESTAMP '2024-01-01 02:00:00'
		SELECT TIME_PARSE(ts) AS __time, v + 1 AS v FROM `+ext+` PARTITIONED BY HOUR`, nil)
	expectJSON(t, "after hour replace", storedRows(t, env, "m"), fmt.Sprintf(`[{"__time":%d,"v":2}]`, ms("2024-01-01T01:00:00Z")), true)
}

func TestCancel(t *testing.T) {
	env := newEnv(t)
	ext := inlineExtern(`{"ts":"2024-01-01T01:00:00Z","v":1}`, tsSig)
	ctx, cancel0 := context.WithCancelCause(context.Background())
	cancel := func() { cancel0(CancelReason("User request")) }
	var phases []string
	r, err := Run(ctx, Request{SQL: `INSERT INTO c SELECT TIME_PARSE(ts) AS __time, v FROM ` + ext + ` PARTITIONED BY DAY`,
		TaskID: "query-cancel", Version: nextVersion(), TempDir: t.TempDir()}, env, func(r Report) {
		for _, st := range r.MultiStageQuery.Payload.Stages {
			if st.Phase == PhaseReadingInput {
				cancel()
			}
			phases = append(phases, st.Phase)
		}
	})
	f, ok := err.(*Fault)
	if !ok || f.Code != CodeCanceled || r.Fault()["reason"] != "User request" {
		t.Fatalf("err %v report %v", err, r.Fault())
	}
	if len(env.Segments("c")) != 0 || len(env.Publishes()) != 0 {
		t.Fatal("a canceled query published segments")
	}
	if len(phases) == 0 {
		t.Fatal("no progress reports")
	}

	// The timeout context parameter cancels with reason "Query timeout".
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-block:
		}
	}))
	defer srv.Close()
	defer close(block)
	src, _ := json.Marshal(map[string]any{"type": "http", "uris": []string{srv.URL + "/slow.json"}})
	start := time.Now()
	_, err = runQ(t, env, `INSERT INTO c SELECT TIME_PARSE(ts) AS __time FROM TABLE(EXTERN(`+sqlString(string(src))+
		`, '{"type":"json"}', '[{"name":"ts","type":"string"}]')) PARTITIONED BY DAY`, map[string]any{"timeout": 100})
	f, ok = err.(*Fault)
	if !ok || f.Code != CodeCanceled || f.Fields["reason"] != "Query timeout" || time.Since(start) > 10*time.Second {
		t.Fatalf("timeout: %v", err)
	}
	if len(env.Segments("c")) != 0 {
		t.Fatal("a timed out query published segments")
	}
}
