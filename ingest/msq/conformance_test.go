package msq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strata/ingest/msq/msqtest"
	"strata/segmeta"
)

// The conformance tests ingest the profiles of the Druid conformance corpus
// (shared/conformance/druid, MANIFEST §3) and check what was stored against
// the manifest's expectations. The files are read where they are; set
// STRATA_CONFORMANCE_DIR to point elsewhere.

func conformanceDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STRATA_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "conformance", "druid")
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.md")); err != nil {
		t.Skipf("conformance corpus not found at %s (set STRATA_CONFORMANCE_DIR): %v", dir, err)
	}
	return dir
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// p1Base is Druid's REPLACE statement for P1 (specs/wikipedia_index_msq.json)
// pointed at the WIKI10 files.
func p1Base(t *testing.T, dir, ds string) string {
	t.Helper()
	var spec struct {
		SQLTask string `json:"sqlTask"`
	}
	if err := json.Unmarshal(readFile(t, dir, "specs/wikipedia_index_msq.json"), &spec); err != nil {
		t.Fatal(err)
	}
	q := strings.ReplaceAll(spec.SQLTask, "%%DATASOURCE%%", ds)
	files := []string{"tiny_wiki_1.json", "wikipedia_2.json", "tiny_wiki_3.json"}
	for i, f := range files {
		old := fmt.Sprintf("/resources/data/batch_index/json/wikipedia_index_data%d.json", i+1)
		if !strings.Contains(q, old) {
			t.Fatalf("P1 statement does not mention %s", old)
		}
		q = strings.ReplaceAll(q, old, filepath.Join(dir, "data", f))
	}
	return q
}

func replaceOnce(t *testing.T, q, old, new string) string {
	t.Helper()
	if strings.Count(q, old) != 1 {
		t.Fatalf("statement has %d occurrences of %q", strings.Count(q, old), old)
	}
	return strings.Replace(q, old, new, 1)
}

// wikiContext is the context Druid's MSQ batch test submits with.
var wikiContext = map[string]any{"finalizeAggregations": false, "maxNumTasks": float64(5), "groupByEnableMultiValueUnnesting": false}

func withContext(extra map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range wikiContext {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// expectJSON compares query results or stored rows with expected rows given as JSON.
func expectJSON[T ~map[string]any](t *testing.T, what string, got []T, want string, ordered bool) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(want))
	dec.UseNumber()
	var w []map[string]any
	if err := dec.Decode(&w); err != nil {
		t.Fatal(err)
	}
	render := func(rows []map[string]any) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.Encode(r)
			out[i] = strings.TrimSpace(b.String())
		}
		if !ordered {
			slices.Sort(out)
		}
		return out
	}
	g := make([]map[string]any, len(got))
	for i, r := range got {
		g[i] = r
	}
	gs, ws := render(g), render(w)
	if strings.Join(gs, "\n") != strings.Join(ws, "\n") {
		t.Fatalf("%s:\ngot\n%s\nwant\n%s", what, strings.Join(gs, "\n"), strings.Join(ws, "\n"))
	}
}

// one runs a SELECT expected to return one row and returns it rendered as JSON.
func one(t *testing.T, env *msqtest.Env, q string) string {
	t.Helper()
	rows := selectRows(t, env, q)
	b, _ := json.Marshal(rows)
	return string(b)
}

func wantOne(t *testing.T, env *msqtest.Env, q, want string) {
	t.Helper()
	if got := one(t, env, q); got != want {
		t.Fatalf("%s\ngot  %s\nwant %s", q, got, want)
	}
}

