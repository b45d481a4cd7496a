package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"strata/commands"
	"strata/fsm"
	"strata/javacompat"
	"strata/lookups"
	"strata/querynode/lookupcache"
	"strata/querynode/sqlplan"
	"strata/querynode/sysinfo"
)

// Druid's lookup management API on the coordinator
// (/svc/coordinator/v1/lookups/...): lookup definitions per tier, stored as
// Raft commands (fsm/lookups.go); the querying processes poll the leader for
// their tier's lookups (lookupcache.SyncPath) and report what they loaded,
// which /status and /nodeStatus show.

// lookupNodeTTL is how long a process's last report counts at least: a
// process that has not polled for this long, or for three of its poll
// periods if that is longer, is no longer listed (processes poll every
// svc.lookup.pollPeriod, 1s by default).
const lookupNodeTTL = 30 * time.Second

// lookupNodes holds the reports of the querying processes, on the leader.
// They are leader memory, not FSM state: a new leader has them again within
// one poll period.
type lookupNodes struct {
	mu    sync.Mutex
	nodes map[string]lookupNodeReport // by host:port
}

type lookupNodeReport struct {
	tier    string
	current map[string]string // lookup → version loaded
	seen    time.Time
	ttl     time.Duration
}

func (n *lookupNodes) record(req lookupcache.SyncRequest, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.nodes == nil {
		n.nodes = map[string]lookupNodeReport{}
	}
	ttl := max(lookupNodeTTL, 3*time.Duration(req.PeriodMs)*time.Millisecond)
	n.nodes[req.Node] = lookupNodeReport{tier: req.Tier, current: req.Current, seen: now, ttl: ttl}
}

// live returns the reports of the processes heard from within the TTL, by
// tier then host.
func (n *lookupNodes) live(now time.Time) map[string]map[string]lookupNodeReport {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]map[string]lookupNodeReport{}
	for host, r := range n.nodes {
		if now.Sub(r.seen) > r.ttl {
			delete(n.nodes, host)
			continue
		}
		if out[r.tier] == nil {
			out[r.tier] = map[string]lookupNodeReport{}
		}
		out[r.tier][host] = r
	}
	return out
}

// lookupSync answers a querying process's poll: it records what the process
// holds and answers its tier's lookups, or 304 if its ETag is current.
func (s *Server) lookupSync(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var req lookupcache.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "lookup sync: "+err.Error())
		return
	}
	if req.Node == "" {
		writeError(w, http.StatusBadRequest, "lookup sync: [node] is required")
		return
	}
	if err := lookups.ValidateName("tier", req.Tier); err != nil {
		writeError(w, http.StatusBadRequest, "lookup sync: "+err.Error())
		return
	}
	s.lookupNodes.record(req, time.Now())
	var etag string
	var answer []byte
	s.node.FSM().Read(func(st *fsm.State) {
		etag = strconv.FormatUint(st.LookupsChanged(), 10)
		if etag == req.ETag {
			return
		}
		answer = append([]byte(`{"etag":`), javacompat.AppendJSONString(nil, etag)...)
		answer = append(answer, `,"lookups":`...)
		answer = append(st.AppendLookupTierJSON(answer, req.Tier), '}')
	})
	if answer == nil {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeRawJSON(w, http.StatusOK, answer)
}

// boolParam reads a boolean query parameter as JAX-RS does ("true" in any
// case is true; present but empty counts as true here, as flag does).
func boolParam(r *http.Request, name string, def bool) bool {
	v, ok := r.URL.Query()[name]
	if !ok || len(v) == 0 {
		return def
	}
	return v[0] == "" || strings.EqualFold(v[0], "true")
}

// notInitialized answers a read of a configuration never initialised: 404,
// as Druid answers before the first POST of {}.
func notInitialized(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "Lookups are not initialized: POST {} to /svc/coordinator/v1/lookups/config first")
}

// lookupTiers answers the configured tiers, or with ?discover=true the
// tiers of the processes that reported to this leader.
func (s *Server) lookupTiers(w http.ResponseWriter, r *http.Request) {
	if boolParam(r, "discover", false) {
		writeJSONPlain(w, http.StatusOK, slices.Sorted(maps.Keys(s.lookupNodes.live(time.Now()))))
		return
	}
	var tiers []string
	init := false
	s.node.FSM().Read(func(st *fsm.State) { init, tiers = st.LookupsInitialized(), st.LookupTiers() })
	if !init {
		notInitialized(w)
		return
	}
	writeJSONPlain(w, http.StatusOK, tiers)
}

