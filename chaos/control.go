package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
)

const segmentsDataSource = "chaos_segments"

// ControlPlane runs config writes (the coordinator's maxSegmentsToMove, each
// a unique value with the same value as its audit comment) and segment
// publishes (each a new segment with an interval of its own) against random
// control nodes, with readers of both, while nodes are killed (-9), paused
// (SIGSTOP), cut off from the others and all crashed at once. Afterwards
// every acknowledged write must be in the audit history or the segment list,
// and the histories must be linearizable.
func ControlPlane(ctx context.Context, o *Options) *Result {
	res := &Result{}
	c, err := NewCluster(o.Bin, o.Dir, o.Net)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	c.Props = raftTimings
	defer c.Close()
	if err := c.AddControl(3); err != nil {
		res.Err = err.Error()
		return res
	}
	if err := c.StartAll(); err != nil {
		res.Err = err.Error()
		return res
	}
	if _, err := c.WaitLeader(ctx, 60*time.Second); err != nil {
		res.Err = err.Error()
		return res
	}
	st, err := deep.NewLocal(c.Deep)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	cp := &controlRun{o: o, c: c, res: res, clk: clock{time.Now()}, storage: st}
	cp.client = NewHTTPClient(o.Net, 3*time.Second)
	// The register's initial value: one acknowledged write before any client.
	cp.nextValue.Store(1000)
	for cp.init == 0 && ctx.Err() == nil {
		v := cp.nextValue.Add(1)
		if cp.writeConfig(ctx, c.Control[0], v) {
			cp.init = v
			break
		}
		sleep(ctx, 200*time.Millisecond)
	}
	cp.acked = map[int64]bool{cp.init: true}

	runCtx, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()
	var wg sync.WaitGroup
	scale := max(1, o.Scale)
	for i := 0; i < 3*scale; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); cp.configWriter(runCtx, i) }()
	}
	for i := 0; i < 2*scale; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); cp.configReader(runCtx, 100+i) }()
	}
	for i := 0; i < 2*scale; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); cp.segmentWriter(runCtx, 200+i) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); cp.segmentReader(runCtx, 300) }()

	nem := &nemesis{rng: rand.New(rand.NewSource(o.Seed)), pause: 1500 * time.Millisecond, res: res, o: o}
	nem.actions = cp.faults(nem.rng)
	if !o.Net.Partitions() {
		res.Skipped = "partition faults not run: " + o.Net.Why
	}
	nem.loop(runCtx)
	wg.Wait()

	// Recover everything, then read the final state as one more client.
	o.Net.HealAll()
	for _, p := range c.Control {
		p.Cont()
		if !p.Running() {
			p.Start()
		}
	}
	if _, err := c.WaitLeader(ctx, 60*time.Second); err != nil {
		res.Lost = len(cp.acked) // nothing can be read back: count every acknowledged write as lost
		res.example("after the faults: %v", err)
		return res
	}
	cp.check(ctx)
	return res
}

// raftTimings are a little slower than the defaults, so that a busy 2-core
// machine does not cause elections of its own between the injected faults.
var raftTimings = []string{"svc.raft.heartbeatTimeout=600ms", "svc.raft.electionTimeout=600ms", "svc.raft.leaderLeaseTimeout=300ms"}

type controlRun struct {
	o       *Options
	c       *Cluster
	res     *Result
	clk     clock
	client  *httpClient
	storage *deep.Local
	avail   availability

	nextValue atomic.Int64
	init      int64
	mu        sync.Mutex
	regOps    []RegOp
	setOps    []SetOp
	acked     map[int64]bool  // acknowledged config values
	segAcked  map[string]bool // acknowledged segment ids
	nextSeg   atomic.Int64
}

func (cp *controlRun) pick(rng *rand.Rand) *Proc { return cp.c.Control[rng.Intn(len(cp.c.Control))] }

// writeConfig sets maxSegmentsToMove to v on p (following its redirect to
// the leader), with v as the audit comment; true when acknowledged.
func (cp *controlRun) writeConfig(ctx context.Context, p *Proc, v int64) bool {
	code, _, err := cp.client.do(ctx, "POST", p.URL()+"/svc/coordinator/v1/config",
		[]byte(fmt.Sprintf(`{"maxSegmentsToMove":%d}`, v)), map[string]string{"X-Svc-Author": "chaos", "X-Svc-Comment": commentOf(v)})
	return err == nil && code == 200
}

func commentOf(v int64) string { return "chaos-" + strconv.FormatInt(v, 10) }

func (cp *controlRun) configWriter(ctx context.Context, id int) {
	rng := rand.New(rand.NewSource(cp.o.Seed + int64(id)))
	for ctx.Err() == nil {
		v := cp.nextValue.Add(1)
		op := RegOp{Write: true, Value: v, Client: id, Inv: cp.clk.now()}
		ok := cp.writeConfig(ctx, cp.pick(rng), v)
		op.Ret = Never
		if ok {
			op.Ret = cp.clk.now()
		}
		cp.avail.record(id, ok, time.Now())
		cp.mu.Lock()
		cp.regOps = append(cp.regOps, op)
		if ok {
			cp.acked[v] = true
			cp.res.Acked++
		}
		cp.res.Ops++
		cp.mu.Unlock()
	}
}