func TestConformanceP1(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	run(t, env, p1Base(t, dir, "wiki"), withContext(map[string]any{"rowsPerSegment": float64(3)}))
	segs := env.Segments("wiki")
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4 (two days, at most 3 rows each)", len(segs))
	}
	for _, s := range segs {
		if s.ShardSpec.Type != segmeta.ShardNumbered || s.ShardSpec.CorePartitions != 2 {
			t.Errorf("segment %s shard %+v", s.ID(), s.ShardSpec)
		}
		if !slices.Equal(s.Metrics, []string{"count", "added", "deleted", "delta", "thetaSketch", "quantilesDoublesSketch", "HLLSketchBuild"}) {
			t.Errorf("metrics %v", s.Metrics)
		}
	}
	rows := storedRows(t, env, "wiki")
	if len(rows) != 10 {
		t.Fatalf("%d stored rows, want 10", len(rows))
	}
	for _, r := range rows {
		if r["count"] != int64(1) || r["HLLSketchBuild"] != "hll:1" || r["thetaSketch"] != "theta:1" {
			t.Fatalf("stored row %v", r)
		}
		if _, ok := r["added"].(float64); !ok {
			t.Fatalf("added is %T, want a double metric", r["added"])
		}
		// One input row per stored row: the sketch holds that row's delta.
		d := r["delta"].(float64)
		if want := fmt.Sprintf("quantiles:n=1,min=%g,max=%g", d, d); r["quantilesDoublesSketch"] != want {
			t.Fatalf("stored quantiles %v, want %s", r["quantilesDoublesSketch"], want)
		}
	}
	// N1 equivalents in SQL.
	wantOne(t, env, `SELECT MIN(__time) AS mn, MAX(__time) AS mx FROM wiki`,
		fmt.Sprintf(`[{"mn":%d,"mx":%d}]`, ms("2013-08-31T01:02:33Z"), ms("2013-09-01T12:41:27Z")))
	day := `__time >= TIMESTAMP '2013-08-31 00:00:00' AND __time < TIMESTAMP '2013-09-01 00:00:00'`
	wantOne(t, env, `SELECT APPROX_COUNT_DISTINCT_DS_HLL("HLLSketchBuild") AS hll, APPROX_COUNT_DISTINCT_DS_THETA("thetaSketch") AS theta FROM wiki WHERE `+day,
		`[{"hll":5,"theta":5}]`)
	// Five values: the sketches are exact, so merging the stored sketches and
	// building one from delta agree, and the ends are MIN and MAX.
	mm := one(t, env, `SELECT MIN(delta) AS q, MAX(delta) AS q1 FROM wiki WHERE `+day)
	wantOne(t, env, `SELECT APPROX_QUANTILE_DS("quantilesDoublesSketch", 0) AS q, APPROX_QUANTILE_DS(delta, 1) AS q1 FROM wiki WHERE `+day, mm)
	wantOne(t, env, `SELECT APPROX_QUANTILE_DS("quantilesDoublesSketch", 0.5) = APPROX_QUANTILE_DS(delta, 0.5, 256) AS same FROM wiki WHERE `+day,
		`[{"same":1}]`)
	wantOne(t, env, `SELECT page, SUM("count") AS "rows", CAST(SUM(added) AS BIGINT) AS added_count, SUM(added) * 10 AS added_count_times_ten
FROM wiki WHERE language = 'zh' AND `+day+` GROUP BY page HAVING SUM(added) * 10 > 9000`,
		`[{"added_count":905,"added_count_times_ten":9050.0,"page":"Crimson Typhoon","rows":1}]`)
	wantOne(t, env, `SELECT EARLIEST("user", 1024) AS first_user, LATEST("user", 1024) AS last_user FROM wiki WHERE `+day,
		`[{"first_user":"nuclear","last_user":"stringer"}]`)
}

