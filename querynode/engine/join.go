package engine

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"strata/expr"
	"strata/interval"
	"strata/querynode/query"
	"strata/storage/segment"
)

// MaxJoinRows bounds the rows one segment's join may add to its left side's:
// a cross join (or a key matching many right rows) of large sides fails
// with a resource error instead of building a huge table. A variable so
// tests can lower it.
var MaxJoinRows = 1_000_000

// The join stage (doc.go): before a query's pipeline runs on a segment of
// the left side, the segment's rows (within the query intervals) are read,
// each joined clause after clause with the hash table of a right side, and
// the joined rows materialized as an in-memory segment that the ordinary
// pipeline then queries. Right sides are tables of rows (the broker has
// turned query, table and lookup sides into rows); each one's hash table is
// built once per query and shared by every segment.

// rightTable is a right side ready to probe: its rows, and for each key (the
// normalized values of the join columns) the rows holding it.
type rightTable struct {
	t     *query.InlineTable
	types []string
	index map[string][]int32
	cols  []int // the key columns
}

func buildRight(j *query.Join) (*rightTable, error) {
	t := j.Right.Inline
	if t == nil {
		return nil, query.Errorf(query.Internal, "join: the right side was not materialized before the join")
	}
	rt := &rightTable{t: t, types: t.ColumnTypes}
	if rt.types == nil {
		rt.types = make([]string, len(t.ColumnNames))
	}
	if len(j.Keys) == 0 {
		return rt, nil
	}
	pos := make(map[string]int, len(t.ColumnNames))
	for i, n := range t.ColumnNames {
		pos[n] = i
	}
	for _, k := range j.Keys {
		i, ok := pos[k.Right]
		if !ok {
			// Druid reads a missing column as null: nothing matches it.
			i = -1
		}
		rt.cols = append(rt.cols, i)
	}
	rt.index = make(map[string][]int32, len(t.Rows))
	var sb strings.Builder
	for r, row := range t.Rows {
		sb.Reset()
		ok := true
		for _, c := range rt.cols {
			if c < 0 {
				ok = false
				break
			}
			k, has := jsonKey(row[c])
			if !has {
				ok = false
				break
			}
			appendJoinKey(&sb, k)
		}
		if ok {
			key := sb.String()
			rt.index[key] = append(rt.index[key], int32(r))
		}
	}
	return rt, nil
}

// appendKey adds one key part, length-prefixed so that parts cannot run
// into each other.
func appendJoinKey(sb *strings.Builder, k string) {
	sb.WriteString(strconv.Itoa(len(k)))
	sb.WriteByte(':')
	sb.WriteString(k)
}

// Join keys compare by value across types: numbers by their canonical
// decimal text (so a long 5 and a double 5.0 match, as do "5" and 5), other
// values by their text. Null matches nothing, as in SQL.
func numberKey(d float64) string {
	if d == math.Trunc(d) && math.Abs(d) < 1<<53 {
		return strconv.FormatInt(int64(d), 10)
	}
	return strconv.FormatFloat(d, 'g', -1, 64)
}

func jsonKey(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return strconv.FormatInt(n, 10), true
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return numberKey(f), true
		}
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false // arrays and objects join nothing
}

func joinExprKey(v expr.Value) (string, bool) {
	if v.IsNull() {
		return "", false
	}
	switch v.Type() {
	case expr.TypeLong:
		return strconv.FormatInt(v.Long(), 10), true
	case expr.TypeDouble:
		return numberKey(v.Double()), true
	case expr.TypeString:
		return v.Str(), true
	}
	return "", false
}

// joinRow is a row of the table being joined, read by the left side's key
// expressions.
type joinRow struct {
	pos map[string]int
	row []any
}

func (r *joinRow) Get(name string) expr.Value {
	i, ok := r.pos[name]
	if !ok {
		return expr.Value{}
	}
	return expr.FromAny(r.row[i])
}

