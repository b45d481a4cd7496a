package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"strata/auth"
	"strata/internal/eventually"
	"strata/interval"
	"strata/querynode/sqlplan"
	"strata/querynode/sysinfo"
)

// staticSchema is a druid schema of fixed datasources and columns (the SQL
// catalog's, which reads them from segment metadata, is not under test here).
type staticSchema map[string][]sqlplan.Column

func (s staticSchema) DataSources(context.Context) ([]string, error) {
	var out []string
	for ds := range s {
		out = append(out, ds)
	}
	return out, nil
}

func (s staticSchema) Columns(_ context.Context, ds string) ([]sqlplan.Column, error) {
	return s[ds], nil
}

// metaGrants is an authorizer allowing exactly the listed "TYPE:name/ACTION".
type metaGrants map[string]bool

func (g metaGrants) Authorize(_ *auth.Identity, r auth.Resource, a auth.Action) bool {
	return g[r.String()+"/"+string(a)]
}

// inlineTable decodes a metadata table's data source.
type inlineTable struct {
	Type        string   `json:"type"`
	ColumnNames []string `json:"columnNames"`
	ColumnTypes []string `json:"columnTypes"`
	Rows        [][]any  `json:"rows"`
}

func metaTable(t *testing.T, tables *sysinfo.Tables, schema, name string) (*sqlplan.Table, inlineTable) {
	t.Helper()
	tab, err := tables.Table(context.Background(), schema, name)
	if err != nil || tab == nil {
		t.Fatalf("%s.%s: %v, %v", schema, name, tab, err)
	}
	var it inlineTable
	d := json.NewDecoder(strings.NewReader(string(tab.DataSource)))
	d.UseNumber()
	if err := d.Decode(&it); err != nil || it.Type != "inline" {
		t.Fatalf("%s.%s: data source %s: %v", schema, name, tab.DataSource, err)
	}
	if len(it.ColumnNames) != len(tab.Columns) {
		t.Fatalf("%s.%s: %d column names for %d columns", schema, name, len(it.ColumnNames), len(tab.Columns))
	}
	for i, c := range tab.Columns {
		if it.ColumnNames[i] != c.Name {
			t.Errorf("%s.%s: inline column %d is %s, the table's %s", schema, name, i, it.ColumnNames[i], c.Name)
		}
	}
	for _, r := range it.Rows {
		if len(r) != len(it.ColumnNames) {
			t.Fatalf("%s.%s: row %v for %d columns", schema, name, r, len(it.ColumnNames))
		}
	}
	return tab, it
}

// row returns the row as a map by column name, values as their JSON text
// (strings unquoted, null as "<nil>").
func rowMap(it inlineTable, r []any) map[string]string {
	m := map[string]string{}
	for i, c := range it.ColumnNames {
		m[c] = fmt.Sprint(r[i])
	}
	return m
}