func TestConformanceP2(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	hour := replaceOnce(t, p1Base(t, dir, "wiki_h"), "'PT1S'", "'PT1H'")
	run(t, env, hour, wikiContext)
	if n := len(env.Segments("wiki_h")); n != 2 {
		t.Fatalf("P2h: %d segments, want 2", n)
	}
	if n := len(storedRows(t, env, "wiki_h")); n != 10 {
		t.Fatalf("P2h: %d rows, want 10", n)
	}
	wantOne(t, env, `SELECT MIN(__time) AS mn, MAX(__time) AS mx FROM wiki_h`,
		fmt.Sprintf(`[{"mn":%d,"mx":%d}]`, ms("2013-08-31T01:00:00Z"), ms("2013-09-01T12:00:00Z")))

	year := replaceOnce(t, p1Base(t, dir, "wiki_y"), "'PT1S'", "'P1Y'")
	year = replaceOnce(t, year, "PARTITIONED BY DAY", "PARTITIONED BY YEAR")
	run(t, env, year, wikiContext)
	segs := env.Segments("wiki_y")
	if len(segs) != 1 || segs[0].Interval.String() != "2013-01-01T00:00:00.000Z/2014-01-01T00:00:00.000Z" {
		t.Fatalf("P2y segments %v", segs)
	}
	rows := storedRows(t, env, "wiki_y")
	if len(rows) != 5 {
		t.Fatalf("P2y: %d rows, want 5", len(rows))
	}
	for _, r := range rows {
		if r["count"] != int64(2) || r["__time"] != ms("2013-01-01T00:00:00Z") || r["HLLSketchBuild"] != "hll:1" {
			t.Fatalf("P2y row %v", r)
		}
	}
	wantOne(t, env, `SELECT page, SUM("count") AS "rows", CAST(SUM(added) AS BIGINT) AS added_count FROM wiki_y WHERE language = 'zh' GROUP BY page`,
		`[{"added_count":1810,"page":"Crimson Typhoon","rows":2}]`)
	// Equal times: first/last follow the stored order, sorted by page (N8y quirk).
	wantOne(t, env, `SELECT EARLIEST("user") AS first_user, LATEST("user") AS last_user FROM wiki_y`,
		`[{"first_user":"masterYi","last_user":"speed"}]`)
	wantOne(t, env, `SELECT APPROX_COUNT_DISTINCT_DS_HLL("HLLSketchBuild") AS hll FROM wiki_y`, `[{"hll":5}]`)
}

func TestConformanceP3AppendAndP4(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	insert := replaceOnce(t, p1Base(t, dir, "wiki_a"), `REPLACE INTO "wiki_a" OVERWRITE ALL`, `INSERT INTO "wiki_a"`)
	run(t, env, insert, wikiContext)
	run(t, env, insert, wikiContext)
	segs := env.Segments("wiki_a")
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4 (two loads of two days)", len(segs))
	}
	for _, s := range segs {
		// The second load appends partition 1 to each chunk's version, keeping one core partition.
		if s.ShardSpec.Type != segmeta.ShardNumbered || s.ShardSpec.CorePartitions != 1 {
			t.Errorf("segment %s: shard %+v", s.ID(), s.ShardSpec)
		}
	}
	if segs[0].Version != segs[1].Version || segs[1].ShardSpec.PartitionNum != 1 {
		t.Errorf("append did not join the chunk: %s %s", segs[0].ID(), segs[1].ID())
	}
	if n := len(storedRows(t, env, "wiki_a")); n != 20 {
		t.Fatalf("P3: %d rows, want 20", n)
	}
	day := `__time >= TIMESTAMP '2013-08-31 00:00:00' AND __time < TIMESTAMP '2013-09-01 00:00:00'`
	wantOne(t, env, `SELECT COUNT(*) AS "rows" FROM wiki_a WHERE `+day, `[{"rows":10}]`)
	wantOne(t, env, `SELECT COUNT(*) AS "rows", SUM(added) AS added FROM wiki_a WHERE page = 'Crimson Typhoon' AND `+day,
		`[{"added":1810.0,"rows":2}]`)

	// P4: one REPLACE reading the files twice with UNION ALL: perfect rollup.
	q := p1Base(t, dir, "wiki_p")
	start := strings.Index(q, `WITH "source" as (`) + len(`WITH "source" as (`)
	end := strings.Index(q, ")\nSELECT\n")
	inner := q[start:end]
	q = q[:start] + inner + " UNION ALL " + inner + q[end:]
	run(t, env, q, wikiContext)
	rows := storedRows(t, env, "wiki_p")
	if len(rows) != 10 {
		t.Fatalf("P4: %d rows, want 10", len(rows))
	}
	for _, r := range rows {
		if r["count"] != int64(2) {
			t.Fatalf("P4 row %v", r)
		}
	}
	wantOne(t, env, `SELECT COUNT(*) AS "rows", SUM(added) AS added FROM wiki_p WHERE page = 'Crimson Typhoon' AND `+day,
		`[{"added":1810.0,"rows":1}]`)
	wantOne(t, env, `SELECT APPROX_COUNT_DISTINCT_DS_HLL("HLLSketchBuild") AS hll, APPROX_COUNT_DISTINCT_DS_THETA("thetaSketch") AS theta FROM wiki_p WHERE `+day,
		`[{"hll":5,"theta":5}]`)
}

