// Package query is the typed model of Druid native queries: Parse turns the
// JSON body of a native query into a validated Query, with errors that say
// what is wrong (kind InvalidInput, HTTP 400). Execution lives in package
// querynode/engine.
package query

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"

	"strata/granularity"
	"strata/interval"
)

// Query type ids, exactly as Druid spells them (case-sensitive).
const (
	Timeseries         = "timeseries"
	TopN               = "topN"
	GroupBy            = "groupBy"
	Scan               = "scan"
	Search             = "search"
	TimeBoundary       = "timeBoundary"
	SegmentMetadata    = "segmentMetadata"
	DataSourceMetadata = "dataSourceMetadata"
)

var queryTypes = []string{DataSourceMetadata, GroupBy, Scan, Search, SegmentMetadata, TimeBoundary, Timeseries, TopN}

// Unlimited is the limit of a query without one.
const Unlimited = math.MaxInt64

// Query is one parsed native query. Members that do not apply to Type are
// zero; the type-specific parts are in the pointer members.
type Query struct {
	Type string
	// DataSource is the table name; a union data source lists all its
	// tables in DataSources (DataSource is then the first).
	DataSource  string
	DataSources []string
	// Inline holds the rows of an {"type":"inline"} data source; SubQuery
	// the inner query of a {"type":"query"} data source, and SubQueryJSON
	// its body as given (what a broker sends on to data servers). Both are
	// nil for table and union data sources, and DataSource and DataSources
	// are empty when either is set.
	Inline       *InlineTable
	SubQuery     *Query
	SubQueryJSON json.RawMessage
	// Joins are the clauses of a join data source, applied in order to the
	// base data source above (join.go).
	Joins []*Join
	// joinRefs and joinAll tell which left columns the join stage reads
	// (JoinReads).
	joinRefs string
	joinAll  bool
	// Intervals are the query intervals, sorted and condensed (overlapping
	// and abutting intervals merged), as Druid does. Segments, when the
	// intervals were given as {"type":"segments"}, lists the descriptors.
	Intervals   []interval.Interval
	Segments    []SegmentDescriptor
	Granularity granularity.Granularity
	Filter      *Filter
	// VirtualColumns are expression columns usable wherever a column is.
	VirtualColumns   []*VirtualColumn
	Aggregations     []*Aggregator
	PostAggregations []*PostAggregator
	Context          Context
	Descending       bool
	// Limit is the row limit of timeseries, scan and search queries
	// (Unlimited when absent; search defaults to 1000).
	Limit int64

	TopN            *TopNSpec
	GroupBy         *GroupBySpec
	Scan            *ScanSpec
	Search          *SearchSpec
	TimeBoundary    *TimeBoundarySpec
	SegmentMetadata *SegmentMetadataSpec
}

// SegmentDescriptor names one segment a broker asks a data server for.
type SegmentDescriptor struct {
	Interval  interval.Interval
	Version   string
	Partition int
}

// TopNSpec holds the members of a topN query.
type TopNSpec struct {
	Dimension *DimensionSpec
	Threshold int
	Metric    *TopNMetric
}

// GroupBySpec holds the members of a groupBy query.
type GroupBySpec struct {
	Dimensions    []*DimensionSpec
	LimitSpec     *LimitSpec // nil: no ordering beyond the default, no limit
	Having        *Having
	SubtotalsSpec [][]string
}

// ScanSpec holds the members of a scan query.
type ScanSpec struct {
	Columns      []string // empty: all columns
	ResultFormat string   // "list" or "compactedList"
	BatchSize    int
	Offset       int64
	Order        string // "none", "ascending", "descending"
}

// SearchSpec holds the members of a search query.
type SearchSpec struct {
	Dimensions []*DimensionSpec // empty: all string dimensions
	Query      *SearchQuery
	Sort       Ordering
}

// TimeBoundarySpec holds the members of a timeBoundary query.
type TimeBoundarySpec struct {
	Bound string // "", "minTime" or "maxTime"
}

