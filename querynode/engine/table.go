package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"strata/interval"
	"strata/querynode/query"
	"strata/storage/segment"
)

// InlineSegmentID is the segment id of a table materialized by TableSegment
// (what a scan over an inline or query data source reports).
const InlineSegmentID = "inline"

// rowColumn is a hidden long column holding each row's position in the
// table: it is the segment's first sort column, so rows of equal time keep
// the table's order (the writer otherwise sorts them by their values).
const rowColumn = "__strata_table_row"

// tableCol is how one column of a table is stored.
type tableCol struct {
	kind  segment.Kind
	multi bool
}

// TableSegment materializes a table (an inline data source, or the rows of
// a subquery's result) as an in-memory segment the engine can query: one
// dimension column per table column, typed from ColumnTypes where given and
// otherwise from the values (integers only: long; numbers: double; arrays:
// multi-value string; anything else: string). The column __time, when
// present, holds the row times (epoch millis or ISO-8601); without it every
// row is at the epoch, as Druid reads such rows. A table without rows gives
// a nil Segment: the engine then renders the empty result.
func TableSegment(t *query.InlineTable) (*Segment, error) {
	return tableSegment(t, InlineSegmentID, segment.Interval{Start: interval.Eternity.Start, End: interval.Eternity.End})
}

// tableSegment is TableSegment with the segment's id and interval: the join
// stage gives a joined segment those of the left segment it was made from.
func tableSegment(t *query.InlineTable, id string, iv segment.Interval) (*Segment, error) {
	if len(t.Rows) == 0 {
		return nil, nil
	}
	timeIdx := -1
	spec := segment.Spec{}
	var fieldIdx []int // table column of each segment field
	var cols []tableCol
	for i, name := range t.ColumnNames {
		if name == rowColumn {
			return nil, query.Invalidf("column name [%s] is reserved", name)
		}
		if name == segment.TimeColumn {
			timeIdx = i
			continue
		}
		typ := ""
		if t.ColumnTypes != nil {
			typ = t.ColumnTypes[i]
		}
		c := columnOf(typ, t.Rows, i)
		fieldIdx = append(fieldIdx, i)
		cols = append(cols, c)
		spec.Fields = append(spec.Fields, segment.Field{Name: name, Kind: c.kind})
		spec.Dimensions = append(spec.Dimensions, segment.Dimension{Name: name, Kind: c.kind, MultiValue: c.multi})
	}
	spec.Fields = append(spec.Fields, segment.Field{Name: rowColumn, Kind: segment.KindLong})
	spec.Dimensions = append(spec.Dimensions, segment.Dimension{Name: rowColumn, Kind: segment.KindLong})
	spec.SortColumns = []string{rowColumn}
	times := make([]int64, len(t.Rows))
	if timeIdx >= 0 {
		for r, row := range t.Rows {
			ms, err := tableTime(row[timeIdx])
			if err != nil {
				return nil, query.Invalidf("row %d: %v", r, err)
			}
			times[r] = ms
		}
	}
	// A table's segment covers all time, as Druid's inline segments do:
	// results over all time are stamped with the query's start, not the
	// first row's. A joined segment covers its left segment's interval.
	for _, ms := range times {
		if ms < interval.Eternity.Start || ms >= interval.Eternity.End {
			return nil, query.Invalidf("row time %d is out of range", ms)
		}
	}
	spec.Interval = iv
	w, err := segment.NewWriter(spec)
	if err != nil {
		return nil, query.Errorf(query.Internal, "cannot materialize the table: %v", err)
	}
	row := segment.Row{Values: make([]segment.Value, len(cols)+1)}
	for r, in := range t.Rows {
		row.Time = times[r]
		for k, c := range cols {
			row.Values[k] = tableValue(in[fieldIdx[k]], c)
		}
		row.Values[len(cols)] = segment.Long(int64(r))
		if err := w.Add(row); err != nil {
			return nil, query.Errorf(query.Internal, "cannot materialize the table: %v", err)
		}
	}
	data, err := writeToMemory(w)
	if err != nil {
		return nil, query.Errorf(query.Internal, "cannot materialize the table: %v", err)
	}
	s, err := segment.OpenBytes(data)
	if err != nil {
		return nil, query.Errorf(query.Internal, "cannot open the materialized table: %v", err)
	}
	return NewSegment(id, s), nil
}