func TestConformanceP5Transform(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	q := p1Base(t, dir, "wiki_t")
	q = replaceOnce(t, q, "  \"newPage\",\n", "")
	q = replaceOnce(t, q, "  \"language\",\n", "  concat('language-', \"language\") AS \"language\",\n")
	q = replaceOnce(t, q, "  SUM(\"added\") AS \"added\",\n", "  SUM(\"added\") AS \"added\",\n  SUM(\"added\")*3 AS \"triple-added\",\n")
	q = replaceOnce(t, q, "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13", "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12")
	run(t, env, q, wikiContext)
	if n := len(storedRows(t, env, "wiki_t")); n != 10 {
		t.Fatalf("%d rows, want 10", n)
	}
	// N9: groupBy page, city where language = 'language-zh'.
	wantOne(t, env, `SELECT page, city, SUM("count") AS "rows", CAST(SUM("triple-added") AS BIGINT) AS added_count,
  CAST(SUM("triple-added") AS BIGINT) * 10.0 AS added_count_times_ten, CAST(SUM(delta) AS BIGINT) AS delta_sum
FROM wiki_t WHERE language = 'language-zh' AND __time < TIMESTAMP '2013-09-01' GROUP BY page, city`,
		`[{"added_count":2715,"added_count_times_ten":27150.0,"city":"Taiyuan","delta_sum":900,"page":"Crimson Typhoon","rows":1}]`)
	segs := env.Segments("wiki_t")
	if slices.Contains(segs[0].Dimensions, "newPage") || !slices.Contains(segs[0].Dimensions, "triple-added") {
		t.Fatalf("dimensions %v", segs[0].Dimensions)
	}
}

func TestConformanceP6Merge(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	base := p1Base(t, dir, "x")
	ext := base[strings.Index(base, "EXTERN(") : strings.Index(base, "'\n  )\n))")+len("'\n  )")]
	q := `REPLACE INTO "wiki_m" OVERWRITE ALL
WITH "source" AS (SELECT * FROM TABLE(` + ext + `))
SELECT TIME_FLOOR(TIME_PARSE("timestamp"), 'P1D') AS __time, "continent",
  COUNT(*) AS "count", SUM("added") AS "added", SUM("deleted") AS "deleted", SUM("delta") AS "delta",
  EARLIEST_BY("user", TIME_PARSE("timestamp"), 128) AS "first_user",
  LATEST_BY("user", TIME_PARSE("timestamp"), 128) AS "last_user"
FROM "source" GROUP BY 1, 2 PARTITIONED BY DAY`
	run(t, env, q, wikiContext)
	rows := storedRows(t, env, "wiki_m")
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6 (three continents a day)", len(rows))
	}
	var asia storedRow
	for _, r := range rows {
		if r["continent"] == "Asia" && r["__time"] == ms("2013-08-31T00:00:00Z") {
			asia = r
		}
	}
	if asia == nil || !strings.HasSuffix(asia["first_user"].(string), "|masterYi") || !strings.HasSuffix(asia["last_user"].(string), "|stringer") {
		t.Fatalf("Asia row %v", asia)
	}
	// N10 in SQL: EARLIEST/LATEST over the stored pairs.
	wantOne(t, env, `SELECT continent, EARLIEST(first_user) AS earliest_user, LATEST(last_user) AS latest_user
FROM wiki_m WHERE continent = 'Asia' AND __time < TIMESTAMP '2013-09-01' GROUP BY continent`,
		`[{"continent":"Asia","earliest_user":"masterYi","latest_user":"stringer"}]`)
}