// SegmentMetadataSpec holds the members of a segmentMetadata query.
type SegmentMetadataSpec struct {
	ToInclude               string   // "all", "none" or "list"
	Columns                 []string // for "list"
	Merge                   bool
	AnalysisTypes           []string
	AggregatorMergeStrategy string
	// DefaultIntervals is true when the query named no intervals.
	DefaultIntervals bool
}

// HasAnalysis reports whether the analysis type t was requested.
func (s *SegmentMetadataSpec) HasAnalysis(t string) bool { return slices.Contains(s.AnalysisTypes, t) }

// Parse parses and validates a native query.
func Parse(body []byte) (*Query, error) { return parse(body, 0) }

// parse parses a query that is depth levels deep in query data sources.
func parse(body []byte, depth int) (*Query, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, Invalidf("Empty query body")
	}
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return nil, Invalidf("Json parse failed: %v", err)
	}
	o, err := parseObj(body, "query")
	if err != nil {
		return nil, err
	}
	qt, ok, err := o.str("queryType")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Invalidf("Missing type id when trying to resolve subtype of [Query]: missing type id property 'queryType'")
	}
	if !slices.Contains(queryTypes, qt) {
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [Query]: known type ids = [%s]", qt, strings.Join(queryTypes, ", "))
	}
	q := &Query{Type: qt, Limit: Unlimited}
	o.what = qt + " query"
	if err := q.parseCommon(o, depth); err != nil {
		return nil, err
	}
	switch qt {
	case Timeseries:
		err = q.parseTimeseries(o)
	case TopN:
		err = q.parseTopN(o)
	case GroupBy:
		err = q.parseGroupBy(o)
	case Scan:
		err = q.parseScan(o)
	case Search:
		err = q.parseSearch(o)
	case TimeBoundary:
		err = q.parseTimeBoundary(o)
	case SegmentMetadata:
		err = q.parseSegmentMetadata(o)
	case DataSourceMetadata:
		// Only dataSource and context.
	}
	if err != nil {
		return nil, err
	}
	if err := q.checkNames(); err != nil {
		return nil, err
	}
	if len(q.Joins) > 0 {
		q.noteJoinRefs(o) // join.go
	}
	return q, nil
}

func (q *Query) parseCommon(o obj, depth int) error {
	raw := o.raw("dataSource")
	if raw == nil {
		return Invalidf("%s: dataSource can't be null", o.what)
	}
	if err := q.parseDataSource(raw, depth); err != nil {
		return err
	}
	needIntervals := q.Type != TimeBoundary && q.Type != SegmentMetadata && q.Type != DataSourceMetadata
	if raw := o.raw("intervals"); raw != nil {
		if err := q.parseIntervals(raw); err != nil {
			return err
		}
	} else if needIntervals {
		return Invalidf("%s: querySegmentSpec can't be null (missing property [intervals])", o.what)
	} else {
		q.Intervals = []interval.Interval{interval.Eternity}
	}
	var err error
	if q.Context, err = parseContext(o.raw("context")); err != nil {
		return err
	}
	if q.VirtualColumns, err = parseVirtualColumns(o); err != nil {
		return err
	}
	if raw := o.raw("filter"); raw != nil {
		if q.Filter, err = ParseFilter(raw); err != nil {
			return err
		}
	}
	if q.Descending, err = o.boolean("descending", false); err != nil {
		return err
	}
	return nil
}

func (q *Query) parseDataSource(raw json.RawMessage, depth int) error {
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		s, _ := scalarString(raw)
		if s == "" {
			return Invalidf("dataSource name must not be empty")
		}
		q.DataSource, q.DataSources = s, []string{s}
		return nil
	}
	o, err := parseObj(raw, "dataSource")
	if err != nil {
		return err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return err
	}
	switch t {
	case "table":
		name, err := o.reqStr("name")
		if err != nil {
			return err
		}
		q.DataSource, q.DataSources = name, []string{name}
	case "union":
		a, ok, err := o.array("dataSources")
		if err != nil {
			return err
		}
		if !ok || len(a) == 0 {
			return Invalidf("union dataSource needs a non-empty [dataSources]")
		}
		for _, e := range a {
			var name string
			if s, ok := scalarString(e); ok {
				name = s
			} else {
				sub, err := parseObj(e, "union member")
				if err != nil {
					return err
				}
				if name, err = sub.reqStr("name"); err != nil {
					return err
				}
			}
			q.DataSources = append(q.DataSources, name)
		}
		q.DataSource = q.DataSources[0]
	case "inline":
		return q.parseInline(o)
	case "query":
		return q.parseQueryDataSource(o, depth)
	case "join":
		return q.parseJoin(o, depth)
	case "lookup":
		return q.parseLookupDataSource(o)
	case "unnest", "frame", "restrict", "filtered":
		return Errorf(Unsupported, "dataSource type [%s] is not supported by this engine", t)
	default:
		return Invalidf("Could not resolve type id '%s' as a subtype of [DataSource]", t)
	}
	return nil
}

