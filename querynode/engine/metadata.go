package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	"strata/interval"
	"strata/javacompat"
	"strata/querynode/query"
	"strata/storage/segment"
)

// runTimeBoundary reads the times of the first and last selected rows.
func runTimeBoundary(_ *Engine, sq *segQuery) (*Partial, error) {
	p := &Partial{Type: sq.q.Type}
	sel, _, err := sq.selection()
	if err != nil || sel.empty() {
		return p, err
	}
	var first, last int
	if sel.bm != nil {
		first, last = int(sel.bm.Minimum()), int(sel.bm.Maximum())
	} else {
		first, last = sel.ranges[0].lo, sel.ranges[len(sel.ranges)-1].hi-1
	}
	times, err := sq.cols.num(timeColumn)
	if err != nil {
		return nil, err
	}
	at := func(r int) (int64, error) {
		b := r / sq.cols.rpb
		start, _ := sq.cols.data.BlockRows(b)
		ts, err := times.longs(b)
		if err != nil {
			return 0, err
		}
		return ts[r-start], nil
	}
	if p.MinTime, err = at(first); err != nil {
		return nil, err
	}
	if p.MaxTime, err = at(last); err != nil {
		return nil, err
	}
	p.Found = true
	return p, nil
}

// mergeTimeBoundary keeps the earliest and latest times.
func mergeTimeBoundary(_ *Engine, _ *query.Query, parts []*Partial, out *Partial) error {
	for _, p := range parts {
		if !p.Found {
			continue
		}
		if !out.Found {
			out.Found, out.MinTime, out.MaxTime = true, p.MinTime, p.MaxTime
			continue
		}
		out.MinTime = min(out.MinTime, p.MinTime)
		out.MaxTime = max(out.MaxTime, p.MaxTime)
	}
	return nil
}

func finalizeTimeBoundary(_ *Engine, q *query.Query, p *Partial) ([]byte, error) {
	if !p.Found {
		return []byte("[]"), nil
	}
	w := newWriter(q)
	ts := p.MinTime
	if q.TimeBoundary.Bound == "maxTime" {
		ts = p.MaxTime
	}
	w.raw(`[{"timestamp":`)
	w.timestamp(ts)
	w.raw(`,"result":{`)
	switch q.TimeBoundary.Bound {
	case "minTime":
		w.raw(`"minTime":`)
		w.timestamp(p.MinTime)
	case "maxTime":
		w.raw(`"maxTime":`)
		w.timestamp(p.MaxTime)
	default:
		w.raw(`"minTime":`)
		w.timestamp(p.MinTime)
		w.raw(`,"maxTime":`)
		w.timestamp(p.MaxTime)
	}
	w.raw("}}]")
	return w.b, nil
}

// dataSourceMetadata partials carry the latest event time in MaxTime and
// the start of that segment's interval in MinTime.
func runDataSourceMetadata(_ *Engine, sq *segQuery) (*Partial, error) {
	p := &Partial{Type: sq.q.Type}
	if data := sq.cols.data; data.NumRows() > 0 {
		_, maxT := data.TimeRange()
		p.Found, p.MinTime, p.MaxTime = true, data.Interval().Start, maxT
	}
	return p, nil
}

// mergeDataSourceMetadata keeps the latest event, with its segment's
// interval start.
func mergeDataSourceMetadata(_ *Engine, _ *query.Query, parts []*Partial, out *Partial) error {
	for _, p := range parts {
		if p.Found && (!out.Found || p.MaxTime > out.MaxTime) {
			out.Found, out.MinTime, out.MaxTime = true, p.MinTime, p.MaxTime
		}
	}
	return nil
}

func finalizeDataSourceMetadata(_ *Engine, q *query.Query, p *Partial) ([]byte, error) {
	if !p.Found {
		return []byte("[]"), nil
	}
	w := newWriter(q)
	w.raw(`[{"timestamp":`)
	w.timestamp(p.MinTime)
	w.raw(`,"result":{"maxIngestedEventTime":`)
	w.timestamp(p.MaxTime)
	w.raw("}}]")
	return w.b, nil
}