func TestConformanceP7Reindex(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	run(t, env, p1Base(t, dir, "wiki"), wikiContext)
	run(t, env, `REPLACE INTO "wiki_r" OVERWRITE ALL
SELECT __time, page, language, "user", unpatrolled, newPage, anonymous, namespace, country, region, city,
  SUM(added) AS added, SUM(deleted) AS deleted, SUM(delta) AS delta
FROM wiki
WHERE TIMESTAMP '2013-08-31' <= __time AND __time < TIMESTAMP '2013-09-01'
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
PARTITIONED BY DAY`, wikiContext)
	rows := storedRows(t, env, "wiki_r")
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	if _, ok := rows[0]["count"]; ok {
		t.Fatalf("reindexed rows have no count column: %v", rows[0])
	}
	wantOne(t, env, `SELECT MIN(__time) AS mn, MAX(__time) AS mx FROM wiki_r`,
		fmt.Sprintf(`[{"mn":%d,"mx":%d}]`, ms("2013-08-31T01:02:33Z"), ms("2013-08-31T12:41:27Z")))
	wantOne(t, env, `SELECT page, CAST(SUM(added) AS BIGINT) AS added_count, SUM(added) * 10 AS added_count_times_ten
FROM wiki_r WHERE language = 'zh' GROUP BY page HAVING SUM(added) * 10 > 9000`,
		`[{"added_count":905,"added_count_times_ten":9050.0,"page":"Crimson Typhoon"}]`)
}

func TestConformanceP8AndS1(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	cols := []struct{ name, typ string }{{"isRobot", "string"}, {"diffUrl", "string"}, {"added", "long"},
		{"countryIsoCode", "string"}, {"regionName", "string"}, {"channel", "string"}, {"flags", "string"}, {"delta", "long"},
		{"isUnpatrolled", "string"}, {"isNew", "string"}, {"deltaBucket", "double"}, {"isMinor", "string"},
		{"isAnonymous", "string"}, {"deleted", "long"}, {"cityName", "string"}, {"metroCode", "long"}, {"namespace", "string"},
		{"comment", "string"}, {"page", "string"}, {"commentLength", "long"}, {"countryName", "string"}, {"user", "string"},
		{"regionIsoCode", "string"}}
	sig := []string{`{"name":"timestamp","type":"string"}`}
	sel := []string{`TIME_PARSE("timestamp") AS __time`}
	for _, c := range cols {
		sig = append(sig, fmt.Sprintf(`{"name":%q,"type":%q}`, c.name, c.typ))
		sel = append(sel, `"`+c.name+`"`)
	}
	src, _ := json.Marshal(map[string]any{"type": "local", "files": []string{filepath.Join(dir, "data", "tiny_wiki_1.json")}})
	run(t, env, `INSERT INTO dst SELECT `+strings.Join(sel, ", ")+` FROM TABLE(EXTERN(`+sqlString(string(src))+`, '{"type":"json"}', `+
		sqlString("["+strings.Join(sig, ",")+"]")+`)) PARTITIONED BY DAY`, nil)
	if n := len(storedRows(t, env, "dst")); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
	var cases []struct {
		Query           string          `json:"query"`
		ExpectedResults json.RawMessage `json:"expectedResults"`
	}
	if err := json.Unmarshal(readFile(t, dir, "queries/wikipedia_msq_select_query1.json"), &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("query %d", i), func(t *testing.T) {
			q := strings.ReplaceAll(c.Query, "%%DATASOURCE%%", "dst")
			expectJSON(t, "S1", selectRows(t, env, q), string(c.ExpectedResults), true)
		})
	}
}