func (q *Query) parseIntervals(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	var strs []string
	switch raw[0] {
	case '"':
		s, _ := scalarString(raw)
		strs = []string{s}
	case '[':
		var a []string
		if err := json.Unmarshal(raw, &a); err != nil {
			return Invalidf("intervals must be an array of ISO-8601 interval strings")
		}
		strs = a
	case '{':
		o, err := parseObj(raw, "intervals")
		if err != nil {
			return err
		}
		t, err := o.reqStr("type")
		if err != nil {
			return err
		}
		switch t {
		case "intervals":
			if strs, _, err = o.strings("intervals"); err != nil {
				return err
			}
		case "segments":
			return q.parseSegmentSpec(o)
		default:
			return Invalidf("Could not resolve type id '%s' as a subtype of [QuerySegmentSpec]", t)
		}
	default:
		return Invalidf("intervals must be an array of ISO-8601 interval strings")
	}
	ivs := make([]interval.Interval, 0, len(strs))
	for _, s := range strs {
		iv, err := interval.Parse(strings.TrimSpace(s))
		if err != nil {
			return Invalidf("Invalid interval [%s]: %v", s, err)
		}
		ivs = append(ivs, iv)
	}
	q.Intervals = Condense(ivs)
	return nil
}

func (q *Query) parseSegmentSpec(o obj) error {
	a, _, err := o.array("segments")
	if err != nil {
		return err
	}
	var ivs []interval.Interval
	for _, e := range a {
		so, err := parseObj(e, "segment descriptor")
		if err != nil {
			return err
		}
		s, err := so.reqStr("itvl")
		if err != nil {
			return err
		}
		iv, err := interval.Parse(s)
		if err != nil {
			return Invalidf("Invalid interval [%s]: %v", s, err)
		}
		ver, _ := so.strDefault("ver", "")
		part, err := so.integer("part", 0)
		if err != nil {
			return err
		}
		q.Segments = append(q.Segments, SegmentDescriptor{Interval: iv, Version: ver, Partition: int(part)})
		ivs = append(ivs, iv)
	}
	q.Intervals = Condense(ivs)
	return nil
}

// Condense sorts intervals and merges those that overlap or abut, dropping
// empty ones, as Druid's JodaUtils.condenseIntervals does.
func Condense(ivs []interval.Interval) []interval.Interval {
	out := make([]interval.Interval, 0, len(ivs))
	for _, iv := range ivs {
		if !iv.IsEmpty() {
			out = append(out, iv)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].End < out[j].End
	})
	n := 0
	for _, iv := range out {
		if n > 0 && iv.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, iv.End)
			continue
		}
		out[n] = iv
		n++
	}
	return out[:n]
}

func (q *Query) parseGranularity(o obj, required bool) error {
	raw := o.raw("granularity")
	if raw == nil {
		if required {
			return Invalidf("%s: Must specify a granularity", o.what)
		}
		q.Granularity = granularity.All
		return nil
	}
	g, err := granularity.Parse(raw)
	if err != nil {
		return Invalidf("%s: %v", o.what, err)
	}
	q.Granularity = g
	return nil
}

func (q *Query) parseAggs(o obj) error {
	a, _, err := o.array("aggregations")
	if err != nil {
		return err
	}
	for _, e := range a {
		agg, err := ParseAggregator(e)
		if err != nil {
			return err
		}
		q.Aggregations = append(q.Aggregations, agg)
	}
	a, _, err = o.array("postAggregations")
	if err != nil {
		return err
	}
	for _, e := range a {
		pa, err := ParsePostAggregator(e, true)
		if err != nil {
			return err
		}
		q.PostAggregations = append(q.PostAggregations, pa)
	}
	return nil
}