// allLookups answers every tier with its lookups.
func (s *Server) allLookups(w http.ResponseWriter, r *http.Request) {
	b := []byte{'{'}
	init := false
	s.node.FSM().Read(func(st *fsm.State) {
		init = st.LookupsInitialized()
		for i, tier := range st.LookupTiers() {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, tier)
			b = append(b, ':')
			b = st.AppendLookupTierJSON(b, tier)
		}
	})
	if !init {
		notInitialized(w)
		return
	}
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

// updateLookups is the bulk update {"tier": {"name": container}}; {} on a
// configuration never initialised initialises it. 202 with the update, as
// Druid answers.
func (s *Server) updateLookups(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var tiers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &tiers); err != nil || tiers == nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON object of tiers, each an object of lookup name to {\"version\", \"lookupExtractorFactory\"}")
		return
	}
	if !s.validLookupUpdate(w, r, tiers) {
		return
	}
	if _, ok := s.propose(w, r, commands.UpdateLookups{Tiers: tiers}); ok {
		writeRawJSON(w, http.StatusAccepted, body)
	}
}

// validLookupUpdate checks names and containers before proposing, so bad
// input is answered with the parser's message and never reaches the log; a
// URI lookup must also be one this process's input policy lets it read.
func (s *Server) validLookupUpdate(w http.ResponseWriter, r *http.Request, tiers map[string]map[string]json.RawMessage) bool {
	for _, tier := range slices.Sorted(maps.Keys(tiers)) {
		if err := lookups.ValidateName("tier", tier); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return false
		}
		for _, name := range slices.Sorted(maps.Keys(tiers[tier])) {
			if err := lookups.ValidateName("lookup", name); err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return false
			}
			c, err := lookups.Parse(tiers[tier][name])
			if err == nil && c.URI != nil {
				err = lookupcache.CheckURI(r.Context(), c.URI)
			}
			if err != nil {
				writeError(w, http.StatusBadRequest, "lookup ["+name+"] in tier ["+tier+"]: "+err.Error())
				return false
			}
		}
	}
	return true
}

// tierLookups answers a tier's lookup names, or with ?detailed=true each
// name with its container.
func (s *Server) tierLookups(w http.ResponseWriter, r *http.Request) {
	tier := mux.Vars(r)["tier"]
	var names []string
	var detailed []byte
	found := false
	s.node.FSM().Read(func(st *fsm.State) {
		names, found = st.LookupNames(tier)
		if found && boolParam(r, "detailed", false) {
			detailed = st.AppendLookupTierJSON(nil, tier)
		}
	})
	switch {
	case !found:
		writeError(w, http.StatusNotFound, "Tier ["+tier+"] not found")
	case detailed != nil:
		writeRawJSON(w, http.StatusOK, detailed)
	default:
		writeJSONPlain(w, http.StatusOK, names)
	}
}

func (s *Server) deleteLookupTier(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.propose(w, r, commands.DeleteLookupTier{Tier: mux.Vars(r)["tier"]}); ok {
		writeEmpty(w, http.StatusAccepted)
	}
}

func (s *Server) getLookup(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	var b []byte
	s.node.FSM().Read(func(st *fsm.State) { b = st.LookupJSON(v["tier"], v["lookup"]) })
	if b == nil {
		writeError(w, http.StatusNotFound, "lookup ["+v["lookup"]+"] not found in tier ["+v["tier"]+"]")
		return
	}
	writeRawJSON(w, http.StatusOK, b)
}

// setLookup creates or replaces one lookup: {"version", "lookupExtractorFactory"}.
func (s *Server) setLookup(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	v := mux.Vars(r)
	tiers := map[string]map[string]json.RawMessage{v["tier"]: {v["lookup"]: json.RawMessage(body)}}
	if !s.validLookupUpdate(w, r, tiers) {
		return
	}
	if _, ok := s.propose(w, r, commands.UpdateLookups{Tiers: tiers}); ok {
		writeEmpty(w, http.StatusAccepted)
	}
}

func (s *Server) deleteLookup(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	if _, ok := s.propose(w, r, commands.DeleteLookup{Tier: v["tier"], Lookup: v["lookup"]}); ok {
		writeEmpty(w, http.StatusAccepted)
	}
}

