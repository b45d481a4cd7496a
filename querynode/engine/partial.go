package engine

import (
	"math"

	"strata/aggregate"
	"strata/javacompat"
	"strata/querynode/query"
)

// Partial is the result of a query over some segments before
// finalization: what a data server returns to a broker. Merge combines
// partials; Finalize renders one. Partials are JSON-serialisable; after
// decoding one, Attach must be called with the query before use.
type Partial struct {
	Type string `json:"type"`

	// Grouped rows (timeseries, topN, groupBy, search): row i has time
	// Times[i], dimension values Dims[k] row i, aggregator states Aggs[j]
	// row i. Matched[i] tells whether any row reached it (timeseries rows
	// are zero-filled).
	Times   []int64     `json:"times,omitempty"`
	Dims    []*DimCol   `json:"dims,omitempty"`
	Aggs    []*AggState `json:"aggs,omitempty"`
	Matched []bool      `json:"matched,omitempty"`
	// SortedKeys: the rows (of a groupBy on one string dimension) are
	// sorted by time, then value, nulls first.
	SortedKeys bool `json:"sorted,omitempty"`

	// Scan batches.
	Scan []*ScanBatch `json:"scan,omitempty"`

	// timeBoundary: the least and greatest row time seen (Found false when
	// no row matched).
	Found   bool  `json:"found,omitempty"`
	MinTime int64 `json:"minTime,omitempty"`
	MaxTime int64 `json:"maxTime,omitempty"`

	// segmentMetadata analyses, one per segment.
	Analyses []*SegmentAnalysis `json:"analyses,omitempty"`
}

// Len is the number of grouped rows.
func (p *Partial) Len() int { return len(p.Times) }

// Attach binds the aggregator specs of q to a decoded partial and checks
// its shape.
func (p *Partial) Attach(q *query.Query) error {
	if p.Type != q.Type {
		return query.Errorf(query.Internal, "partial result of a %s query given to a %s query", p.Type, q.Type)
	}
	aggs := q.Aggregations
	if q.Type == query.Search {
		aggs = []*query.Aggregator{searchCountAgg}
	}
	if len(p.Aggs) != 0 && len(p.Aggs) != len(aggs) {
		return query.Errorf(query.Internal, "partial result has %d aggregators, query %d", len(p.Aggs), len(aggs))
	}
	n := len(p.Times)
	for i, a := range p.Aggs {
		if a == nil {
			return query.Errorf(query.Internal, "partial result: missing aggregator %d", i)
		}
		a.Bind(aggSpec(aggs[i]))
		if a.Groups() != n {
			return query.Errorf(query.Internal, "partial result: aggregator %d has %d rows, want %d", i, a.Len(), n)
		}
		if want := newAggState(aggs[i], 0); a.Kind != want.Kind || a.Op != want.Op {
			return query.Errorf(query.Internal, "partial result: aggregator %d kind %s, want %s", i, a.Kind, aggs[i].ValueKind())
		}
	}
	if n > 0 && len(p.Dims) != len(queryDims(q)) {
		return query.Errorf(query.Internal, "partial result has %d dimensions, query %d", len(p.Dims), len(queryDims(q)))
	}
	for _, d := range p.Dims {
		if d == nil || d.Len() != n || !d.valid() {
			return query.Errorf(query.Internal, "partial result: malformed dimension column")
		}
	}
	for _, b := range p.Scan {
		if b == nil || len(b.Cols) != len(b.Columns) || len(b.Types) != len(b.Columns) {
			return query.Errorf(query.Internal, "partial result: malformed scan batch")
		}
		for _, c := range b.Cols {
			if c == nil || c.DimCol == nil || c.Len() != len(b.Times) || !c.valid() || c.IsMV && len(c.Multi) != len(b.Times) ||
				c.MultiNull != nil && len(c.MultiNull) != len(c.Multi) {
				return query.Errorf(query.Internal, "partial result: malformed scan column")
			}
			for i, null := range c.MultiNull {
				if null != nil && len(null) != len(c.Multi[i]) {
					return query.Errorf(query.Internal, "partial result: malformed scan column")
				}
			}
		}
	}
	if len(p.Matched) != 0 && len(p.Matched) != n {
		return query.Errorf(query.Internal, "partial result: matched flags have %d rows, want %d", len(p.Matched), n)
	}
	for _, a := range p.Analyses {
		if a == nil {
			return query.Errorf(query.Internal, "partial result: missing segment analysis")
		}
		for _, c := range a.Columns {
			if c == nil {
				return query.Errorf(query.Internal, "partial result: missing column analysis")
			}
		}
	}
	return nil
}

