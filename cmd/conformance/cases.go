package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

type testCase struct {
	name string
	run  func(name string)
}

func wikiFiles() []string {
	return []string{filepath.Join(dir, "data/tiny_wiki_1.json"), filepath.Join(dir, "data/wikipedia_2.json"), filepath.Join(dir, "data/tiny_wiki_3.json")}
}

// p1SQL is Druid's P1 REPLACE (specs/wikipedia_index_msq.json) pointed at the
// WIKI10 files.
func p1SQL(ds string, files []string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "specs/wikipedia_index_msq.json"))
	if err != nil {
		return "", err
	}
	var spec struct {
		SQLTask string `json:"sqlTask"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return "", err
	}
	sql := strings.ReplaceAll(spec.SQLTask, "%%DATASOURCE%%", ds)
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = strconv.Quote(f)
	}
	old := `"/resources/data/batch_index/json/wikipedia_index_data1.json","/resources/data/batch_index/json/wikipedia_index_data2.json","/resources/data/batch_index/json/wikipedia_index_data3.json"`
	if !strings.Contains(sql, old) {
		return "", fmt.Errorf("P1 statement changed shape: cannot find its file list")
	}
	sql = strings.Replace(sql, old, strings.Join(quoted, ","), 1)
	return sql, nil
}

func ingest(name string, stmts []string, extra map[string]any, ds ...string) bool {
	for _, s := range stmts {
		if _, err := sqlTask(s, withContext(extra)); err != nil {
			record(name+" (ingest)", "FAIL", err.Error())
			return false
		}
	}
	for _, d := range ds {
		if err := waitQueryable(d); err != nil {
			record(name+" (ingest)", "FAIL", err.Error())
			return false
		}
	}
	return true
}

func cases() []testCase {
	p1 := func(ds string) string {
		s, err := p1SQL(ds, wikiFiles())
		if err != nil {
			panic(err)
		}
		return s
	}
	rows3 := map[string]any{"rowsPerSegment": 3}
	return []testCase{
		{"N1 wikipedia_index_queries (P1)", func(n string) {
			if ingest(n, []string{p1("wiki_p1")}, rows3, "wiki_p1") {
				runQueries(n, "wikipedia_index_queries.json", map[string]string{"%%DATASOURCE%%": "wiki_p1"}, nil)
			}
		}},
		{"N12 segment_metadata_query (P1)", func(n string) {
			segs, err := segmentCount("wiki_p1")
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			exp := make([]string, segs)
			for i := range exp {
				exp[i] = `{"queryGranularity":"SECOND"}`
			}
			runQueries(n, "segment_metadata_query.json", map[string]string{"%%DATASOURCE%%": "wiki_p1", "%%ANALYSIS_TYPE%%": "queryGranularity",
				"%%INTERVALS%%": "2013-08-31/2013-09-02", "%%EXPECTED_QUERY_GRANULARITY%%": "[" + strings.Join(exp, ",") + "]"}, nil)
		}},
		{"N7 hour query granularity (P2h)", func(n string) {
			s := strings.Replace(p1("wiki_p2h"), "'PT1S'", "'PT1H'", 1)
			if ingest(n, []string{s}, nil, "wiki_p2h") {
				runQueries(n, "wikipedia_index_queries_hour_query_granularity.json", map[string]string{"%%DATASOURCE%%": "wiki_p2h"}, nil)
			}
		}},
		{"N8y year query granularity (P2y)", func(n string) {
			s := strings.Replace(p1("wiki_p2y"), "'PT1S'", "'P1Y'", 1)
			s = strings.Replace(s, "PARTITIONED BY DAY", "PARTITIONED BY YEAR", 1)
			if ingest(n, []string{s}, nil, "wiki_p2y") {
				runQueries(n, "wikipedia_index_queries_year_query_granularity.json", map[string]string{"%%DATASOURCE%%": "wiki_p2y"}, nil)
			}
		}},
		{"N4 double ingestion, non-perfect rollup (P3)", func(n string) {
			s := strings.Replace(p1("wiki_p3"), `REPLACE INTO "wiki_p3" OVERWRITE ALL`, `INSERT INTO "wiki_p3"`, 1)
			if ingest(n, []string{s, s}, nil, "wiki_p3") {
				runQueries(n, "wikipedia_double_ingestion_non_perfect_rollup_index_queries.json", map[string]string{"%%DATASOURCE%%": "wiki_p3"}, nil)
			}
		}},
		{"N5 double ingestion, perfect rollup (P4)", func(n string) {
			// The source reads the three files twice.
			files := append(wikiFiles(), wikiFiles()...)
			s, err := p1SQL("wiki_p4", files)
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			if ingest(n, []string{s}, nil, "wiki_p4") {
				runQueries(n, "wikipedia_double_ingestion_perfect_rollup_index_queries.json", map[string]string{"%%DATASOURCE%%": "wiki_p4"}, nil)
			}
		}},
		{"N9 transform at ingestion (P5)", func(n string) {
			s := p1("wiki_p5")
			s = strings.Replace(s, "  \"language\",\n", "  concat('language-', \"language\") AS \"language\",\n", 1)
			s = strings.Replace(s, "  \"newPage\",\n", "", 1)
			s = strings.Replace(s, "  SUM(\"added\") AS \"added\",\n", "  SUM(\"added\") AS \"added\",\n  SUM(\"added\")*3 AS \"triple-added\",\n", 1)
			s = strings.Replace(s, "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13", "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12", 1)
			if ingest(n, []string{s}, nil, "wiki_p5") {
				runQueries(n, "wikipedia_index_queries_with_transform.json", map[string]string{"%%DATASOURCE%%": "wiki_p5"}, nil)
			}
		}},
		{"N10 stored first/last rollup metrics (P6)", func(n string) {
			s := fmt.Sprintf(`REPLACE INTO "wiki_p6" OVERWRITE ALL
WITH "source" AS (SELECT * FROM TABLE(EXTERN('{"type":"local","files":[%s]}', '{"type":"json"}',
 '[{"name":"timestamp","type":"string"},{"name":"continent","type":"string"},{"name":"user","type":"string"},{"name":"added","type":"double"},{"name":"deleted","type":"double"},{"name":"delta","type":"double"}]')))
SELECT TIME_FLOOR(TIME_PARSE("timestamp"), 'P1D') AS __time, "continent", COUNT(*) AS "count",
 SUM("added") AS "added", SUM("deleted") AS "deleted", SUM("delta") AS "delta",
 EARLIEST_BY("user", TIME_PARSE("timestamp"), 128) AS "first_user", LATEST_BY("user", TIME_PARSE("timestamp"), 128) AS "last_user"
FROM "source" GROUP BY 1, 2 PARTITIONED BY DAY`, quotedFiles(wikiFiles()))
			if ingest(n, []string{s}, map[string]any{"rowsPerSegment": 5}, "wiki_p6") {
				runQueries(n, "wikipedia_merge_index_queries.json", map[string]string{"%%DATASOURCE%%": "wiki_p6"}, nil)
			}
		}},
		{"N6 reindex from a datasource (P7)", func(n string) {
			s := `REPLACE INTO "wiki_p7" OVERWRITE ALL
SELECT __time, "page", "language", "user", "unpatrolled", "newPage", "anonymous", "namespace", "country", "region", "city",
 SUM("added") AS "added", SUM("deleted") AS "deleted", SUM("delta") AS "delta"
FROM "wiki_p1" WHERE TIMESTAMP '2013-08-31' <= __time AND __time < TIMESTAMP '2013-09-01'
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 PARTITIONED BY DAY`
			if ingest(n, []string{s}, nil, "wiki_p7") {
				runQueries(n, "wikipedia_reindex_queries.json", map[string]string{"%%DATASOURCE%%": "wiki_p7"}, nil)
			}
		}},
		{"N2 union datasource (P9)", func(n string) {
			var stmts []string
			file := filepath.Join(dir, "data/union_query_wikipedia_index_data.json")
			for i := 0; i < 3; i++ {
				s, err := p1SQL(fmt.Sprintf("union_p9-%d", i), []string{file})
				if err != nil {
					record(n, "FAIL", err.Error())
					return
				}
				for _, drop := range []string{"  APPROX_COUNT_DISTINCT_DS_THETA(\"user\") AS \"thetaSketch\",\n", ",\n  APPROX_COUNT_DISTINCT_DS_HLL(\"user\") AS \"HLLSketchBuild\""} {
					s = strings.Replace(s, drop, "", 1)
				}
				stmts = append(stmts, s)
			}
			if ingest(n, stmts, nil, "union_p9-0", "union_p9-1", "union_p9-2") {
				runQueries(n, "union_queries.json", map[string]string{"%%DATASOURCE%%": "union_p9"}, nil)
			}
		}},
		{"N3 sparse columns (P10)", func(n string) {
			data, err := os.ReadFile(filepath.Join(dir, "derived/sparse_column_data.json"))
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			inline, _ := json.Marshal(map[string]any{"type": "inline", "data": string(data)})
			s := fmt.Sprintf(`REPLACE INTO "sparse_p10" OVERWRITE ALL
WITH "source" AS (SELECT * FROM TABLE(EXTERN(%s, '{"type":"json"}',
 '[{"name":"time","type":"string"},{"name":"dimB","type":"string"},{"name":"dimA","type":"string"},{"name":"dimC","type":"string"},{"name":"dimD","type":"string"},{"name":"dimE","type":"string"},{"name":"dimF","type":"string"},{"name":"metA","type":"long"}]')))
SELECT TIME_FLOOR(TIME_PARSE("time"), 'PT1H') AS __time, "dimB", "dimA", "dimC", "dimD", "dimE", "dimF", COUNT(*) AS "count", SUM("metA") AS "sum_metA"
FROM "source" GROUP BY 1, 2, 3, 4, 5, 6, 7 PARTITIONED BY HOUR`, sqlString(string(inline)))
			if ingest(n, []string{s}, nil, "sparse_p10") {
				runQueries(n, "sparse_column_msq.json", map[string]string{"%%DATASOURCE%%": "sparse_p10"}, nil)
			}
		}},
		{"N11 JSONPath flattening (P11)", func(n string) {
			data, err := os.ReadFile(filepath.Join(dir, "derived/msq_inline_data.json"))
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			inline, _ := json.Marshal(map[string]any{"type": "inline", "data": string(data)})
			format := `{"type":"json","flattenSpec":{"useFieldDiscovery":true,"fields":[{"type":"path","name":"len","expr":"$.values.length()"},{"type":"path","name":"min","expr":"$.values.min()"},{"type":"path","name":"max","expr":"$.values.max()"},{"type":"path","name":"sum","expr":"$.values.sum()"}]}}`
			s := fmt.Sprintf(`INSERT INTO "jsonpath_p11"
SELECT TIME_PARSE("timestamp") AS __time, "len", "min", "max", "sum"
FROM TABLE(EXTERN(%s, %s, '[{"name":"timestamp","type":"string"},{"name":"len","type":"long"},{"name":"min","type":"long"},{"name":"max","type":"long"},{"name":"sum","type":"long"}]'))
GROUP BY 1, 2, 3, 4, 5 PARTITIONED BY HOUR`, sqlString(string(inline)), sqlString(format))
			if ingest(n, []string{s}, nil, "jsonpath_p11") {
				runQueries(n, "json_path_index_queries.json", map[string]string{"%%DATASOURCE%%": "jsonpath_p11"}, nil)
			}
		}},
		{"S1 MSQ SELECT (P8)", func(n string) {
			s := fmt.Sprintf(`INSERT INTO "dst" SELECT TIME_PARSE("timestamp") AS __time, isRobot, diffUrl, added, countryIsoCode, regionName, channel, flags, delta, isUnpatrolled, isNew, deltaBucket, isMinor, isAnonymous, deleted, cityName, metroCode, namespace, comment, page, commentLength, countryName, "user", regionIsoCode
FROM TABLE(EXTERN('{"type":"local","files":[%s]}', '{"type":"json"}', '[{"name":"timestamp","type":"string"},{"name":"isRobot","type":"string"},{"name":"diffUrl","type":"string"},{"name":"added","type":"long"},{"name":"countryIsoCode","type":"string"},{"name":"regionName","type":"string"},{"name":"channel","type":"string"},{"name":"flags","type":"string"},{"name":"delta","type":"long"},{"name":"isUnpatrolled","type":"string"},{"name":"isNew","type":"string"},{"name":"deltaBucket","type":"double"},{"name":"isMinor","type":"string"},{"name":"isAnonymous","type":"string"},{"name":"deleted","type":"long"},{"name":"cityName","type":"string"},{"name":"metroCode","type":"long"},{"name":"namespace","type":"string"},{"name":"comment","type":"string"},{"name":"page","type":"string"},{"name":"commentLength","type":"long"},{"name":"countryName","type":"string"},{"name":"user","type":"string"},{"name":"regionIsoCode","type":"string"}]'))
PARTITIONED BY DAY`, strconv.Quote(filepath.Join(dir, "data/tiny_wiki_1.json")))
			if ingest(n, []string{s}, nil, "dst") {
				runQueries(n, "wikipedia_msq_select_query1.json", map[string]string{"%%DATASOURCE%%": "dst"}, nil)
			}
		}},
		{"N10n native index task (P6, specs/wikipedia_merge_index_task.json)", func(n string) {
			// The spec reads %%DATA_DIRECTORY%%/json/tiny_wiki*: lay WIKI10 out that way in a temp dir.
			tmp, err := os.MkdirTemp(scratch, "conformance-data-")
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			defer os.RemoveAll(tmp)
			os.MkdirAll(filepath.Join(tmp, "json"), 0o755)
			for i, f := range wikiFiles() {
				b, err := os.ReadFile(f)
				if err != nil {
					record(n, "FAIL", err.Error())
					return
				}
				os.WriteFile(filepath.Join(tmp, "json", fmt.Sprintf("tiny_wiki_%d.json", i+1)), b, 0o644)
			}
			spec, err := os.ReadFile(filepath.Join(dir, "specs/wikipedia_merge_index_task.json"))
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			text := strings.ReplaceAll(strings.ReplaceAll(string(spec), "%%DATASOURCE%%", "wiki_p6n"), "%%DATA_DIRECTORY%%", tmp)
			if _, err := nativeTask([]byte(text)); err != nil {
				record(n+" (ingest)", "FAIL", err.Error())
				return
			}
			if err := waitQueryable("wiki_p6n"); err != nil {
				record(n+" (ingest)", "FAIL", err.Error())
				return
			}
			runQueries(n, "wikipedia_merge_index_queries.json", map[string]string{"%%DATASOURCE%%": "wiki_p6n"}, nil)
		}},
		{"S2n native index_parallel task (P14, specs/rollup-index.json)", func(n string) {
			b, err := os.ReadFile(filepath.Join(dir, "specs/rollup-index.json"))
			if err != nil {
				record(n, "FAIL", err.Error())
				return
			}
			var spec map[string]any
			json.Unmarshal(b, &spec)
			inner, _ := spec["spec"].(map[string]any)
			schema, _ := inner["dataSchema"].(map[string]any)
			io, _ := inner["ioConfig"].(map[string]any)
			src, _ := io["inputSource"].(map[string]any)
			if schema == nil || src == nil {
				record(n, "FAIL", "rollup-index.json changed shape")
				return
			}
			schema["dataSource"] = "rollup_native"
			src["baseDir"] = filepath.Join(dir, "data")
			text, _ := json.Marshal(spec)
			if _, err := nativeTask(text); err != nil {
				record(n+" (ingest)", "FAIL", err.Error())
				return
			}
			if err := waitQueryable("rollup_native"); err != nil {
				record(n+" (ingest)", "FAIL", err.Error())
				return
			}
			runTutorialSelect(n, "derived/tutorial_rollup.json", `SELECT * FROM "rollup_native"`)
		}},
		{"S2 tutorial rollup (P14)", func(n string) { runTutorial(n, "derived/tutorial_rollup.json") }},
		{"S3 tutorial transform", func(n string) { runTutorial(n, "derived/tutorial_transform.json") }},
		{"S4 tutorial update data", func(n string) { runTutorial(n, "derived/tutorial_update_data.json") }},
		{"S5 schemaless (P12)", runS5},
		{"S6 broadcast join (P13)", runS6},
	}
}

func quotedFiles(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = strconv.Quote(f)
	}
	return strings.Join(q, ",")
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// segmentCount asks the coordinator how many used segments ds has.
func segmentCount(ds string) (int, error) {
	code, body, err := get("/svc/coordinator/v1/metadata/datasources/" + ds + "/segments")
	if err != nil {
		return 0, err
	}
	if code != 200 {
		return 0, fmt.Errorf("segment list of %s: HTTP %d", ds, code)
	}
	var ids []string
	err = json.Unmarshal(body, &ids)
	return len(ids), err
}

// runTutorial runs a derived tutorial file: ingest steps, then SELECT * checks
// compared as unordered row maps with __time as epoch millis.
func runTutorial(name, file string) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	var t struct {
		Steps []struct {
			Kind         string           `json:"kind"`
			Datasource   string           `json:"datasource"`
			SQL          string           `json:"sql"`
			ExpectedRows []map[string]any `json:"expectedRows"`
		} `json:"steps"`
	}
	d := json.NewDecoder(strings.NewReader(strings.ReplaceAll(string(b), "%%DATA_DIR%%", filepath.Join(dir, "data"))))
	d.UseNumber()
	if err := d.Decode(&t); err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	ds := ""
	for i, st := range t.Steps {
		label := fmt.Sprintf("%s step %d (%s)", name, i+1, st.Kind)
		switch st.Kind {
		case "ingest":
			ds = st.Datasource
			if !ingest(label, []string{st.SQL}, nil, ds) {
				return
			}
		case "select":
			checkSelect(label, st.SQL, st.ExpectedRows)
		}
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// runTutorialSelect runs sql and compares it with the expected rows of the
// first select step of a derived tutorial file.
func runTutorialSelect(name, file, sql string) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	var t struct {
		Steps []struct {
			Kind         string           `json:"kind"`
			ExpectedRows []map[string]any `json:"expectedRows"`
		} `json:"steps"`
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&t); err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	for _, st := range t.Steps {
		if st.Kind != "select" {
			continue
		}
		checkSelect(name, sql, st.ExpectedRows)
		return
	}
	record(name, "FAIL", "no select step in "+file)
}

// checkSelect runs a SELECT as an MSQ task and compares its rows, as unordered
// maps, with a tutorial's printed rows (whose __time_millis is the report's __time).
func checkSelect(label, sql string, expected []map[string]any) {
	rows, err := runSQLQuery(mustJSON(sql))
	if err != nil {
		record(label, "FAIL", err.Error())
		return
	}
	var want []any
	for _, r := range expected {
		m := map[string]any{}
		for k, v := range r {
			m[k] = v
		}
		m["__time"] = m["__time_millis"]
		delete(m, "__time_millis")
		want = append(want, m)
	}
	got := rows.([]any)
	sortRows(got)
	sortRows(want)
	if err := compareRows(want, got, nil); err != nil {
		record(label, "FAIL", err.Error())
		return
	}
	record(label, "PASS", "")
}
