package query

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"strata/expr"
)

// Join is one clause of a join data source: the rows of its right side are
// joined to every row of the left side. A query's Joins apply in order to
// its base data source (DataSource, Inline or SubQuery): a join whose left
// side is itself a join is the base followed by more clauses, as Druid's
// planner stacks them. Joins run as broadcast hash joins: the right side is
// a table of rows small enough for memory, the left side is streamed.
type Join struct {
	// Type is JoinInner, JoinLeft, JoinRight or JoinFull.
	Type string
	// RightPrefix is prefixed to the names of the right side's columns.
	RightPrefix string
	// Condition is the join condition as given. Keys are its equalities,
	// each a left-side expression and a right-side column (unprefixed);
	// with no keys the condition is the constant Always (a cross join when
	// true, no match when false).
	Condition *expr.Expr
	Keys      []JoinKey
	Always    bool
	Right     JoinSide
	// LeftFilter, on the first clause only, filters the base table's rows
	// before the joins (Druid's leftFilter); LeftFilterJSON is it as given.
	LeftFilter     *Filter
	LeftFilterJSON json.RawMessage

	once     sync.Once
	prepared any
	err      error
}

// JoinKey is one equality of a join condition.
type JoinKey struct {
	Left  *expr.Expr // an expression over the left side's columns
	Right string     // a column of the right side, without the prefix
}

// JoinSide is the right side of a join: exactly one member is set. Table,
// Lookup and Query sides are turned into Inline by the broker before the
// join runs (MaterializedRight).
type JoinSide struct {
	Inline    *InlineTable
	Query     *Query
	QueryJSON json.RawMessage
	Table     string
	Lookup    string
}

// Join types.
const (
	JoinInner = "INNER"
	JoinLeft  = "LEFT"
	JoinRight = "RIGHT"
	JoinFull  = "FULL"
)

// KeepsRight reports whether the join keeps the right rows no left row
// matched (RIGHT and FULL): it must see the whole left side at once, so it
// runs on the broker, over the left side's rows.
func (j *Join) KeepsRight() bool { return j.Type == JoinRight || j.Type == JoinFull }

// JoinsKeepRight reports whether any of q's joins is RIGHT or FULL.
func (q *Query) JoinsKeepRight() bool { return slices.ContainsFunc(q.Joins, (*Join).KeepsRight) }

// LeftFilter is the filter of the base table's rows before the joins (nil:
// none).
func (q *Query) LeftFilter() *Filter {
	if len(q.Joins) == 0 {
		return nil
	}
	return q.Joins[0].LeftFilter
}

// Prepared returns what build makes of j, built once per query: the
// engine's hash table of the right side, shared by every segment's join.
func (j *Join) Prepared(build func() (any, error)) (any, error) {
	j.once.Do(func() { j.prepared, j.err = build() })
	return j.prepared, j.err
}

// WithRight returns a copy of j reading t as its right side.
func (j *Join) WithRight(t *InlineTable) *Join {
	return &Join{Type: j.Type, RightPrefix: j.RightPrefix, Condition: j.Condition, Keys: j.Keys, Always: j.Always,
		Right: JoinSide{Inline: t}, LeftFilter: j.LeftFilter, LeftFilterJSON: j.LeftFilterJSON}
}

// noteJoinRefs records the text of every member of the query but its data
// source (and context): the join stage reads only the left columns named
// somewhere in it (JoinReads).
func (q *Query) noteJoinRefs(o obj) {
	var sb strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString(v)
			sb.WriteByte(0)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				sb.WriteString(k)
				sb.WriteByte(0)
				walk(e)
			}
		}
	}
	for k, raw := range o.m {
		if k == "dataSource" || k == "context" {
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) == nil {
			walk(v)
		}
	}
	q.joinRefs = sb.String()
	q.joinAll = q.Type == Scan && len(q.Scan.Columns) == 0 || q.Type == Search && len(q.Search.Dimensions) == 0
}

// JoinReads reports whether the join stage must read left column col: a
// column a join condition reads, or one the rest of the query may read
// (its name appears in the query's text: a conservative test, which keeps
// a column named inside another name or a literal, but never drops one an
// expression, filter, dimension or aggregator reads). A scan of all
// columns, or a search of all dimensions, reads every one.
func (q *Query) JoinReads(col string) bool {
	if q.joinAll || strings.Contains(q.joinRefs, col) {
		return true
	}
	for _, j := range q.Joins {
		for _, k := range j.Keys {
			if slices.Contains(k.Left.RequiredColumns(), col) {
				return true
			}
		}
	}
	return false
}

// HasJoins reports whether q reads a join data source.
func (q *Query) HasJoins() bool { return len(q.Joins) > 0 }

// JoinsMaterialized reports whether every join's right side is rows.
func (q *Query) JoinsMaterialized() bool {
	for _, j := range q.Joins {
		if j.Right.Inline == nil {
			return false
		}
	}
	return true
}