// hashJoin joins left with the right side of j: INNER keeps the pairs of
// matching rows, LEFT also the left rows without a match (the right
// columns null). Right columns are named with j's prefix; a left column of
// the same name is shadowed, as in Druid.
func hashJoin(ctx context.Context, left *query.InlineTable, j *query.Join, rt *rightTable) (*query.InlineTable, error) {
	right := rt.t
	shadow := make(map[string]bool, len(right.ColumnNames))
	for _, n := range right.ColumnNames {
		shadow[j.RightPrefix+n] = true
	}
	out := &query.InlineTable{}
	var keep []int // left columns kept
	for i, n := range left.ColumnNames {
		if shadow[n] {
			continue
		}
		keep = append(keep, i)
		out.ColumnNames = append(out.ColumnNames, n)
		out.ColumnTypes = append(out.ColumnTypes, typeAt(left.ColumnTypes, i))
	}
	for i, n := range right.ColumnNames {
		out.ColumnNames = append(out.ColumnNames, j.RightPrefix+n)
		out.ColumnTypes = append(out.ColumnTypes, rt.types[i])
	}
	pos := make(map[string]int, len(left.ColumnNames))
	for i, n := range left.ColumnNames {
		pos[n] = i
	}
	width := len(out.ColumnNames)
	// A join keeping each left row once never hits the bound; only a fan
	// out (a cross join, keys matching many rows) adds rows against it.
	limit := len(left.Rows) + MaxJoinRows
	emit := func(l []any, r []any) error {
		if len(out.Rows) >= limit {
			return query.Errorf(query.ResourceLimit, "a join produced %d more rows than its left side's %d on one segment (the most allowed); "+
				"add an equality to the join condition or filter its sides", MaxJoinRows, len(left.Rows))
		}
		row := make([]any, 0, width)
		for _, i := range keep {
			row = append(row, l[i])
		}
		if r == nil {
			row = append(row, make([]any, len(right.ColumnNames))...)
		} else {
			row = append(row, r...)
		}
		out.Rows = append(out.Rows, row)
		return nil
	}
	emitRight := func(r []any) error {
		if len(out.Rows) >= limit {
			return query.Errorf(query.ResourceLimit, "a join produced %d more rows than its left side's %d on one segment (the most allowed); "+
				"add an equality to the join condition or filter its sides", MaxJoinRows, len(left.Rows))
		}
		row := make([]any, len(keep), width)
		out.Rows = append(out.Rows, append(row, r...))
		return nil
	}
	// matched tells which right rows some left row matched, for RIGHT and
	// FULL (a cross join of rows on both sides matches every one).
	var matched []bool
	if j.KeepsRight() && !(len(j.Keys) == 0 && j.Always && len(left.Rows) > 0) {
		matched = make([]bool, len(right.Rows))
	}
	bind := &joinRow{pos: pos}
	var sb strings.Builder
	for n, l := range left.Rows {
		if n%4096 == 0 {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
		}
		var matches []int32
		switch {
		case len(j.Keys) == 0 && j.Always:
			for r := range right.Rows {
				if err := emit(l, right.Rows[r]); err != nil {
					return nil, err
				}
			}
			if len(right.Rows) > 0 {
				continue
			}
		case len(j.Keys) > 0:
			bind.row = l
			sb.Reset()
			ok := true
			for _, k := range j.Keys {
				v, err := k.Left.Eval(bind)
				if err != nil {
					return nil, query.Invalidf("join condition: %v", err)
				}
				s, has := joinExprKey(v)
				if !has {
					ok = false
					break
				}
				appendJoinKey(&sb, s)
			}
			if ok {
				matches = rt.index[sb.String()]
			}
		}
		for _, r := range matches {
			if err := emit(l, right.Rows[r]); err != nil {
				return nil, err
			}
		}
		if len(matches) == 0 && (j.Type == query.JoinLeft || j.Type == query.JoinFull) {
			if err := emit(l, nil); err != nil {
				return nil, err
			}
		}
		for _, r := range matches {
			if matched != nil {
				matched[r] = true
			}
		}
	}
	// RIGHT and FULL: the right rows no left row matched, the left columns
	// null (the join saw the whole left side: the broker runs it).
	for r := range matched {
		if !matched[r] {
			if err := emitRight(right.Rows[r]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func typeAt(types []string, i int) string {
	if types == nil {
		return ""
	}
	return types[i]
}

// segmentTable reads the rows of s within q's intervals (and its join's
// leftFilter) as a table with __time and the columns the query may read
// (query.JoinReads).
func (e *Engine) segmentTable(ctx context.Context, q *query.Query, s *Segment) (*query.InlineTable, error) {
	var cols []string
	for _, c := range s.Data.Columns() {
		if c.Name != segment.TimeColumn && c.Name != rowColumn && q.JoinReads(c.Name) {
			cols = append(cols, c.Name)
		}
	}
	scan := &query.Query{Type: query.Scan, DataSource: q.DataSource, DataSources: q.DataSources, Intervals: q.Intervals,
		Limit: query.Unlimited, Context: q.Context, Filter: q.LeftFilter(),
		Scan: &query.ScanSpec{Columns: append([]string{segment.TimeColumn}, cols...), ResultFormat: "compactedList", BatchSize: 1 << 30, Order: "none"}}
	p, err := e.RunSegment(ctx, scan, s)
	if err != nil {
		return nil, err
	}
	t := &query.InlineTable{ColumnNames: scan.Scan.Columns, ColumnTypes: make([]string, len(scan.Scan.Columns))}
	for _, b := range p.Scan {
		for k, typ := range b.Types {
			if k > 0 && typ != "" && !strings.HasPrefix(typ, "COMPLEX<") {
				t.ColumnTypes[k] = typ
			}
		}
		for i := range b.Len() {
			row := make([]any, len(b.Cols))
			row[0] = json.Number(strconv.FormatInt(b.Times[i], 10))
			for k := 1; k < len(b.Cols); k++ {
				row[k] = scanAny(b.Cols[k], i)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	for k, c := range t.ColumnTypes {
		if c == "STRING" && anyMulti(t.Rows, k) {
			t.ColumnTypes[k] = "ARRAY<STRING>"
		}
	}
	t.ColumnTypes[0] = "LONG"
	return t, nil
}

func anyMulti(rows [][]any, k int) bool {
	for _, r := range rows {
		if _, ok := r[k].([]any); ok {
			return true
		}
	}
	return false
}

// scanAny is row i of a scanned column as a decoded JSON value.
func scanAny(c *ScanCol, i int) any {
	if c.IsMV && i < len(c.Multi) && c.Multi[i] != nil {
		out := make([]any, len(c.Multi[i]))
		for k, s := range c.Multi[i] {
			if !c.nullAt(i, k) {
				out[k] = s
			}
		}
		return out
	}
	v := c.value(i)
	switch v.K {
	case KNull:
		return nil
	case KLong:
		return json.Number(strconv.FormatInt(v.L, 10))
	case KDouble, KFloat:
		switch {
		case math.IsNaN(v.D):
			return "NaN" // as Druid renders them, which tables read back
		case math.IsInf(v.D, 1):
			return "Infinity"
		case math.IsInf(v.D, -1):
			return "-Infinity"
		}
		bits := 64
		if v.K == KFloat {
			bits = 32
		}
		return json.Number(strconv.FormatFloat(v.D, 'g', -1, bits))
	}
	s, _ := v.String()
	return s
}

// joinSegment is the join stage on one segment of the left side: its rows
// joined with every clause of q in order, materialized as a segment with
// s's id and interval (nil when no row is left).
func (e *Engine) joinSegment(ctx context.Context, q *query.Query, s *Segment) (*Segment, *query.InlineTable, error) {
	t, err := e.segmentTable(ctx, q, s)
	if err != nil {
		return nil, nil, err
	}
	js, t, err := joinTable(ctx, q, t, s.ID, s.Data.Interval())
	if js != nil {
		js.Clip = s.Clip
	}
	return js, t, err
}

// joinTable joins the rows of a left side with every clause of q and
// materializes them as a segment of the given id and interval.
func joinTable(ctx context.Context, q *query.Query, t *query.InlineTable, id string, iv segment.Interval) (*Segment, *query.InlineTable, error) {
	for _, j := range q.Joins {
		prep, err := j.Prepared(func() (any, error) { return buildRight(j) })
		if err != nil {
			return nil, nil, err
		}
		if t, err = hashJoin(ctx, t, j, prep.(*rightTable)); err != nil {
			return nil, nil, err
		}
	}
	js, err := tableSegment(t, id, iv)
	return js, t, err
}

// runJoinedSegment runs q on segment s of its left side through the join
// stage.
func (e *Engine) runJoinedSegment(ctx context.Context, q *query.Query, s *Segment) (*Partial, error) {
	js, t, err := e.joinSegment(ctx, q, s)
	if err != nil || js == nil {
		return nil, err
	}
	return e.runOnJoined(ctx, q, js, t)
}

func (e *Engine) runOnJoined(ctx context.Context, q *query.Query, js *Segment, t *query.InlineTable) (*Partial, error) {
	after := *q
	after.Joins = nil
	return e.RunSegment(ctx, OverTable(&after, t), js)
}

// runKeepingRight runs a query with RIGHT or FULL joins. They keep the right
// rows no left row matched, so the join must see the whole left side at
// once: one segment, the broker's table of the left side's rows (the
// broker reads a table left side into one for these joins), or none when
// the left side has no rows, which leaves the right rows alone.
func (e *Engine) runKeepingRight(ctx context.Context, q *query.Query, segs []*Segment, timer SegmentTimer) (*Partial, error) {
	switch len(segs) {
	case 1:
		p, err := e.runSegmentTimed(ctx, q, segs[0], timer, time.Now())
		if err != nil {
			return nil, query.AsError(err)
		}
		return e.Merge(q, slices.DeleteFunc([]*Partial{p}, func(p *Partial) bool { return p == nil }))
	case 0:
		empty := &query.InlineTable{ColumnNames: []string{segment.TimeColumn}, ColumnTypes: []string{"LONG"}}
		js, t, err := joinTable(ctx, q, empty, InlineSegmentID, segment.Interval{Start: interval.Eternity.Start, End: interval.Eternity.End})
		if err != nil {
			return nil, err
		}
		var parts []*Partial
		if js != nil {
			p, err := e.runOnJoined(ctx, q, js, t)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		return e.Merge(q, parts)
	}
	return nil, query.Errorf(query.Unsupported, "RIGHT and FULL joins run over the left side's rows as one table, not over %d segments", len(segs))
}
