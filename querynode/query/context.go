package query

import (
	"encoding/json"
	"strconv"

	"strata/expr"
)

// Context holds the query context keys this engine reads, already coerced
// (Druid accepts numbers and booleans given as strings), plus all keys raw.
type Context struct {
	// Timeout in milliseconds; 0 means none, -1 means the server default.
	Timeout                 int64
	Priority                int64
	QueryID                 string
	SkipEmptyBuckets        bool
	GrandTotal              bool
	MinTopNThreshold        int
	Finalize                bool
	SerializeDateTimeAsLong bool
	SortByDimsFirst         bool
	ResultAsArray           bool
	FudgeTimestamp          *int64
	// MaxMergingDictionarySize bounds the bytes of groupBy merge state;
	// 0 means the server default.
	MaxMergingDictionarySize int64
	// MaxSubqueryRows, when set, bounds the rows the subqueries of a query
	// may produce on the broker, in total (negative: no bound); nil means
	// the server default.
	MaxSubqueryRows *int64
	// MaxScatterGatherBytes bounds the bytes the broker may read from data
	// servers for the query; 0 means no bound.
	MaxScatterGatherBytes int64
	// Vectorize is "true", "false" or "force".
	Vectorize string
	// UncoveredIntervalsLimit, when positive, makes the broker list in the
	// response context up to this many parts of the query intervals no
	// available segment covers (Druid's default 0: not computed).
	UncoveredIntervalsLimit int64
	// ReturnPartialResults lets a query answer without the segments no
	// replica had (listed in the response context's missingSegments)
	// instead of failing, as Druid's context key of the same name.
	ReturnPartialResults bool
	// FailOnMissingSegments, when set, overrides the broker's default
	// (svc.query.failOnMissingSegments): fail rather than answer without
	// data that is not available.
	FailOnMissingSegments *bool
	// AsOf, when set, makes the broker answer from the segment timeline as
	// it was at that moment (time travel; see AsOf).
	AsOf AsOf
	// RealtimeCatchUpTimeout (ms) bounds how long the broker waits for the
	// replica of a Kafka sequence it falls back on to reach what earlier
	// answers showed (0: no wait); -1 means the broker's default.
	RealtimeCatchUpTimeout int64
	Raw                    map[string]any
}

// ContextDefaultTimeout is the placeholder for "timeout not given".
const ContextDefaultTimeout = -1

func parseContext(raw json.RawMessage) (Context, error) {
	c := Context{Timeout: ContextDefaultTimeout, MinTopNThreshold: 1000, Finalize: true, Vectorize: "true", RealtimeCatchUpTimeout: -1, Raw: map[string]any{}}
	if raw == nil {
		return c, nil
	}
	o, err := parseObj(raw, "context")
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(raw, &c.Raw); err != nil {
		return c, Invalidf("context: %v", err)
	}
	bad := func(k string) error {
		return Invalidf("Query context parse failed: invalid value for [%s]: %s", k, snippet(o.m[k]))
	}
	ints := []struct {
		k string
		p *int64
	}{{"timeout", &c.Timeout}, {"priority", &c.Priority}, {"maxMergingDictionarySize", &c.MaxMergingDictionarySize},
		{"maxScatterGatherBytes", &c.MaxScatterGatherBytes}, {"uncoveredIntervalsLimit", &c.UncoveredIntervalsLimit},
		{"realtimeCatchUpTimeout", &c.RealtimeCatchUpTimeout}}
	for _, e := range ints {
		if raw := o.raw(e.k); raw != nil {
			n, ok := parseInt(raw)
			if !ok {
				return c, bad(e.k)
			}
			*e.p = n
		}
	}
	if c.Timeout < 0 && o.has("timeout") {
		return c, Invalidf("Query context parse failed: timeout must be a non-negative value, got %d", c.Timeout)
	}
	if c.RealtimeCatchUpTimeout < 0 && o.has("realtimeCatchUpTimeout") {
		return c, Invalidf("Query context parse failed: realtimeCatchUpTimeout must be a non-negative value, got %d", c.RealtimeCatchUpTimeout)
	}
	if c.MaxScatterGatherBytes < 0 {
		return c, Invalidf("Query context parse failed: maxScatterGatherBytes must be a non-negative value, got %d", c.MaxScatterGatherBytes)
	}
	bools := []struct {
		k string
		p *bool
	}{{"skipEmptyBuckets", &c.SkipEmptyBuckets}, {"grandTotal", &c.GrandTotal}, {"finalize", &c.Finalize},
		{"serializeDateTimeAsLong", &c.SerializeDateTimeAsLong}, {"sortByDimsFirst", &c.SortByDimsFirst},
		{"resultAsArray", &c.ResultAsArray}, {"returnPartialResults", &c.ReturnPartialResults}}
	for _, e := range bools {
		if raw := o.raw(e.k); raw != nil {
			b, ok := parseBool(raw)
			if !ok {
				return c, bad(e.k)
			}
			*e.p = b
		}
	}
	if raw := o.raw("minTopNThreshold"); raw != nil {
		n, ok := parseInt(raw)
		if !ok || n < 1 || n > 1<<30 {
			return c, bad("minTopNThreshold")
		}
		c.MinTopNThreshold = int(n)
	}
	if raw := o.raw("failOnMissingSegments"); raw != nil {
		b, ok := parseBool(raw)
		if !ok {
			return c, bad("failOnMissingSegments")
		}
		c.FailOnMissingSegments = &b
	}
	if raw := o.raw("maxSubqueryRows"); raw != nil {
		n, ok := parseInt(raw)
		if !ok {
			return c, bad("maxSubqueryRows")
		}
		c.MaxSubqueryRows = &n
	}
	if c.QueryID, err = o.strDefault("queryId", ""); err != nil {
		return c, bad("queryId")
	}
	if raw := o.raw("fudgeTimestamp"); raw != nil {
		s, ok := scalarString(raw)
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil {
			return c, bad("fudgeTimestamp")
		}
		c.FudgeTimestamp = &n
	}
	if raw := o.raw("asOf"); raw != nil {
		v, ok := scalarString(raw)
		if !ok {
			return c, bad("asOf")
		}
		if c.AsOf, err = ParseAsOf(v); err != nil {
			return c, err
		}
	}
	if raw := o.raw("vectorize"); raw != nil {
		s, ok := scalarString(raw)
		if !ok || (s != "true" && s != "false" && s != "force") {
			return c, bad("vectorize")
		}
		c.Vectorize = s
	}
	return c, nil
}

// Expression is a compiled native expression with its source text.
type Expression struct {
	Source string
	Expr   *expr.Expr
}

// CompileExpression compiles a native expression, reporting syntax errors
// as invalid input.
func CompileExpression(src string) (*Expression, error) {
	e, err := expr.CompileWith(src, exprOptions)
	if err != nil {
		return nil, Invalidf("Invalid expression [%s]: %v", src, err)
	}
	return &Expression{Source: src, Expr: e}, nil
}