func (q *Query) parseLimit(o obj, def int64) error {
	n, err := o.integer("limit", def)
	if err != nil {
		return err
	}
	if n < 0 {
		return Invalidf("%s: limit must be non-negative, got %d", o.what, n)
	}
	q.Limit = n
	return nil
}

func (q *Query) parseTimeseries(o obj) error {
	if err := q.parseGranularity(o, true); err != nil {
		return err
	}
	if err := q.parseAggs(o); err != nil {
		return err
	}
	return q.parseLimit(o, Unlimited)
}

func (q *Query) parseTopN(o obj) error {
	if err := q.parseGranularity(o, true); err != nil {
		return err
	}
	if err := q.parseAggs(o); err != nil {
		return err
	}
	t := &TopNSpec{}
	q.TopN = t
	raw := o.raw("dimension")
	if raw == nil {
		return Invalidf("topN query: dimension can't be null")
	}
	var err error
	if t.Dimension, err = ParseDimensionSpec(raw); err != nil {
		return err
	}
	if !o.has("threshold") {
		return Invalidf("topN query: missing required property [threshold]")
	}
	th, err := o.integer("threshold", 0)
	if err != nil {
		return err
	}
	if th < 1 || th > math.MaxInt32 {
		return Invalidf("topN query: threshold must be positive, got %d", th)
	}
	t.Threshold = int(th)
	raw = o.raw("metric")
	if raw == nil {
		return Invalidf("topN query: metric can't be null")
	}
	if t.Metric, err = ParseTopNMetric(raw); err != nil {
		return err
	}
	if name := t.Metric.NumericMetric(); name != "" && !q.hasOutput(name) {
		return Invalidf("topN query: metric [%s] is not an aggregator or post-aggregator of the query", name)
	}
	return nil
}

func (q *Query) parseGroupBy(o obj) error {
	if err := q.parseGranularity(o, true); err != nil {
		return err
	}
	if err := q.parseAggs(o); err != nil {
		return err
	}
	g := &GroupBySpec{}
	q.GroupBy = g
	a, _, err := o.array("dimensions")
	if err != nil {
		return err
	}
	for _, e := range a {
		d, err := ParseDimensionSpec(e)
		if err != nil {
			return err
		}
		g.Dimensions = append(g.Dimensions, d)
	}
	if raw := o.raw("limitSpec"); raw != nil {
		if g.LimitSpec, err = ParseLimitSpec(raw); err != nil {
			return err
		}
	}
	if raw := o.raw("having"); raw != nil {
		if g.Having, err = ParseHaving(raw); err != nil {
			return err
		}
	}
	if raw := o.raw("subtotalsSpec"); raw != nil {
		if err := json.Unmarshal(raw, &g.SubtotalsSpec); err != nil {
			return Invalidf("groupBy query: subtotalsSpec must be an array of arrays of dimension names")
		}
		for _, st := range g.SubtotalsSpec {
			for _, name := range st {
				if !slices.ContainsFunc(g.Dimensions, func(d *DimensionSpec) bool { return d.OutputName == name }) {
					return Invalidf("groupBy query: subtotalsSpec names [%s], which is not a dimension output name", name)
				}
			}
		}
	}
	if g.LimitSpec != nil {
		for _, c := range g.LimitSpec.Columns {
			if !q.hasOutput(c.Dimension) && !slices.ContainsFunc(g.Dimensions, func(d *DimensionSpec) bool { return d.OutputName == c.Dimension }) {
				return Invalidf("groupBy query: limitSpec column [%s] is not a dimension, aggregator or post-aggregator", c.Dimension)
			}
		}
	}
	return nil
}

