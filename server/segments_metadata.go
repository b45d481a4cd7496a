package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"strata/coordinator"
	"strata/fsm"
	"strata/interval"
	"strata/segmeta"
)

// The metadata-store view (ADMIN-API §7.3): every used segment, overshadowed or
// not, straight from the replicated metadata.

// usedSegments returns ds's used segments in id order.
func usedSegments(st *fsm.State, ds string) []*segmeta.DataSegment {
	tl := st.UsedIndex().Timeline(ds)
	if tl == nil {
		return nil
	}
	out := make([]*segmeta.DataSegment, 0, tl.Len())
	tl.Segments(func(s *segmeta.DataSegment) bool {
		out = append(out, s)
		return true
	})
	return out
}

// createdProps is the properties object of a metadata datasource: Druid stamps
// the time of the metadata poll that built it; the FSM view is always current,
// so that is now.
func createdProps() string {
	return `{"created":"` + interval.FormatMillis(time.Now().UnixMilli()) + `"}`
}

// metadataSegments serves GET /metadata/segments.
func (s *Server) metadataSegments(w http.ResponseWriter, r *http.Request) {
	withStatus := flag(r, "includeOvershadowedStatus")
	if !withStatus && flag(r, "includeRealtimeSegments") {
		writeEmpty(w, http.StatusBadRequest)
		return
	}
	var only map[string]bool
	if list := r.URL.Query()["datasources"]; len(list) > 0 {
		only = make(map[string]bool, len(list))
		for _, ds := range list {
			only[ds] = true
		}
	}
	var segs []*segmeta.DataSegment
	var over map[*segmeta.DataSegment]bool
	// The ETag is the applied log index: every node that has applied the same
	// index holds the same segments, so a poller (each historical, several
	// times a second) gets a 304 instead of the whole listing while nothing
	// changed.
	var etag string
	notModified := false
	// With the status the answer also follows the placement (replication
	// factors), so its ETag names the placement too.
	replication, planned := func(*segmeta.DataSegment) (int, bool) { return 0, false }, ""
	if withStatus {
		replication, planned = s.replicationFactors()
	}
	s.node.FSM().Read(func(st *fsm.State) {
		// With security on the listing depends on the caller too.
		etag = `"` + strconv.FormatUint(st.Index(), 10) + planned + callerTag(r) + `"`
		if notModified = r.Header.Get("If-None-Match") == etag; notModified {
			return
		}
		for _, ds := range st.UsedIndex().DataSources() {
			if only != nil && !only[ds] || !readable(r, ds) {
				continue
			}
			segs = append(segs, usedSegments(st, ds)...)
			if withStatus {
				for _, seg := range st.UsedIndex().Timeline(ds).Overshadowed() {
					if over == nil {
						over = map[*segmeta.DataSegment]bool{}
					}
					over[seg] = true
				}
			}
		}
	})
	w.Header().Set("ETag", etag)
	if notModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if !withStatus {
		writeRawJSON(w, http.StatusOK, appendSegments(nil, segs))
		return
	}
	// Realtime segments would be appended here when the centralized schema is
	// enabled; no realtime ingestion announces segments to the coordinator yet.
	b := make([]byte, 0, 2+len(segs)*(segmentJSONSize+100))
	b = append(b, '[')
	for i, seg := range segs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = seg.AppendJSONFields(b)
		// Druid reports 0 replicas for overshadowed segments (they are about to
		// be dropped), the replicas its rules ask for otherwise, and null
		// while the coordinator has not planned yet.
		switch n, ok := replication(seg); {
		case over[seg]:
			b = append(b, `,"overshadowed":true,"replicationFactor":0`...)
		case ok:
			b = append(b, `,"overshadowed":false,"replicationFactor":`...)
			b = strconv.AppendInt(b, int64(n), 10)
		default:
			b = append(b, `,"overshadowed":false,"replicationFactor":null`...)
		}
		b = append(b, `,"numRows":null,"realtime":false}`...)
	}
	writeRawJSON(w, http.StatusOK, append(b, ']'))
}

// replicationFactors returns, per segment, the replicas its first matching
// rule asks for over all tiers (a broadcast rule: every reachable
// historical), from the coordinator's current placement; ok is false before
// the coordinator has planned (a new leader still taking stock). The string
// names the placement ("" when there is none).
func (s *Server) replicationFactors() (func(*segmeta.DataSegment) (int, bool), string) {
	var cur *coordinator.Current
	if s.placement != nil {
		cur, _ = s.placement.Current(time.Now())
	}
	if cur == nil {
		return func(*segmeta.DataSegment) (int, bool) { return 0, false }, ""
	}
	reachable := 0
	for _, srv := range cur.Servers {
		if srv.Reachable {
			reachable++
		}
	}
	return func(seg *segmeta.DataSegment) (int, bool) {
		w, ok := cur.Wants[seg.ID()]
		if !ok {
			return 0, false
		}
		if w.Broadcast {
			return reachable, true
		}
		n := 0
		for _, r := range w.Replicas {
			n += r
		}
		return n, true
	}, "-" + strconv.FormatInt(cur.NowMs, 10)
}

