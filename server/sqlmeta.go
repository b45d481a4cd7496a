package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"strata/auth"
	"strata/interval"
	"strata/querynode/broker"
	"strata/querynode/sqlplan"
	"strata/querynode/sysinfo"
)

// The SQL catalog's metadata schemas (INFORMATION_SCHEMA, sys) come from
// sysinfo: the druid schema as this catalog resolves it, and the control
// plane the broker reads from.
func init() { metaTables = sqlMetaTable }

func sqlMetaTable(ctx context.Context, s *Server, schema, name string) (*sqlplan.Table, error) {
	if schema == sysinfo.SchemaLookup {
		return lookupSQLTable(s, name), nil
	}
	if !sysinfo.Has(schema) || s.opts.Broker == nil {
		return nil, nil
	}
	urls, client := s.opts.Broker.ControlPlane()
	if client == nil {
		client = http.DefaultClient
	}
	b := s.opts.Broker
	t := &sysinfo.Tables{Druid: druidSchema{&sqlCatalog{s}}, Control: sysinfo.HTTPControl(urls, client), Routines: sqlRoutines,
		Realtime: func() []sysinfo.RealtimeSegment {
			var out []sysinfo.RealtimeSegment
			for _, r := range b.RealtimeSegments() {
				out = append(out, sysinfo.RealtimeSegment{Server: r.Server, Segment: r.Segment})
			}
			return out
		},
		Lookups: s.lookupNames,
		NumRows: func(ctx context.Context, ds string) (map[string]int64, error) { return segmentRowCounts(ctx, b, ds) }}
	tab, err := t.Table(ctx, schema, name)
	if errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrUnauthenticated) {
		return nil, broker.AccessError(err) // 403 or 401, as a query of a table it may not read
	}
	return tab, err
}

// segmentRowCounts asks the data servers, through the broker's ordinary
// query path (with the caller's identity), for the row count of each
// segment of ds they serve: a segmentMetadata query per segment, with no
// column analysis.
func segmentRowCounts(ctx context.Context, b *broker.Broker, ds string) (map[string]int64, error) {
	q, _ := json.Marshal(map[string]any{"queryType": "segmentMetadata", "dataSource": ds, "merge": false,
		"analysisTypes": []string{}, "intervals": []string{interval.Eternity.String()}})
	_, out, _, qerr := b.QueryWithContext(ctx, q)
	if qerr != nil {
		return nil, qerr
	}
	var res []struct {
		ID      string `json:"id"`
		NumRows int64  `json:"numRows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("reading the segment metadata of %s: %w", ds, err)
	}
	counts := make(map[string]int64, len(res))
	for _, r := range res {
		counts[r.ID] = r.NumRows
	}
	return counts, nil
}

// druidSchema lists the druid schema's tables with the columns the planner
// sees, so INFORMATION_SCHEMA.COLUMNS and the planner agree.
type druidSchema struct{ c *sqlCatalog }

func (d druidSchema) DataSources(context.Context) ([]string, error) {
	return d.c.s.opts.Broker.DataSources(), nil
}

func (d druidSchema) Columns(ctx context.Context, ds string) ([]sqlplan.Column, error) {
	t, err := d.c.Table(ctx, "", ds)
	if err != nil || t == nil {
		return nil, err
	}
	return t.Columns, nil
}

// sqlRoutines are the planner's functions, for INFORMATION_SCHEMA.ROUTINES.
func sqlRoutines() []sysinfo.Routine {
	fns := sqlplan.Functions()
	out := make([]sysinfo.Routine, len(fns))
	for i, f := range fns {
		out[i] = sysinfo.Routine{Name: f.Name, Aggregator: f.Aggregator}
	}
	return out
}
