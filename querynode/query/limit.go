package query

import (
	"encoding/json"
	"strings"
)

// LimitSpec is a groupBy "default" limit spec.
type LimitSpec struct {
	Limit   int64 // Unlimited when absent
	Offset  int64
	Columns []OrderBy
}

// OrderBy is one ordering column of a limit spec.
type OrderBy struct {
	Dimension  string
	Descending bool
	Ordering   Ordering
}

// ParseLimitSpec parses a limit spec.
func ParseLimitSpec(raw json.RawMessage) (*LimitSpec, error) {
	o, err := parseObj(raw, "limitSpec")
	if err != nil {
		return nil, err
	}
	// Without a type Druid reads a limit spec as its no-op (defaultImpl
	// NoopLimitSpec): the limit, offset and columns are ignored.
	t, err := o.strDefault("type", "noop")
	if err != nil {
		return nil, err
	}
	if t != "default" {
		if t == "NoopLimitSpec" || t == "noop" {
			return &LimitSpec{Limit: Unlimited}, nil
		}
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [LimitSpec]", t)
	}
	l := &LimitSpec{}
	if l.Limit, err = o.integer("limit", Unlimited); err != nil {
		return nil, err
	}
	if l.Limit < 0 {
		return nil, Invalidf("limitSpec: limit must be non-negative")
	}
	if l.Offset, err = o.integer("offset", 0); err != nil {
		return nil, err
	}
	if l.Offset < 0 {
		return nil, Invalidf("limitSpec: offset must be non-negative")
	}
	a, _, err := o.array("columns")
	if err != nil {
		return nil, err
	}
	for _, e := range a {
		if s, ok := scalarString(e); ok {
			l.Columns = append(l.Columns, OrderBy{Dimension: s, Ordering: Lexicographic})
			continue
		}
		co, err := parseObj(e, "limitSpec column")
		if err != nil {
			return nil, err
		}
		c := OrderBy{}
		if c.Dimension, err = co.reqStr("dimension"); err != nil {
			return nil, err
		}
		dir, err := co.strDefault("direction", "ascending")
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(dir) {
		case "ascending", "asc":
		case "descending", "desc":
			c.Descending = true
		default:
			return nil, Invalidf("limitSpec: unknown direction [%s]", dir)
		}
		ord, err := co.strDefault("dimensionOrder", "lexicographic")
		if err != nil {
			return nil, err
		}
		if raw := co.raw("dimensionOrder"); raw != nil && ord == "" {
			if oo, err := parseObj(raw, "dimensionOrder"); err == nil {
				ord, _ = oo.strDefault("type", "")
			}
		}
		if c.Ordering, err = ParseOrdering(ord); err != nil {
			return nil, err
		}
		l.Columns = append(l.Columns, c)
	}
	return l, nil
}

// TopNMetric is a topN metric spec.
type TopNMetric struct {
	Type         string // numeric, dimension, inverted
	Metric       string // numeric
	Ordering     Ordering
	PreviousStop *string
	Delegate     *TopNMetric // inverted
}

// NumericMetric returns the aggregator name a numeric (possibly inverted)
// metric sorts by, or "".
func (m *TopNMetric) NumericMetric() string {
	switch m.Type {
	case "numeric":
		return m.Metric
	case "inverted":
		return m.Delegate.NumericMetric()
	}
	return ""
}

// ParseTopNMetric parses a topN metric spec.
func ParseTopNMetric(raw json.RawMessage) (*TopNMetric, error) {
	if s, ok := scalarString(raw); ok {
		return &TopNMetric{Type: "numeric", Metric: s}, nil
	}
	o, err := parseObj(raw, "topN metric")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, err
	}
	m := &TopNMetric{Type: t}
	switch t {
	case "numeric":
		if m.Metric, err = o.reqStr("metric"); err != nil {
			return nil, err
		}
	case "dimension", "lexicographic", "alphaNumeric", "alphanumeric":
		m.Type = "dimension"
		ord := "lexicographic"
		if t != "dimension" {
			ord = t
		}
		if s, ok, err := o.str("ordering"); err != nil {
			return nil, err
		} else if ok {
			ord = s
		} else if raw := o.raw("ordering"); raw != nil {
			if oo, err := parseObj(raw, "ordering"); err == nil {
				ord, _ = oo.strDefault("type", ord)
			}
		}
		if m.Ordering, err = ParseOrdering(ord); err != nil {
			return nil, err
		}
		if m.PreviousStop, err = o.nullableStr("previousStop"); err != nil {
			return nil, err
		}
	case "inverted":
		raw := o.raw("metric")
		if raw == nil {
			return nil, o.missing("metric")
		}
		if m.Delegate, err = ParseTopNMetric(raw); err != nil {
			return nil, err
		}
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [TopNMetricSpec]", t)
	}
	return m, nil
}

// Having is a groupBy having spec.
type Having struct {
	Type        string // filter, greaterThan, lessThan, equalTo, dimSelector, and, or, not, always, never
	Aggregation string
	Value       float64
	Dimension   string
	DimValue    *string
	Extraction  *ExtractionFn
	Filter      *Filter
	Specs       []*Having
}

// ParseHaving parses a having spec.
func ParseHaving(raw json.RawMessage) (*Having, error) {
	o, err := parseObj(raw, "having")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, err
	}
	h := &Having{Type: t}
	switch t {
	case "filter":
		fr := o.raw("filter")
		if fr == nil {
			return nil, o.missing("filter")
		}
		if h.Filter, err = ParseFilter(fr); err != nil {
			return nil, err
		}
	case "greaterThan", "lessThan", "equalTo":
		if h.Aggregation, err = o.reqStr("aggregation"); err != nil {
			return nil, err
		}
		v, ok, err := o.number("value")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, o.missing("value")
		}
		h.Value = v
	case "dimSelector":
		if h.Dimension, err = o.reqStr("dimension"); err != nil {
			return nil, err
		}
		if h.DimValue, err = o.nullableStr("value"); err != nil {
			return nil, err
		}
		if raw := o.raw("extractionFn"); raw != nil {
			if h.Extraction, err = ParseExtractionFn(raw); err != nil {
				return nil, err
			}
		}
	case "and", "or":
		a, _, err := o.array("havingSpecs")
		if err != nil {
			return nil, err
		}
		for _, e := range a {
			sub, err := ParseHaving(e)
			if err != nil {
				return nil, err
			}
			h.Specs = append(h.Specs, sub)
		}
	case "not":
		raw := o.raw("havingSpec")
		if raw == nil {
			return nil, o.missing("havingSpec")
		}
		sub, err := ParseHaving(raw)
		if err != nil {
			return nil, err
		}
		h.Specs = []*Having{sub}
	case "always", "never":
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [HavingSpec]", t)
	}
	return h, nil
}