// metadataDataSources serves GET /metadata/datasources.
func (s *Server) metadataDataSources(w http.ResponseWriter, r *http.Request) {
	includeUnused := flag(r, "includeUnused") || flag(r, "includeDisabled")
	if includeUnused || !flag(r, "full") { // includeUnused wins over full
		var names []string
		s.node.FSM().Read(func(st *fsm.State) { names = st.DataSourceNames(includeUnused) })
		names, _ = readableOnly[any](r, names, nil)
		writeJSONPlain(w, http.StatusOK, nonNil(names))
		return
	}
	var names []string
	var segs [][]*segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) {
		for _, ds := range st.UsedIndex().DataSources() {
			if readable(r, ds) {
				names = append(names, ds)
				segs = append(segs, usedSegments(st, ds))
			}
		}
	})
	props := createdProps()
	b := []byte{'['}
	for i, ds := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFullDataSource(b, ds, props, segs[i])
	}
	writeRawJSON(w, http.StatusOK, append(b, ']'))
}

func (s *Server) usedOf(ds string) []*segmeta.DataSegment {
	var segs []*segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) { segs = usedSegments(st, ds) })
	return segs
}

// metadataDataSource serves GET /metadata/datasources/{dataSourceName}: 404 empty without
// used segments.
func (s *Server) metadataDataSource(w http.ResponseWriter, r *http.Request) {
	ds := mux.Vars(r)["dataSourceName"]
	segs := s.usedOf(ds)
	if len(segs) == 0 {
		writeEmpty(w, http.StatusNotFound)
		return
	}
	writeRawJSON(w, http.StatusOK, appendFullDataSource(nil, ds, createdProps(), segs))
}

// metadataSegmentList serves /metadata/datasources/{dataSourceName}/segments: without a body
// every used segment (404 empty if none); with a JSON array of intervals (POST,
// or GET with a body as the docs describe it) the used segments overlapping any
// of them, overshadowed included ([] if none).
func (s *Server) metadataSegmentList(w http.ResponseWriter, r *http.Request) {
	var body []byte
	var ok bool
	if r.Method == http.MethodPost {
		body, ok = s.readJSONBody(w, r)
	} else {
		body, ok = s.readBody(w, r)
	}
	if !ok {
		return
	}
	ds := mux.Vars(r)["dataSourceName"]
	full := flag(r, "full")
	if r.Method == http.MethodGet && len(bytes.TrimSpace(body)) == 0 {
		segs := s.usedOf(ds)
		if len(segs) == 0 {
			writeEmpty(w, http.StatusNotFound)
			return
		}
		writeSegmentsOrIDs(w, segs, full)
		return
	}
	var raw []string
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON array of ISO-8601 intervals")
		return
	}
	ivs := make([]interval.Interval, len(raw))
	for i, text := range raw {
		iv, err := interval.Parse(text)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		ivs[i] = iv
	}
	var segs []*segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) {
		tl := st.UsedIndex().Timeline(ds)
		if tl == nil {
			return
		}
		tl.Segments(func(seg *segmeta.DataSegment) bool {
			for _, iv := range ivs {
				if iv.Overlaps(seg.Interval) {
					segs = append(segs, seg)
					break
				}
			}
			return true
		})
	})
	writeSegmentsOrIDs(w, segs, full)
}

func writeSegmentsOrIDs(w http.ResponseWriter, segs []*segmeta.DataSegment, full bool) {
	if full {
		writeRawJSON(w, http.StatusOK, appendSegments(nil, segs))
		return
	}
	writeRawJSON(w, http.StatusOK, appendSegmentIDs(nil, segs))
}

// metadataSegment serves GET /metadata/datasources/{dataSourceName}/segments/{segmentId}: a used
// segment, or with includeUnused=true any stored one; 404 empty otherwise, and
// whenever the datasource has no used segment at all (as Druid answers).
func (s *Server) metadataSegment(w http.ResponseWriter, r *http.Request) {
	ds, raw := mux.Vars(r)["dataSourceName"], mux.Vars(r)["segmentId"]
	includeUnused := strings.EqualFold(r.URL.Query().Get("includeUnused"), "true") // a Boolean, not a flag
	var found *segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) {
		if st.UsedIndex().Timeline(ds) == nil {
			return
		}
		for _, id := range segmeta.PossibleIDsWithDataSource(ds, raw) {
			if rec, ok := st.Segment(id); ok && (rec.Used || includeUnused) {
				found = rec.Segment
				return
			}
		}
	})
	if found == nil {
		writeEmpty(w, http.StatusNotFound)
		return
	}
	writeRawJSON(w, http.StatusOK, found.AppendJSON(nil))
}

type columnSig struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type dataSourceInfo struct {
	DataSource   string      `json:"datasource"`
	RowSignature []columnSig `json:"rowSignature"`
}

