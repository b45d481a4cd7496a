package msq

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata/ingest/msq/msqtest"
	"strata/segmeta"
)

const animals = `{"ts":"2024-01-01T01:00:00Z","animal":"lion","n":3,"w":1.5,"tags":["a","b"]}
{"ts":"2024-01-01T02:00:00Z","animal":"tiger","n":5,"w":2.25,"tags":"c"}
{"ts":"2024-01-02T03:00:00Z","animal":"lion","n":7,"w":null}
{"ts":"2024-01-02T04:00:00Z","animal":"bear","w":4.0}`

const animalSig = `[{"name":"ts","type":"string"},{"name":"animal","type":"string"},{"name":"n","type":"long"},{"name":"w","type":"double"},{"name":"tags","type":"string"}]`

func animalsTable(t *testing.T) string { return inlineExtern(animals, animalSig) }

func TestSelectFeatures(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	cases := []struct{ sql, want string }{
		{`SELECT animal, n FROM ` + ext + ` WHERE n > 3 ORDER BY n DESC`, `[{"animal":"lion","n":7},{"animal":"tiger","n":5}]`},
		{`SELECT animal, COUNT(*) AS c, SUM(n) AS s, MIN(w) AS mn, MAX(n) AS mx, AVG(n) AS av FROM ` + ext + ` GROUP BY 1 ORDER BY animal`,
			`[{"animal":"bear","av":null,"c":1,"mn":4.0,"mx":null,"s":null},{"animal":"lion","av":5.0,"c":2,"mn":1.5,"mx":7,"s":10},{"animal":"tiger","av":5.0,"c":1,"mn":2.25,"mx":5,"s":5}]`},
		{`SELECT COUNT(*) AS c, SUM(n) AS s FROM ` + ext + ` WHERE animal = 'none'`, `[{"c":0,"s":null}]`},
		{`SELECT COUNT(DISTINCT animal) AS d, COUNT(n) AS cn, COUNT(*) FILTER (WHERE n > 4) AS big FROM ` + ext, `[{"big":2,"cn":3,"d":3}]`},
		{`SELECT animal FROM ` + ext + ` GROUP BY animal HAVING COUNT(*) > 1`, `[{"animal":"lion"}]`},
		{`SELECT DISTINCT animal FROM ` + ext + ` ORDER BY 1 LIMIT 2 OFFSET 1`, `[{"animal":"lion"},{"animal":"tiger"}]`},
		{`SELECT a, b FROM (SELECT animal AS a, n * 2 AS b FROM ` + ext + ` WHERE n IS NOT NULL) WHERE b BETWEEN 6 AND 10 ORDER BY b`,
			`[{"a":"lion","b":6},{"a":"tiger","b":10}]`},
		{`WITH x AS (SELECT animal, n FROM ` + ext + `), y AS (SELECT animal, SUM(n) AS s FROM x GROUP BY animal)
			SELECT animal, s FROM y WHERE s > 4 ORDER BY s`, `[{"animal":"tiger","s":5},{"animal":"lion","s":10}]`},
		{`SELECT animal FROM ` + ext + ` WHERE animal LIKE 'ti%' UNION ALL SELECT 'x' || animal FROM ` + ext + ` WHERE animal IN ('bear', 'cat')`,
			`[{"animal":"tiger"},{"animal":"xbear"}]`},
		{`SELECT CASE WHEN n > 4 THEN 'big' WHEN n IS NULL THEN 'none' ELSE 'small' END AS k, COALESCE(n, -1) AS c, UPPER(animal) AS u FROM ` + ext + ` ORDER BY c`,
			`[{"c":-1,"k":"none","u":"BEAR"},{"c":3,"k":"small","u":"LION"},{"c":5,"k":"big","u":"TIGER"},{"c":7,"k":"big","u":"LION"}]`},
		{`SELECT TIME_FORMAT(TIME_FLOOR(TIME_PARSE(ts), 'P1D'), 'yyyy-MM-dd') AS d, FLOOR(TIME_PARSE(ts) TO DAY) AS f, EARLIEST_BY(animal, TIME_PARSE(ts)) AS e, LATEST_BY(animal, TIME_PARSE(ts)) AS l FROM ` + ext + ` GROUP BY 1, 2 ORDER BY 1`,
			fmt.Sprintf(`[{"d":"2024-01-01","e":"lion","f":%d,"l":"tiger"},{"d":"2024-01-02","e":"lion","f":%d,"l":"bear"}]`, ms("2024-01-01T00:00:00Z"), ms("2024-01-02T00:00:00Z"))},
		{`SELECT tags, CAST(n AS VARCHAR) AS s, CAST('12' AS BIGINT) + 1 AS i, w * 2 AS w2 FROM ` + ext + ` WHERE animal = 'lion' ORDER BY s`,
			`[{"i":13,"s":"3","tags":["a","b"],"w2":3.0},{"i":13,"s":"7","tags":null,"w2":null}]`},
		{`SELECT 1 + 1 AS two, 'a' AS s, 2.5 AS d`, `[{"d":2.5,"s":"a","two":2}]`},
		{`SELECT TIME_PARSE(ts) AS t FROM ` + ext + ` WHERE TIME_PARSE(ts) >= '2024-01-02 03:00:00' ORDER BY t LIMIT 1`,
			fmt.Sprintf(`[{"t":%d}]`, ms("2024-01-02T03:00:00Z"))},
		{`SELECT APPROX_COUNT_DISTINCT_DS_HLL(animal) AS h, APPROX_COUNT_DISTINCT_DS_THETA(animal) AS th FROM ` + ext, `[{"h":3,"th":3}]`},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("case %d", i), func(t *testing.T) {
			if got := one(t, env, c.sql); got != c.want {
				t.Errorf("%s\ngot  %s\nwant %s", c.sql, got, c.want)
			}
		})
	}
}