func TestConformanceP10Sparse(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	data := strings.TrimSpace(string(readFile(t, dir, "derived/sparse_column_data.json")))
	src, _ := json.Marshal(map[string]any{"type": "inline", "data": data})
	sig := `[{"name":"time","type":"string"},{"name":"dimB","type":"string"},{"name":"dimA","type":"string"},{"name":"dimC","type":"string"},` +
		`{"name":"dimD","type":"string"},{"name":"dimE","type":"string"},{"name":"dimF","type":"string"},{"name":"metA","type":"long"}]`
	run(t, env, `REPLACE INTO sparse OVERWRITE ALL
SELECT TIME_FLOOR(TIME_PARSE("time"), 'PT1H') AS __time, dimB, dimA, dimC, dimD, dimE, dimF, COUNT(*) AS "count", SUM(metA) AS sum_metA
FROM TABLE(EXTERN(`+sqlString(string(src))+`, '{"type":"json"}', `+sqlString(sig)+`))
GROUP BY 1, 2, 3, 4, 5, 6, 7 PARTITIONED BY HOUR`, wikiContext)
	// N3's scan: rows in segment order, sorted by time then dimB, dimA, ... with null first.
	var cases []struct {
		ExpectedResults []struct {
			Columns []string `json:"columns"`
			Events  [][]any  `json:"events"`
		} `json:"expectedResults"`
	}
	if err := json.Unmarshal(readFile(t, dir, "queries/sparse_column_msq.json"), &cases); err != nil {
		t.Fatal(err)
	}
	scan := cases[1].ExpectedResults[0]
	rows := storedRows(t, env, "sparse")
	if len(rows) != len(scan.Events) {
		t.Fatalf("%d rows, want %d", len(rows), len(scan.Events))
	}
	for i, ev := range scan.Events {
		for j, col := range scan.Columns {
			want := ev[j]
			if f, ok := want.(float64); ok {
				want = int64(f)
			}
			if fmt.Sprint(rows[i][col]) != fmt.Sprint(want) {
				t.Fatalf("row %d column %s: got %v, want %v (row %v)", i, col, rows[i][col], want, rows[i])
			}
		}
	}
	wantOne(t, env, `SELECT COUNT(*) AS a0, SUM("count") AS a1, (COUNT(*) * 1.00) / SUM("count") AS p0 FROM sparse`,
		`[{"a0":8,"a1":10,"p0":0.8}]`)
}

func TestConformanceP11JSONPath(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	data := strings.TrimSpace(string(readFile(t, dir, "derived/msq_inline_data.json")))
	src, _ := json.Marshal(map[string]any{"type": "inline", "data": data})
	format := `{"type":"json","flattenSpec":{"useFieldDiscovery":true,"fields":[` +
		`{"type":"path","name":"len","expr":"$.values.length()"},{"type":"path","name":"min","expr":"$.values.min()"},` +
		`{"type":"path","name":"max","expr":"$.values.max()"},{"type":"path","name":"sum","expr":"$.values.sum()"}]}}`
	sig := `[{"name":"timestamp","type":"string"},{"name":"len","type":"long"},{"name":"min","type":"long"},{"name":"max","type":"long"},{"name":"sum","type":"long"}]`
	run(t, env, `REPLACE INTO jp OVERWRITE ALL
SELECT TIME_PARSE("timestamp") AS __time, "len", "min", "max", "sum"
FROM TABLE(EXTERN(`+sqlString(string(src))+`, `+sqlString(format)+`, `+sqlString(sig)+`))
GROUP BY 1, 2, 3, 4, 5 PARTITIONED BY HOUR`, wikiContext)
	expectJSON(t, "P11", storedRows(t, env, "jp"),
		fmt.Sprintf(`[{"__time":%d,"len":5,"min":0,"max":4,"sum":10}]`, ms("2013-08-31T01:02:33Z")), true)
}

func TestConformanceP12SchemalessAndS5(t *testing.T) {
	dir := conformanceDir(t)
	env := newEnv(t)
	// The signature is discovered from the file: strings as VARCHAR, numbers as BIGINT.
	file := filepath.Join(dir, "data", "union_query_wikipedia_index_data.json")
	first, _, _ := bytes.Cut(readFile(t, dir, "data/union_query_wikipedia_index_data.json"), []byte("\n"))
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.UseNumber()
	var names []string
	types := map[string]string{}
	tok, _ := dec.Token() // {
	_ = tok
	for dec.More() {
		k, _ := dec.Token()
		var v any
		dec.Decode(&v)
		name := k.(string)
		names = append(names, name)
		types[name] = "VARCHAR"
		if _, ok := v.(json.Number); ok {
			types[name] = "BIGINT"
		}
	}
	var ext, sel []string
	for _, n := range names {
		ext = append(ext, fmt.Sprintf(`"%s" %s`, n, types[n]))
		if n != "timestamp" {
			sel = append(sel, `"`+n+`"`)
		}
	}
	src, _ := json.Marshal(map[string]any{"type": "local", "baseDir": filepath.Dir(file), "filter": filepath.Base(file)})
	run(t, env, `INSERT INTO schemaless SELECT TIME_PARSE("timestamp") AS __time, `+strings.Join(sel, ", ")+
		` FROM TABLE(EXTERN(`+sqlString(string(src))+`, '{"type":"json"}')) EXTEND (`+strings.Join(ext, ", ")+`) PARTITIONED BY DAY`, nil)
	var cases []struct {
		Query struct {
			Query string `json:"query"`
		} `json:"query"`
		ExpectedResults []map[string]any `json:"expectedResults"`
	}
	dec = json.NewDecoder(bytes.NewReader(readFile(t, dir, "queries/wikipedia_index_schemaless_queries.json")))
	dec.UseNumber()
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("query %d", i), func(t *testing.T) {
			q := strings.ReplaceAll(c.Query.Query, "%%DATASOURCE%%", "schemaless")
			for _, r := range c.ExpectedResults {
				if s, ok := r["__time"].(string); ok {
					r["__time"] = ms(s) // the task engine returns millis
				}
			}
			want, _ := json.Marshal(c.ExpectedResults)
			expectJSON(t, fmt.Sprintf("S5 query %d", i), selectRows(t, env, q), string(want), i == 1)
		})
	}
}