// searchCountAgg is the implicit count of search results.
var searchCountAgg = &query.Aggregator{Type: "count", Name: "count"}

// DimCol is a column of dimension values of a partial.
type DimCol struct {
	Type    string           `json:"type"` // STRING, LONG, DOUBLE, FLOAT
	Strs    []string         `json:"strs,omitempty"`
	Longs   []int64          `json:"longs,omitempty"`
	Doubles aggregate.Floats `json:"doubles,omitempty"`
	Null    []bool           `json:"null"`
}

func newDimCol(typ string) *DimCol {
	if typ == "" {
		typ = "STRING"
	}
	return &DimCol{Type: typ, Null: []bool{}}
}

// Len is the number of rows.
func (d *DimCol) Len() int { return len(d.Null) }

// valid checks that the column's values match its type and length.
func (d *DimCol) valid() bool {
	n := len(d.Null)
	switch d.Type {
	case "LONG":
		return len(d.Longs) == n
	case "DOUBLE", "FLOAT":
		return len(d.Doubles) == n
	case "STRING":
		return len(d.Strs) == n
	}
	return false
}

// Append adds a value, converted to the column type as Druid converts
// dimension values to their outputType (unparsable numbers become null).
func (d *DimCol) Append(v Value) {
	if v.K == KString && d.Type == "STRING" {
		d.Null = append(d.Null, false)
		d.Strs = append(d.Strs, v.S)
		return
	}
	v = convertValue(v, d.Type)
	d.Null = append(d.Null, v.IsNull())
	switch d.Type {
	case "LONG":
		d.Longs = append(d.Longs, v.L)
	case "DOUBLE", "FLOAT":
		d.Doubles = append(d.Doubles, v.D)
	default:
		d.Strs = append(d.Strs, v.S)
	}
}

// Value returns row i.
func (d *DimCol) Value(i int) Value {
	if d.Null[i] {
		return Null
	}
	switch d.Type {
	case "LONG":
		return Long(d.Longs[i])
	case "DOUBLE":
		return Double(d.Doubles[i])
	case "FLOAT":
		return Float(float32(d.Doubles[i]))
	}
	return Str(d.Strs[i])
}

func (d *DimCol) gather(idx []int) *DimCol {
	out := newDimCol(d.Type)
	for _, i := range idx {
		out.Append(d.Value(i))
	}
	return out
}

// convertValue converts v to a column type: STRING, LONG, DOUBLE, FLOAT.
func convertValue(v Value, typ string) Value {
	if v.IsNull() {
		return Null
	}
	switch typ {
	case "LONG":
		switch v.K {
		case KLong:
			return v
		case KDouble, KFloat:
			return Long(javacompat.DoubleToLong(v.D))
		}
		s, _ := v.String()
		if n, ok := parseLongLenient(s); ok {
			return Long(n)
		}
		return Null
	case "DOUBLE", "FLOAT":
		f, ok := v.Float64()
		if !ok {
			return Null
		}
		if typ == "FLOAT" {
			return Float(float32(f))
		}
		return Double(f)
	}
	if v.K == KString {
		return v
	}
	s, _ := v.String()
	return Str(s)
}

func parseLongLenient(s string) (int64, bool) {
	v := Str(s)
	f, ok := v.Float64()
	if !ok {
		return 0, false
	}
	if n, err := parseInt64(s); err == nil {
		return n, true
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return javacompat.DoubleToLong(f), true
}