func (q *Query) parseJoin(o obj, depth int) error {
	if err := q.checkOverSubquery("join"); err != nil {
		return err
	}
	o.what = "join dataSource"
	if depth+1 > MaxSubqueryDepth {
		return Invalidf("join dataSource: joins are nested more than %d levels deep", MaxSubqueryDepth)
	}
	left := o.raw("left")
	if left == nil {
		return o.missing("left")
	}
	rightRaw := o.raw("right")
	if rightRaw == nil {
		return o.missing("right")
	}
	prefix, ok, err := o.str("rightPrefix")
	if err != nil {
		return err
	}
	if !ok || prefix == "" {
		return Invalidf("join dataSource: property [rightPrefix] must be a non-empty string")
	}
	if strings.HasPrefix("__time", prefix) {
		return Invalidf("join dataSource: rightPrefix [%s] must not be a prefix of [__time]", prefix)
	}
	typ, err := o.reqStr("joinType")
	if err != nil {
		return err
	}
	switch strings.ToUpper(typ) {
	case JoinInner, JoinLeft, JoinRight, JoinFull:
		typ = strings.ToUpper(typ)
	default:
		return Invalidf("join dataSource: unknown joinType [%s]; expected INNER, LEFT, RIGHT or FULL", typ)
	}
	cond, ok, err := o.str("condition")
	if err != nil {
		return err
	}
	if !ok {
		return o.missing("condition")
	}
	j := &Join{Type: typ, RightPrefix: prefix}
	if j.Condition, err = expr.Compile(cond); err != nil {
		return Invalidf("join dataSource: cannot parse condition [%s]: %v", cond, err)
	}
	if err := j.readCondition(cond); err != nil {
		return err
	}
	if err := j.parseRight(rightRaw, depth); err != nil {
		return err
	}
	// The left side: a table, inline or query data source becomes q's base,
	// a join the base and its clauses; this clause comes after them.
	if err := q.parseDataSource(left, depth+1); err != nil {
		return err
	}
	if raw := o.raw("leftFilter"); raw != nil {
		// A filter of the base table's rows before any join, as Druid's
		// leftFilter is.
		if len(q.Joins) > 0 || q.IsSubqueryBased() {
			return Invalidf("join dataSource: [leftFilter] needs a table as the left side")
		}
		if j.LeftFilter, err = ParseFilter(raw); err != nil {
			return err
		}
		j.LeftFilterJSON = append(json.RawMessage(nil), raw...)
	}
	if len(q.DataSources) > 1 {
		return Errorf(Unsupported, "join dataSource: a union on the left side of a join is not supported by this engine")
	}
	q.Joins = append(q.Joins, j)
	return nil
}

// readCondition splits the condition into equalities between a left-side
// expression and a right-side column, as Druid's broadcast join requires.
func (j *Join) readCondition(src string) error {
	c := j.Condition
	if c.IsConstant() {
		v, err := c.Eval(nil)
		if err != nil {
			return Invalidf("join dataSource: cannot evaluate condition [%s]: %v", src, err)
		}
		j.Always = !v.IsNull() && v.AsBool()
		return nil
	}
	isRight := func(col string) bool { return strings.HasPrefix(col, j.RightPrefix) }
	for _, part := range c.Conjuncts() {
		l, r, ok := part.Equality()
		if ok {
			if col, isCol := l.Column(); isCol && isRight(col) && !slices.ContainsFunc(r.RequiredColumns(), isRight) {
				l, r = r, l
			}
			if col, isCol := r.Column(); isCol && isRight(col) && !slices.ContainsFunc(l.RequiredColumns(), isRight) {
				j.Keys = append(j.Keys, JoinKey{Left: l, Right: strings.TrimPrefix(col, j.RightPrefix)})
				continue
			}
		}
		return Errorf(Unsupported, "join dataSource: condition [%s] is not supported: it must be an equality between an expression of the "+
			"left side and a column of the right side (prefixed [%s]), or an AND of such equalities", src, j.RightPrefix)
	}
	return nil
}

func (j *Join) parseRight(raw json.RawMessage, depth int) error {
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		s, _ := scalarString(raw)
		if s == "" {
			return Invalidf("join dataSource: right dataSource name must not be empty")
		}
		j.Right.Table = s
		return nil
	}
	o, err := parseObj(raw, "join right dataSource")
	if err != nil {
		return err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return err
	}
	// Inline and query sides are read as a scan would read them.
	side := &Query{Type: Scan}
	switch t {
	case "table":
		j.Right.Table, err = o.reqStr("name")
		return err
	case "lookup":
		if j.Right.Lookup, err = o.reqStr("lookup"); err != nil {
			return err
		}
		return nil
	case "inline":
		if err := side.parseInline(o); err != nil {
			return err
		}
		j.Right.Inline = side.Inline
	case "query":
		if err := side.parseQueryDataSource(o, depth); err != nil {
			return err
		}
		j.Right.Query, j.Right.QueryJSON = side.SubQuery, side.SubQueryJSON
	case "join", "union", "unnest", "frame", "restrict", "filtered":
		return Errorf(Unsupported, "join dataSource: a right side of type [%s] is not supported by this engine (table, inline, query and lookup are)", t)
	default:
		return Invalidf("Could not resolve type id '%s' as a subtype of [DataSource]", t)
	}
	return nil
}

// InlineJSON renders t as an inline data source.
func InlineJSON(t *InlineTable) (json.RawMessage, error) {
	m := map[string]any{"type": "inline", "columnNames": t.ColumnNames, "rows": t.Rows}
	if t.ColumnTypes != nil {
		types := make([]any, len(t.ColumnTypes))
		for i, s := range t.ColumnTypes {
			if s != "" {
				types[i] = s
			}
		}
		m["columnTypes"] = types
	}
	if t.Rows == nil {
		m["rows"] = [][]any{}
	}
	return json.Marshal(m)
}
