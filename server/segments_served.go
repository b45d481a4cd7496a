package server

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"strata/auth"
	"strata/coordinator"
	"strata/discovery"
	"strata/fsm"
	"strata/interval"
	"strata/javacompat"
	"strata/protocol"
	"strata/rules"
	"strata/segmeta"
)

// The coordinator's served view (ADMIN-API §7.1, §7.2, §7.5): the segments the
// coordinator has the historicals load are the used segments that no other used
// segment overshadows, placed under their retention rules (coordinator.Placement).
// What each historical actually holds comes from the inventory
// (coordinator.Inventory: historicals make themselves known by polling their
// assignment), which the servers, load status and load queue endpoints read.

const defaultTier = "_default_tier"

// loadStatusWindow is the default interval of the per-datasource load status.
const loadStatusWindow = 14 * 24 * time.Hour

// servedByDataSource returns every datasource's served segments, names sorted.
func (s *Server) servedByDataSource() ([]string, [][]*segmeta.DataSegment) {
	var names []string
	var segs [][]*segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) {
		names = st.UsedIndex().DataSources()
		segs = make([][]*segmeta.DataSegment, len(names))
		for i, ds := range names {
			segs[i] = coordinator.ServedSegments(st, ds)
		}
	})
	return names, segs
}

func (s *Server) servedOf(ds string) []*segmeta.DataSegment {
	var segs []*segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) { segs = coordinator.ServedSegments(st, ds) })
	return segs
}

// inventory is what historicals report: replicas of each segment per tier and
// the servers of each tier able to load segments.
type inventory struct {
	replicas map[segmeta.ID]map[string]int
	nodes    map[string]int
}

func (s *Server) inventory() inventory {
	inv := inventory{replicas: map[segmeta.ID]map[string]int{}, nodes: map[string]int{}}
	if s.inv == nil {
		return inv
	}
	for _, srv := range s.inv.Servers() {
		tier := srv.Meta.Tier
		if !srv.Reachable {
			continue
		}
		inv.nodes[tier]++
		for id := range srv.Segments {
			if inv.replicas[id] == nil {
				inv.replicas[id] = map[string]int{}
			}
			inv.replicas[id][tier]++
		}
	}
	return inv
}

func (inv inventory) loaded(id segmeta.ID) bool {
	for _, n := range inv.replicas[id] {
		if n > 0 {
			return true
		}
	}
	return false
}

// wants returns each segment's want under the retention rules at now.
func (s *Server) wants(now time.Time) func(*segmeta.DataSegment) coordinator.Want {
	own := map[string][]rules.Rule{}
	var defaults []rules.Rule
	s.node.FSM().Read(func(st *fsm.State) {
		defaults = st.DefaultRules()
		for _, ds := range st.RulesKeys() {
			own[ds], _ = st.Rules(ds)
		}
	})
	return func(seg *segmeta.DataSegment) coordinator.Want {
		return coordinator.WantOf(own[seg.DataSource], defaults, seg, now.UnixMilli())
	}
}

// ---- /datasources ----

type tierProps struct {
	SegmentCount   int   `json:"segmentCount"`
	Size           int64 `json:"size"`
	ReplicatedSize int64 `json:"replicatedSize"`
}

type segmentProps struct {
	Count          int    `json:"count"`
	Size           int64  `json:"size"`
	ReplicatedSize int64  `json:"replicatedSize"`
	MinTime        string `json:"minTime"`
	MaxTime        string `json:"maxTime"`
}

type servedProps struct {
	Tiers    map[string]tierProps `json:"tiers"`
	Segments segmentProps         `json:"segments"`
}

// propsOf summarises a non-empty served segment list.
func propsOf(segs []*segmeta.DataSegment) servedProps {
	var size int64
	minT, maxT := segs[0].Interval.Start, segs[0].Interval.End
	for _, seg := range segs {
		size += seg.Size
		minT, maxT = min(minT, seg.Interval.Start), max(maxT, seg.Interval.End)
	}
	return servedProps{
		Tiers: map[string]tierProps{defaultTier: {SegmentCount: len(segs), Size: size, ReplicatedSize: size}},
		Segments: segmentProps{Count: len(segs), Size: size, ReplicatedSize: size,
			MinTime: interval.FormatMillis(minT), MaxTime: interval.FormatMillis(maxT)},
	}
}

