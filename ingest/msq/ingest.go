package msq

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"strata/aggregate/blob"
	"strata/granularity"
	"strata/interval"
	"strata/sql"
	"strata/storage/segment"
)

// segGenPlan says how the rows of an INSERT or REPLACE become segments.
type segGenPlan struct {
	dataSource string
	replace    bool
	bounds     []interval.Interval // REPLACE: the overwritten intervals (Eternity for ALL)
	gran       granularity.Granularity
	queryGran  granularity.Granularity // from a TIME_FLOOR/FLOOR of __time; nil when none
	timeCol    int                     // output column of __time; -1 with PARTITIONED BY ALL and no __time
	fields     []genField
	dims       []segment.Dimension // in segment order: CLUSTERED BY columns first
	metrics    []segment.Metric
	rollup     bool
	cluster    []int    // output columns of CLUSTERED BY (besides __time)
	rangeDims  []string // non-empty: REPLACE writes range shard specs on these
	report     SegmentReport
	rowsPerSeg int
	sig        Signature
}

// genField is one input field of the segment writer: an output column and
// how its values convert.
type genField struct {
	col   int
	name  string
	kind  segment.Kind
	conv  convKind
	ptype string // convPairValue: the pair type
}

type convKind uint8

const (
	convLong convKind = iota
	convDouble
	convString
	convBytes
	convPairValue
)

// restrictedColumns are names MSQ reserves for its own shuffle keys.
var restrictedColumns = []string{"__boost", "__bucket"}