// OverTable returns q as it is to run over TableSegment(t): a scan of all
// columns reads __time and the table's columns, not the hidden row column.
// Over a join, t is the left side: the join stage lists the joined columns.
func OverTable(q *query.Query, t *query.InlineTable) *query.Query {
	if q.Type != query.Scan || len(q.Scan.Columns) > 0 || q.HasJoins() {
		return q
	}
	cols := []string{segment.TimeColumn}
	for _, n := range t.ColumnNames {
		if n != segment.TimeColumn {
			cols = append(cols, n)
		}
	}
	out, scan := *q, *q.Scan
	scan.Columns = cols
	out.Scan = &scan
	return &out
}

// isTable reports whether s was materialized by TableSegment. Druid's
// cursor over an inline data source spans the query intervals, not the time
// range of its rows: results over all time are stamped with the query's
// start, and time buckets without rows are zero-filled over the intervals.
func isTable(s *Segment) bool {
	return s.ID == InlineSegmentID && s.Data.Interval() == segment.Interval{Start: interval.Eternity.Start, End: interval.Eternity.End}
}

// writeToMemory writes the segment through a temporary file (the writer
// writes files only), unsynced since it is read back at once, and returns
// its bytes; the file is removed at once.
func writeToMemory(w *segment.Writer) ([]byte, error) {
	f, err := os.CreateTemp("", "strata-table-*.seg")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := w.WriteTemp(f); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// columnOf decides the storage of table column i.
func columnOf(typ string, rows [][]any, i int) tableCol {
	switch {
	case typ == "LONG":
		return tableCol{kind: segment.KindLong}
	case typ == "DOUBLE":
		return tableCol{kind: segment.KindDouble}
	case typ == "FLOAT":
		return tableCol{kind: segment.KindFloat}
	case typ == "STRING":
		return tableCol{kind: segment.KindString}
	case strings.HasPrefix(typ, "ARRAY<"):
		return tableCol{kind: segment.KindString, multi: true}
	}
	// Unknown type: infer it from the non-null values.
	integral, numeric, multi, seen := true, true, false, false
	for _, row := range rows {
		switch v := row[i].(type) {
		case nil:
			continue
		case json.Number:
			if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
				integral = false
			}
		case string:
			if !isSpecialDouble(v) {
				numeric = false
			}
			integral = false
		case []any:
			multi, numeric, integral = true, false, false
		default:
			numeric, integral = false, false
		}
		seen = true
	}
	switch {
	case !seen:
		return tableCol{kind: segment.KindString}
	case multi:
		return tableCol{kind: segment.KindString, multi: true}
	case integral:
		return tableCol{kind: segment.KindLong}
	case numeric:
		return tableCol{kind: segment.KindDouble}
	}
	return tableCol{kind: segment.KindString}
}

// isSpecialDouble reports the strings Druid renders non-finite doubles as.
func isSpecialDouble(s string) bool { return s == "NaN" || s == "Infinity" || s == "-Infinity" }

// tableTime reads a __time value: epoch millis, or an ISO-8601 time.
func tableTime(v any) (int64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n, nil
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && !math.IsNaN(f) && math.Abs(f) < 1<<62 {
			return int64(f), nil
		}
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n, nil
		}
		if ms, err := interval.ParseTime(v); err == nil {
			return ms, nil
		}
	}
	return 0, query.Invalidf("cannot read a time from __time value %s", jsonText(v))
}

