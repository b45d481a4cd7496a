package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// runS6 is case S6: profile P13 (WIKI10-NOTAGS with added and deleted as
// long dimensions, rolled up by second into one YEAR segment) made a
// broadcast (joinable) table by a broadcastForever rule, so that every data
// server loads it; then Druid's first broadcast-join query, which reads the
// broadcast table directly. The second query joins Druid's wikipedia
// edit-stream set, which is not shipped (MANIFEST), and is skipped.
func runS6(name string) {
	const ds = "wiki_p13"
	if code, body, err := post("/svc/coordinator/v1/rules/"+ds, []any{map[string]any{"type": "broadcastForever"}}); err != nil || code != 200 {
		record(name+" (rules)", "FAIL", fmt.Sprintf("setting the broadcast rule: HTTP %d %s %v", code, trim(body), err))
		return
	}
	dims := []any{"page", "language", "user", "unpatrolled", "newPage", "robot", "anonymous", "namespace", "continent", "country", "region", "city",
		map[string]any{"type": "long", "name": "added"}, map[string]any{"type": "long", "name": "deleted"}}
	spec := map[string]any{
		"type": "index_parallel",
		"spec": map[string]any{
			"dataSchema": map[string]any{
				"dataSource":     ds,
				"timestampSpec":  map[string]any{"column": "timestamp", "format": "auto"},
				"dimensionsSpec": map[string]any{"dimensions": dims},
				"metricsSpec": []any{
					map[string]any{"type": "count", "name": "count"},
					map[string]any{"type": "doubleSum", "name": "sum_added", "fieldName": "added"},
					map[string]any{"type": "doubleSum", "name": "sum_deleted", "fieldName": "deleted"},
					map[string]any{"type": "doubleSum", "name": "delta", "fieldName": "delta"},
				},
				"granularitySpec": map[string]any{"segmentGranularity": "YEAR", "queryGranularity": "SECOND", "rollup": true,
					"intervals": []string{"2013-01-01/2014-01-01"}},
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
	if err := waitBroadcast(ds); err != nil {
		record(name+" (broadcast)", "FAIL", err.Error())
		return
	}
	record(name+" (broadcast)", "PASS", "")
	entries, err := loadQueries("broadcast_join_queries.json", map[string]string{"%%JOIN_DATASOURCE%%": ds})
	if err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	for i, e := range entries {
		label := fmt.Sprintf("%s #%d %s", name, i+1, e.Description)
		if i > 0 {
			record(label, "SKIP", "joins Druid's wikipedia edit-stream set (%%REGULAR_DATASOURCE%%), which is not shipped")
			continue
		}
		runSQLEntry(label, e)
	}
}

// waitBroadcast waits until every historical serves the segments of ds, as
// a broadcast rule asks, reading sys.servers and sys.server_segments.
func waitBroadcast(ds string) error {
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		servers, err1 := interactiveSQL(`SELECT COUNT(*) AS n FROM sys.servers WHERE server_type = 'HISTORICAL'`)
		serving, err2 := interactiveSQL(`SELECT "server", COUNT(*) AS n FROM sys.server_segments WHERE segment_id LIKE '` + ds + `%' GROUP BY 1`)
		if err1 == nil && err2 == nil && len(servers) == 1 {
			want, got := fmt.Sprint(servers[0].(map[string]any)["n"]), fmt.Sprint(len(serving))
			if want == got && want != "0" {
				return nil
			}
			last = fmt.Sprintf("%s of %s historicals serve %s", got, want, ds)
		} else {
			last = fmt.Sprint(err1, err2)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not loaded on every historical after 60 s: %s", last)
}
