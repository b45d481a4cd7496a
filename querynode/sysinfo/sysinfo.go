// Package sysinfo serves Druid's SQL metadata tables (INFORMATION_SCHEMA
// and sys) as row providers: each table is read when a query names it and
// handed to the SQL planner as a native inline data source, so the engine
// filters, groups and sorts it like any table. The rows come from the SQL
// catalog (datasources and their columns, from segment metadata) and from
// the control plane's HTTP API (servers, segments, tasks, supervisors): this
// package is on the data plane and learns about the cluster only over HTTP.
package sysinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"strata/querynode/sqlplan"
	"strata/segmeta"
)

// Schema names, as Druid spells them (identifiers are case-sensitive).
const (
	SchemaDruid  = "druid"
	SchemaInfo   = "INFORMATION_SCHEMA"
	SchemaSys    = "sys"
	SchemaLookup = "lookup"
)

// DruidSchema is the SQL catalog's druid schema: the datasources and their
// columns with SQL types.
type DruidSchema interface {
	DataSources(ctx context.Context) ([]string, error)
	Columns(ctx context.Context, dataSource string) ([]sqlplan.Column, error)
}

// Control reads a control-plane API path (for example
// "/svc/coordinator/v1/servers?simple") and returns the body of its 200
// answer; the caller chooses the control nodes and the credentials.
type Control func(ctx context.Context, path string) ([]byte, error)

// Routine is one function INFORMATION_SCHEMA.ROUTINES lists.
type Routine struct {
	Name       string
	Aggregator bool
	Signatures string // e.g. "'ABS(<NUMERIC>)'"; "" when not described
}

// Tables resolves the metadata tables. Its Table method has the planner's
// Catalog signature, so it plugs in beside the druid schema.
type Tables struct {
	Druid    DruidSchema
	Control  Control
	Routines func() []Routine // the planner's functions; nil: ROUTINES is unsupported
	// Realtime lists the realtime segments data servers announce (rows not
	// published yet, which only brokers know); nil lists none.
	Realtime func() []RealtimeSegment
	// Lookups lists the lookups the broker holds: the lookup schema's
	// tables, each with columns k and v. nil lists none.
	Lookups func() []string
	// NumRows counts the rows of a datasource's segments by segment id, as
	// the data servers serving them report (Druid's broker fills
	// sys.segments.num_rows from segment metadata the same way; the
	// coordinator does not know it). nil, or a segment not counted, leaves
	// num_rows 0, Druid's value while the count is unknown.
	NumRows func(ctx context.Context, dataSource string) (map[string]int64, error)
}

// LookupColumns are the columns of a lookup schema table, as Druid has them.
var LookupColumns = cols("k VARCHAR", "v VARCHAR")

// RealtimeSegment is a realtime segment and the server announcing it.
type RealtimeSegment struct {
	Server  string // host:port
	Segment *segmeta.DataSegment
}

// column types of the tables' own columns.
const (
	varchar = "VARCHAR"
	bigint  = "BIGINT"
)

// table is a metadata table's definition: its columns and how its rows are
// read. Each row holds one value per column: string, int64 or nil.
type table struct {
	schema, name string
	columns      []sqlplan.Column
	rows         func(t *Tables, ctx context.Context) ([][]any, error)
}

func cols(spec ...string) []sqlplan.Column {
	out := make([]sqlplan.Column, len(spec))
	for i, s := range spec {
		name, typ, _ := strings.Cut(s, " ")
		out[i] = sqlplan.Column{Name: name, Type: typ}
	}
	return out
}

// tables are Druid's metadata tables with its column names and types (the
// "SQL metadata tables" documentation), in the order Druid lists them. Set
// in init: TABLES and COLUMNS list the tables themselves.
var tables []*table