// SegmentAnalysis is the segmentMetadata result of one segment (or of
// several, merged).
type SegmentAnalysis struct {
	ID          string                     `json:"id"`
	Intervals   []interval.Interval        `json:"intervals,omitempty"`
	Columns     []*ColumnAnalysis          `json:"columns"`
	Size        int64                      `json:"size"`
	NumRows     int64                      `json:"numRows"`
	Aggregators map[string]json.RawMessage `json:"aggregators,omitempty"`
	AggsUnknown bool                       `json:"aggsUnknown,omitempty"`
	Rollup      *bool                      `json:"rollup,omitempty"`
	// QueryGranularity is the ingestion query granularity recorded in the segment
	// footer (JSON, e.g. "SECOND"); nil when unknown or not analysed.
	QueryGranularity json.RawMessage `json:"queryGranularity,omitempty"`
	Start            int64           `json:"start"` // segment interval start, for earliest/latest merging
}

// ColumnAnalysis describes one column.
type ColumnAnalysis struct {
	Name          string  `json:"name"`
	TypeSignature string  `json:"typeSignature"`
	Type          string  `json:"type"`
	Multi         bool    `json:"hasMultipleValues"`
	HasNulls      bool    `json:"hasNulls"`
	Size          int64   `json:"size"`
	Cardinality   *int    `json:"cardinality,omitempty"`
	MinValue      *string `json:"minValue,omitempty"`
	MaxValue      *string `json:"maxValue,omitempty"`
	Error         *string `json:"errorMessage,omitempty"`
}

// runSegmentMetadata analyses the segment's columns from their metadata.
func runSegmentMetadata(_ *Engine, sq *segQuery) (*Partial, error) {
	q, data := sq.q, sq.cols.data
	s := q.SegmentMetadata
	p := &Partial{Type: q.Type}
	if !s.DefaultIntervals && len(sq.intervals()) == 0 {
		return p, nil
	}
	a := &SegmentAnalysis{ID: sq.seg.ID, NumRows: int64(data.NumRows()), Start: data.Interval().Start}
	if s.HasAnalysis("interval") {
		iv := data.Interval()
		a.Intervals = []interval.Interval{{Start: iv.Start, End: iv.End}}
	}
	for _, c := range data.Columns() {
		switch s.ToInclude {
		case "none":
			continue
		case "list":
			if !slices.Contains(s.Columns, c.Name) {
				continue
			}
		}
		ca := &ColumnAnalysis{Name: c.Name, Multi: c.MultiValue, HasNulls: c.HasNulls}
		switch c.Kind {
		case segment.KindComplex:
			ca.TypeSignature, ca.Type = "COMPLEX<"+c.ComplexType+">", c.ComplexType
		default:
			ca.TypeSignature, ca.Type = c.Kind.String(), c.Kind.String()
		}
		if s.HasAnalysis("size") {
			ca.Size = c.Size
			a.Size += c.Size
		}
		if c.Kind == segment.KindString {
			if s.HasAnalysis("cardinality") {
				n := c.Cardinality
				ca.Cardinality = &n
			}
			if s.HasAnalysis("minmax") && c.TotalValues > 0 && c.Cardinality > 0 && (c.MinString != "" || c.MaxString != "" || c.Cardinality > 1 || !c.HasNulls) {
				mn, mx := c.MinString, c.MaxString
				ca.MinValue, ca.MaxValue = &mn, &mx
			}
		}
		a.Columns = append(a.Columns, ca)
	}
	if s.HasAnalysis("aggregators") {
		a.Aggregators = map[string]json.RawMessage{}
		for _, c := range data.Columns() {
			if c.Role == segment.RoleMetric && c.Aggregator != "" {
				a.Aggregators[c.Name] = json.RawMessage(c.Aggregator)
			}
		}
	}
	if s.HasAnalysis("rollup") {
		r := data.Rollup()
		a.Rollup = &r
	}
	if s.HasAnalysis("queryGranularity") {
		if g := data.Metadata()["queryGranularity"]; g != "" && json.Valid([]byte(g)) {
			a.QueryGranularity = json.RawMessage(g)
		}
	}
	p.Analyses = []*SegmentAnalysis{a}
	return p, nil
}

