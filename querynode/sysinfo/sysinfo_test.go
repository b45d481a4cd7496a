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