func TestSelectResultsReport(t *testing.T) {
	env := newEnv(t)
	var lines []string
	for i := 0; i < maxResultRows+10; i++ {
		lines = append(lines, fmt.Sprintf(`{"ts":"2024-01-01T00:00:00Z","v":%d}`, i))
	}
	r := run(t, env, `SELECT TIME_PARSE(ts) AS __time, v, v * 1.5 AS d FROM `+inlineExtern(strings.Join(lines, "\n"), tsSig), nil)
	res := r.MultiStageQuery.Payload.Results
	if !res.ResultsTruncated || len(res.Results) != maxResultRows {
		t.Fatalf("truncated=%v rows=%d", res.ResultsTruncated, len(res.Results))
	}
	if strings.Join(res.SQLTypeNames, ",") != "TIMESTAMP,BIGINT,DOUBLE" {
		t.Fatalf("sqlTypeNames %v", res.SQLTypeNames)
	}
	b, _ := json.Marshal(res.Signature)
	if string(b) != `[{"name":"__time","type":"LONG"},{"name":"v","type":"LONG"},{"name":"d","type":"DOUBLE"}]` {
		t.Fatalf("signature %s", b)
	}
	b, _ = json.Marshal(res.Results[2])
	if string(b) != `[1704067200000,2,3.0]` {
		t.Fatalf("row %s", b)
	}
	// The report as a whole.
	st := r.MultiStageQuery.Payload
	if st.Status.Status != StateSuccess || len(st.Stages) == 0 || st.Stages[0].Phase != PhaseFinished || st.Stages[0].Duration == nil {
		t.Fatalf("status %+v stages %+v", st.Status, st.Stages)
	}
	in := st.Counters["0"]["0"]["input0"].(map[string]any)
	if in["rows"].([]int64)[0] != int64(maxResultRows+10) || in["files"].([]int64)[0] != 1 {
		t.Fatalf("input counters %v", in)
	}
}