// mergeSegmentMetadata concatenates the analyses; finalizing merges them
// when asked.
func mergeSegmentMetadata(_ *Engine, _ *query.Query, parts []*Partial, out *Partial) error {
	for _, p := range parts {
		out.Analyses = append(out.Analyses, p.Analyses...)
	}
	return nil
}

// mergeAnalyses merges segment analyses as Druid does with merge=true.
func mergeAnalyses(q *query.Query, as []*SegmentAnalysis) *SegmentAnalysis {
	out := &SegmentAnalysis{ID: "merged"}
	if len(as) == 0 {
		return nil
	}
	sort.SliceStable(as, func(i, j int) bool { return as[i].Start < as[j].Start })
	sameID := true
	for _, a := range as {
		if a.ID != as[0].ID {
			sameID = false
		}
	}
	if sameID {
		out.ID = as[0].ID
	}
	byName := map[string]*ColumnAnalysis{}
	var order []string
	var ivs []interval.Interval
	rollupSet := false
	for i, a := range as {
		if i == 0 {
			out.QueryGranularity = a.QueryGranularity
		} else if !bytes.Equal(out.QueryGranularity, a.QueryGranularity) {
			out.QueryGranularity = nil // Druid keeps it only when every segment agrees
		}
	}
	strategy := q.SegmentMetadata.AggregatorMergeStrategy
	for ai, a := range as {
		out.Size += a.Size
		out.NumRows += a.NumRows
		ivs = append(ivs, a.Intervals...)
		if a.Rollup != nil {
			if !rollupSet {
				r := *a.Rollup
				out.Rollup, rollupSet = &r, true
			} else if out.Rollup != nil && *out.Rollup != *a.Rollup {
				out.Rollup = nil
			}
		} else if rollupSet || ai > 0 {
			out.Rollup = nil
			rollupSet = true
		}
		for _, c := range a.Columns {
			prev, ok := byName[c.Name]
			if !ok {
				cp := *c
				byName[c.Name] = &cp
				order = append(order, c.Name)
				continue
			}
			mergeColumn(prev, c)
		}
		if q.SegmentMetadata.HasAnalysis("aggregators") {
			switch {
			case ai == 0:
				out.Aggregators = map[string]json.RawMessage{}
				for k, v := range a.Aggregators {
					out.Aggregators[k] = v
				}
			case strategy == "latest":
				out.Aggregators = a.Aggregators
			case strategy == "earliest":
			default:
				for k, v := range a.Aggregators {
					if old, ok := out.Aggregators[k]; ok && string(old) != string(v) {
						if strategy == "strict" {
							out.AggsUnknown = true
						}
						out.Aggregators[k] = nil
						continue
					}
					if _, ok := out.Aggregators[k]; !ok {
						out.Aggregators[k] = v
					}
				}
			}
		}
	}
	if len(ivs) > 0 {
		out.Intervals = query.Condense(ivs)
	}
	for _, n := range order {
		out.Columns = append(out.Columns, byName[n])
	}
	return out
}

func mergeColumn(a, b *ColumnAnalysis) {
	if a.Error != nil {
		return
	}
	if b.Error != nil {
		a.Error = b.Error
		return
	}
	if a.TypeSignature != b.TypeSignature {
		msg := "error:cannot_merge_diff_types: [" + a.TypeSignature + "] and [" + b.TypeSignature + "]"
		*a = ColumnAnalysis{Name: a.Name, TypeSignature: a.TypeSignature, Type: a.Type, Error: &msg}
		return
	}
	a.Multi = a.Multi || b.Multi
	a.HasNulls = a.HasNulls || b.HasNulls
	a.Size += b.Size
	if a.Cardinality != nil && b.Cardinality != nil {
		n := max(*a.Cardinality, *b.Cardinality)
		a.Cardinality = &n
	} else if b.Cardinality != nil {
		a.Cardinality = b.Cardinality
	}
	if b.MinValue != nil && (a.MinValue == nil || *b.MinValue < *a.MinValue) {
		a.MinValue = b.MinValue
	}
	if b.MaxValue != nil && (a.MaxValue == nil || *b.MaxValue > *a.MaxValue) {
		a.MaxValue = b.MaxValue
	}
}