func init() {
	tables = []*table{
		{SchemaInfo, "SCHEMATA", cols("CATALOG_NAME VARCHAR", "SCHEMA_NAME VARCHAR", "SCHEMA_OWNER VARCHAR",
			"DEFAULT_CHARACTER_SET_CATALOG VARCHAR", "DEFAULT_CHARACTER_SET_SCHEMA VARCHAR", "DEFAULT_CHARACTER_SET_NAME VARCHAR", "SQL_PATH VARCHAR"),
			(*Tables).schemata},
		{SchemaInfo, "TABLES", cols("TABLE_CATALOG VARCHAR", "TABLE_SCHEMA VARCHAR", "TABLE_NAME VARCHAR", "TABLE_TYPE VARCHAR",
			"IS_JOINABLE VARCHAR", "IS_BROADCAST VARCHAR"),
			(*Tables).tablesRows},
		{SchemaInfo, "COLUMNS", cols("TABLE_CATALOG VARCHAR", "TABLE_SCHEMA VARCHAR", "TABLE_NAME VARCHAR", "COLUMN_NAME VARCHAR",
			"ORDINAL_POSITION BIGINT", "COLUMN_DEFAULT VARCHAR", "IS_NULLABLE VARCHAR", "DATA_TYPE VARCHAR", "CHARACTER_MAXIMUM_LENGTH BIGINT",
			"CHARACTER_OCTET_LENGTH BIGINT", "NUMERIC_PRECISION BIGINT", "NUMERIC_PRECISION_RADIX BIGINT", "NUMERIC_SCALE BIGINT",
			"DATETIME_PRECISION BIGINT", "CHARACTER_SET_NAME VARCHAR", "COLLATION_NAME VARCHAR", "JDBC_TYPE BIGINT"),
			(*Tables).columnsRows},
		{SchemaInfo, "ROUTINES", cols("ROUTINE_CATALOG VARCHAR", "ROUTINE_SCHEMA VARCHAR", "ROUTINE_NAME VARCHAR", "ROUTINE_TYPE VARCHAR",
			"IS_AGGREGATOR VARCHAR", "SIGNATURES VARCHAR"),
			(*Tables).routines},
		{SchemaSys, "segments", cols("segment_id VARCHAR", "datasource VARCHAR", "start VARCHAR", "end VARCHAR", "size BIGINT",
			"version VARCHAR", "partition_num BIGINT", "num_replicas BIGINT", "num_rows BIGINT", "is_active BIGINT", "is_published BIGINT",
			"is_available BIGINT", "is_realtime BIGINT", "is_overshadowed BIGINT", "shard_spec VARCHAR", "dimensions VARCHAR",
			"metrics VARCHAR", "last_compaction_state VARCHAR", "replication_factor BIGINT"),
			(*Tables).segments},
		{SchemaSys, "server_segments", cols("server VARCHAR", "segment_id VARCHAR"), (*Tables).serverSegments},
		{SchemaSys, "servers", cols("server VARCHAR", "host VARCHAR", "plaintext_port BIGINT", "tls_port BIGINT", "server_type VARCHAR",
			"tier VARCHAR", "curr_size BIGINT", "max_size BIGINT", "is_leader BIGINT", "start_time VARCHAR", "version VARCHAR"),
			(*Tables).servers},
		{SchemaSys, "supervisors", cols("supervisor_id VARCHAR", "state VARCHAR", "detailed_state VARCHAR", "healthy BIGINT",
			"type VARCHAR", "source VARCHAR", "suspended BIGINT", "spec VARCHAR"),
			(*Tables).supervisors},
		{SchemaSys, "tasks", cols("task_id VARCHAR", "group_id VARCHAR", "type VARCHAR", "datasource VARCHAR", "created_time VARCHAR",
			"queue_insertion_time VARCHAR", "status VARCHAR", "runner_status VARCHAR", "duration BIGINT", "location VARCHAR",
			"host VARCHAR", "plaintext_port BIGINT", "tls_port BIGINT", "error_msg VARCHAR"),
			(*Tables).tasks},
	}
}

func lookupTable(schema, name string) *table {
	for _, t := range tables {
		if t.schema == schema && t.name == name {
			return t
		}
	}
	return nil
}

// Has reports whether schema holds metadata tables (so an unknown name
// there is an unknown table, not a datasource).
func Has(schema string) bool { return schema == SchemaInfo || schema == SchemaSys }

// Table resolves schema.name to its rows as an inline data source; a name
// that is not a metadata table is (nil, nil).
func (t *Tables) Table(ctx context.Context, schema, name string) (*sqlplan.Table, error) {
	def := lookupTable(schema, name)
	if def == nil {
		return nil, nil
	}
	rows, err := def.rows(t, ctx)
	var planErr *sqlplan.Error
	if errors.As(err, &planErr) {
		return nil, err // the client's: the planner reports its category
	}
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", schema, name, err)
	}
	ds, err := inline(def.columns, rows)
	if err != nil {
		return nil, err
	}
	return &sqlplan.Table{Columns: slices.Clone(def.columns), DataSource: ds}, nil
}

// inline is the native inline data source of the rows.
func inline(columns []sqlplan.Column, rows [][]any) (json.RawMessage, error) {
	names := make([]string, len(columns))
	types := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.Name
		types[i] = "STRING"
		if c.Type == bigint {
			types[i] = "LONG"
		}
	}
	if rows == nil {
		rows = [][]any{}
	}
	return json.Marshal(map[string]any{"type": "inline", "columnNames": names, "columnTypes": types, "rows": rows})
}

// ---- INFORMATION_SCHEMA ----

// schemaNames are the schemas SCHEMATA lists, in Druid's order.
var schemaNames = []string{SchemaDruid, SchemaInfo, SchemaLookup, SchemaSys}

func (t *Tables) schemata(context.Context) ([][]any, error) {
	var rows [][]any
	for _, s := range schemaNames {
		rows = append(rows, []any{"druid", s, nil, nil, nil, nil, nil})
	}
	return rows, nil
}

// tableEntry is one table of any schema with its columns.
type tableEntry struct {
	schema, name, typ string
	columns           []sqlplan.Column
}

