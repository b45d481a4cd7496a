package broker

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"strata/interval"
	"strata/segmeta"
)

// A query can read less data than exists in two ways, and Druid reports
// both in the response context: parts of its intervals that no available
// segment covers (uncoveredIntervals, with the context's
// uncoveredIntervalsLimit), and segments a data server was asked for but no
// longer had, on every replica (missingSegments). The broker knows only what
// the data servers announce, as Druid's does, so a time chunk whose segment
// no historical could load reads as uncovered, like time with no data.

// ResponseContext is what the broker reports about how complete a query's
// answer is: the members of Druid's response context it fills, sent as JSON
// in the X-Druid-Response-Context header.
type ResponseContext struct {
	// UncoveredIntervals are the parts of the query intervals in which no
	// available segment of the datasource is visible, in time order, at most
	// uncoveredIntervalsLimit; UncoveredIntervalsOverflowed says more were
	// left off.
	UncoveredIntervals           []interval.Interval
	UncoveredIntervalsOverflowed bool
	// MissingSegments are segments no replica had when asked (only with
	// returnPartialResults; the answer lacks their rows).
	MissingSegments []SegmentDescriptor
	// RealtimeBehind are the Kafka sequences whose realtime rows the answer
	// read from a replica behind what earlier answers read (catchup.go).
	RealtimeBehind []RealtimeBehind
}

// SegmentDescriptor names a segment as Druid's SegmentDescriptor does: the
// part of the segment's interval the query read, its version and partition.
type SegmentDescriptor struct {
	Interval  string `json:"itvl"`
	Version   string `json:"ver"`
	Partition int32  `json:"part"`
}

// maxResponseContextChars bounds the header as Druid's broker does
// (ResponseContextConfig, 7 KiB): HTTP clients and proxies limit header
// sizes, and a list of thousands of missing segments would exceed them.
const maxResponseContextChars = 7 * 1024

// responseContextJSON is the header's JSON form; members are present only
// when set, as in Druid.
type responseContextJSON struct {
	UncoveredIntervals           []string            `json:"uncoveredIntervals,omitempty"`
	UncoveredIntervalsOverflowed *bool               `json:"uncoveredIntervalsOverflowed,omitempty"`
	MissingSegments              []SegmentDescriptor `json:"missingSegments,omitempty"`
	RealtimeBehind               []RealtimeBehind    `json:"realtimeBehind,omitempty"`
	Truncated                    bool                `json:"truncated,omitempty"`
}

// Header renders the response context for the X-Druid-Response-Context
// header: "{}" when nothing is missing. Past the size bound the longer list
// loses its back half until the rest fits, and "truncated" says so (Druid's
// ResponseContext.serializeWith).
func (rc *ResponseContext) Header() string {
	if rc == nil {
		return "{}"
	}
	h := responseContextJSON{MissingSegments: rc.MissingSegments, RealtimeBehind: rc.RealtimeBehind}
	for _, iv := range rc.UncoveredIntervals {
		h.UncoveredIntervals = append(h.UncoveredIntervals, iv.String())
	}
	if len(h.UncoveredIntervals) > 0 {
		over := rc.UncoveredIntervalsOverflowed
		h.UncoveredIntervalsOverflowed = &over
	}
	for {
		out, err := json.Marshal(h)
		if err != nil { // unreachable: strings and numbers only
			return "{}"
		}
		if len(out) <= maxResponseContextChars || len(h.UncoveredIntervals)+len(h.MissingSegments) == 0 {
			return string(out)
		}
		h.Truncated = true
		iv, _ := json.Marshal(h.UncoveredIntervals)
		ms, _ := json.Marshal(h.MissingSegments)
		if len(iv) >= len(ms) {
			h.UncoveredIntervals = h.UncoveredIntervals[:len(h.UncoveredIntervals)/2]
			if len(h.UncoveredIntervals) == 0 {
				h.UncoveredIntervalsOverflowed = nil
			}
		} else {
			h.MissingSegments = h.MissingSegments[:len(h.MissingSegments)/2]
		}
	}
}

// completeness is what a query asks about missing data (its context, and the
// broker's default) and what the broker found missing while running it. The
// settings of the outermost query apply to its subqueries too.
type completeness struct {
	uncoveredLimit int  // uncoveredIntervalsLimit; ≤ 0: not listed
	partial        bool // returnPartialResults
	fail           bool // failOnMissingSegments
	rc             ResponseContext
}