// planIngest plans INSERT and REPLACE.
func (p *planner) planIngest(stmt sql.Statement) (*stage, *segGenPlan, error) {
	var table []sql.Ident
	var src *sql.Query
	var gran *sql.Granularity
	var cluster []sql.Expr
	replace := false
	var where sql.Expr
	switch x := stmt.(type) {
	case *sql.Insert:
		if x.Export != nil {
			return nil, nil, unsupported("%s", sql.AtPos(x, "INSERT INTO EXTERN (export) is not supported"))
		}
		table, src, gran, cluster = x.Table, x.Source, x.PartitionedBy, x.ClusteredBy
	case *sql.Replace:
		if x.Export != nil {
			return nil, nil, unsupported("%s", sql.AtPos(x, "REPLACE INTO EXTERN (export) is not supported"))
		}
		table, src, gran, cluster, where, replace = x.Table, x.Source, x.PartitionedBy, x.ClusteredBy, x.OverwriteWhere, true
	}
	if len(table) > 2 || (len(table) == 2 && table[0].Name != "druid") {
		return nil, nil, invalidInput("%s", sql.AtPos(stmt, "cannot ingest into "+sql.Format(&sql.TableRef{Name: table})))
	}
	ds := table[len(table)-1].Name
	if ds == "" || strings.ContainsAny(ds, "/") || strings.HasPrefix(ds, ".") {
		return nil, nil, invalidInput("%s", sql.AtPos(stmt, fmt.Sprintf("invalid datasource name %q", ds)))
	}
	g := &segGenPlan{dataSource: ds, replace: replace, rowsPerSeg: p.opts.rowsPerSegment}
	if gran == nil || gran.IsAll() {
		g.gran = granularity.All
	} else {
		per, err := interval.ParsePeriod(gran.Period)
		if err != nil {
			return nil, nil, invalidInput("%s", sql.AtPos(gran, "invalid PARTITIONED BY: "+err.Error()))
		}
		if g.gran, err = granularity.NewPeriod(per, time.UTC, 0, false); err != nil {
			return nil, nil, invalidInput("%s", sql.AtPos(gran, "invalid PARTITIONED BY: "+err.Error()))
		}
	}
	if len(src.OrderBy) > 0 {
		return nil, nil, invalidInput("%s", sql.AtPos(src.OrderBy[0], "Cannot use an ORDER BY clause on a Query of type [INSERT/REPLACE], use CLUSTERED BY instead"))
	}
	if (src.Limit != nil || src.Offset != nil) && !g.gran.IsAll() {
		return nil, nil, invalidInput("%s", sql.AtPos(src, "INSERT and REPLACE queries cannot have a LIMIT or OFFSET unless PARTITIONED BY ALL"))
	}
	if replace {
		if where == nil {
			g.bounds = []interval.Interval{interval.Eternity}
		} else {
			if g.gran.IsAll() {
				return nil, nil, invalidInput("%s", sql.AtPos(where, "OVERWRITE WHERE cannot be used with PARTITIONED BY ALL; use OVERWRITE ALL"))
			}
			ivs, ok := timeRanges(where, func(e sql.Expr) bool {
				ref, ok := e.(*sql.ColumnRef)
				return ok && len(ref.Parts) == 1 && ref.Parts[0].Name == "__time"
			}, false)
			if !ok {
				return nil, nil, invalidInput("%s", sql.AtPos(where, "OVERWRITE WHERE must be a condition on __time comparing it with TIMESTAMP literals, combined with AND, OR and NOT"))
			}
			if len(ivs) == 0 {
				return nil, nil, invalidInput("%s", sql.AtPos(where, "OVERWRITE WHERE selects no time at all"))
			}
			for _, iv := range ivs {
				aligned := func(t int64) bool {
					return t == interval.MinInstant || t == interval.MaxInstant || g.gran.Bucket(t) == t
				}
				if !aligned(iv.Start) || !aligned(iv.End) {
					return nil, nil, invalidInput("%s", sql.AtPos(where, fmt.Sprintf(
						"OVERWRITE WHERE clause identified interval [%s] which is not aligned with PARTITIONED BY granularity [%s]",
						iv, granularity.String(g.gran))))
				}
			}
			g.bounds = ivs
		}
	}
	out, err := p.planQuery(src, false)
	if err != nil {
		return nil, nil, err
	}
	rel := out.rel
	g.sig = rel.sig
	// Output columns.
	seen := map[string]bool{}
	g.timeCol = -1
	for i, c := range rel.sig {
		if seen[c.Name] {
			return nil, nil, invalidInput("Duplicate field in SELECT: [%s]", c.Name)
		}
		seen[c.Name] = true
		if c.Name == "__time" {
			if !c.Type.Timestamp {
				return nil, nil, invalidInput("Field [__time] was the wrong type [%s], expected TIMESTAMP", c.Type.SQL())
			}
			g.timeCol = i
		}
	}
	if g.timeCol < 0 && !g.gran.IsAll() {
		return nil, nil, invalidInput("INSERT and REPLACE queries must produce a __time column (TIMESTAMP) unless PARTITIONED BY ALL")
	}
	// Rollup: the outermost query groups and keeps intermediate values.
	var post *stage
	if len(rel.branches) == 1 && len(rel.branches[0].ops) == 0 {
		if s, ok := rel.branches[0].src.(*stageSource); ok && s.st.kind == procGroupPost && !s.st.used {
			post = s.st
		}
	}
	g.rollup = post != nil && !p.opts.finalize && !post.group.implicit
	if g.rollup {
		post.group.rollup = true
		if oc := post.group.outputs; g.timeCol >= 0 && oc[g.timeCol].agg >= 0 {
			g.rollup, post.group.rollup = false, false // __time from an aggregate: no rollup key
		}
	}
	if g.rollup {
		// Aggregator columns carry intermediate values (sketches, pairs).
		sig := slices.Clone(rel.sig)
		for i, oc := range post.group.outputs {
			if oc.agg >= 0 && post.group.aggs[oc.agg].metric() != "" {
				sig[i].Type = post.group.aggs[oc.agg].interType()
			}
		}
		rel.sig, post.outSig, g.sig = sig, sig, sig
	}
	// CLUSTERED BY.
	if len(cluster) > maxClusteredColumns {
		return nil, nil, &Fault{Code: CodeTooManyClusteredByColumns, Stage: -1,
			Message: fmt.Sprintf("Too many CLUSTERED BY columns [%d] (limit %d)", len(cluster), maxClusteredColumns),
			Fields:  map[string]any{"numColumns": len(cluster), "maxColumns": maxClusteredColumns, "stage": 0}}
	}
	for _, e := range cluster {
		col := -1
		switch x := e.(type) {
		case *sql.NumberLit:
			n, err := x.Int64()
			if err != nil || n < 1 || int(n) > len(rel.sig) {
				return nil, nil, invalidInput("%s", sql.AtPos(x, "CLUSTERED BY ordinal out of range"))
			}
			col = int(n) - 1
		case *sql.ColumnRef:
			if len(x.Parts) == 1 {
				col = rel.sig.index(x.Parts[0].Name)
			}
		}
		if col < 0 {
			f := sql.Format(e)
			if i := slices.Index(out.itemFmts, f); i >= 0 {
				col = i
			}
		}
		if col < 0 {
			return nil, nil, invalidInput("%s", sql.AtPos(e, "CLUSTERED BY must name an output column (by name, alias or ordinal): "+sql.Format(e)))
		}
		if col == g.timeCol || slices.Contains(g.cluster, col) {
			continue
		}
		g.cluster = append(g.cluster, col)
	}
	if err := g.mapColumns(post, p.opts); err != nil {
		return nil, nil, err
	}
	if qg := queryGranularityOf(src); qg != nil && !g.gran.IsAll() && granularity.Finer(qg, g.gran) {
		g.queryGran = qg
	} else if qg != nil && g.gran.IsAll() {
		g.queryGran = qg
	}
	producer := p.materialize(rel)
	producer.part = partSpec{kind: partChunk, gen: g}
	gen := p.newStage(procSegGen, []*branch{{src: &stageSource{st: producer}}}, nil)
	gen.gen = g
	return gen, g, nil
}