func TestRollupAndFinalize(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	q := func(ds string) string {
		return `INSERT INTO ` + ds + ` SELECT FLOOR(TIME_PARSE(ts) TO DAY) AS __time, animal, COUNT(*) AS cnt, SUM(n) AS sn,
			APPROX_COUNT_DISTINCT_DS_HLL(animal) AS h, LATEST(n) AS ln
			FROM (SELECT TIME_PARSE(ts) AS __time, * FROM ` + ext + `) GROUP BY 1, 2 PARTITIONED BY DAY`
	}
	// Rolled up: metrics keep intermediate values.
	run(t, env, q("r"), map[string]any{"finalizeAggregations": false})
	segs := env.Segments("r")
	if strings.Join(segs[0].Metrics, ",") != "cnt,sn,h,ln" || strings.Join(segs[0].Dimensions, ",") != "animal" {
		t.Fatalf("rollup columns: dims %v metrics %v", segs[0].Dimensions, segs[0].Metrics)
	}
	expectJSON(t, "rollup", storedRows(t, env, "r"), fmt.Sprintf(`[
		{"__time":%[1]d,"animal":"lion","cnt":1,"sn":3,"h":"hll:1","ln":"%[1]d|3"},
		{"__time":%[1]d,"animal":"tiger","cnt":1,"sn":5,"h":"hll:1","ln":"%[1]d|5"},
		{"__time":%[2]d,"animal":"bear","cnt":1,"sn":null,"h":"hll:1","ln":"%[2]d|null"},
		{"__time":%[2]d,"animal":"lion","cnt":1,"sn":7,"h":"hll:1","ln":"%[2]d|7"}]`, ms("2024-01-01T00:00:00Z"), ms("2024-01-02T00:00:00Z")), true)
	// Finalized (default): every column is a dimension holding the final value.
	run(t, env, q("f"), nil)
	segs = env.Segments("f")
	if len(segs[0].Metrics) != 0 || strings.Join(segs[0].Dimensions, ",") != "animal,cnt,sn,h,ln" {
		t.Fatalf("finalized columns: dims %v metrics %v", segs[0].Dimensions, segs[0].Metrics)
	}
	wantOne(t, env, `SELECT SUM(cnt) AS c, SUM(h) AS h, SUM(ln) AS ln FROM f`, `[{"c":4,"h":4,"ln":15}]`)
}