func finalizeSegmentMetadata(_ *Engine, q *query.Query, p *Partial) ([]byte, error) {
	as := p.Analyses
	if q.SegmentMetadata.Merge && len(as) > 0 {
		as = []*SegmentAnalysis{mergeAnalyses(q, as)}
	}
	w := newWriter(q)
	w.raw("[")
	for i, a := range as {
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"id":`)
		w.b = javacompat.AppendJSONString(w.b, a.ID)
		w.raw(`,"intervals":`)
		if a.Intervals == nil {
			w.raw("null")
		} else {
			w.raw("[")
			for k, iv := range a.Intervals {
				if k > 0 {
					w.raw(",")
				}
				w.b = javacompat.AppendJSONString(w.b, iv.String())
			}
			w.raw("]")
		}
		w.raw(`,"columns":{`)
		for k, c := range a.Columns {
			if k > 0 {
				w.raw(",")
			}
			w.key(c.Name)
			writeColumnAnalysis(w, c)
		}
		w.raw(`},"size":`)
		w.value(Long(a.Size))
		w.raw(`,"numRows":`)
		w.value(Long(a.NumRows))
		w.raw(`,"aggregators":`)
		if a.Aggregators == nil || a.AggsUnknown {
			w.raw("null")
		} else {
			names := make([]string, 0, len(a.Aggregators))
			for n := range a.Aggregators {
				names = append(names, n)
			}
			sort.Strings(names)
			w.raw("{")
			for k, n := range names {
				if k > 0 {
					w.raw(",")
				}
				w.key(n)
				if a.Aggregators[n] == nil {
					w.raw("null")
				} else {
					w.raw(string(a.Aggregators[n]))
				}
			}
			w.raw("}")
		}
		w.raw(`,"timestampSpec":null,"queryGranularity":`)
		if a.QueryGranularity == nil {
			w.raw("null")
		} else {
			w.raw(string(a.QueryGranularity))
		}
		w.raw(`,"rollup":`)
		if a.Rollup == nil {
			w.raw("null")
		} else if *a.Rollup {
			w.raw("true")
		} else {
			w.raw("false")
		}
		w.raw("}")
	}
	w.raw("]")
	return w.b, nil
}

func writeColumnAnalysis(w *jsonWriter, c *ColumnAnalysis) {
	str := func(p *string) {
		if p == nil {
			w.raw("null")
		} else {
			w.b = javacompat.AppendJSONString(w.b, *p)
		}
	}
	w.raw(`{"typeSignature":`)
	w.b = javacompat.AppendJSONString(w.b, c.TypeSignature)
	w.raw(`,"type":`)
	w.b = javacompat.AppendJSONString(w.b, c.Type)
	if c.Error != nil {
		w.raw(`,"hasMultipleValues":false,"hasNulls":false,"size":0,"cardinality":null,"minValue":null,"maxValue":null,"errorMessage":`)
		str(c.Error)
		w.raw("}")
		return
	}
	w.raw(`,"hasMultipleValues":`)
	w.raw(boolText(c.Multi))
	w.raw(`,"hasNulls":`)
	w.raw(boolText(c.HasNulls))
	w.raw(`,"size":`)
	w.value(Long(c.Size))
	w.raw(`,"cardinality":`)
	if c.Cardinality == nil {
		w.raw("null")
	} else {
		w.value(Long(int64(*c.Cardinality)))
	}
	w.raw(`,"minValue":`)
	str(c.MinValue)
	w.raw(`,"maxValue":`)
	str(c.MaxValue)
	w.raw(`,"errorMessage":null}`)
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