// allTables lists the druid schema's datasources, then the metadata tables.
func (t *Tables) allTables(ctx context.Context, withColumns bool) ([]tableEntry, error) {
	var out []tableEntry
	if t.Druid != nil {
		names, err := t.Druid.DataSources(ctx)
		if err != nil {
			return nil, err
		}
		names = slices.Clone(names)
		slices.Sort(names)
		for _, n := range names {
			if !readable(ctx, n) { // listed only to callers who may read it
				continue
			}
			e := tableEntry{schema: SchemaDruid, name: n, typ: "TABLE"}
			if withColumns {
				if e.columns, err = t.Druid.Columns(ctx, n); err != nil {
					return nil, err
				}
			}
			out = append(out, e)
		}
	}
	if t.Lookups != nil {
		for _, n := range t.Lookups() {
			out = append(out, tableEntry{schema: SchemaLookup, name: n, typ: "LOOKUP", columns: LookupColumns})
		}
	}
	for _, def := range tables {
		out = append(out, tableEntry{schema: def.schema, name: def.name, typ: "SYSTEM_TABLE", columns: def.columns})
	}
	return out, nil
}

func (t *Tables) tablesRows(ctx context.Context) ([][]any, error) {
	entries, err := t.allTables(ctx, false)
	if err != nil {
		return nil, err
	}
	broadcast := t.broadcastTables(ctx) // broadcast.go
	rows := make([][]any, len(entries))
	for i, e := range entries {
		// A datasource is joinable and broadcast when broadcast rules place
		// it on every data server; metadata tables never. Lookups are both:
		// every querying process holds them, as Druid reports.
		joinable := "NO"
		if e.schema == SchemaLookup || e.schema == SchemaDruid && broadcast(e.name) {
			joinable = "YES"
		}
		rows[i] = []any{"druid", e.schema, e.name, e.typ, joinable, joinable}
	}
	return rows, nil
}

func (t *Tables) columnsRows(ctx context.Context) ([][]any, error) {
	entries, err := t.allTables(ctx, true)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, e := range entries {
		for i, c := range e.columns {
			ti := typeInfoOf(c.Type)
			nullable := "YES"
			if c.Name == "__time" && e.schema == SchemaDruid {
				nullable = "NO"
			}
			rows = append(rows, []any{"druid", e.schema, e.name, c.Name, int64(i + 1), nil, nullable, ti.dataType,
				nil, nil, ti.precision, ti.radix, ti.scale, ti.datetimePrecision, ti.charset, ti.collation, ti.jdbc})
		}
	}
	return rows, nil
}

// typeInfo is what COLUMNS says about a SQL type (Calcite's values, as
// Druid reports them).
type typeInfo struct {
	dataType                                   string
	precision, radix, scale, datetimePrecision any // int64 or nil
	charset, collation                         any // string or nil
	jdbc                                       int64
}

func typeInfoOf(sqlType string) typeInfo {
	up := strings.ToUpper(sqlType)
	switch {
	case up == "VARCHAR":
		return typeInfo{dataType: "VARCHAR", charset: "UTF-16LE", collation: "UTF-16LE$en_US$primary", jdbc: 12}
	case up == "BIGINT":
		return typeInfo{dataType: "BIGINT", precision: int64(19), radix: int64(10), scale: int64(0), jdbc: -5}
	case up == "INTEGER":
		return typeInfo{dataType: "INTEGER", precision: int64(10), radix: int64(10), scale: int64(0), jdbc: 4}
	case up == "DOUBLE":
		return typeInfo{dataType: "DOUBLE", precision: int64(15), radix: int64(10), jdbc: 8}
	case up == "FLOAT" || up == "REAL":
		return typeInfo{dataType: up, precision: int64(7), radix: int64(10), jdbc: 6}
	case up == "BOOLEAN":
		return typeInfo{dataType: "BOOLEAN", jdbc: 16}
	case up == "TIMESTAMP":
		return typeInfo{dataType: "TIMESTAMP", datetimePrecision: int64(3), jdbc: 93}
	case up == "DATE":
		return typeInfo{dataType: "DATE", jdbc: 91}
	case strings.Contains(up, "ARRAY"):
		// Calcite's type name for every array type.
		return typeInfo{dataType: "ARRAY", jdbc: 2003}
	case strings.HasPrefix(up, "COMPLEX<"):
		return typeInfo{dataType: "COMPLEX<" + sqlType[len("COMPLEX<"):], jdbc: 1111}
	}
	return typeInfo{dataType: up, jdbc: 1111}
}

func (t *Tables) routines(context.Context) ([][]any, error) {
	if t.Routines == nil {
		// An empty list would be a wrong answer: Druid lists every function.
		return nil, &sqlplan.Error{Category: sqlplan.CategoryUnsupported,
			Msg: "INFORMATION_SCHEMA.ROUTINES is not supported yet: the planner does not list its functions"}
	}
	var rows [][]any
	for _, r := range t.Routines() {
		agg := "NO"
		if r.Aggregator {
			agg = "YES"
		}
		var sig any
		if r.Signatures != "" {
			sig = r.Signatures
		}
		rows = append(rows, []any{"druid", "INFORMATION_SCHEMA", r.Name, "FUNCTION", agg, sig})
	}
	return rows, nil
}