func TestClusteredByAndRangeShards(t *testing.T) {
	env := newEnv(t)
	var lines []string
	for i := 0; i < 9; i++ {
		lines = append(lines, fmt.Sprintf(`{"ts":"2024-01-01T%02d:00:00Z","k":"k%d","v":%d}`, i, i%3, i))
	}
	ext := inlineExtern(strings.Join(lines, "\n"), `[{"name":"ts","type":"string"},{"name":"k","type":"string"},{"name":"v","type":"long"}]`)
	r := run(t, env, `REPLACE INTO c OVERWRITE ALL SELECT TIME_PARSE(ts) AS __time, v, k FROM `+ext+` PARTITIONED BY DAY CLUSTERED BY k`,
		map[string]any{"rowsPerSegment": 2})
	if r.MultiStageQuery.Payload.Status.SegmentReport.ShardSpec != "DimensionRangeShardSpec" {
		t.Fatalf("segment report %+v", r.MultiStageQuery.Payload.Status.SegmentReport)
	}
	segs := env.Segments("c")
	if len(segs) != 3 {
		t.Fatalf("%d segments, want 3 (one per key, as equal keys stay together)", len(segs))
	}
	var got []string
	for _, s := range segs {
		b, _ := json.Marshal(s.ShardSpec)
		got = append(got, string(b))
		if strings.Join(s.Dimensions, ",") != "k,v" {
			t.Fatalf("dimensions %v: CLUSTERED BY columns come first", s.Dimensions)
		}
	}
	want := []string{
		`{"type":"range","dimensions":["k"],"start":null,"end":["k1"],"partitionNum":0,"numCorePartitions":3}`,
		`{"type":"range","dimensions":["k"],"start":["k1"],"end":["k2"],"partitionNum":1,"numCorePartitions":3}`,
		`{"type":"range","dimensions":["k"],"start":["k2"],"end":null,"partitionNum":2,"numCorePartitions":3}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("shard specs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rows := storedRows(t, env, "c")
	if len(rows) != 9 || rows[0]["k"] != "k0" || rows[0]["v"] != int64(0) || rows[1]["v"] != int64(3) {
		t.Fatalf("rows %v", rows)
	}
	// INSERT with CLUSTERED BY sorts the same way but writes numbered shards.
	r = run(t, env, `INSERT INTO n SELECT TIME_PARSE(ts) AS __time, v, k FROM `+ext+` PARTITIONED BY DAY CLUSTERED BY 3`, map[string]any{"rowsPerSegment": 4})
	segs = env.Segments("n")
	if len(segs) != 3 || segs[0].ShardSpec.Type != segmeta.ShardNumbered || segs[0].ShardSpec.CorePartitions != 3 {
		t.Fatalf("INSERT segments %v", segs)
	}
}

func TestInputFunctionsAndFormats(t *testing.T) {
	env := newEnv(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	os.WriteFile(csv, []byte("ts,name,qty\n2024-03-01T00:00:00Z,x,1\n2024-03-01T01:00:00Z,y,2\n"), 0o644)
	tsv := filepath.Join(dir, "b.tsv")
	os.WriteFile(tsv, []byte("2024-03-02T00:00:00Z\tz\t3\n"), 0o644)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"ts":"2024-03-03T00:00:00Z","name":"h","qty":4}`))
	}))
	defer srv.Close()
	q := `INSERT INTO f
SELECT TIME_PARSE(ts) AS __time, name, qty FROM TABLE(localfiles(files => ARRAY['` + csv + `'], format => 'csv', findColumnsFromHeader => true)) (ts VARCHAR, name VARCHAR, qty BIGINT)
UNION ALL
SELECT TIME_PARSE(ts) AS __time, name, qty FROM TABLE(EXTERN('{"type":"local","baseDir":"` + dir + `","filter":"*.tsv"}', '{"type":"tsv","columns":["ts","name","qty"]}')) EXTEND (ts VARCHAR, name VARCHAR, qty BIGINT)
UNION ALL
SELECT TIME_PARSE(ts) AS __time, name, qty FROM TABLE(http(uris => ARRAY['` + srv.URL + `/x.json'], format => 'json')) (ts VARCHAR, name VARCHAR, qty BIGINT)
UNION ALL
SELECT TIME_PARSE(ts) AS __time, name, qty FROM TABLE(inline(data => ARRAY['2024-03-04T00:00:00Z,i,5'], format => 'csv', columns => ARRAY['ts','name','qty'])) (ts VARCHAR, name VARCHAR, qty BIGINT)
PARTITIONED BY MONTH`
	run(t, env, q, map[string]any{"maxNumTasks": 3})
	wantOne(t, env, `SELECT COUNT(*) AS c, SUM(qty) AS s, STRING_FORMAT('%s', MIN(name)) AS mn FROM f`, `[{"c":5,"mn":"h","s":15}]`)
	segs := env.Segments("f")
	if len(segs) != 1 || segs[0].Interval.String() != "2024-03-01T00:00:00.000Z/2024-04-01T00:00:00.000Z" {
		t.Fatalf("segments %v", segs)
	}
}

func TestParametersAndSet(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	r, err := Run(context.Background(), Request{
		SQL:        `SET maxNumTasks = 3; SELECT animal FROM ` + ext + ` WHERE n > ? AND animal <> ? ORDER BY animal`,
		Parameters: []Parameter{{Type: "BIGINT", Value: float64(2)}, {Type: "VARCHAR", Value: "tiger"}},
		TaskID:     "query-p", Version: nextVersion(), TempDir: t.TempDir()}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.MultiStageQuery.Payload.Results.Results)
	if string(b) != `[["lion"],["lion"]]` {
		t.Fatalf("results %s", b)
	}
	if len(r.MultiStageQuery.Payload.Status.Workers) != 2 {
		t.Fatalf("workers %v (maxNumTasks from SET)", r.MultiStageQuery.Payload.Status.Workers)
	}
}