// tableValue converts a decoded JSON value to the column's storage type;
// values that do not convert are null, as Druid reads them.
func tableValue(v any, c tableCol) segment.Value {
	if v == nil {
		return segment.Null()
	}
	switch c.kind {
	case segment.KindLong:
		switch v := v.(type) {
		case json.Number:
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return segment.Long(n)
			}
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				return segment.Double(f) // the writer truncates it to a long
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return segment.Long(n)
			}
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return segment.Double(f)
			}
		case bool:
			if v {
				return segment.Long(1)
			}
			return segment.Long(0)
		}
		return segment.Null()
	case segment.KindDouble, segment.KindFloat:
		var s string
		switch v := v.(type) {
		case json.Number:
			s = string(v)
		case string:
			s = strings.TrimSpace(v)
		case bool:
			if v {
				return segment.Double(1)
			}
			return segment.Double(0)
		default:
			return segment.Null()
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil || isSpecialDouble(s) {
			return segment.Double(f)
		}
		return segment.Null()
	}
	if c.multi {
		a, ok := v.([]any)
		if !ok {
			return segment.String(scalarText(v))
		}
		out := make([]string, 0, len(a))
		for _, e := range a {
			if e != nil {
				out = append(out, scalarText(e))
			}
		}
		return segment.Strings(out)
	}
	return segment.String(scalarText(v))
}

// scalarText is a value as a string dimension holds it.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return jsonText(v)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// ResultTable reads the rendered result of a timeseries, topN, groupBy or
// scan query as a table, the way an outer query reads a query data source:
// groupBy rows give __time (from the row timestamp) and the event fields;
// timeseries rows __time and the result fields; topN one row per result
// entry with __time; scan the events with their columns.
func ResultTable(q *query.Query, result []byte) (*query.InlineTable, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var rows []any
	if err := dec.Decode(&rows); err != nil {
		return nil, query.Errorf(query.Internal, "cannot read the subquery's result: %v", err)
	}
	b := newTableBuilder()
	var err error
	switch q.Type {
	case query.GroupBy:
		err = b.groupBy(q, rows)
	case query.Timeseries:
		b.declare(q, nil)
		err = b.timed(rows, false)
	case query.TopN:
		b.declare(q, q.TopN.Dimension)
		err = b.timed(rows, true)
	case query.Scan:
		err = b.scan(rows)
	default:
		return nil, query.Errorf(query.Unsupported, "a %s query cannot be used as a subquery by this engine", q.Type)
	}
	if err != nil {
		return nil, err
	}
	return b.table(), nil
}

// tableBuilder collects rows whose columns are discovered as they come.
type tableBuilder struct {
	t   query.InlineTable
	idx map[string]int
}

func newTableBuilder() *tableBuilder {
	b := &tableBuilder{idx: map[string]int{}}
	b.col(segment.TimeColumn)
	return b
}

// col returns the index of a column, adding it when new.
func (b *tableBuilder) col(name string) int {
	if i, ok := b.idx[name]; ok {
		return i
	}
	b.idx[name] = len(b.t.ColumnNames)
	b.t.ColumnNames = append(b.t.ColumnNames, name)
	return len(b.t.ColumnNames) - 1
}

// add appends a row of column indexes → values.
func (b *tableBuilder) add(ms int64, cols []int, vals []any) {
	row := make([]any, len(b.t.ColumnNames))
	row[0] = json.Number(strconv.FormatInt(ms, 10))
	for k, c := range cols {
		row[c] = vals[k]
	}
	b.t.Rows = append(b.t.Rows, row)
}

// addObject appends a row from a JSON object of fields.
func (b *tableBuilder) addObject(ms int64, m map[string]any) {
	cols := make([]int, 0, len(m))
	vals := make([]any, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) { // a fixed order: a column first seen here gets a deterministic position
		if k == segment.TimeColumn {
			continue
		}
		cols = append(cols, b.col(k))
		vals = append(vals, m[k])
	}
	b.add(ms, cols, vals)
}

// table pads the rows to the final column count; __time is a long.
func (b *tableBuilder) table() *query.InlineTable {
	n := len(b.t.ColumnNames)
	for i, r := range b.t.Rows {
		if len(r) < n {
			b.t.Rows[i] = append(r, make([]any, n-len(r))...)
		}
	}
	b.t.ColumnTypes = make([]string, n)
	b.t.ColumnTypes[0] = "LONG"
	return &b.t
}

func badResult(what string, v any) error {
	return query.Errorf(query.Internal, "unexpected %s in the subquery's result: %s", what, jsonText(v))
}