// lookupStatusOf appends one lookup's status: loaded when every live
// process of its tier holds its version (Druid: a tier without processes
// counts as loaded); with detailed, pendingNodes lists the others.
func lookupStatusOf(b []byte, version string, name string, nodes map[string]lookupNodeReport, detailed bool) []byte {
	var pending []string
	for host, n := range nodes {
		if have, ok := n.current[name]; !ok || have != version {
			pending = append(pending, host)
		}
	}
	b = append(b, `{"loaded":`...)
	b = strconv.AppendBool(b, len(pending) == 0)
	if detailed {
		slices.Sort(pending)
		b = append(b, `,"pendingNodes":[`...)
		for i, h := range pending {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, h)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendTierStatus appends {"name": status} for the lookups of tier.
func appendTierStatus(b []byte, st *fsm.State, tier string, nodes map[string]lookupNodeReport, detailed bool) []byte {
	names, _ := st.LookupNames(tier)
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, name)
		b = append(b, ':')
		b = lookupStatusOf(b, st.Lookup(tier, name).Version, name, nodes, detailed)
	}
	return append(b, '}')
}

// lookupStatus answers /status, /status/{tier} and /status/{tier}/{lookup}.
func (s *Server) lookupStatus(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	tier, name := v["tier"], v["lookup"]
	detailed := boolParam(r, "detailed", false)
	nodes := s.lookupNodes.live(time.Now())
	var b []byte
	status := http.StatusOK
	s.node.FSM().Read(func(st *fsm.State) {
		switch {
		case tier == "":
			b = append(b, '{')
			for i, t := range st.LookupTiers() {
				if i > 0 {
					b = append(b, ',')
				}
				b = javacompat.AppendJSONString(b, t)
				b = append(b, ':')
				b = appendTierStatus(b, st, t, nodes[t], detailed)
			}
			b = append(b, '}')
		case name == "":
			if _, ok := st.LookupNames(tier); !ok {
				status = http.StatusNotFound
				return
			}
			b = appendTierStatus(b, st, tier, nodes[tier], detailed)
		default:
			c := st.Lookup(tier, name)
			if c == nil {
				status = http.StatusNotFound
				return
			}
			b = lookupStatusOf(b, c.Version, name, nodes[tier], detailed)
		}
	})
	if status == http.StatusNotFound {
		if name == "" {
			writeError(w, status, "Tier ["+tier+"] not found")
		} else {
			writeError(w, status, "lookup ["+name+"] not found in tier ["+tier+"]")
		}
		return
	}
	writeRawJSON(w, http.StatusOK, b)
}

// appendNodeState appends Druid's LookupsState of one process as the leader
// sees it: current (what it reported), toLoad (lookups of its tier it lacks
// or holds an older version of) and toDrop (lookups it holds that its tier
// no longer has). detailed shows containers; otherwise names only.
func appendNodeState(b []byte, st *fsm.State, tier string, n lookupNodeReport, detailed bool) []byte {
	names, _ := st.LookupNames(tier)
	var toLoad, toDrop []string
	for _, name := range names {
		if have, ok := n.current[name]; !ok || have != st.Lookup(tier, name).Version {
			toLoad = append(toLoad, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.current)) {
		if st.Lookup(tier, name) == nil {
			toDrop = append(toDrop, name)
		}
	}
	list := func(b []byte, names []string) []byte {
		b = append(b, '[')
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, name)
		}
		return append(b, ']')
	}
	current := slices.Sorted(maps.Keys(n.current))
	if !detailed {
		b = append(b, `{"current":`...)
		b = list(b, current)
		b = append(b, `,"toLoad":`...)
		b = list(b, toLoad)
		b = append(b, `,"toDrop":`...)
		return append(list(b, toDrop), '}')
	}
	b = append(b, `{"current":{`...)
	for i, name := range current {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, name)
		b = append(b, ':')
		if c := st.Lookup(tier, name); c != nil && c.Version == n.current[name] {
			b = append(b, st.LookupJSON(tier, name)...)
		} else {
			// An old or deleted version: only its version is known here.
			b = append(b, `{"version":`...)
			b = javacompat.AppendJSONString(b, n.current[name])
			b = append(b, '}')
		}
	}
	b = append(b, `},"toLoad":{`...)
	for i, name := range toLoad {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, name)
		b = append(b, ':')
		b = append(b, st.LookupJSON(tier, name)...)
	}
	b = append(b, `},"toDrop":`...)
	return append(list(b, toDrop), '}')
}