// mapColumns decides, per output column, whether it is a dimension or a
// metric, and the writer fields.
func (g *segGenPlan) mapColumns(post *stage, opts *options) error {
	var dims []segment.Dimension
	dimOf := map[int]int{}
	for i, c := range g.sig {
		if i == g.timeCol {
			continue
		}
		f := genField{col: i, name: c.Name}
		metric := ""
		var spec *aggSpec
		if g.rollup {
			if oc := post.group.outputs[i]; oc.agg >= 0 {
				spec = post.group.aggs[oc.agg]
				metric = spec.metric()
			}
		}
		t := c.Type
		if metric == "" && t.Kind == KindComplex {
			switch {
			case t.Complex == blob.TypeHLL:
				metric = "HLLSketchMerge"
			case t.Complex == blob.TypeTheta:
				metric = "thetaSketch"
			case t.Complex == blob.TypeQuantiles:
				metric = "quantilesDoublesSketch"
			case strings.HasPrefix(t.Complex, "serializablePair"):
				metric = pairMetric(t.Complex)
			default:
				return &Fault{Code: CodeColumnTypeNotSupported, Stage: -1,
					Message: fmt.Sprintf("Cannot store column [%s] of type [%s]", c.Name, t.Native()),
					Fields:  map[string]any{"columnName": c.Name, "columnType": t.Native()}}
			}
		}
		if metric != "" {
			m := segment.Metric{Type: metric, Name: c.Name, FieldName: c.Name}
			switch {
			case metric == "thetaSketch":
				m.IsInputThetaSketch = true
				f.kind, f.conv = segment.KindComplex, convBytes
				if spec != nil {
					m.Size = spec.size
				}
			case metric == "quantilesDoublesSketch":
				f.kind, f.conv = segment.KindComplex, convBytes
				if spec != nil {
					m.K = spec.k
				}
			case metric == "HLLSketchMerge":
				f.kind, f.conv = segment.KindComplex, convBytes
				m.LgK, m.TgtHllType = 12, "HLL_4"
				if spec != nil {
					m.LgK, m.TgtHllType = spec.lgK, spec.tgt
				}
			case strings.HasSuffix(metric, "First") || strings.HasSuffix(metric, "Last"):
				// Pair values are stored as value + row time: the storage
				// aggregator takes the time from the row.
				ptype := t.Complex
				if spec != nil {
					ptype = spec.pairType()
				}
				f.conv, f.ptype = convPairValue, ptype
				f.kind = pairValueType(ptype).storageKind()
				if strings.HasPrefix(metric, "string") {
					m.MaxStringBytes = 1024
					if spec != nil {
						m.MaxStringBytes = spec.maxBytes
					}
				}
			default:
				f.kind = t.storageKind()
				f.conv = t.conv()
			}
			g.metrics = append(g.metrics, m)
			g.fields = append(g.fields, f)
			continue
		}
		switch t.Kind {
		case KindLongArray, KindDoubleArray:
			return &Fault{Code: CodeColumnTypeNotSupported, Stage: -1,
				Message: fmt.Sprintf("Cannot store column [%s] of type [%s]: numeric arrays are not supported", c.Name, t.Native()),
				Fields:  map[string]any{"columnName": c.Name, "columnType": t.Native()}}
		case KindStringArray:
			if opts.arrayIngestMode == "array" {
				return &Fault{Code: CodeColumnTypeNotSupported, Stage: -1,
					Message: fmt.Sprintf("Cannot store column [%s] of type [%s] with arrayIngestMode 'array'", c.Name, t.Native()),
					Fields:  map[string]any{"columnName": c.Name, "columnType": t.Native()}}
			}
		}
		f.kind, f.conv = t.storageKind(), t.conv()
		dimOf[i] = len(dims)
		dims = append(dims, segment.Dimension{Name: c.Name, Kind: f.kind, MultiValue: t.Kind == KindStringArray})
		g.fields = append(g.fields, f)
	}
	// CLUSTERED BY columns lead the dimension order (and so the sort order).
	for _, c := range g.cluster {
		i, ok := dimOf[c]
		if !ok {
			return invalidInput("CLUSTERED BY column [%s] is an aggregate; only dimensions can be clustered", g.sig[c].Name)
		}
		g.dims = append(g.dims, dims[i])
	}
	for i, d := range dims {
		if !slices.ContainsFunc(g.cluster, func(c int) bool { return dimOf[c] == i }) {
			g.dims = append(g.dims, d)
		}
	}
	// Range shard specs: REPLACE with leading string CLUSTERED BY columns.
	switch {
	case len(g.cluster) == 0:
		g.report = SegmentReport{ShardSpec: "NumberedShardSpec", Details: "Using NumberedShardSpec as no columns are supplied in the 'CLUSTERED BY' clause."}
	case !g.replace:
		g.report = SegmentReport{ShardSpec: "NumberedShardSpec", Details: "Using NumberedShardSpec because INSERT appends; range shard specs are only written by REPLACE."}
	default:
		for _, c := range g.cluster {
			if g.sig[c].Type.Kind != KindString {
				break
			}
			g.rangeDims = append(g.rangeDims, g.sig[c].Name)
		}
		if len(g.rangeDims) == 0 {
			g.report = SegmentReport{ShardSpec: "NumberedShardSpec", Details: "Cannot use RangeShardSpec, RangedShardSpec only supports string CLUSTER BY keys. Using NumberedShardSpec instead."}
		} else {
			g.report = SegmentReport{ShardSpec: "DimensionRangeShardSpec", Details: "Using DimensionRangeShardSpec on " + strings.Join(g.rangeDims, ", ") + "."}
		}
	}
	return nil
}