func resultTime(v any) (int64, error) {
	ms, err := tableTime(v)
	if err != nil {
		return 0, badResult("timestamp", v)
	}
	return ms, nil
}

// declare adds the columns of a query's result in Druid's signature
// order: dimensions, aggregators, post-aggregators.
func (b *tableBuilder) declare(q *query.Query, dims ...*query.DimensionSpec) []int {
	var cols []int
	for _, d := range dims {
		if d != nil {
			cols = append(cols, b.col(d.OutputName))
		}
	}
	for _, a := range q.Aggregations {
		cols = append(cols, b.col(a.Name))
	}
	for _, p := range q.PostAggregations {
		cols = append(cols, b.col(p.Name))
	}
	return cols
}

func (b *tableBuilder) groupBy(q *query.Query, rows []any) error {
	cols := b.declare(q, q.GroupBy.Dimensions...)
	// Array rows (resultAsArray) carry no timestamp over all time: the
	// rows are at the query's universal timestamp.
	universal := universalTimestamp(q)
	for _, r := range rows {
		switch r := r.(type) {
		case map[string]any:
			ev, ok := r["event"].(map[string]any)
			if !ok {
				return badResult("groupBy row", r)
			}
			ms, err := resultTime(r["timestamp"])
			if err != nil {
				return err
			}
			b.addObject(ms, ev)
		case []any:
			ms := universal
			if !allTime(q) {
				if len(r) == 0 {
					return badResult("groupBy row", r)
				}
				var err error
				if ms, err = resultTime(r[0]); err != nil {
					return err
				}
				r = r[1:]
			}
			if len(r) != len(cols) {
				return badResult("groupBy row", r)
			}
			b.add(ms, cols, r)
		default:
			return badResult("groupBy row", r)
		}
	}
	return nil
}

// timed reads timeseries rows ({timestamp, result: {...}}) or, with list,
// topN rows ({timestamp, result: [{...}, ...]}).
func (b *tableBuilder) timed(rows []any, list bool) error {
	for _, r := range rows {
		m, ok := r.(map[string]any)
		if !ok {
			return badResult("row", r)
		}
		ms, err := resultTime(m["timestamp"])
		if err != nil {
			return err
		}
		if !list {
			res, ok := m["result"].(map[string]any)
			if !ok {
				return badResult("row", r)
			}
			b.addObject(ms, res)
			continue
		}
		entries, ok := m["result"].([]any)
		if !ok {
			return badResult("row", r)
		}
		for _, e := range entries {
			em, ok := e.(map[string]any)
			if !ok {
				return badResult("topN entry", e)
			}
			b.addObject(ms, em)
		}
	}
	return nil
}

func (b *tableBuilder) scan(batches []any) error {
	for _, x := range batches {
		m, ok := x.(map[string]any)
		if !ok {
			return badResult("scan batch", x)
		}
		names, _ := m["columns"].([]any)
		events, ok := m["events"].([]any)
		if !ok {
			return badResult("scan batch", x)
		}
		timeAt := -1
		cols := make([]int, 0, len(names))
		for i, n := range names {
			s, ok := n.(string)
			if !ok {
				return badResult("scan column", n)
			}
			if s == segment.TimeColumn {
				timeAt = i
				continue
			}
			cols = append(cols, b.col(s))
		}
		for _, e := range events {
			switch e := e.(type) {
			case map[string]any:
				ms, err := tableTime(e[segment.TimeColumn])
				if err != nil {
					return badResult("__time", e[segment.TimeColumn])
				}
				b.addObject(ms, e)
			case []any:
				if len(e) != len(names) {
					return badResult("scan event", e)
				}
				ms := int64(0)
				vals := make([]any, 0, len(cols))
				for i, v := range e {
					if i == timeAt {
						var err error
						if ms, err = tableTime(v); err != nil {
							return badResult("__time", v)
						}
						continue
					}
					vals = append(vals, v)
				}
				b.add(ms, cols, vals)
			default:
				return badResult("scan event", e)
			}
		}
	}
	return nil
}