// appendFullDataSource appends Druid's ImmutableDruidDataSource object.
func appendFullDataSource(dst []byte, name, props string, segs []*segmeta.DataSegment) []byte {
	dst = append(dst, `{"name":`...)
	dst = javacompat.AppendJSONString(dst, name)
	dst = append(dst, `,"properties":`...)
	dst = append(dst, props...)
	dst = append(dst, `,"segments":`...)
	dst = appendSegments(dst, segs)
	return append(dst, '}')
}

func (s *Server) servedDataSources(w http.ResponseWriter, r *http.Request) {
	names, segs := s.servedByDataSource()
	names, segs = readableOnly(r, names, segs)
	switch {
	case flag(r, "full"):
		// Druid's inventory keeps {"client":"side"} as the properties of the
		// datasources it lists.
		b := []byte{'['}
		for i, ds := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFullDataSource(b, ds, `{"client":"side"}`, segs[i])
		}
		writeRawJSON(w, http.StatusOK, append(b, ']'))
	case flag(r, "simple"):
		type simple struct {
			Name       string      `json:"name"`
			Properties servedProps `json:"properties"`
		}
		out := make([]simple, len(names))
		for i, ds := range names {
			out[i] = simple{ds, propsOf(segs[i])}
		}
		writeJSONPlain(w, http.StatusOK, out)
	default:
		writeJSONPlain(w, http.StatusOK, nonNil(names))
	}
}

func (s *Server) servedDataSource(w http.ResponseWriter, r *http.Request) {
	ds := mux.Vars(r)["dataSourceName"]
	segs := s.servedOf(ds)
	if len(segs) == 0 {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	if flag(r, "full") {
		writeRawJSON(w, http.StatusOK, appendFullDataSource(nil, ds, "{}", segs))
		return
	}
	writeJSONPlain(w, http.StatusOK, propsOf(segs))
}

// ivGroup is the segments of one interval.
type ivGroup struct {
	iv   interval.Interval
	segs []*segmeta.DataSegment
}

// groupDescending groups id-ordered segments of one datasource by interval,
// latest interval first (start, then end, descending).
func groupDescending(segs []*segmeta.DataSegment, keep func(interval.Interval) bool) []ivGroup {
	var out []ivGroup
	for i := 0; i < len(segs); {
		j := i + 1
		for j < len(segs) && segs[j].Interval == segs[i].Interval {
			j++
		}
		if keep(segs[i].Interval) {
			out = append(out, ivGroup{segs[i].Interval, segs[i:j]})
		}
		i = j
	}
	slices.Reverse(out)
	return out
}

type sizeCount struct {
	Size  int64 `json:"size"`
	Count int   `json:"count"`
}

func (sc *sizeCount) add(seg *segmeta.DataSegment) {
	sc.Size += seg.Size
	sc.Count++
}

func (sc sizeCount) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"size":`...)
	dst = appendInt(dst, sc.Size)
	dst = append(dst, `,"count":`...)
	dst = appendInt(dst, int64(sc.Count))
	return append(dst, '}')
}

// writeIntervalMap answers the simple and full forms of the per-interval
// listings: interval → {"size","count"}, or interval → id → {"metadata","servers"}.
func writeIntervalMap(w http.ResponseWriter, groups []ivGroup, full bool, holders map[segmeta.ID][]protocol.ServerMetadata) {
	b := []byte{'{'}
	for i, g := range groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, g.iv.String())
		b = append(b, ':')
		if !full {
			var sc sizeCount
			for _, seg := range g.segs {
				sc.add(seg)
			}
			b = sc.appendJSON(b)
			continue
		}
		b = append(b, '{')
		for k, seg := range g.segs {
			if k > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, seg.ID().String())
			b = append(b, `:{"metadata":`...)
			b = seg.AppendJSON(b)
			b = append(b, `,"servers":`...)
			b = appendServerNames(b, holders[seg.ID()])
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

func (s *Server) servedIntervals(w http.ResponseWriter, r *http.Request) {
	segs := s.servedOf(mux.Vars(r)["dataSourceName"])
	if len(segs) == 0 {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	groups := groupDescending(segs, func(interval.Interval) bool { return true })
	if flag(r, "simple") || flag(r, "full") {
		writeIntervalMap(w, groups, flag(r, "full"), s.holders())
		return
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.iv.String()
	}
	writeJSONPlain(w, http.StatusOK, out)
}

// pathInterval parses the {interval} path variable ('_' or '/' separated),
// answering 400 when it does not parse.
func pathInterval(w http.ResponseWriter, r *http.Request) (interval.Interval, bool) {
	iv, err := interval.ParsePath(mux.Vars(r)["interval"])
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return iv, false
	}
	return iv, true
}

func (s *Server) servedInInterval(w http.ResponseWriter, r *http.Request) {
	iv, ok := pathInterval(w, r)
	if !ok {
		return
	}
	segs := s.servedOf(mux.Vars(r)["dataSourceName"])
	if len(segs) == 0 {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	if flag(r, "simple") || flag(r, "full") {
		writeIntervalMap(w, groupDescending(segs, iv.Contains), flag(r, "full"), s.holders())
		return
	}
	inside := make([]*segmeta.DataSegment, 0, len(segs))
	for _, seg := range segs {
		if iv.Contains(seg.Interval) {
			inside = append(inside, seg)
		}
	}
	writeRawJSON(w, http.StatusOK, appendSegmentIDs(nil, inside))
}

// serverView lists the segments of the visible timeline over the interval with
// the servers holding them (ImmutableSegmentLoadInfo).
func (s *Server) serverView(w http.ResponseWriter, r *http.Request) {
	iv, ok := pathInterval(w, r)
	if !ok {
		return
	}
	var visible []segmeta.Holder
	s.node.FSM().Read(func(st *fsm.State) { visible = st.UsedIndex().Lookup(mux.Vars(r)["dataSourceName"], iv) })
	holders := s.holders()
	b := []byte{'['}
	n := 0
	for _, h := range visible {
		for _, seg := range h.Segments {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"segment":`...)
			b = seg.AppendJSON(b)
			b = append(b, `,"servers":`...)
			metas, _ := json.Marshal(holders[seg.ID()])
			if len(holders[seg.ID()]) == 0 {
				metas = []byte("[]")
			}
			b = append(b, metas...)
			b = append(b, '}')
		}
	}
	writeRawJSON(w, http.StatusOK, append(b, ']'))
}