func TestPartitionedByAllAndLimit(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	run(t, env, `INSERT INTO a SELECT animal, n FROM `+ext+` LIMIT 2 PARTITIONED BY ALL`, nil)
	segs := env.Segments("a")
	if len(segs) != 1 || segs[0].Interval.String() != "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z" {
		t.Fatalf("segments %v", segs)
	}
	rows := storedRows(t, env, "a")
	if len(rows) != 2 || rows[0]["__time"] != int64(0) {
		t.Fatalf("rows %v", rows)
	}
	// An empty REPLACE ALL tombstones the existing data.
	run(t, env, `REPLACE INTO a OVERWRITE ALL SELECT animal FROM `+ext+` WHERE n > 100 PARTITIONED BY ALL`, nil)
	if n := len(storedRows(t, env, "a")); n != 0 {
		t.Fatalf("%d rows after an empty replace", n)
	}
	vis := env.Visible("a")
	if len(vis) != 1 || vis[0].HasData {
		t.Fatalf("visible %+v", vis)
	}
}

func TestAppendLinearAndMultiValue(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	run(t, env, `INSERT INTO mv SELECT TIME_PARSE(ts) AS __time, animal, tags FROM `+ext+` PARTITIONED BY DAY`, nil)
	rows := storedRows(t, env, "mv")
	if fmt.Sprint(rows[0]["tags"]) != "[a b]" || rows[1]["tags"] != "c" {
		t.Fatalf("multi-value tags: %v", rows)
	}
	wantOne(t, env, `SELECT COUNT(*) AS c FROM mv WHERE __time >= TIMESTAMP '2024-01-02'`, `[{"c":2}]`)
	run(t, env, `INSERT INTO mv SELECT TIME_PARSE(ts) AS __time, animal, tags FROM `+ext+` WHERE n = 7 PARTITIONED BY DAY`, nil)
	var parts []string
	for _, s := range env.Segments("mv") {
		parts = append(parts, fmt.Sprintf("%s/%d/%d", s.Interval.String()[:10], s.ShardSpec.PartitionNum, s.ShardSpec.CorePartitions))
	}
	if strings.Join(parts, " ") != "2024-01-01/0/1 2024-01-02/0/1 2024-01-02/1/1" {
		t.Fatalf("partitions %v", parts)
	}
	wantOne(t, env, `SELECT COUNT(*) AS c FROM mv WHERE TIME_IN_INTERVAL(__time, '2024-01-02/P1D')`, `[{"c":3}]`)
}

func TestOverwriteWhereTombstones(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	run(t, env, `REPLACE INTO w OVERWRITE ALL SELECT TIME_PARSE(ts) AS __time, animal FROM `+ext+` PARTITIONED BY DAY`, nil)
	// Replace both days with rows of the first day only: the second becomes a tombstone.
	r := run(t, env, `REPLACE INTO w OVERWRITE WHERE __time >= TIMESTAMP '2024-01-01' AND __time < TIMESTAMP '2024-01-03'
		SELECT TIME_PARSE(ts) AS __time, UPPER(animal) AS animal FROM `+ext+` WHERE ts < '2024-01-02' PARTITIONED BY DAY`, nil)
	var tombs, data int
	for _, s := range r.Published {
		if s.IsTombstone() {
			tombs++
			if s.Interval.String() != "2024-01-02T00:00:00.000Z/2024-01-03T00:00:00.000Z" || s.ShardSpec.Type != segmeta.ShardTombstone {
				t.Fatalf("tombstone %s", s.ID())
			}
		} else {
			data++
		}
	}
	if tombs != 1 || data != 1 {
		t.Fatalf("published %d tombstones and %d segments", tombs, data)
	}
	expectJSON(t, "after replace", storedRows(t, env, "w"), fmt.Sprintf(`[{"__time":%d,"animal":"LION"},{"__time":%d,"animal":"TIGER"}]`,
		ms("2024-01-01T01:00:00Z"), ms("2024-01-01T02:00:00Z")), true)
	// OR-ed ranges and NOT are understood too.
	run(t, env, `REPLACE INTO w OVERWRITE WHERE (__time >= TIMESTAMP '2024-01-01' AND __time < TIMESTAMP '2024-01-02') OR NOT __time < TIMESTAMP '2024-01-05'
		SELECT TIME_PARSE(ts) AS __time, animal FROM `+ext+` WHERE ts < '2024-01-02' PARTITIONED BY DAY`, nil)
	// An older lock version cannot replace newer data.
	_, err := Run(context.Background(), Request{SQL: `REPLACE INTO w OVERWRITE ALL SELECT TIME_PARSE(ts) AS __time, animal FROM ` + ext + ` PARTITIONED BY DAY`,
		TaskID: "query-old", Version: "2000-01-01T00:00:00.000Z", TempDir: t.TempDir()}, env, nil)
	if f, ok := err.(*Fault); !ok || f.Code != CodeInsertLockPreempted {
		t.Fatalf("old version: %v", err)
	}
}