// derivedSteps runs the steps of a derived tutorial file: ingestions, then
// SELECT * compared with the printed rows (as maps, __time in millis).
func derivedSteps(t *testing.T, dir, file string, check func(step int, env *msqtest.Env)) {
	t.Helper()
	var doc struct {
		Steps []struct {
			Kind         string           `json:"kind"`
			Datasource   string           `json:"datasource"`
			SQL          string           `json:"sql"`
			ExpectedRows []map[string]any `json:"expectedRows"`
		} `json:"steps"`
	}
	dec := json.NewDecoder(bytes.NewReader(readFile(t, dir, file)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	env := newEnv(t)
	for i, st := range doc.Steps {
		q := strings.ReplaceAll(st.SQL, "%%DATA_DIR%%", filepath.Join(dir, "data"))
		switch st.Kind {
		case "ingest":
			run(t, env, q, nil)
		case "select":
			for _, r := range st.ExpectedRows {
				r["__time"] = r["__time_millis"]
				delete(r, "__time_millis")
			}
			want, _ := json.Marshal(st.ExpectedRows)
			expectJSON(t, fmt.Sprintf("%s step %d", file, i), selectRows(t, env, q), string(want), false)
		}
		if check != nil {
			check(i, env)
		}
	}
}

func TestConformanceP14RollupTutorial(t *testing.T) {
	dir := conformanceDir(t)
	derivedSteps(t, dir, "derived/tutorial_rollup.json", func(step int, env *msqtest.Env) {
		if step == 0 {
			if n := len(storedRows(t, env, "rollup-tutorial")); n != 5 {
				t.Fatalf("%d rows, want 5", n)
			}
		}
	})
}

func TestConformanceS3TransformTutorial(t *testing.T) {
	derivedSteps(t, conformanceDir(t), "derived/tutorial_transform.json", nil)
}

func TestConformanceS4UpdateTutorial(t *testing.T) {
	derivedSteps(t, conformanceDir(t), "derived/tutorial_update_data.json", func(step int, env *msqtest.Env) {
		switch step {
		case 2: // second OVERWRITE ALL: 2024-01-01 no longer has data, it is tombstoned
			var tomb bool
			for _, h := range env.Visible("update_tutorial") {
				if h.Interval.String() == "2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z" && !h.HasData {
					tomb = true
				}
			}
			if !tomb {
				t.Fatalf("2024-01-01 is not tombstoned: %v", env.Visible("update_tutorial"))
			}
		case 6: // the HOUR replace overshadows part of the DAY segment
			var polecat []storedRow
			for _, r := range storedRows(t, env, "update_tutorial") {
				if r["animal"] == "polecat" {
					polecat = append(polecat, r)
				}
			}
			if len(polecat) != 1 || polecat[0]["number"] != int64(486) {
				t.Fatalf("polecat rows %v", polecat)
			}
			var hour bool
			for _, s := range env.Segments("update_tutorial") {
				if s.Interval.String() == "2024-01-03T05:00:00.000Z/2024-01-03T06:00:00.000Z" {
					hour = true
				}
			}
			if !hour {
				t.Fatal("no HOUR segment for 2024-01-03T05")
			}
		}
	})
}