func (b *Broker) completenessOf(q *nativeQuery) *completeness {
	c := &completeness{partial: q.Context.ReturnPartialResults, fail: b.cfg.FailOnMissingSegments}
	c.uncoveredLimit = int(min(max(q.Context.UncoveredIntervalsLimit, 0), 1<<30))
	if p := q.Context.FailOnMissingSegments; p != nil {
		c.fail = *p
	}
	return c
}

// failListLimit bounds the uncovered intervals an unavailable-data error
// names.
const failListLimit = 10

// checkCoverage lists the uncovered parts of a query over tables in the
// response context when the query asks for them, and with
// failOnMissingSegments fails the query when there are any. A query that
// named no intervals (all of time) is never complete in that sense, so only
// its missing segments make it fail.
func (b *Broker) checkCoverage(f queryFacts, c *completeness) error {
	return b.checkCoverageWith(f, c, b.view.uncovered)
}

// checkCoverageIn is checkCoverage over other timelines than the live view's
// (an asOf query's), without realtime segments.
func (b *Broker) checkCoverageIn(f queryFacts, c *completeness, timeline func(ds string) *segmeta.Timeline) error {
	return b.checkCoverageWith(f, c, func(f queryFacts, limit int) ([]interval.Interval, bool) {
		return uncoveredIn(f, limit, timeline, nil)
	})
}

func (b *Broker) checkCoverageWith(f queryFacts, c *completeness, uncovered func(queryFacts, int) ([]interval.Interval, bool)) error {
	limit := c.uncoveredLimit
	allTime := len(f.specific) == 0 && len(f.intervals) == 1 && f.intervals[0] == interval.Eternity
	failing := c.fail && !allTime
	if failing {
		limit = max(limit, failListLimit)
	}
	if limit <= 0 {
		return nil
	}
	gaps, over := uncovered(f, limit)
	if len(gaps) == 0 {
		return nil
	}
	if failing {
		return b.unavailableData(gaps, over, nil)
	}
	if n := c.uncoveredLimit; len(gaps) > n {
		gaps, over = gaps[:n], true
	}
	c.rc.UncoveredIntervals = append(c.rc.UncoveredIntervals, gaps...)
	c.rc.UncoveredIntervalsOverflowed = c.rc.UncoveredIntervalsOverflowed || over
	return nil
}

// lostSegment is a unit no replica had, with the error Druid's default
// (no partial results) answers.
type lostSegment struct {
	u   unit
	err *Error
}

// settleLost decides about the segments no replica had: fail naming them
// (failOnMissingSegments), fail as Druid does without returnPartialResults,
// or list them in the response context and answer without them.
func (b *Broker) settleLost(lost []lostSegment, c *completeness) error {
	if len(lost) == 0 {
		return nil
	}
	switch {
	case c.fail:
		return b.unavailableData(nil, false, lost)
	case !c.partial:
		e := *lost[0].err
		if len(lost) > 1 {
			ids := make([]string, 0, len(lost)-1)
			for _, l := range lost[1:] {
				ids = append(ids, l.u.ref.ID)
			}
			e.Message += fmt.Sprintf("; no replica had %d other segments either: %s", len(ids), strings.Join(ids, ", "))
		}
		return &e
	}
	for _, l := range lost {
		d := SegmentDescriptor{Interval: l.u.ref.Interval}
		if l.u.seg != nil {
			d.Version, d.Partition = l.u.seg.Version, l.u.seg.ShardSpec.PartitionNum
		}
		c.rc.MissingSegments = append(c.rc.MissingSegments, d)
	}
	return nil
}

// unavailableData is the failure of a query with failOnMissingSegments that
// would have read less than the data: 503 (category SERVICE_UNAVAILABLE),
// because the query is valid and the data exists or may exist, but the
// cluster cannot serve all of it now; a retry after the segments load
// succeeds. Not 500: nothing failed unexpectedly, and clients and proxies
// retry a 503. The message and the context name the uncovered intervals
// and the segments no replica had.
func (b *Broker) unavailableData(gaps []interval.Interval, moreGaps bool, lost []lostSegment) *Error {
	e := &Error{Status: http.StatusServiceUnavailable, Code: codeStructured, ErrorCode: "unavailableSegments",
		Persona: personaOperator, Category: categoryUnavailable, Context: map[string]string{}}
	var parts []string
	if len(gaps) > 0 {
		ivs := make([]string, len(gaps))
		for i, iv := range gaps {
			ivs[i] = iv.String()
		}
		list := strings.Join(ivs, ", ")
		if moreGaps {
			list += ", ..."
		}
		parts = append(parts, fmt.Sprintf("no available segment covers the intervals [%s] (not loaded on any data server, or no data there)", list))
		e.Context["uncoveredIntervals"] = list
	}
	if len(lost) > 0 {
		ids := make([]string, len(lost))
		for i, l := range lost {
			ids[i] = l.u.ref.ID
		}
		list := strings.Join(ids, ", ")
		parts = append(parts, fmt.Sprintf("no data server that was asked had the segments [%s]", list))
		e.Context["missingSegments"] = list
	}
	e.Message = "Query cannot read all of its data and failOnMissingSegments is set: " + strings.Join(parts, "; ") +
		". Wait for the segments to load (or restore them), or set failOnMissingSegments to false to answer from the available data."
	return e
}

