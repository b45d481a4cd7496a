package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// runS5 is case S5: profile P12 (WIKI10-NOTAGS ingested by a native batch
// task with type-aware schema discovery: no dimension list, no metrics, so
// every field becomes a column typed by its values) and Druid's two
// interactive SQL queries, sent to /svc/v2/sql as Druid's test sends them
// to /druid/v2/sql (object rows, __time as an ISO string).
func runS5(name string) {
	const ds = "wiki_p12"
	spec := map[string]any{
		"type": "index_parallel",
		"spec": map[string]any{
			"dataSchema": map[string]any{
				"dataSource":     ds,
				"timestampSpec":  map[string]any{"column": "timestamp", "format": "auto"},
				"dimensionsSpec": map[string]any{"dimensions": []any{}, "useSchemaDiscovery": true},
				"granularitySpec": map[string]any{"segmentGranularity": "DAY", "queryGranularity": "NONE",
					"intervals": []string{"2013-08-31/2013-09-02"}},
			},
			"ioConfig": map[string]any{
				"type":        "index_parallel",
				"inputSource": map[string]any{"type": "local", "baseDir": dir + "/data", "filter": "union_query_wikipedia_index_data.json"},
				"inputFormat": map[string]any{"type": "json"},
			},
			"tuningConfig": map[string]any{"type": "index_parallel"},
		},
	}
	b, _ := json.Marshal(spec)
	if _, err := nativeTask(b); err != nil {
		record(name+" (ingest)", "FAIL", err.Error())
		return
	}
	if err := waitQueryable(ds); err != nil {
		record(name+" (ingest)", "FAIL", err.Error())
		return
	}
	entries, err := loadQueries("wikipedia_index_schemaless_queries.json", map[string]string{"%%DATASOURCE%%": ds})
	if err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	for i, e := range entries {
		label := fmt.Sprintf("%s #%d %s", name, i+1, e.Description)
		runSQLEntry(label, e)
	}
}

// runSQLEntry runs one entry of Druid's query files whose query is an SQL
// object ({"query": "..."}) through /svc/v2/sql and records how its rows
// compare with the expected ones.
func runSQLEntry(label string, e entry) {
	var q struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(e.Query, &q); err != nil || q.Query == "" {
		record(label, "FAIL", "not an SQL query object: "+trim(e.Query))
		return
	}
	expected, err := decode(e.ExpectedResults)
	if err != nil {
		record(label, "FAIL", "bad expected results: "+err.Error())
		return
	}
	got, err := interactiveSQL(q.Query)
	if err != nil {
		record(label, "FAIL", err.Error())
		return
	}
	want, _ := expected.([]any)
	// Row order is part of the answer only under a top-level ORDER BY
	// (Quidem's rule, which the corpus runner also follows).
	if !orderMatters(q.Query) {
		sortRows(want)
		sortRows(got)
	}
	if err := compareRows(want, got, nil); err != nil {
		record(label, "FAIL", err.Error())
		return
	}
	record(label, "PASS", "")
}

// interactiveSQL runs one statement through POST /svc/v2/sql and returns its
// rows as objects (the default resultFormat).
func interactiveSQL(sql string) ([]any, error) {
	body, _ := json.Marshal(map[string]any{"query": sql})
	resp, err := client.Post(router+"/svc/v2/sql", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, trim(out))
	}
	v, err := decode(out)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", strings.TrimSpace(trim(out)), err)
	}
	rows, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list of rows: %s", trim(out))
	}
	return rows, nil
}
