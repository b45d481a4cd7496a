package sysinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"strata/auth"
	"strata/interval"
	"strata/segmeta"
)

// Control-plane paths the sys tables read.
const (
	pathSegments    = "/svc/coordinator/v1/metadata/segments?includeOvershadowedStatus"
	pathServersFull = "/svc/coordinator/v1/servers?full"
	pathLeader      = "/svc/coordinator/v1/leader"
	pathTasks       = "/svc/indexer/v1/tasks"
	pathSupervisors = "/svc/indexer/v1/supervisor?system"
)

var errNoControl = errors.New("no control plane to read from")

func (t *Tables) get(ctx context.Context, path string, into any) error {
	if t.Control == nil {
		return errNoControl
	}
	b, err := t.Control(ctx, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// serverEntry is an element of /servers?full: a historical (with the
// segments it serves) or another discovered process.
type serverEntry struct {
	Host      string                     `json:"host"`
	Tier      *string                    `json:"tier"`
	Type      string                     `json:"type"`
	CurrSize  int64                      `json:"currSize"`
	MaxSize   int64                      `json:"maxSize"`
	Segments  map[string]json.RawMessage `json:"segments"`
	Role      string                     `json:"role"`
	Version   string                     `json:"version"`
	StartTime int64                      `json:"startTime"`
}

func (t *Tables) serverEntries(ctx context.Context) ([]serverEntry, error) {
	var out []serverEntry
	err := t.get(ctx, pathServersFull, &out)
	slices.SortFunc(out, func(a, b serverEntry) int { return strings.Compare(a.Host, b.Host) })
	return out, err
}

// segmentEntry is an element of metadata/segments?includeOvershadowedStatus.
type segmentEntry struct {
	Segment           segmeta.DataSegment
	Overshadowed      bool
	ReplicationFactor *int64
	NumRows           *int64
	Realtime          bool
	ShardSpec         json.RawMessage
	LastCompaction    json.RawMessage
}

func (e *segmentEntry) UnmarshalJSON(b []byte) error {
	var extra struct {
		Overshadowed        bool            `json:"overshadowed"`
		ReplicationFactor   *int64          `json:"replicationFactor"`
		NumRows             *int64          `json:"numRows"`
		Realtime            bool            `json:"realtime"`
		ShardSpec           json.RawMessage `json:"shardSpec"`
		LastCompactionState json.RawMessage `json:"lastCompactionState"`
	}
	if err := json.Unmarshal(b, &extra); err != nil {
		return err
	}
	if err := e.Segment.UnmarshalJSON(b); err != nil {
		return err
	}
	e.Overshadowed, e.ReplicationFactor, e.NumRows, e.Realtime = extra.Overshadowed, extra.ReplicationFactor, extra.NumRows, extra.Realtime
	e.ShardSpec, e.LastCompaction = extra.ShardSpec, extra.LastCompactionState
	return nil
}

// segments lists the published (used) segments with their replicas as the
// historicals serve them, then the realtime segments the broker knows of.
func (t *Tables) segments(ctx context.Context) ([][]any, error) {
	var published []segmentEntry
	if err := t.get(ctx, pathSegments, &published); err != nil {
		return nil, err
	}
	servers, err := t.serverEntries(ctx)
	if err != nil {
		return nil, err
	}
	replicas := map[string]int64{}
	for _, s := range servers {
		for id := range s.Segments {
			replicas[id]++
		}
	}
	counter := &rowCounter{t: t, counts: map[string]int64{}, read: map[string]bool{}}
	rows := make([][]any, 0, len(published))
	for _, e := range published {
		seg := &e.Segment
		if !readable(ctx, seg.DataSource) {
			continue
		}
		id := seg.ID().String()
		n := replicas[id]
		over := boolLong(e.Overshadowed)
		var numRows any
		if e.NumRows != nil {
			numRows = *e.NumRows
		} else if numRows, err = counter.rows(ctx, seg.DataSource, id); err != nil {
			return nil, err
		}
		var repl any
		if e.ReplicationFactor != nil {
			repl = *e.ReplicationFactor
		}
		dims, _ := json.Marshal(nonNil(seg.Dimensions))
		mets, _ := json.Marshal(nonNil(seg.Metrics))
		rows = append(rows, []any{
			id, seg.DataSource, interval.FormatMillis(seg.Interval.Start), interval.FormatMillis(seg.Interval.End), seg.Size,
			seg.Version, int64(seg.ShardSpec.PartitionNum), n, numRows,
			boolLong(!e.Overshadowed || e.Realtime), // is_active: published and not overshadowed
			int64(1), boolLong(n > 0), boolLong(e.Realtime), over,
			rawOrNil(e.ShardSpec), string(dims), string(mets), rawOrNil(e.LastCompaction), repl,
		})
	}
	// Realtime segments: served, not published; one row each, its replicas
	// counted.
	var ids []string
	realtime := map[string]*segmeta.DataSegment{}
	for _, r := range t.realtime() {
		if !readable(ctx, r.Segment.DataSource) {
			continue
		}
		id := r.Segment.ID().String()
		if realtime[id] == nil {
			ids = append(ids, id)
			realtime[id] = r.Segment
		}
		replicas[id]++
	}
	for _, id := range ids {
		seg := realtime[id]
		numRows, err := counter.rows(ctx, seg.DataSource, id)
		if err != nil {
			return nil, err
		}
		dims, _ := json.Marshal(nonNil(seg.Dimensions))
		mets, _ := json.Marshal(nonNil(seg.Metrics))
		shard := seg.ShardSpec.AppendJSON(nil)
		rows = append(rows, []any{
			id, seg.DataSource, interval.FormatMillis(seg.Interval.Start), interval.FormatMillis(seg.Interval.End), seg.Size,
			seg.Version, int64(seg.ShardSpec.PartitionNum), replicas[id], numRows,
			int64(1), int64(0), int64(1), int64(1), int64(0), // active, not published, available, realtime, not overshadowed
			string(shard), string(dims), string(mets), nil, nil,
		})
	}
	slices.SortFunc(rows, func(a, b []any) int { return strings.Compare(a[0].(string), b[0].(string)) })
	return rows, nil
}

// rowCounter reads the row counts of sys.segments' rows, one NumRows call
// per datasource. A count that cannot be read leaves its segments at 0, as
// Druid shows them until its broker has read their metadata; only the
// caller's own cancellation fails the table.
type rowCounter struct {
	t      *Tables
	counts map[string]int64 // by segment id
	read   map[string]bool  // datasources counted
}

func (c *rowCounter) rows(ctx context.Context, ds, id string) (int64, error) {
	if c.t.NumRows != nil && !c.read[ds] {
		c.read[ds] = true
		n, err := c.t.NumRows(ctx, ds)
		if err != nil {
			return 0, ctx.Err()
		}
		for id, k := range n {
			c.counts[id] = k
		}
	}
	return c.counts[id], nil
}

func (t *Tables) realtime() []RealtimeSegment {
	if t.Realtime == nil {
		return nil
	}
	return t.Realtime()
}

func (t *Tables) serverSegments(ctx context.Context) ([][]any, error) {
	if err := auth.Check(ctx, stateResource, auth.Read); err != nil {
		return nil, err
	}
	servers, err := t.serverEntries(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, s := range servers {
		ids := make([]string, 0, len(s.Segments))
		for id := range s.Segments {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			rows = append(rows, []any{s.Host, id})
		}
	}
	for _, r := range t.realtime() {
		rows = append(rows, []any{r.Server, r.Segment.ID().String()})
	}
	return rows, nil
}

// servers lists every process /servers knows: the historicals of the
// inventory and the processes discovery knows.
func (t *Tables) servers(ctx context.Context) ([][]any, error) {
	if err := auth.Check(ctx, stateResource, auth.Read); err != nil {
		return nil, err
	}
	servers, err := t.serverEntries(ctx)
	if err != nil {
		return nil, err
	}
	leaderHost := ""
	if t.Control != nil {
		if b, err := t.Control(ctx, pathLeader); err == nil {
			if u, err := url.Parse(strings.TrimSpace(string(b))); err == nil {
				leaderHost = u.Host
			}
		}
	}
	rows := make([][]any, 0, len(servers))
	for _, s := range servers {
		host, port := s.Host, int64(-1)
		if h, p, err := net.SplitHostPort(s.Host); err == nil {
			host = h
			if n, err := strconv.ParseInt(p, 10, 64); err == nil {
				port = n
			}
		}
		typ := serverType(s)
		var tier any
		if typ == "HISTORICAL" && s.Tier != nil {
			tier = *s.Tier
		}
		// Leadership exists for the control plane's roles only.
		var leader any
		if typ == "COORDINATOR" || typ == "OVERLORD" {
			leader = boolLong(leaderHost != "" && leaderHost == s.Host)
		}
		var start, version any
		if s.StartTime > 0 {
			start = interval.FormatMillis(s.StartTime)
		}
		if s.Version != "" {
			version = s.Version
		}
		curr, maxSize := int64(0), int64(0)
		if typ == "HISTORICAL" {
			curr, maxSize = s.CurrSize, s.MaxSize
		}
		rows = append(rows, []any{s.Host, host, port, int64(-1), typ, tier, curr, maxSize, leader, start, version})
	}
	return rows, nil
}

// serverType is Druid's server_type of a /servers entry. A Strata process
// can hold several roles on one port; it is listed once, under the role
// that serves queries or data if it has one, else its first control role.
func serverType(s serverEntry) string {
	switch s.Type {
	case "historical":
		return "HISTORICAL"
	case "indexer-executor":
		return "MIDDLE_MANAGER"
	case "broker":
		return "BROKER"
	}
	roles := strings.Split(s.Role, ",")
	if s.Role == "" {
		roles = strings.Split(s.Type, ",")
	}
	for _, want := range []string{"coordinator", "overlord", "router", "middleManager", "broker", "historical"} {
		if slices.Contains(roles, want) {
			if want == "middleManager" {
				return "MIDDLE_MANAGER"
			}
			return strings.ToUpper(want)
		}
	}
	return strings.ToUpper(strings.ReplaceAll(roles[0], "-", "_"))
}

// taskEntry is Druid's TaskStatusPlus.
type taskEntry struct {
	ID                 string  `json:"id"`
	GroupID            string  `json:"groupId"`
	Type               string  `json:"type"`
	CreatedTime        string  `json:"createdTime"`
	QueueInsertionTime string  `json:"queueInsertionTime"`
	StatusCode         string  `json:"statusCode"`
	RunnerStatusCode   string  `json:"runnerStatusCode"`
	Duration           *int64  `json:"duration"`
	DataSource         string  `json:"dataSource"`
	ErrorMsg           *string `json:"errorMsg"`
	Location           struct {
		Host    *string `json:"host"`
		Port    int64   `json:"port"`
		TLSPort int64   `json:"tlsPort"`
	} `json:"location"`
}

func (t *Tables) tasks(ctx context.Context) ([][]any, error) {
	var list []taskEntry
	if err := t.get(ctx, pathTasks, &list); err != nil {
		return nil, err
	}
	rows := make([][]any, 0, len(list))
	for _, e := range list {
		if !readable(ctx, e.DataSource) {
			continue
		}
		var duration, location, host, errMsg any
		if e.Duration != nil {
			duration = *e.Duration
		}
		if e.Location.Host != nil && *e.Location.Host != "" {
			host = *e.Location.Host
			location = net.JoinHostPort(*e.Location.Host, strconv.FormatInt(e.Location.Port, 10))
		}
		if e.ErrorMsg != nil {
			errMsg = *e.ErrorMsg
		}
		rows = append(rows, []any{e.ID, e.GroupID, e.Type, e.DataSource, e.CreatedTime, e.QueueInsertionTime,
			e.StatusCode, e.RunnerStatusCode, duration, location, host, e.Location.Port, e.Location.TLSPort, errMsg})
	}
	return rows, nil
}

// supervisorEntry is an element of /supervisor?system.
type supervisorEntry struct {
	ID            string  `json:"id"`
	State         string  `json:"state"`
	DetailedState string  `json:"detailedState"`
	Healthy       bool    `json:"healthy"`
	SpecString    *string `json:"specString"`
	Type          *string `json:"type"`
	Source        *string `json:"source"`
	Suspended     bool    `json:"suspended"`
}

func (t *Tables) supervisors(ctx context.Context) ([][]any, error) {
	var list []supervisorEntry
	if err := t.get(ctx, pathSupervisors, &list); err != nil {
		return nil, err
	}
	rows := make([][]any, 0, len(list))
	for _, e := range list {
		if !readable(ctx, e.ID) { // a supervisor's id is its datasource, as Druid authorizes it
			continue
		}
		rows = append(rows, []any{e.ID, e.State, e.DetailedState, boolLong(e.Healthy), strOrNil(e.Type), strOrNil(e.Source),
			boolLong(e.Suspended), strOrNil(e.SpecString)})
	}
	return rows, nil
}

// Druid's authorization of the sys tables: rows about a datasource (segments,
// tasks, supervisors) are shown to callers who may READ it; the servers and
// what they serve need STATE READ. With security off everything is allowed.
var stateResource = auth.Resource{Type: auth.State, Name: "STATE"}

func readable(ctx context.Context, dataSource string) bool {
	return auth.Allowed(ctx, auth.Resource{Type: auth.Datasource, Name: dataSource}, auth.Read)
}

func boolLong(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func rawOrNil(r json.RawMessage) any {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return string(r)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