// uncovered returns the parts of the query's intervals in which the view has
// no visible segment of the query's datasources, in time order, at most
// limit of them, and whether there were more (Druid's uncoveredIntervals).
// Timeline pieces cover, tombstones included (they say "no data here"), and
// so do realtime segments. For a query on specific segments, the parts of
// their intervals where the given segment is not visible are uncovered.
func (v *view) uncovered(f queryFacts, limit int) ([]interval.Interval, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return uncoveredIn(f, limit, v.index.Timeline, func(ds string) []interval.Interval {
		var out []interval.Interval
		for _, s := range v.servers {
			for _, seg := range s.realtime {
				if seg.DataSource == ds {
					out = append(out, seg.Interval)
				}
			}
		}
		return out
	})
}

// uncoveredIn is uncovered over the timelines timeline returns, with the
// intervals realtime (when set) returns covered too.
func uncoveredIn(f queryFacts, limit int, timeline func(ds string) *segmeta.Timeline, realtime func(ds string) []interval.Interval) ([]interval.Interval, bool) {
	var out []interval.Interval
	over := false
	for _, ds := range f.dataSources {
		tl := timeline(ds)
		if len(f.specific) > 0 {
			var gaps []interval.Interval
			for _, sp := range f.specific {
				var covered []interval.Interval
				if tl != nil {
					tl.LookupFunc(sp.interval, func(h segmeta.Holder) bool {
						if h.Version == sp.version && holdsPartition(h, sp.partition) {
							covered = append(covered, h.Interval)
						}
						return true
					})
				}
				gaps, _ = appendUncovered(gaps, []interval.Interval{sp.interval}, covered, -1)
			}
			for _, g := range condense(gaps) {
				if len(out) == limit {
					return out, true
				}
				out = append(out, g)
			}
			continue
		}
		var covered []interval.Interval
		if tl != nil {
			for _, iv := range f.intervals {
				tl.LookupFunc(iv, func(h segmeta.Holder) bool {
					covered = append(covered, h.Interval)
					return true
				})
			}
		}
		if realtime != nil {
			covered = append(covered, realtime(ds)...)
		}
		if out, over = appendUncovered(out, f.intervals, covered, limit); over {
			break
		}
	}
	return out, over
}

// appendUncovered appends to dst the parts of ivs (sorted and disjoint) that
// covered leaves uncovered, in time order, as long as dst holds fewer than
// limit intervals (negative: no limit); past that it stops and reports the
// overflow, as Druid's computeUncoveredIntervals does.
func appendUncovered(dst, ivs, covered []interval.Interval, limit int) ([]interval.Interval, bool) {
	covered = condense(covered) // sorted, disjoint, abutting pieces merged
	j := 0
	for _, iv := range ivs {
		for j < len(covered) && covered[j].End <= iv.Start {
			j++
		}
		cursor := iv.Start
		for k := j; k < len(covered) && covered[k].Start < iv.End; k++ {
			if covered[k].Start > cursor {
				if limit >= 0 && len(dst) >= limit {
					return dst, true
				}
				dst = append(dst, interval.Interval{Start: cursor, End: covered[k].Start})
			}
			cursor = max(cursor, covered[k].End)
		}
		if cursor < iv.End {
			if limit >= 0 && len(dst) >= limit {
				return dst, true
			}
			dst = append(dst, interval.Interval{Start: cursor, End: iv.End})
		}
	}
	return dst, false
}

// holdsPartition reports whether the timeline piece shows the partition.
func holdsPartition(h segmeta.Holder, partition int32) bool {
	for _, seg := range h.Segments {
		if seg.ShardSpec.PartitionNum == partition {
			return true
		}
	}
	return false
}