// The sys and INFORMATION_SCHEMA tables over a real control plane with a
// historical serving four published segments: every row matches the
// cluster, and the native engine filters and aggregates the inline table
// the broker receives like any table.
func TestMetadataTablesOverACluster(t *testing.T) {
	f := newDPFixture(t)
	segs := publishWiki(f, "wiki")
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 1)
	host := strings.TrimPrefix(h.url, "http://")

	tables := &sysinfo.Tables{
		Druid:   staticSchema{"wiki": {{Name: "__time", Type: "TIMESTAMP"}, {Name: "page", Type: "VARCHAR"}, {Name: "added", Type: "BIGINT"}}},
		Control: sysinfo.HTTPControl([]string{"http://127.0.0.1:1", f.coord}, http.DefaultClient), // the first control node is down
	}
	// The coordinator's inventory polls the historical on its own period.
	eventually.True(t, "the coordinator to list the served segments", func() bool {
		_, it := metaTable(t, tables, "sys", "server_segments")
		return len(it.Rows) == 4
	})

	_, segTable := metaTable(t, tables, "sys", "segments")
	if len(segTable.Rows) != 4 {
		t.Fatalf("sys.segments: %d rows", len(segTable.Rows))
	}
	var total int64
	for i, seg := range segs {
		total += seg.Size
		got := rowMap(segTable, segTable.Rows[i])
		dims, _ := json.Marshal(seg.Dimensions)
		mets, _ := json.Marshal(seg.Metrics)
		want := map[string]string{"segment_id": seg.ID().String(), "datasource": "wiki", "version": "v1",
			"start": interval.FormatMillis(seg.Interval.Start), "end": interval.FormatMillis(seg.Interval.End),
			"size": fmt.Sprint(seg.Size), "partition_num": "0", "num_replicas": "1", "is_active": "1", "is_published": "1",
			"is_available": "1", "is_realtime": "0", "is_overshadowed": "0", "dimensions": string(dims), "metrics": string(mets)}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("sys.segments row %d %s = %s, want %s", i, k, got[k], v)
			}
		}
	}

	_, ss := metaTable(t, tables, "sys", "server_segments")
	for i, r := range ss.Rows {
		if m := rowMap(ss, r); m["server"] != host || m["segment_id"] != segs[i].ID().String() {
			t.Errorf("sys.server_segments row %d: %v (historical %s)", i, m, host)
		}
	}

	_, servers := metaTable(t, tables, "sys", "servers")
	var hist map[string]string
	for _, r := range servers.Rows {
		if m := rowMap(servers, r); m["server"] == host {
			hist = m
		}
	}
	if hist == nil || hist["server_type"] != "HISTORICAL" || hist["curr_size"] != fmt.Sprint(total) || hist["tier"] != "_default_tier" ||
		hist["tls_port"] != "-1" || !strings.HasSuffix(host, ":"+hist["plaintext_port"]) || hist["is_leader"] != "<nil>" {
		t.Errorf("sys.servers: historical %v; all %v", hist, servers.Rows)
	}

	// The broker's engine over the inline table: filter and aggregate.
	tab, _ := tables.Table(context.Background(), "sys", "segments")
	q := `{"queryType":"timeseries","dataSource":` + string(tab.DataSource) + `,"intervals":["1970/2100"],"granularity":"all",
		"filter":{"type":"and","fields":[{"type":"selector","dimension":"datasource","value":"wiki"},{"type":"selector","dimension":"is_available","value":"1"}]},
		"aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"bytes","fieldName":"size"}]}`
	code, body, _ := b.query(t, q)
	if want := fmt.Sprintf(`"result":{"n":4,"bytes":%d}`, total); code != 200 || !strings.Contains(body, want) {
		t.Errorf("timeseries over sys.segments: %d %s, want %s", code, body, want)
	}

	_, schemata := metaTable(t, tables, "INFORMATION_SCHEMA", "SCHEMATA")
	var names []string
	for _, r := range schemata.Rows {
		names = append(names, rowMap(schemata, r)["SCHEMA_NAME"])
	}
	if strings.Join(names, ",") != "druid,INFORMATION_SCHEMA,lookup,sys" {
		t.Errorf("SCHEMATA: %v", names)
	}

	_, tabs := metaTable(t, tables, "INFORMATION_SCHEMA", "TABLES")
	kinds := map[string]string{}
	for _, r := range tabs.Rows {
		m := rowMap(tabs, r)
		kinds[m["TABLE_SCHEMA"]+"."+m["TABLE_NAME"]] = m["TABLE_TYPE"]
	}
	for name, typ := range map[string]string{"druid.wiki": "TABLE", "sys.segments": "SYSTEM_TABLE", "sys.servers": "SYSTEM_TABLE",
		"sys.server_segments": "SYSTEM_TABLE", "sys.tasks": "SYSTEM_TABLE", "sys.supervisors": "SYSTEM_TABLE",
		"INFORMATION_SCHEMA.COLUMNS": "SYSTEM_TABLE", "INFORMATION_SCHEMA.ROUTINES": "SYSTEM_TABLE"} {
		if kinds[name] != typ {
			t.Errorf("TABLES: %s is %q, want %s", name, kinds[name], typ)
		}
	}
	if len(kinds) != 10 {
		t.Errorf("TABLES: %d tables: %v", len(kinds), kinds)
	}

	_, columns := metaTable(t, tables, "INFORMATION_SCHEMA", "COLUMNS")
	var wiki []string
	for _, r := range columns.Rows {
		if m := rowMap(columns, r); m["TABLE_NAME"] == "wiki" {
			wiki = append(wiki, strings.Join([]string{m["ORDINAL_POSITION"], m["COLUMN_NAME"], m["DATA_TYPE"], m["IS_NULLABLE"], m["JDBC_TYPE"]}, " "))
		}
	}
	if want := []string{"1 __time TIMESTAMP NO 93", "2 page VARCHAR YES 12", "3 added BIGINT YES -5"}; !slices.Equal(wiki, want) {
		t.Errorf("COLUMNS of wiki: %v, want %v", wiki, want)
	}

	// With security on, a caller sees the rows of the datasources it may
	// read, and the servers only with STATE READ (Druid's rules).
	other := auth.WithIdentity(auth.WithAuthorizer(context.Background(), metaGrants{"DATASOURCE:other/READ": true}), &auth.Identity{Name: "u"})
	for _, name := range []string{"segments", "tasks", "supervisors"} {
		if tab, err := tables.Table(other, "sys", name); err != nil || !strings.Contains(string(tab.DataSource), `"rows":[]`) {
			t.Errorf("sys.%s without READ on wiki: %v %v", name, tab, err)
		}
	}
	for _, name := range []string{"servers", "server_segments"} {
		if _, err := tables.Table(other, "sys", name); !errors.Is(err, auth.ErrForbidden) {
			t.Errorf("sys.%s without STATE READ: %v, want forbidden", name, err)
		}
	}
	if tab, err := tables.Table(other, "INFORMATION_SCHEMA", "TABLES"); err != nil || strings.Contains(string(tab.DataSource), `"wiki"`) {
		t.Errorf("TABLES without READ on wiki lists it: %v %v", tab, err)
	}
	reader := auth.WithIdentity(auth.WithAuthorizer(context.Background(), metaGrants{"DATASOURCE:wiki/READ": true, "STATE:STATE/READ": true}), &auth.Identity{Name: "r"})
	if _, it := metaTable(t, tables, "sys", "segments"); len(it.Rows) != 4 {
		t.Errorf("sys.segments with security off: %d rows", len(it.Rows))
	}
	if tab, err := tables.Table(reader, "sys", "segments"); err != nil || strings.Count(string(tab.DataSource), `"wiki_`) != 4 {
		t.Errorf("sys.segments with READ on wiki: %v %v", tab, err)
	}
	if _, err := tables.Table(reader, "sys", "servers"); err != nil {
		t.Errorf("sys.servers with STATE READ: %v", err)
	}

	if tab, err := tables.Table(context.Background(), "sys", "nope"); tab != nil || err != nil {
		t.Errorf("unknown sys table: %v %v", tab, err)
	}
	if tab, err := tables.Table(context.Background(), "SYS", "segments"); tab != nil || err != nil {
		t.Errorf("schema names are case-sensitive: %v %v", tab, err)
	}
}