func (s *Server) servedSegmentList(w http.ResponseWriter, r *http.Request) {
	segs := s.servedOf(mux.Vars(r)["dataSourceName"])
	if len(segs) == 0 {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	if flag(r, "full") {
		writeRawJSON(w, http.StatusOK, appendSegments(nil, segs))
		return
	}
	writeRawJSON(w, http.StatusOK, appendSegmentIDs(nil, segs))
}

func (s *Server) servedSegment(w http.ResponseWriter, r *http.Request) {
	ds, raw := mux.Vars(r)["dataSourceName"], mux.Vars(r)["segmentId"]
	var found *segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) {
		for _, id := range segmeta.PossibleIDsWithDataSource(ds, raw) {
			if seg := st.UsedIndex().Get(id); seg != nil && !st.IsOvershadowed(seg) {
				found = seg
				return
			}
		}
	})
	if found == nil {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	b := append([]byte(`{"metadata":`), found.AppendJSON(nil)...)
	b = append(b, `,"servers":`...)
	b = appendServerNames(b, s.holders()[found.ID()])
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

// servedTiers lists the tiers whose historicals serve segments of the datasource.
func (s *Server) servedTiers(w http.ResponseWriter, r *http.Request) {
	ds := mux.Vars(r)["dataSourceName"]
	tiers := []string{}
	for _, srv := range s.servers() {
		if !srv.Reachable || slices.Contains(tiers, srv.Meta.Tier) {
			continue
		}
		for _, seg := range srv.Segments {
			if seg.DataSource == ds {
				tiers = append(tiers, srv.Meta.Tier)
				break
			}
		}
	}
	slices.Sort(tiers)
	writeJSONPlain(w, http.StatusOK, tiers)
}

// ---- load status ----

// loadCounts is the load state of one datasource's segments.
type loadCounts struct {
	published, unavailable int
	underReplicated        map[string]int // tier → replicas still to load
}

// count measures the segments their rules want loaded: those still to load
// anywhere, and per tier the replicas still missing. Segments no rule loads
// (dropped, or zero replicas) are not expected anywhere and do not count.
func (inv inventory) count(segs []*segmeta.DataSegment, wantOf func(*segmeta.DataSegment) coordinator.Want, clusterView bool) loadCounts {
	c := loadCounts{underReplicated: map[string]int{}}
	for _, seg := range segs {
		w := wantOf(seg)
		if !w.Wanted() {
			continue
		}
		id := seg.ID()
		c.published++
		if !inv.loaded(id) {
			c.unavailable++
		}
		replicas := w.Replicas
		if w.Broadcast { // one on every server
			replicas = inv.nodes
		}
		for tier, want := range replicas {
			if clusterView {
				// Replicas beyond the servers able to hold them cannot be loaded.
				want = min(want, inv.nodes[tier])
			}
			c.underReplicated[tier] += max(want-inv.replicas[id][tier], 0)
		}
	}
	return c
}

func (c loadCounts) percent() float64 {
	if c.published == 0 {
		return 100
	}
	return 100 * float64(c.published-c.unavailable) / float64(c.published)
}

// writeLoadStatus answers one of the three load-status forms for the given
// datasources.
func writeLoadStatus(w http.ResponseWriter, r *http.Request, names []string, counts []loadCounts) {
	switch {
	case flag(r, "simple"):
		out := make(map[string]int, len(names))
		for i, ds := range names {
			out[ds] = counts[i].unavailable
		}
		writeJSONPlain(w, http.StatusOK, out)
	case flag(r, "full"):
		out := map[string]map[string]int{}
		for i, ds := range names {
			for tier, n := range counts[i].underReplicated {
				if out[tier] == nil {
					out[tier] = map[string]int{}
				}
				out[tier][ds] = n
			}
		}
		writeJSONPlain(w, http.StatusOK, out)
	default:
		b := []byte{'{'}
		for i, ds := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, ds)
			b = append(b, ':')
			b = javacompat.AppendDouble(b, counts[i].percent())
		}
		writeRawJSON(w, http.StatusOK, append(b, '}'))
	}
}