// readConfig returns the current maxSegmentsToMove as p (or the leader it
// redirects to) answers.
func (cp *controlRun) readConfig(ctx context.Context, p *Proc) (int64, bool) {
	code, body, err := cp.client.do(ctx, "GET", p.URL()+"/svc/coordinator/v1/config", nil, nil)
	if err != nil || code != 200 {
		return 0, false
	}
	var cfg struct {
		MaxSegmentsToMove *int64 `json:"maxSegmentsToMove"`
	}
	if json.Unmarshal(body, &cfg) != nil || cfg.MaxSegmentsToMove == nil {
		cp.res.example("config read answered 200 with %s", abbreviate(body))
		return 0, false
	}
	return *cfg.MaxSegmentsToMove, true
}

func (cp *controlRun) configReader(ctx context.Context, id int) {
	rng := rand.New(rand.NewSource(cp.o.Seed + int64(id)))
	for ctx.Err() == nil {
		inv := cp.clk.now()
		v, ok := cp.readConfig(ctx, cp.pick(rng))
		ret := cp.clk.now()
		cp.avail.record(id, ok, time.Now())
		cp.mu.Lock()
		cp.res.Ops++
		if ok {
			cp.regOps = append(cp.regOps, RegOp{Value: v, Inv: inv, Ret: ret, Client: id})
		}
		cp.mu.Unlock()
	}
}

// newSegment stores a small file in deep storage for the next segment (an
// hour of its own from 2000-01-01) and returns its metadata; the file is
// never loaded (the cluster has no historicals), but its load spec is a real
// one inside deep storage, as ingestion would publish.
func (cp *controlRun) newSegment(ctx context.Context) (*segmeta.DataSegment, error) {
	k := cp.nextSeg.Add(1)
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(k) * time.Hour).UnixMilli()
	s := &segmeta.DataSegment{DataSource: segmentsDataSource, Interval: interval.Interval{Start: start, End: start + 3600_000},
		Version: "2000-01-01T00:00:00.000Z", Size: 8}
	key := deep.SegmentKey(s.DataSource, interval.FormatMillis(s.Interval.Start), interval.FormatMillis(s.Interval.End), s.Version, 0)
	tmp := filepath.Join(cp.o.Dir, "segment-"+strconv.FormatInt(k, 10))
	if err := os.WriteFile(tmp, []byte("chaos\n"), 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	ls, err := cp.storage.Put(ctx, key, tmp)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(ls)
	s.LoadSpec = segmeta.RawJSON(b)
	return s, nil
}

func (cp *controlRun) segmentWriter(ctx context.Context, id int) {
	rng := rand.New(rand.NewSource(cp.o.Seed + int64(id)))
	for ctx.Err() == nil {
		s, err := cp.newSegment(ctx)
		if err != nil {
			cp.res.example("deep storage: %v", err)
			return
		}
		body, _ := json.Marshal(map[string]any{"dataSource": s.DataSource, "segments": []*segmeta.DataSegment{s}})
		sid := s.ID().String()
		op := SetOp{Add: true, Elem: sid, Inv: cp.clk.now(), Ret: Never}
		code, _, err := cp.client.do(ctx, "POST", cp.pick(rng).URL()+"/svc-internal/v1/segments/publish", body, nil)
		ok := err == nil && code == 200
		if ok {
			op.Ret = cp.clk.now()
		}
		cp.avail.record(id, ok, time.Now())
		cp.mu.Lock()
		cp.setOps = append(cp.setOps, op)
		cp.res.Ops++
		if ok {
			cp.res.Acked++
			if cp.segAcked == nil {
				cp.segAcked = map[string]bool{}
			}
			cp.segAcked[sid] = true
		}
		cp.mu.Unlock()
	}
}

// readSegments lists the used segment ids of the datasource.
func (cp *controlRun) readSegments(ctx context.Context, p *Proc) ([]string, bool) {
	code, body, err := cp.client.do(ctx, "GET", p.URL()+"/svc/coordinator/v1/metadata/datasources/"+segmentsDataSource+"/segments", nil, nil)
	if err != nil {
		return nil, false
	}
	if code == 404 { // no used segment yet
		return []string{}, true
	}
	var ids []string
	if code != 200 || json.Unmarshal(body, &ids) != nil {
		return nil, false
	}
	sort.Strings(ids)
	return ids, true
}

func (cp *controlRun) segmentReader(ctx context.Context, id int) {
	rng := rand.New(rand.NewSource(cp.o.Seed + int64(id)))
	for ctx.Err() == nil {
		inv := cp.clk.now()
		ids, ok := cp.readSegments(ctx, cp.pick(rng))
		ret := cp.clk.now()
		cp.avail.record(id, ok, time.Now())
		cp.mu.Lock()
		cp.res.Ops++
		if ok {
			cp.setOps = append(cp.setOps, SetOp{Elems: ids, Inv: inv, Ret: ret})
		}
		cp.mu.Unlock()
		sleep(ctx, 50*time.Millisecond) // lists grow; keep this reader from dominating the load
	}
}