// sys.tasks and sys.supervisors over a real overlord: a task and a
// supervisor as the task and supervisor APIs report them.
func TestSysTasksAndSupervisors(t *testing.T) {
	ts, _, _, _ := supServer(t, nil)
	if code, body, _ := call(t, "POST", ts.URL+supPath, "application/json", kafkaSpec("wiki", "topic1", 1, true)); code != 200 {
		t.Fatalf("supervisor: %d %s", code, body)
	}
	id := submitTask(t, ts.URL, `{"type":"noop","id":"noop1","dataSource":"a","runTime":1}`)
	tables := &sysinfo.Tables{Control: sysinfo.HTTPControl([]string{ts.URL}, http.DefaultClient)}

	_, sup := metaTable(t, tables, "sys", "supervisors")
	if len(sup.Rows) != 1 {
		t.Fatalf("sys.supervisors: %v", sup.Rows)
	}
	m := rowMap(sup, sup.Rows[0])
	if m["supervisor_id"] != "wiki" || m["type"] != "kafka" || m["source"] != "stream" || m["suspended"] != "1" ||
		m["healthy"] != "1" || m["state"] == "" || !strings.Contains(m["spec"], `"topic":"topic1"`) {
		t.Errorf("sys.supervisors row %v", m)
	}

	_, tasks := metaTable(t, tables, "sys", "tasks")
	_, listing, _ := call(t, "GET", ts.URL+ip+"/tasks", "", "")
	api := decode[[]map[string]any](t, listing)
	if len(tasks.Rows) != 1 || len(api) != 1 {
		t.Fatalf("sys.tasks %v; API %s", tasks.Rows, listing)
	}
	m = rowMap(tasks, tasks.Rows[0])
	want := map[string]string{"task_id": id, "group_id": fmt.Sprint(api[0]["groupId"]), "type": "noop", "datasource": "a",
		"created_time": fmt.Sprint(api[0]["createdTime"]), "queue_insertion_time": fmt.Sprint(api[0]["queueInsertionTime"]),
		"status": fmt.Sprint(api[0]["statusCode"]), "runner_status": fmt.Sprint(api[0]["runnerStatusCode"]), "error_msg": "<nil>"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("sys.tasks %s = %s, want %s", k, m[k], v)
		}
	}

	// Without a reachable control plane the table fails with the reason,
	// never an empty (wrong) answer.
	down := &sysinfo.Tables{Control: sysinfo.HTTPControl([]string{"http://127.0.0.1:1"}, http.DefaultClient)}
	if tab, err := down.Table(context.Background(), "sys", "tasks"); err == nil || tab != nil {
		t.Errorf("unreachable control plane: %v %v", tab, err)
	}
}