func (q *Query) parseScan(o obj) error {
	s := &ScanSpec{ResultFormat: "list", BatchSize: 20480, Order: "none"}
	q.Scan = s
	q.Granularity = granularity.All
	var err error
	if s.Columns, _, err = o.strings("columns"); err != nil {
		return err
	}
	if s.ResultFormat, err = o.strDefault("resultFormat", "list"); err != nil {
		return err
	}
	switch s.ResultFormat {
	case "list", "compactedList":
	case "valueVector":
		return Invalidf("scan query: resultFormat [valueVector] is not supported")
	default:
		return Invalidf("scan query: unknown resultFormat [%s]", s.ResultFormat)
	}
	bs, err := o.integer("batchSize", 20480)
	if err != nil {
		return err
	}
	if bs <= 0 || bs > math.MaxInt32 {
		return Invalidf("scan query: batchSize must be greater than 0")
	}
	s.BatchSize = int(bs)
	if err := q.parseLimit(o, Unlimited); err != nil {
		return err
	}
	if o.has("limit") && q.Limit == 0 {
		return Invalidf("scan query: limit must be greater than 0")
	}
	if s.Offset, err = o.integer("offset", 0); err != nil {
		return err
	}
	if s.Offset < 0 {
		return Invalidf("scan query: offset must be greater than or equal to 0")
	}
	order, err := o.strDefault("order", "none")
	if err != nil {
		return err
	}
	switch strings.ToLower(order) {
	case "none":
		s.Order = "none"
	case "ascending":
		s.Order = "ascending"
	case "descending":
		s.Order = "descending"
	default:
		return Invalidf("scan query: unknown order [%s]", order)
	}
	if err := s.parseOrderBy(o, order); err != nil {
		return err
	}
	if s.Order != "none" && len(s.Columns) > 0 && !slices.Contains(s.Columns, "__time") {
		return Invalidf("scan query: ordering by time requires [__time] in columns")
	}
	if len(q.Aggregations) > 0 {
		return Invalidf("scan query: aggregations are not allowed")
	}
	return nil
}

// parseOrderBy reads the newer form of a scan's order, "orderBy": a list of
// {columnName, order}. The native scan engine orders by __time only, as
// Druid's does; ordering by other columns needs SQL (MSQ).
func (s *ScanSpec) parseOrderBy(o obj, legacy string) error {
	items, ok, err := o.array("orderBy")
	if err != nil || !ok || len(items) == 0 {
		return err
	}
	type item struct {
		Column string `json:"columnName"`
		Order  string `json:"order"`
	}
	var list []item
	for _, raw := range items {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil || it.Column == "" {
			return Invalidf("scan query: orderBy entries are objects with a columnName and an order")
		}
		list = append(list, it)
	}
	if len(list) > 1 || list[0].Column != "__time" {
		var names []string
		for _, it := range list {
			names = append(names, it.Column+" "+strings.ToLower(cmp.Or(it.Order, "ascending")))
		}
		return Errorf(Unsupported, "Cannot execute query with orderBy %v: the native scan query orders by __time only", names)
	}
	order := strings.ToLower(cmp.Or(list[0].Order, "ascending"))
	if order != "ascending" && order != "descending" {
		return Invalidf("scan query: unknown orderBy order [%s]", list[0].Order)
	}
	if o.has("order") && !strings.EqualFold(legacy, "none") && !strings.EqualFold(legacy, order) {
		return Invalidf("scan query: 'order' [%s] disagrees with 'orderBy' [%s]", legacy, order)
	}
	s.Order = order
	return nil
}

func (q *Query) parseSearch(o obj) error {
	if err := q.parseGranularity(o, false); err != nil {
		return err
	}
	s := &SearchSpec{Sort: Lexicographic}
	q.Search = s
	if err := q.parseLimit(o, 1000); err != nil {
		return err
	}
	a, _, err := o.array("searchDimensions")
	if err != nil {
		return err
	}
	for _, e := range a {
		d, err := ParseDimensionSpec(e)
		if err != nil {
			return err
		}
		s.Dimensions = append(s.Dimensions, d)
	}
	raw := o.raw("query")
	if raw == nil {
		return Invalidf("search query: missing required property [query]")
	}
	if s.Query, err = ParseSearchQuery(raw); err != nil {
		return err
	}
	if raw := o.raw("sort"); raw != nil {
		so, err := parseObj(raw, "search sort")
		if err != nil {
			return err
		}
		t, err := so.strDefault("type", "lexicographic")
		if err != nil {
			return err
		}
		if s.Sort, err = ParseOrdering(t); err != nil {
			return err
		}
	}
	return nil
}