func (s *Server) loadStatus(w http.ResponseWriter, r *http.Request) {
	names, segs := s.servedByDataSource()
	inv, wantOf := s.inventory(), s.wants(time.Now())
	counts := make([]loadCounts, len(names))
	for i := range names {
		counts[i] = inv.count(segs[i], wantOf, flag(r, "computeUsingClusterView"))
	}
	writeLoadStatus(w, r, names, counts)
}

// dataSourceLoadStatus serves /datasources/{dataSourceName}/loadstatus over the complete
// visible segments in the interval (default: the last two weeks).
func (s *Server) dataSourceLoadStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("forceMetadataRefresh") {
		writeText(w, http.StatusBadRequest, "Invalid request. forceMetadataRefresh must be specified")
		return
	}
	// forceMetadataRefresh asks Druid to re-poll its metadata store; the FSM is
	// always current, so there is nothing to refresh.
	now := time.Now().UnixMilli()
	iv := interval.Interval{Start: now - loadStatusWindow.Milliseconds(), End: now}
	if q.Has("interval") {
		var err error
		if iv, err = interval.ParsePath(q.Get("interval")); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	ds := mux.Vars(r)["dataSourceName"]
	var segs []*segmeta.DataSegment
	s.node.FSM().Read(func(st *fsm.State) {
		if tl := st.UsedIndex().Timeline(ds); tl != nil {
			segs = tl.VisibleSegments(iv)
		}
	})
	if len(segs) == 0 {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	c := s.inventory().count(segs, s.wants(time.Now()), flag(r, "computeUsingClusterView"))
	writeLoadStatus(w, r, []string{ds}, []loadCounts{c})
}

// loadQueue answers, per reachable historical, the segments its assignment
// holds that it does not serve yet (to load) and those it serves outside its
// assignment (to drop).
func (s *Server) loadQueue(w http.ResponseWriter, r *http.Request) {
	simple, full := flag(r, "simple"), flag(r, "full")
	b := []byte{'{'}
	first := true
	for _, q := range s.loadQueues(time.Now()) {
		srv, load, drop := q.srv, q.load, q.drop
		if !first {
			b = append(b, ',')
		}
		first = false
		b = javacompat.AppendJSONString(b, srv.Meta.Name)
		b = append(b, ':', '{')
		switch {
		case simple:
			b = append(b, `"segmentsToLoad":`...)
			b = strconv.AppendInt(b, int64(len(load)), 10)
			b = append(b, `,"segmentsToDrop":`...)
			b = strconv.AppendInt(b, int64(len(drop)), 10)
			b = append(b, `,"segmentsToLoadSize":`...)
			b = strconv.AppendInt(b, totalSize(load), 10)
			b = append(b, `,"segmentsToDropSize":`...)
			b = strconv.AppendInt(b, totalSize(drop), 10)
		case full:
			b = append(b, `"segmentsToLoad":`...)
			b = appendSegments(b, load)
			b = append(b, `,"segmentsToDrop":`...)
			b = appendSegments(b, drop)
			b = append(b, `,"segmentsMarkedToDrop":[]`...)
		default:
			b = append(b, `"segmentsToLoad":`...)
			b = appendSegmentIDs(b, load)
			b = append(b, `,"segmentsToDrop":`...)
			b = appendSegmentIDs(b, drop)
		}
		b = append(b, '}')
	}
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

// serverQueue is a reachable historical's load queue.
type serverQueue struct {
	srv        coordinator.Server
	load, drop []*segmeta.DataSegment // in id order
}

// loadQueues computes each reachable historical's queue (loadQueue, and the
// druid_segment_loadQueue metrics).
func (s *Server) loadQueues(now time.Time) []serverQueue {
	// Right after a leader change there is no plan yet, so no queue either.
	cur, err := s.placement.Current(now)
	if err != nil {
		cur = &coordinator.Current{Servers: s.servers()}
	}
	var out []serverQueue
	for _, srv := range cur.Servers {
		if !srv.Reachable {
			continue
		}
		var load, drop []*segmeta.DataSegment
		planned, ok := cur.Plan.Hold[srv.Meta.Name]
		if !ok { // not planned yet: it keeps what it holds
			planned = sortedSegments(srv.Segments)
		}
		hold := make(map[segmeta.ID]bool, len(planned))
		for _, seg := range planned {
			hold[seg.ID()] = true
			if _, ok := srv.Segments[seg.ID()]; !ok && !cur.Plan.KeepOnly[seg.ID()] {
				load = append(load, seg)
			}
		}
		for id, seg := range srv.Segments {
			if !hold[id] {
				drop = append(drop, seg)
			}
		}
		byID := func(a, b *segmeta.DataSegment) int { return a.ID().Compare(b.ID()) }
		slices.SortFunc(load, byID)
		slices.SortFunc(drop, byID)
		out = append(out, serverQueue{srv: srv, load: load, drop: drop})
	}
	return out
}

// servers returns the historicals the inventory knows, by name.
func (s *Server) servers() []coordinator.Server {
	if s.inv == nil {
		return nil
	}
	return s.inv.Servers()
}

// serverList serves /servers: names, or (?simple, ?full) server objects.
func (s *Server) serverList(w http.ResponseWriter, r *http.Request) {
	simple, full := flag(r, "simple"), flag(r, "full")
	// The historicals the inventory knows, then every other process
	// discovery knows (brokers, middle managers, routers, control nodes),
	// each with its roles and state when discovery runs.
	members := s.discoveredMembers()
	byHost := make(map[string]discovery.Member, len(members))
	for _, m := range members {
		byHost[m.Host()] = m
	}
	b := []byte{'['}
	listed := map[string]bool{}
	for _, srv := range s.servers() {
		if len(b) > 1 {
			b = append(b, ',')
		}
		listed[srv.Meta.Host] = true
		m, known := byHost[srv.Meta.Host]
		switch {
		case (simple || full) && known:
			b = appendServer(b, readableServer(r, srv), full)
			b = appendRoleState(b[:len(b)-1], m)
		case simple || full:
			b = appendServer(b, readableServer(r, srv), full)
		default:
			b = javacompat.AppendJSONString(b, srv.Meta.Name)
		}
	}
	for _, m := range members {
		if listed[m.Host()] {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		if simple || full {
			b = appendMember(b, m, full)
		} else {
			b = javacompat.AppendJSONString(b, m.Host())
		}
	}
	writeRawJSON(w, http.StatusOK, append(b, ']'))
}

// serverOf finds a historical by name; unknown answers 404 with no body.
func (s *Server) serverOf(w http.ResponseWriter, r *http.Request) (coordinator.Server, bool) {
	name := mux.Vars(r)["serverName"]
	for _, srv := range s.servers() {
		if srv.Meta.Name == name {
			return srv, true
		}
	}
	writeEmpty(w, http.StatusNotFound)
	return coordinator.Server{}, false
}

// oneServer serves /servers/{serverName}: the full object, or ?simple.
// A process discovery knows that is not a historical (a broker, a middle
// manager) is answered too, with its roles and state.
func (s *Server) oneServer(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["serverName"]
	full := !flag(r, "simple")
	var member *discovery.Member
	for _, m := range s.discoveredMembers() {
		if m.Host() == name {
			member = &m
			break
		}
	}
	for _, srv := range s.servers() {
		if srv.Meta.Name == name {
			b := appendServer(nil, readableServer(r, srv), full)
			if member != nil {
				b = appendRoleState(b[:len(b)-1], *member)
			}
			writeRawJSON(w, http.StatusOK, b)
			return
		}
	}
	if member != nil {
		writeRawJSON(w, http.StatusOK, appendMember(nil, *member, full))
		return
	}
	writeEmpty(w, http.StatusNotFound)
}

// serverSegments serves /servers/{serverName}/segments: ids, or objects with ?full.
func (s *Server) serverSegments(w http.ResponseWriter, r *http.Request) {
	srv, ok := s.serverOf(w, r)
	if !ok {
		return
	}
	// STATE READ lets the caller see the server (Druid's); of its segments
	// only those of datasources it may read.
	segs := slices.DeleteFunc(sortedSegments(srv.Segments), func(seg *segmeta.DataSegment) bool { return !readable(r, seg.DataSource) })
	if flag(r, "full") {
		writeRawJSON(w, http.StatusOK, appendSegments(nil, segs))
		return
	}
	writeRawJSON(w, http.StatusOK, appendSegmentIDs(nil, segs))
}

// serverSegment serves /servers/{serverName}/segments/{segmentId}.
func (s *Server) serverSegment(w http.ResponseWriter, r *http.Request) {
	srv, ok := s.serverOf(w, r)
	if !ok {
		return
	}
	id := mux.Vars(r)["segmentId"]
	for sid, seg := range srv.Segments {
		if sid.String() == id && readable(r, seg.DataSource) {
			writeRawJSON(w, http.StatusOK, seg.AppendJSON(nil))
			return
		}
	}
	writeEmpty(w, http.StatusNotFound)
}

// appendServer renders a server as Druid's ServersResource does: host, tier,
// type, priority, currSize, maxSize, and with full its segments by id.
// readableServer is srv with only the segments of datasources the caller
// may read (all with security off).
func readableServer(r *http.Request, srv coordinator.Server) coordinator.Server {
	if !auth.Enabled(r.Context()) {
		return srv
	}
	segs := make(map[segmeta.ID]*segmeta.DataSegment, len(srv.Segments))
	for id, seg := range srv.Segments {
		if readable(r, seg.DataSource) {
			segs[id] = seg
		}
	}
	srv.Segments = segs
	return srv
}

func appendServer(b []byte, srv coordinator.Server, full bool) []byte {
	m := srv.Meta
	b = append(b, `{"host":`...)
	b = javacompat.AppendJSONString(b, m.Host)
	b = append(b, `,"tier":`...)
	b = javacompat.AppendJSONString(b, m.Tier)
	b = append(b, `,"type":`...)
	b = javacompat.AppendJSONString(b, m.Type)
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, int64(m.Priority), 10)
	b = append(b, `,"currSize":`...)
	b = strconv.AppendInt(b, srv.CurrSize, 10)
	b = append(b, `,"maxSize":`...)
	b = strconv.AppendInt(b, m.MaxSize, 10)
	if full {
		b = append(b, `,"segments":{`...)
		for i, seg := range sortedSegments(srv.Segments) {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, seg.ID().String())
			b = append(b, ':')
			b = seg.AppendJSON(b)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func sortedSegments(m map[segmeta.ID]*segmeta.DataSegment) []*segmeta.DataSegment {
	out := make([]*segmeta.DataSegment, 0, len(m))
	for _, seg := range m {
		out = append(out, seg)
	}
	slices.SortFunc(out, func(a, b *segmeta.DataSegment) int { return a.ID().Compare(b.ID()) })
	return out
}

func totalSize(segs []*segmeta.DataSegment) int64 {
	var n int64
	for _, seg := range segs {
		n += seg.Size
	}
	return n
}

// ---- /intervals ----

// dsIntervalStats aggregates served segments per interval and datasource,
// intervals latest first, datasources by name.
type dsIntervalStats struct {
	iv   interval.Interval
	ds   []string
	stat []sizeCount
}

func intervalStatsOf(names []string, segs [][]*segmeta.DataSegment, keep func(interval.Interval) bool) []dsIntervalStats {
	byIv := map[interval.Interval]*dsIntervalStats{}
	var out []*dsIntervalStats
	for i, ds := range names { // names are sorted, so each interval's ds list is too
		for _, g := range groupDescending(segs[i], keep) {
			e := byIv[g.iv]
			if e == nil {
				e = &dsIntervalStats{iv: g.iv}
				byIv[g.iv] = e
				out = append(out, e)
			}
			var sc sizeCount
			for _, seg := range g.segs {
				sc.add(seg)
			}
			e.ds = append(e.ds, ds)
			e.stat = append(e.stat, sc)
		}
	}
	slices.SortFunc(out, func(a, b *dsIntervalStats) int {
		return cmp.Or(cmp.Compare(b.iv.Start, a.iv.Start), cmp.Compare(b.iv.End, a.iv.End))
	})
	res := make([]dsIntervalStats, len(out))
	for i, e := range out {
		res[i] = *e
	}
	return res
}

func appendIntervalStats(dst []byte, stats []dsIntervalStats, perDataSource bool) []byte {
	dst = append(dst, '{')
	for i, e := range stats {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = javacompat.AppendJSONString(dst, e.iv.String())
		dst = append(dst, ':')
		if !perDataSource {
			var total sizeCount
			for _, sc := range e.stat {
				total.Size += sc.Size
				total.Count += sc.Count
			}
			dst = total.appendJSON(dst)
			continue
		}
		dst = append(dst, '{')
		for k, ds := range e.ds {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = javacompat.AppendJSONString(dst, ds)
			dst = append(dst, ':')
			dst = e.stat[k].appendJSON(dst)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func (s *Server) allIntervals(w http.ResponseWriter, r *http.Request) {
	names, segs := s.servedByDataSource()
	names, segs = readableOnly(r, names, segs)
	stats := intervalStatsOf(names, segs, func(interval.Interval) bool { return true })
	writeRawJSON(w, http.StatusOK, appendIntervalStats(nil, stats, true))
}

// intervalStats serves /intervals/{interval}: segments fully inside it, summed
// ({} when none), per interval (simple) or per interval and datasource (full).
func (s *Server) intervalStats(w http.ResponseWriter, r *http.Request) {
	iv, ok := pathInterval(w, r)
	if !ok {
		return
	}
	names, segs := s.servedByDataSource()
	names, segs = readableOnly(r, names, segs)
	stats := intervalStatsOf(names, segs, iv.Contains)
	switch {
	case flag(r, "full"):
		writeRawJSON(w, http.StatusOK, appendIntervalStats(nil, stats, true))
	case flag(r, "simple"):
		writeRawJSON(w, http.StatusOK, appendIntervalStats(nil, stats, false))
	default:
		if len(stats) == 0 {
			writeRawJSON(w, http.StatusOK, []byte("{}"))
			return
		}
		var total sizeCount
		for _, e := range stats {
			for _, sc := range e.stat {
				total.Size += sc.Size
				total.Count += sc.Count
			}
		}
		writeRawJSON(w, http.StatusOK, total.appendJSON(nil))
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// holders maps each segment the reachable historicals hold to those servers.
func (s *Server) holders() map[segmeta.ID][]protocol.ServerMetadata {
	out := map[segmeta.ID][]protocol.ServerMetadata{}
	for _, srv := range s.servers() {
		if !srv.Reachable {
			continue
		}
		for id := range srv.Segments {
			out[id] = append(out[id], srv.Meta)
		}
	}
	return out
}

// appendServerNames appends the host:port names of servers as a JSON array.
func appendServerNames(b []byte, servers []protocol.ServerMetadata) []byte {
	b = append(b, '[')
	for i, m := range servers {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, m.Host)
	}
	return append(b, ']')
}