// rowSignature merges the columns of a datasource's served segments, newest
// interval first as Druid's segment metadata cache does: __time, then each
// segment's dimensions and metrics in order, the first occurrence of a name
// fixing its place and type.
//
// Known gap: column types are only known once segment files are read.
// Dimensions are reported as STRING; a metric named "count" as LONG and any
// other metric as DOUBLE.
func rowSignature(segs []*segmeta.DataSegment) []columnSig {
	newest := slices.Clone(segs)
	slices.SortStableFunc(newest, func(a, b *segmeta.DataSegment) int { return cmp.Compare(b.Interval.Start, a.Interval.Start) })
	out := []columnSig{{"__time", "LONG"}}
	seen := map[string]bool{"__time": true}
	add := func(name, typ string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, columnSig{name, typ})
		}
	}
	for _, seg := range newest {
		for _, d := range seg.Dimensions {
			add(d, "STRING")
		}
		for _, m := range seg.Metrics {
			if m == "count" {
				add(m, "LONG")
			} else {
				add(m, "DOUBLE")
			}
		}
	}
	return out
}

// dataSourceInformation serves POST /metadata/dataSourceInformation: 404 empty
// unless the centralized datasource schema is enabled.
func (s *Server) dataSourceInformation(w http.ResponseWriter, r *http.Request) {
	if !s.settings.CentralizedDatasourceSchema {
		writeEmpty(w, http.StatusNotFound)
		return
	}
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var names []string
	if err := json.Unmarshal(body, &names); err != nil || names == nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON array of datasource names")
		return
	}
	slices.Sort(names)
	names = slices.Compact(names)
	names, _ = readableOnly[any](r, names, nil)
	segs := make([][]*segmeta.DataSegment, len(names))
	s.node.FSM().Read(func(st *fsm.State) {
		for i, ds := range names {
			segs[i] = coordinator.ServedSegments(st, ds)
		}
	})
	out := []dataSourceInfo{}
	for i, ds := range names {
		if len(segs[i]) > 0 { // only datasources with served segments have a schema
			out = append(out, dataSourceInfo{ds, rowSignature(segs[i])})
		}
	}
	writeJSONPlain(w, http.StatusOK, out)
}

// metadataUnusedSegments serves GET /metadata/datasources/{dataSourceName}/unusedSegments
// (ADMIN-API §7.3, newer Druid): the unused segments of ds, each with when it
// was created and last marked (un)used. interval keeps those it contains;
// sortOrder ASC or DESC sorts by id (ascending otherwise), lastSegmentId
// pages on from an id in that order, limit caps the count.
func (s *Server) metadataUnusedSegments(w http.ResponseWriter, r *http.Request) {
	ds := mux.Vars(r)["dataSourceName"]
	q := r.URL.Query()
	var within *interval.Interval
	if raw := q.Get("interval"); raw != "" {
		iv, err := interval.Parse(raw)
		if err != nil {
			writeInvalidInput(w, err.Error())
			return
		}
		within = &iv
	}
	limit := -1
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			writeInvalidInput(w, fmt.Sprintf("Invalid limit[%s]: it must be a positive integer", raw))
			return
		}
		limit = n
	}
	desc := false
	switch order := strings.ToUpper(q.Get("sortOrder")); order {
	case "", "ASC":
	case "DESC":
		desc = true
	default:
		writeInvalidInput(w, fmt.Sprintf("Invalid sortOrder[%s]: expected ASC or DESC", q.Get("sortOrder")))
		return
	}
	last := q.Get("lastSegmentId")
	if last != "" {
		id, err := segmeta.ParseID(ds, last)
		if err != nil {
			writeInvalidInput(w, fmt.Sprintf("Invalid lastSegmentId[%s]: not a segment id of datasource[%s]", last, ds))
			return
		}
		last = id.String()
	}
	var recs []*fsm.SegmentRecord
	s.node.FSM().Read(func(st *fsm.State) {
		for _, rec := range st.Segments(ds) {
			if !rec.Used && (within == nil || within.Contains(rec.Segment.Interval)) {
				recs = append(recs, rec)
			}
		}
	})
	ids := make([]string, len(recs))
	for i, rec := range recs {
		ids[i] = rec.Segment.ID().String()
	}
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if desc {
			return strings.Compare(ids[b], ids[a])
		}
		return strings.Compare(ids[a], ids[b])
	})
	b := []byte{'['}
	n := 0
	for _, i := range order {
		if last != "" && (!desc && ids[i] <= last || desc && ids[i] >= last) {
			continue
		}
		if limit >= 0 && n == limit {
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		rec := recs[i]
		b = append(b, `{"dataSegment":`...)
		b = rec.Segment.AppendJSON(b)
		b = append(b, `,"createdDate":"`...)
		b = append(b, interval.FormatMillis(rec.CreatedMs)...)
		b = append(b, `","usedStatusLastUpdatedDate":"`...)
		b = append(b, interval.FormatMillis(rec.UsedUpdatedMs)...)
		b = append(b, `","used":false}`...)
	}
	writeRawJSON(w, http.StatusOK, append(b, ']'))
}