func (q *Query) parseTimeBoundary(o obj) error {
	t := &TimeBoundarySpec{}
	q.TimeBoundary = t
	b, err := o.strDefault("bound", "")
	if err != nil {
		return err
	}
	switch strings.ToLower(b) {
	case "":
	case "mintime":
		t.Bound = "minTime"
	case "maxtime":
		t.Bound = "maxTime"
	default:
		// Druid treats any other value as "both".
	}
	return nil
}

var analysisTypes = []string{"cardinality", "size", "interval", "aggregators", "minmax", "timestampSpec", "queryGranularity", "rollup", "projections"}

func (q *Query) parseSegmentMetadata(o obj) error {
	s := &SegmentMetadataSpec{ToInclude: "all", AnalysisTypes: []string{"cardinality", "interval", "minmax"}, AggregatorMergeStrategy: "strict"}
	q.SegmentMetadata = s
	s.DefaultIntervals = !o.has("intervals")
	if raw := o.raw("toInclude"); raw != nil {
		ti, err := parseObj(raw, "toInclude")
		if err != nil {
			return err
		}
		t, err := ti.reqStr("type")
		if err != nil {
			return err
		}
		switch t {
		case "all", "none":
		case "list":
			if s.Columns, _, err = ti.strings("columns"); err != nil {
				return err
			}
		default:
			return Invalidf("Could not resolve type id '%s' as a subtype of [ColumnIncluderator]", t)
		}
		s.ToInclude = t
	}
	var err error
	if s.Merge, err = o.boolean("merge", false); err != nil {
		return err
	}
	if types, ok, err := o.strings("analysisTypes"); err != nil {
		return err
	} else if ok {
		s.AnalysisTypes = nil
		for _, t := range types {
			found := ""
			for _, k := range analysisTypes {
				if strings.EqualFold(k, t) {
					found = k
				}
			}
			if found == "" {
				return Invalidf("segmentMetadata query: unknown analysisType [%s]", t)
			}
			s.AnalysisTypes = append(s.AnalysisTypes, found)
		}
	}
	lenient, err := o.boolean("lenientAggregatorMerge", false)
	if err != nil {
		return err
	}
	strategy, err := o.strDefault("aggregatorMergeStrategy", "")
	if err != nil {
		return err
	}
	switch {
	case strategy != "" && o.has("lenientAggregatorMerge"):
		return Invalidf("segmentMetadata query: aggregatorMergeStrategy and lenientAggregatorMerge cannot both be set")
	case lenient:
		s.AggregatorMergeStrategy = "lenient"
	case strategy != "":
		switch strings.ToLower(strategy) {
		case "strict", "lenient", "earliest", "latest":
			s.AggregatorMergeStrategy = strings.ToLower(strategy)
		default:
			return Invalidf("segmentMetadata query: unknown aggregatorMergeStrategy [%s]", strategy)
		}
	}
	return nil
}

// hasOutput reports whether name is an aggregator or post-aggregator.
func (q *Query) hasOutput(name string) bool {
	for _, a := range q.Aggregations {
		if a.Name == name {
			return true
		}
	}
	for _, p := range q.PostAggregations {
		if p.Name == name {
			return true
		}
	}
	return false
}