func pairMetric(complex string) string {
	switch complex {
	case blob.TypePairLongLong:
		return "longFirst"
	case blob.TypePairLongDouble:
		return "doubleFirst"
	case blob.TypePairLongFloat:
		return "floatFirst"
	}
	return "stringFirst"
}

// storageKind is the kind a column of type t is stored as.
func (t Type) storageKind() segment.Kind {
	switch t.Kind {
	case KindLong:
		return segment.KindLong
	case KindFloat:
		return segment.KindFloat
	case KindDouble:
		return segment.KindDouble
	case KindComplex:
		return segment.KindComplex
	}
	return segment.KindString
}

func (t Type) conv() convKind {
	switch t.Kind {
	case KindLong:
		return convLong
	case KindFloat, KindDouble:
		return convDouble
	case KindComplex:
		return convBytes
	}
	return convString
}

// queryGranularityOf reads the query granularity from the __time expression
// of the outermost SELECT: TIME_FLOOR(x, 'period') or FLOOR(x TO unit).
func queryGranularityOf(q *sql.Query) granularity.Granularity {
	sel, ok := q.Body.(*sql.Select)
	if !ok {
		return nil
	}
	var e sql.Expr
	for _, it := range sel.Columns {
		if it.Alias != nil && it.Alias.Name == "__time" {
			e = it.Expr
		}
	}
	period := ""
	switch x := e.(type) {
	case *sql.FuncCall:
		if strings.EqualFold(x.Name.Name, "TIME_FLOOR") && len(x.Args) == 2 {
			if s, ok := x.Args[1].(*sql.StringLit); ok {
				period = s.Value
			}
		}
	case *sql.FloorCeilExpr:
		if !x.Ceil {
			period = x.Unit.Period()
		}
	}
	if period == "" {
		return nil
	}
	per, err := interval.ParsePeriod(period)
	if err != nil {
		return nil
	}
	g, err := granularity.NewPeriod(per, time.UTC, 0, false)
	if err != nil {
		return nil
	}
	return g
}
