package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"strata/auth"
	"strata/querynode/broker"
	"strata/querynode/sqlplan"
)

// sqlCatalog resolves SQL table names for the planner: the druid schema's
// datasources (columns and types from segment metadata), and the metadata
// schemas through metaTables.
type sqlCatalog struct{ s *Server }

// metaTables, when set, resolves the tables of schemas other than druid
// (INFORMATION_SCHEMA, sys, lookup) as native inline data sources; nil
// (nil, nil) means "not one of mine". See /work/notes/sql-contract.md.
var metaTables func(ctx context.Context, s *Server, schema, name string) (*sqlplan.Table, error)

// columnTypes caches a datasource's SQL columns per broker, keyed by the
// names of its segments' columns: types change only with the columns.
var columnTypes sync.Map // typesKey → []sqlplan.Column

type typesKey struct {
	b           *broker.Broker
	ds, columns string
}

func (c *sqlCatalog) Table(ctx context.Context, schema, name string) (*sqlplan.Table, error) {
	if metaTables != nil && schema != "" && !strings.EqualFold(schema, "druid") {
		return metaTables(ctx, c.s, schema, name)
	}
	if schema != "" && schema != "druid" {
		return nil, nil
	}
	// DATASOURCE READ before the columns: they may come from the cache,
	// and EXPLAIN runs no native query the broker would check.
	if err := checkTableRead(ctx, name); err != nil {
		return nil, err
	}
	b := c.s.opts.Broker
	if !slices.Contains(b.DataSources(), name) {
		return nil, nil
	}
	order := b.ColumnOrder(name)
	key := typesKey{b, name, strings.Join(order, ",")}
	ds, _ := json.Marshal(map[string]string{"type": "table", "name": name})
	if cols, ok := columnTypes.Load(key); ok {
		return &sqlplan.Table{Columns: cols.([]sqlplan.Column), DataSource: ds}, nil
	}
	q, _ := json.Marshal(map[string]any{"queryType": "segmentMetadata", "dataSource": name, "merge": true,
		"analysisTypes": []string{}, "intervals": []string{"-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z"}})
	_, out, _, qerr := b.QueryWithContext(ctx, q)
	if qerr != nil {
		return nil, qerr
	}
	var res []struct {
		Columns map[string]struct {
			Type string `json:"type"`
		} `json:"columns"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("reading the segment metadata of %s: %w", name, err)
	}
	// __time first, then the segments' columns in Druid's order (see
	// broker.OrderColumns); a column only segment metadata knows (of a
	// segment not in the timeline yet) after them, by name.
	cols := []sqlplan.Column{{Name: "__time", Type: "TIMESTAMP"}}
	types := map[string]string{}
	for _, r := range res {
		for n, t := range r.Columns {
			if n != "__time" {
				types[n] = t.Type
			}
		}
	}
	for _, n := range order {
		if t, ok := types[n]; ok {
			cols = append(cols, sqlplan.Column{Name: n, Type: sqlType(t)})
			delete(types, n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(types)) {
		cols = append(cols, sqlplan.Column{Name: n, Type: sqlType(types[n])})
	}
	columnTypes.Store(key, cols)
	return &sqlplan.Table{Columns: cols, DataSource: ds}, nil
}

// checkTableRead is the catalog's check that the caller may read the
// datasource name (a cached plan makes it again; sqlcache.go).
func checkTableRead(ctx context.Context, name string) error {
	return auth.Check(ctx, auth.Resource{Type: auth.Datasource, Name: name}, auth.Read)
}

// sqlType is the SQL type of a segment column of native type t.
func sqlType(t string) string {
	switch strings.ToUpper(t) {
	case "STRING":
		return "VARCHAR"
	case "LONG":
		return "BIGINT"
	case "DOUBLE":
		return "DOUBLE"
	case "FLOAT":
		return "FLOAT"
	}
	if strings.HasPrefix(t, "COMPLEX<") {
		return t
	}
	return "COMPLEX<" + t + ">"
}