// checkNames rejects duplicate output names, as Druid does.
func (q *Query) checkNames() error {
	seen := map[string]string{}
	add := func(name, what string) error {
		if prev, dup := seen[name]; dup {
			return Invalidf("Duplicate output name [%s] (%s and %s)", name, prev, what)
		}
		seen[name] = what
		return nil
	}
	for _, v := range q.VirtualColumns {
		if err := add(v.Name, "virtual column"); err != nil {
			return err
		}
	}
	seen = map[string]string{}
	var dims []*DimensionSpec
	if q.GroupBy != nil {
		dims = q.GroupBy.Dimensions
	}
	if q.TopN != nil {
		dims = []*DimensionSpec{q.TopN.Dimension}
	}
	for _, d := range dims {
		if err := add(d.OutputName, "dimension"); err != nil {
			return err
		}
	}
	for _, a := range q.Aggregations {
		if err := add(a.Name, "aggregator"); err != nil {
			return err
		}
	}
	for _, p := range q.PostAggregations {
		if p.Name == "" {
			return Invalidf("post-aggregator of type [%s] needs a name", p.Type)
		}
		if err := add(p.Name, "post-aggregator"); err != nil {
			return err
		}
	}
	// Every field a post-aggregator reads must be a dimension, an aggregator
	// or an earlier post-aggregator (Druid's Queries.prepareAggregations).
	known := map[string]bool{}
	for _, d := range dims {
		known[d.OutputName] = true
	}
	for _, a := range q.Aggregations {
		known[a.Name] = true
	}
	for _, p := range q.PostAggregations {
		var missing []string
		for _, f := range p.dependentFields(nil) {
			if !known[f] && !slices.Contains(missing, f) {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return Invalidf("Missing fields [%s] for postAggregator [%s]", strings.Join(missing, ", "), p.Name)
		}
		known[p.Name] = true
	}
	return nil
}

// dependentFields appends the output names p reads directly or through its
// nested post-aggregators. Expressions are left out: their identifiers are
// checked when the expression is bound.
func (p *PostAggregator) dependentFields(dst []string) []string {
	switch p.Type {
	case "fieldAccess", "finalizingFieldAccess", "hyperUniqueCardinality":
		if p.FieldName != "" {
			dst = append(dst, p.FieldName)
		}
	}
	for _, f := range p.Fields {
		if f != nil {
			dst = f.dependentFields(dst)
		}
	}
	return dst
}

// VirtualColumn is an expression virtual column.
type VirtualColumn struct {
	Name       string
	Expression *Expression
	OutputType string // LONG, DOUBLE, FLOAT, STRING; "" = inferred
}

func parseVirtualColumns(o obj) ([]*VirtualColumn, error) {
	a, _, err := o.array("virtualColumns")
	if err != nil {
		return nil, err
	}
	var out []*VirtualColumn
	for _, e := range a {
		vo, err := parseObj(e, "virtual column")
		if err != nil {
			return nil, err
		}
		t, err := vo.reqStr("type")
		if err != nil {
			return nil, err
		}
		if t != "expression" {
			if t == "nested-field" || t == "mv-filtered" || t == "list-filtered" || t == "prefix-filtered" {
				return nil, Errorf(Unsupported, "virtual column type [%s] is not supported by this engine", t)
			}
			return nil, Invalidf("Could not resolve type id '%s' as a subtype of [VirtualColumn]", t)
		}
		v := &VirtualColumn{}
		if v.Name, err = vo.reqStr("name"); err != nil {
			return nil, err
		}
		src, err := vo.reqStr("expression")
		if err != nil {
			return nil, err
		}
		if v.Expression, err = CompileExpression(src); err != nil {
			return nil, err
		}
		ot, err := vo.strDefault("outputType", "")
		if err != nil {
			return nil, err
		}
		if v.OutputType, err = parseValueType(ot, true); err != nil {
			return nil, err
		}
		if v.Name == "__time" {
			return nil, Invalidf("virtual column name [__time] is reserved")
		}
		out = append(out, v)
	}
	return out, nil
}

// parseValueType normalises a column type name (LONG, DOUBLE, FLOAT,
// STRING); allowEmpty accepts "" as "infer".
func parseValueType(s string, allowEmpty bool) (string, error) {
	switch u := strings.ToUpper(s); u {
	case "LONG", "DOUBLE", "FLOAT", "STRING":
		return u, nil
	case "":
		if allowEmpty {
			return "", nil
		}
	}
	if strings.HasPrefix(strings.ToUpper(s), "ARRAY<") || strings.HasPrefix(strings.ToUpper(s), "COMPLEX<") {
		return "", Errorf(Unsupported, "value type [%s] is not supported by this engine", s)
	}
	return "", Invalidf("unknown value type [%s]", s)
}