// faults are the control plane's faults: kill -9, SIGSTOP and partitions of
// the leader or a follower, and a crash of every node at once.
func (cp *controlRun) faults(rng *rand.Rand) []action {
	var mu sync.Mutex
	c := cp.c
	leader := func(ctx context.Context) (*Proc, error) { return c.WaitLeader(ctx, 20*time.Second) }
	follower := func(ctx context.Context) (*Proc, error) {
		l, err := leader(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range c.Control {
			if p != l {
				return p, nil
			}
		}
		return nil, fmt.Errorf("no follower")
	}
	kill := func(pick func(context.Context) (*Proc, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			p, err := pick(ctx)
			if err != nil {
				return err
			}
			p.Kill()
			hold(ctx, jitter(rng, &mu, time.Second))
			return p.Start()
		}
	}
	pause := func(pick func(context.Context) (*Proc, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			p, err := pick(ctx)
			if err != nil {
				return err
			}
			p.Stop()
			hold(ctx, jitter(rng, &mu, 2*time.Second))
			p.Cont()
			return nil
		}
	}
	isolate := func(pick func(context.Context) (*Proc, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			p, err := pick(ctx)
			if err != nil {
				return err
			}
			defer c.Net.HealAll()
			for _, q := range c.Control {
				if q != p {
					if err := c.Net.Cut(p.Host, q.Host); err != nil {
						return err
					}
				}
			}
			hold(ctx, jitter(rng, &mu, 3*time.Second))
			return nil
		}
	}
	acts := []action{
		{"kill-9-leader", kill(leader)},
		{"kill-9-follower", kill(follower)},
		{"sigstop-leader", pause(leader)},
		{"sigstop-follower", pause(follower)},
		{"crash-all", func(ctx context.Context) error {
			c.KillAll()
			hold(ctx, jitter(rng, &mu, time.Second))
			return c.StartAll()
		}},
	}
	if c.Net.Partitions() {
		acts = append(acts,
			action{"partition-leader", isolate(leader)},
			action{"partition-follower", isolate(follower)})
	}
	return acts
}

// check reads the final state and runs the checkers.
func (cp *controlRun) check(ctx context.Context) {
	res := cp.res
	res.MaxUnavail = cp.avail.finish(time.Now())
	leader, err := cp.c.WaitLeader(ctx, 30*time.Second)
	if err != nil {
		res.example("final read: %v", err)
		return
	}
	// The final reads are operations of the histories too.
	inv := cp.clk.now()
	if v, ok := cp.readConfig(ctx, leader); ok {
		cp.regOps = append(cp.regOps, RegOp{Value: v, Inv: inv, Ret: cp.clk.now(), Client: -1})
	}
	inv = cp.clk.now()
	final, ok := cp.readSegments(ctx, leader)
	if ok {
		cp.setOps = append(cp.setOps, SetOp{Elems: final, Inv: inv, Ret: cp.clk.now()})
	}

	// Durability: every acknowledged config write is in the audit history,
	// every acknowledged segment in the final list.
	code, body, err := cp.client.do(ctx, "GET", leader.URL()+"/svc/coordinator/v1/config/history?count=100000000", nil, nil)
	var hist []struct {
		AuditInfo struct {
			Comment string `json:"comment"`
		} `json:"auditInfo"`
	}
	if err != nil || code != 200 || json.Unmarshal(body, &hist) != nil {
		res.example("config history: %d %v", code, err)
		res.Lost += len(cp.acked)
	} else {
		inHistory := map[string]bool{}
		for _, h := range hist {
			inHistory[h.AuditInfo.Comment] = true
		}
		for v := range cp.acked {
			if !inHistory[commentOf(v)] {
				res.Lost++
				res.example("acknowledged config write %d is not in the audit history", v)
			}
		}
	}
	if !ok {
		res.example("final segment list could not be read")
		res.Lost += len(cp.segAcked)
	} else {
		have := map[string]bool{}
		for _, id := range final {
			have[id] = true
		}
		for id := range cp.segAcked {
			if !have[id] {
				res.Lost++
				res.example("acknowledged segment %s is not used", id)
			}
		}
	}

	// Linearizability. The ops were appended as they completed; the checks
	// need no order.
	for _, v := range CheckRegister(cp.init, cp.regOps) {
		res.Violations++
		res.example("config register: %s", v)
	}
	for _, v := range CheckSet(cp.setOps) {
		res.Violations++
		res.example("segment set: %s", v)
	}
	cp.o.logf("  control plane: %d config ops (%d values acknowledged), %d segment ops (%d acknowledged)",
		len(cp.regOps), len(cp.acked), len(cp.setOps), len(cp.segAcked))
}