// FuzzValidate plans arbitrary statements: planning must fail cleanly, never panic.
func FuzzValidate(f *testing.F) {
	ext := inlineExtern(animals, animalSig)
	f.Add(`SELECT animal, COUNT(*) FROM ` + ext + ` GROUP BY 1 HAVING COUNT(*) > 1 ORDER BY 2 DESC LIMIT 3`)
	f.Add(`INSERT INTO t SELECT TIME_PARSE(ts) AS __time, n * 2 AS x FROM ` + ext + ` WHERE animal IN ('a', 'b') PARTITIONED BY DAY CLUSTERED BY x`)
	f.Add(`REPLACE INTO t OVERWRITE WHERE __time >= TIMESTAMP '2024-01-01' SELECT * FROM (SELECT TIME_PARSE(ts) AS __time FROM ` + ext + `) PARTITIONED BY ALL`)
	f.Add(`WITH a AS (SELECT 1 AS x) SELECT x, CASE WHEN x > 0 THEN 'p' END FROM a UNION ALL SELECT 2, NULL`)
	f.Add(`SELECT EARLIEST_BY(animal, TIME_PARSE(ts), 10), APPROX_COUNT_DISTINCT_DS_HLL(animal, 10, 'HLL_8') FROM ` + ext)
	env := msqtest.New(f.TempDir())
	f.Fuzz(func(t *testing.T, q string) {
		_, err := Validate(context.Background(), Request{SQL: q, TempDir: t.TempDir()}, env)
		if err != nil {
			if _, ok := err.(*Fault); !ok {
				t.Fatalf("error %T is not a *Fault: %v", err, err)
			}
		}
	})
}

func TestGroupByResultOrder(t *testing.T) {
	env := newEnv(t)
	ext := animalsTable(t)
	r := run(t, env, `SELECT animal, COUNT(*) AS c FROM (SELECT * FROM `+ext+` UNION ALL SELECT * FROM `+ext+`) GROUP BY animal`,
		map[string]any{"maxNumTasks": 4})
	b, _ := json.Marshal(r.MultiStageQuery.Payload.Results.Results)
	if string(b) != `[["bear",2],["lion",4],["tiger",2]]` {
		t.Fatalf("results %s", b)
	}
}

func TestSpillToDisk(t *testing.T) {
	env := newEnv(t)
	var lines []string
	for i := 0; i < 3000; i++ {
		lines = append(lines, fmt.Sprintf(`{"ts":"2024-01-0%dT00:00:00Z","v":%d}`, i%3+1, i))
	}
	ext := inlineExtern(strings.Join(lines, "\n"), tsSig)
	// A one-byte budget sends every frame to the spill file.
	r, err := Run(context.Background(), Request{SQL: `INSERT INTO s SELECT TIME_PARSE(ts) AS __time, v % 7 AS k, COUNT(*) AS c, SUM(v) AS sv
		FROM ` + ext + ` GROUP BY 1, 2 PARTITIONED BY DAY`, Context: map[string]any{"maxNumTasks": 3},
		TaskID: "query-spill", Version: nextVersion(), TempDir: t.TempDir(), MemoryBytes: 1}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Published) != 3 {
		t.Fatalf("%d segments", len(r.Published))
	}
	wantOne(t, env, `SELECT COUNT(*) AS g, SUM(c) AS c, SUM(sv) AS sv FROM s`, `[{"c":3000,"g":21,"sv":4498500}]`)
}
