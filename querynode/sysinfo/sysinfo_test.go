package sysinfo

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"strata/querynode/sqlplan"
)

// COLUMNS reports Calcite's type names: the corpus's INFORMATION_SCHEMA
// checks expect ARRAY for every array column and COMPLEX<json> as written.
func TestColumnDataTypes(t *testing.T) {
	for typ, want := range map[string]string{
		"VARCHAR": "VARCHAR", "BIGINT": "BIGINT", "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "TIMESTAMP": "TIMESTAMP",
		"VARCHAR ARRAY": "ARRAY", "ARRAY<BIGINT>": "ARRAY", "COMPLEX<json>": "COMPLEX<json>", "BOOLEAN": "BOOLEAN",
	} {
		if got := typeInfoOf(typ).dataType; got != want {
			t.Errorf("%s: DATA_TYPE %s, want %s", typ, got, want)
		}
	}
}

func TestServerTypes(t *testing.T) {
	for _, c := range []struct {
		e    serverEntry
		want string
	}{
		{serverEntry{Type: "historical"}, "HISTORICAL"},
		{serverEntry{Type: "indexer-executor"}, "MIDDLE_MANAGER"},
		{serverEntry{Type: "broker"}, "BROKER"},
		{serverEntry{Type: "coordinator,overlord", Role: "coordinator,overlord"}, "COORDINATOR"},
		{serverEntry{Type: "overlord", Role: "overlord"}, "OVERLORD"},
		{serverEntry{Type: "router", Role: "router"}, "ROUTER"},
	} {
		if got := serverType(c.e); got != c.want {
			t.Errorf("%+v: %s, want %s", c.e, got, c.want)
		}
	}
}

// ROUTINES lists the functions it is given and is unsupported without them;
// a table without a control plane fails instead of answering empty.
func TestRoutinesAndNoControl(t *testing.T) {
	tabs := &Tables{Routines: func() []Routine {
		return []Routine{{Name: "ABS", Signatures: "'ABS(<NUMERIC>)'"}, {Name: "SUM", Aggregator: true}}
	}}
	tab, err := tabs.Table(context.Background(), SchemaInfo, "ROUTINES")
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		ColumnTypes []string `json:"columnTypes"`
		Rows        [][]any  `json:"rows"`
	}
	json.Unmarshal(tab.DataSource, &ds)
	if len(ds.Rows) != 2 || ds.Rows[0][2] != "ABS" || ds.Rows[0][4] != "NO" || ds.Rows[1][4] != "YES" || ds.Rows[1][5] != nil {
		t.Errorf("ROUTINES rows %v", ds.Rows)
	}
	if tab.Columns[0] != (sqlplan.Column{Name: "ROUTINE_CATALOG", Type: "VARCHAR"}) || ds.ColumnTypes[0] != "STRING" {
		t.Errorf("ROUTINES columns %v %v", tab.Columns, ds.ColumnTypes)
	}
	var planErr *sqlplan.Error
	if _, err := (&Tables{}).Table(context.Background(), SchemaInfo, "ROUTINES"); !errors.As(err, &planErr) || planErr.Category != sqlplan.CategoryUnsupported {
		t.Errorf("ROUTINES without a function list: %v, want an unsupported error", err)
	}
	for _, name := range []string{"segments", "servers", "server_segments", "tasks", "supervisors"} {
		if _, err := tabs.Table(context.Background(), SchemaSys, name); err == nil {
			t.Errorf("sys.%s without a control plane answered", name)
		}
	}
}

// fakeDruid lists datasources without columns.
type fakeDruid []string

func (f fakeDruid) DataSources(context.Context) ([]string, error) { return f, nil }
func (fakeDruid) Columns(context.Context, string) ([]sqlplan.Column, error) {
	return nil, nil
}

// INFORMATION_SCHEMA.TABLES reports a datasource that broadcast rules alone
// place (its own rules, else the defaults) as joinable and broadcast.
func TestTablesBroadcast(t *testing.T) {
	rules := `{"_default":[{"type":"loadForever","tieredReplicants":{"_default_tier":2}}],
		"bc":[{"type":"broadcastForever"}],
		"mixed":[{"type":"loadByInterval","interval":"2020/2021"},{"type":"broadcastForever"}],
		"dropped":[{"type":"broadcastByPeriod","period":"P1M"},{"type":"dropForever"}]}`
	tabs := &Tables{Druid: fakeDruid{"bc", "mixed", "dropped", "plain"}, Control: func(_ context.Context, path string) ([]byte, error) {
		if path != pathRules {
			return nil, errors.New("unexpected path " + path)
		}
		return []byte(rules), nil
	}}
	tab, err := tabs.Table(context.Background(), SchemaInfo, "TABLES")
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		Rows [][]any `json:"rows"`
	}
	json.Unmarshal(tab.DataSource, &ds)
	got := map[string]string{}
	for _, r := range ds.Rows {
		if r[1] == SchemaDruid {
			got[r[2].(string)] = r[4].(string) + "/" + r[5].(string)
		}
	}
	want := map[string]string{"bc": "YES/YES", "mixed": "NO/NO", "dropped": "YES/YES", "plain": "NO/NO"}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: IS_JOINABLE/IS_BROADCAST %s, want %s (all %v)", n, got[n], w, got)
		}
	}
}