// lookupNodeStatus answers /nodeStatus ({tier: {host: state}} for every
// tier with live processes), /nodeStatus/{tier} and
// /nodeStatus/{tier}/{hostAndPort}.
func (s *Server) lookupNodeStatus(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	tier, host := v["tier"], v["hostAndPort"]
	detailed := boolParam(r, "detailed", true)
	nodes := s.lookupNodes.live(time.Now())
	appendTier := func(b []byte, st *fsm.State, tier string) []byte {
		b = append(b, '{')
		for i, h := range slices.Sorted(maps.Keys(nodes[tier])) {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, h)
			b = append(b, ':')
			b = appendNodeState(b, st, tier, nodes[tier][h], detailed)
		}
		return append(b, '}')
	}
	var b []byte
	s.node.FSM().Read(func(st *fsm.State) {
		switch {
		case tier == "":
			b = append(b, '{')
			for i, t := range slices.Sorted(maps.Keys(nodes)) {
				if i > 0 {
					b = append(b, ',')
				}
				b = javacompat.AppendJSONString(b, t)
				b = append(b, ':')
				b = appendTier(b, st, t)
			}
			b = append(b, '}')
		case host == "":
			if len(nodes[tier]) > 0 {
				b = appendTier(b, st, tier)
			}
		default:
			if n, ok := nodes[tier][host]; ok {
				b = appendNodeState(b, st, tier, n, detailed)
			}
		}
	})
	switch {
	case b != nil:
		writeRawJSON(w, http.StatusOK, b)
	case host == "":
		writeError(w, http.StatusNotFound, "no process of tier ["+tier+"] has reported its lookups")
	default:
		writeError(w, http.StatusNotFound, "process ["+host+"] of tier ["+tier+"] has not reported its lookups")
	}
}

// listenLookups answers a querying process's own lookups: Druid's
// LookupListeningResource GET (/druid/listen/v1/lookups), the LookupsState
// of this process.
func (s *Server) listenLookups(w http.ResponseWriter, r *http.Request) {
	reg := s.opts.Lookups
	if reg == nil {
		writeError(w, http.StatusNotFound, "this process holds no lookups")
		return
	}
	writeRawJSON(w, http.StatusOK, reg.AppendStateJSON(nil))
}

// lookupNames lists the lookups this process holds (none without a registry).
func (s *Server) lookupNames() []string {
	if s.opts.Lookups == nil {
		return nil
	}
	return s.opts.Lookups.Names()
}

// lookupSQLTable resolves lookup.name in SQL: the lookup data source, with
// Druid's columns k and v; a lookup this process does not hold is no table.
func lookupSQLTable(s *Server, name string) *sqlplan.Table {
	if s.opts.Lookups == nil {
		return nil
	}
	if _, _, ok := s.opts.Lookups.Lookup(name); !ok {
		return nil
	}
	ds := append([]byte(`{"type":"lookup","lookup":`), javacompat.AppendJSONString(nil, name)...)
	return &sqlplan.Table{Columns: slices.Clone(sysinfo.LookupColumns), DataSource: append(ds, '}')}
}

// introspectLookup answers Druid's lookup introspection on a querying
// process (/druid/v1/lookups/introspect/{lookupId}[/keys|/values|/version]):
// the map it holds, its keys, its values, or its version.
func (s *Server) introspectLookup(part string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := mux.Vars(r)["lookupId"]
		var m map[string]string
		ok := false
		if s.opts.Lookups != nil {
			m, _, ok = s.opts.Lookups.Lookup(id)
		}
		if !ok {
			writeError(w, http.StatusNotFound, "lookup ["+id+"] is not loaded on this process")
			return
		}
		keys := slices.Sorted(maps.Keys(m))
		switch part {
		case "keys":
			writeJSONPlain(w, http.StatusOK, keys)
		case "values":
			values := make([]string, len(keys))
			for i, k := range keys {
				values[i] = m[k]
			}
			writeJSONPlain(w, http.StatusOK, values)
		case "version":
			writeJSONPlain(w, http.StatusOK, s.opts.Lookups.Versions()[id])
		default:
			writeJSONPlain(w, http.StatusOK, m)
		}
	}
}
