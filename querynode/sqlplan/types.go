// Package sqlplan plans interactive Druid SQL onto native queries: a SELECT
// becomes one native query (scan, timeseries, topN, groupBy or timeBoundary,
// possibly over query data sources for subqueries) that the broker runs on
// its ordinary scatter/gather path, and the native answer is turned back
// into SQL rows. It never executes anything itself.
//
// Tables resolve through a Catalog the caller supplies: a datasource becomes
// a native "table" data source; metadata tables can be served as native
// "inline" data sources by the same interface.
package sqlplan

import (
	"context"
	"encoding/json"

	"strata/sqlexpr"
)

// Column is one column of a table or of a result: its name and SQL type
// (VARCHAR, BIGINT, DOUBLE, FLOAT, TIMESTAMP, BOOLEAN, COMPLEX<...>, OTHER).
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Table is what a FROM name resolves to.
type Table struct {
	Columns []Column
	// DataSource is the native data source JSON the planner puts in the
	// query (a "table", or an "inline" one for metadata tables).
	DataSource json.RawMessage
}

// Catalog resolves table names. Schema is "" when the name is unqualified
// (Druid's default schema, "druid"). An unknown table is (nil, nil).
type Catalog interface {
	Table(ctx context.Context, schema, name string) (*Table, error)
}

// Param is one dynamic parameter ("?") value, as the SQL API sends it.
type Param = sqlexpr.Param

// Request is the planner's input besides the SQL text.
type Request struct {
	// Context is the query context; SET statements are merged into a copy.
	Context    map[string]any
	Parameters []Param
	// Run, when set, runs a native query and returns its JSON answer: the
	// planner runs "x IN (subquery)" subqueries first and puts their values
	// in the filter. Without it such statements are unsupported.
	Run func(ctx context.Context, native []byte) ([]byte, error)
}

// Error categories, as Druid's error JSON names them.
const (
	CategoryInvalidInput = sqlexpr.CategoryInvalidInput
	CategoryUnsupported  = sqlexpr.CategoryUnsupported
)

// Error is a planning failure a client caused: the SQL does not parse or
// validate (INVALID_INPUT), or uses what this planner does not support
// (UNSUPPORTED). Msg carries "(line [l], column [c])" where known. It is
// the expression translator's error, so its failures need no conversion.
type Error = sqlexpr.Error

var (
	invalid     = sqlexpr.Invalid
	unsupported = sqlexpr.Unsupported
)
