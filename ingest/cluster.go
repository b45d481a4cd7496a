package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"strata/config"
	"strata/escalator"
	"strata/interval"
	"strata/props"
	"strata/rules"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// Cluster is how an ingestion task reaches the cluster: segment metadata and
// atomic publishing through the coordinator, segment files in deep storage, and
// the broker's view to wait until published segments are served.
type Cluster struct {
	// Coordinators are the control-plane URLs (any node: followers redirect
	// to the leader). Requests go to each in turn while none answers or there
	// is no leader, for up to FailoverWait (default 30s), so a task rides out
	// the loss of a control node and the election that follows.
	Coordinators []string
	FailoverWait time.Duration
	// Broker is the broker the load waiter asks (svc.router.brokerUrls, an
	// override); without it, the live brokers Brokers returns (discovery).
	Broker  string
	Brokers func() []string
	Storage deep.DeepStorage
	// LoadTimeout bounds the wait for published segments to be served
	// (svc.coordinator.loadTimeout); 0: do not wait.
	LoadTimeout time.Duration
	HTTP        *http.Client
}

// ClusterSlot holds the cluster access of one kind of task, per worker (by
// its host:port, Env.Host): a Go process may run middle managers of
// different clusters (a test binary, an embedding), and one process-wide
// access made every worker's tasks publish to the cluster of the worker
// configured last. Set is the access of a worker configured with none of its
// own (a test that runs tasks without a process).
type ClusterSlot struct {
	mu     sync.RWMutex
	c      *Cluster
	byHost map[string]*Cluster
}

// Set replaces the access of workers that have none of their own.
func (s *ClusterSlot) Set(c *Cluster) {
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

// SetFor replaces the access of the worker at host (nil: forget it, when
// the worker stops).
func (s *ClusterSlot) SetFor(host string, c *Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c == nil {
		delete(s.byHost, host)
		return
	}
	if s.byHost == nil {
		s.byHost = map[string]*Cluster{}
	}
	s.byHost[host] = c
}

// Configure sets the access of the worker at host from properties
// (ClusterFromProps); brokers lists the live brokers its tasks wait on
// (its discovery; nil without discovery: svc.router.brokerUrls).
// waitForLoad keeps the default wait for published segments to be served,
// otherwise tasks do not wait (LoadTimeout 0).
func (s *ClusterSlot) Configure(p *props.Properties, host string, brokers func() []string, waitForLoad bool) error {
	c, err := ClusterFromProps(p)
	if err != nil {
		return err
	}
	c.Brokers = brokers
	if !waitForLoad {
		c.LoadTimeout = 0
	}
	s.SetFor(host, c)
	return nil
}

// Get returns the access of the worker at host, else the one Set; nil
// before either.
func (s *ClusterSlot) Get(host string) *Cluster {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if c, ok := s.byHost[host]; ok {
		return c
	}
	return s.c
}

// ClusterFromProps builds a Cluster from svc.indexer.coordinatorUrls,
// svc.router.brokerUrls, svc.coordinator.loadTimeout and the svc.storage.*
// settings. Without svc.router.brokerUrls the caller sets Brokers (the
// brokers its worker's discovery knows); there is no default broker
// address, which a task would poll in vain until its load timeout.
func ClusterFromProps(p *props.Properties) (*Cluster, error) {
	ds, err := DeepStorageFromProps(p)
	if err != nil {
		return nil, err
	}
	ic := config.ParseIndexer(p)
	cc, err := config.ParseCoordinator(p, nil)
	if err != nil {
		return nil, err
	}
	return &Cluster{
		Coordinators: urlList(ic.CoordinatorURLs, "http://127.0.0.1:8081"),
		Broker:       firstURL(ic.BrokerURLs, ""),
		Storage:      ds,
		LoadTimeout:  cc.LoadTimeout,
		// Publishing is an internal endpoint; listing segments and rules
		// and asking brokers are public ones the task calls as the
		// cluster, so every call carries the internal credentials.
		HTTP: escalator.NodeServiceClient(p, 5*time.Minute),
	}, nil
}

func urlList(list []string, def string) []string {
	var out []string
	for _, u := range list {
		out = append(out, strings.TrimRight(u, "/"))
	}
	if len(out) == 0 {
		out = []string{def}
	}
	return out
}

func firstURL(list []string, def string) string {
	for _, u := range list {
		return strings.TrimRight(u, "/")
	}
	return def
}

// coordinatorDo sends a request to the control plane at path, trying each
// coordinator URL in turn while none answers or the answer is 503 (no leader
// yet), until FailoverWait has passed.
func (c *Cluster) coordinatorDo(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	wait := c.FailoverWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		var b []byte
		var code int
		var err error
		for _, base := range c.Coordinators {
			b, code, err = c.do(ctx, method, base+path, body)
			if err == nil && code != http.StatusServiceUnavailable {
				return b, code, nil
			}
		}
		if len(c.Coordinators) == 0 {
			return nil, 0, errors.New("no coordinator URL is configured (svc.indexer.coordinatorUrls)")
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return b, code, err
		}
		select {
		case <-ctx.Done():
			return b, code, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) do(ctx context.Context, method, u string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

// UsedSegments lists the used segments of ds overlapping iv (overshadowed ones included).
func (c *Cluster) UsedSegments(ctx context.Context, ds string, iv interval.Interval) ([]*segmeta.DataSegment, error) {
	body, _ := json.Marshal([]string{iv.String()})
	b, code, err := c.coordinatorDo(ctx, http.MethodPost, "/svc/coordinator/v1/metadata/datasources/"+url.PathEscape(ds)+"/segments?full", body)
	if err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", ds, err)
	}
	if code == http.StatusNotFound || code == http.StatusNoContent {
		return nil, nil
	}
	if code != 200 {
		return nil, fmt.Errorf("list segments of %s: HTTP %d %s", ds, code, b)
	}
	var segs []*segmeta.DataSegment
	if err := json.Unmarshal(b, &segs); err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", ds, err)
	}
	return segs, nil
}

// OpenSegment downloads a segment into dir and opens it; release closes and removes it.
func (c *Cluster) OpenSegment(ctx context.Context, dir string, seg *segmeta.DataSegment) (*segment.Segment, func(), error) {
	var ls deep.LoadSpec
	if err := json.Unmarshal([]byte(seg.LoadSpec), &ls); err != nil {
		return nil, nil, fmt.Errorf("segment %s: bad loadSpec: %v", seg.ID(), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp(dir, "seg-*.seg")
	if err != nil {
		return nil, nil, err
	}
	path := f.Name()
	f.Close()
	if err := c.Storage.Get(ctx, ls, path); err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("fetch segment %s: %w", seg.ID(), err)
	}
	s, err := segment.Open(path)
	if err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("open segment %s: %w", seg.ID(), err)
	}
	return s, func() { s.Close(); os.Remove(path) }, nil
}

// Uploader stores segment files in deep storage.
func (c *Cluster) Uploader() Uploader { return DeepUploader{Storage: c.Storage} }

// Publish publishes segments in one atomic command through the coordinator.
func (c *Cluster) Publish(ctx context.Context, ds string, segs []*segmeta.DataSegment) error {
	_, err := c.PublishCount(ctx, ds, segs)
	return err
}

// PublishCount is Publish that also returns how many segments were new (ids
// already published are skipped).
func (c *Cluster) PublishCount(ctx context.Context, ds string, segs []*segmeta.DataSegment) (int, error) {
	if len(segs) == 0 {
		return 0, nil
	}
	return c.publish(ctx, ds, segs, nil)
}

// PublishMetadata is the atomic publish of stream ingestion: segs (possibly
// none) and, in the same command, a compare-and-swap of the datasource's
// ingestion metadata from start to end; mode picks the comparison ("" the
// whole document, "kafka" per partition, see commands.PublishSegments). A
// lost compare-and-swap is a *PublishError with Status 409 (IsPublishConflict).
func (c *Cluster) PublishMetadata(ctx context.Context, ds string, segs []*segmeta.DataSegment, start, end json.RawMessage, mode, taskID string) (int, error) {
	if start == nil {
		start = json.RawMessage("null")
	}
	if end == nil {
		end = json.RawMessage("null")
	}
	if !json.Valid(start) || !json.Valid(end) {
		return 0, fmt.Errorf("publish: start or end metadata is not JSON")
	}
	return c.publish(ctx, ds, segs, &publishMeta{Start: start, End: end, Mode: mode, TaskID: taskID})
}

type publishMeta struct {
	Start, End json.RawMessage
	Mode       string
	TaskID     string // "" for a publish no task lock guards
}

// PublishError is the coordinator's refusal of a publish.
type PublishError struct {
	Status int
	Body   string
}

func (e *PublishError) Error() string {
	return fmt.Sprintf("publish: coordinator answered %d: %s", e.Status, e.Body)
}

// IsPublishConflict reports a publish refused because the ingestion metadata
// (or a segment id) was changed by another writer: HTTP 409.
func IsPublishConflict(err error) bool {
	var pe *PublishError
	return errors.As(err, &pe) && pe.Status == http.StatusConflict
}

func (c *Cluster) publish(ctx context.Context, ds string, segs []*segmeta.DataSegment, meta *publishMeta) (int, error) {
	var buf bytes.Buffer
	dsJSON, _ := json.Marshal(ds)
	buf.WriteString(`{"dataSource":`)
	buf.Write(dsJSON)
	buf.WriteString(`,"segments":[`)
	for i, s := range segs {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(s.AppendJSON(nil))
	}
	buf.WriteString("]")
	if meta != nil {
		mode, _ := json.Marshal(meta.Mode)
		buf.WriteString(`,"startMetadata":`)
		buf.Write(meta.Start)
		buf.WriteString(`,"endMetadata":`)
		buf.Write(meta.End)
		buf.WriteString(`,"metadataMode":`)
		buf.Write(mode)
		if meta.TaskID != "" {
			id, _ := json.Marshal(meta.TaskID)
			buf.WriteString(`,"taskId":`)
			buf.Write(id)
		}
	}
	buf.WriteString("}")
	b, code, err := c.coordinatorDo(ctx, http.MethodPost, "/svc-internal/v1/segments/publish", buf.Bytes())
	if err != nil {
		return 0, fmt.Errorf("publish: %w", err)
	}
	if code != 200 {
		return 0, &PublishError{Status: code, Body: string(b)}
	}
	var out struct {
		Published int `json:"published"`
	}
	json.Unmarshal(b, &out)
	return out.Published, nil
}

// ruleLoads tells whether the retention rules have historicals load a
// segment. Like Druid's load waiter (which counts a segment with replication
// factor 0 as loaded) it does not wait for segments a drop rule, or a load
// rule with no replicas, keeps off the historicals: they would never load.
// When the rules cannot be read, every segment is waited for.
func (c *Cluster) ruleLoads(ctx context.Context, segs []*segmeta.DataSegment) func(*segmeta.DataSegment) bool {
	byDS := map[string][]rules.Rule{}
	known := map[string]bool{}
	for _, s := range segs {
		if known[s.DataSource] {
			continue
		}
		known[s.DataSource] = true
		b, code, err := c.coordinatorDo(ctx, http.MethodGet, "/svc/coordinator/v1/rules/"+url.PathEscape(s.DataSource)+"?full", nil)
		if err != nil || code != http.StatusOK {
			continue
		}
		if rs, err := rules.Parse(b); err == nil {
			byDS[s.DataSource] = rs
		}
	}
	now := time.Now().UnixMilli()
	return func(s *segmeta.DataSegment) bool {
		rs, ok := byDS[s.DataSource]
		if !ok {
			return true
		}
		r, ok := rules.Match(rs, nil, s.Interval, now)
		if !ok {
			return false // no rule applies: nothing loads it
		}
		switch r.Kind() {
		case rules.Broadcast:
			return true
		case rules.Load:
			for _, n := range r.Replicants() {
				if n > 0 {
					return true
				}
			}
		}
		return false
	}
}

// WaitLoaded waits until every live broker lists every published data
// segment (not tombstones, which are never loaded) with a location, for at
// most timeout. Every broker, not one: a router may send the next query to
// any of them, and one that has not polled the historicals since they
// loaded the segments would answer without their rows. The brokers are
// listed afresh each round, so one that leaves discovery stops being waited
// for; one that refuses the connection answers no query (routers skip it,
// and it is not ready after a restart until it has polled the data
// servers) and is not waited for either, but at least one broker must list
// the segments.
func (c *Cluster) WaitLoaded(ctx context.Context, segs []*segmeta.DataSegment, timeout time.Duration) error {
	want := map[string]bool{}
	byDS := map[string][]string{}
	loads := c.ruleLoads(ctx, segs)
	for _, s := range segs {
		if s.IsTombstone() || !loads(s) {
			continue
		}
		want[fmt.Sprintf("%s|%s|%s|%d", s.DataSource, s.Interval.String(), s.Version, s.ShardSpec.PartitionNum)] = true
		byDS[s.DataSource] = append(byDS[s.DataSource], s.Interval.String())
	}
	if len(want) == 0 {
		return nil
	}
	if c.Broker == "" && c.Brokers == nil {
		// Nothing can tell: waiting would only hold the task's lock.
		return fmt.Errorf("%d published segments not waited for: no broker is known (svc.router.brokerUrls is unset and the process has no discovery, svc.discovery.coordinators)", len(want))
	}
	deadline := time.Now().Add(timeout)
	for {
		missing, problem := c.missingOnBrokers(ctx, want, byDS)
		if missing == 0 && problem == "" {
			return nil
		}
		if time.Now().After(deadline) {
			if problem != "" {
				return fmt.Errorf("%d published segments were not seen loaded within %s (svc.coordinator.loadTimeout): %s: %w", missing, timeout, problem, context.DeadlineExceeded)
			}
			return fmt.Errorf("%d published segments were not loaded within %s (svc.coordinator.loadTimeout): %w", missing, timeout, context.DeadlineExceeded)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // a cheap query; loading is what is waited for
		}
	}
}

// missingOnBrokers asks each live broker which of the wanted segments it
// serves. missing is the most any reachable broker lacks (all of them when
// none answered); problem says why a broker could not tell, or that none
// is known or reachable.
func (c *Cluster) missingOnBrokers(ctx context.Context, want map[string]bool, byDS map[string][]string) (missing int, problem string) {
	bs := c.brokers()
	if len(bs) == 0 {
		return len(want), "no broker is known (none has announced itself through discovery and svc.router.brokerUrls is unset)"
	}
	answered := 0
	var unreachable, problems []string
	for _, base := range bs {
		n, err := c.missingOn(ctx, strings.TrimRight(base, "/"), want, byDS)
		switch {
		case isDialError(err):
			unreachable = append(unreachable, err.Error())
		case err != nil:
			problems = append(problems, err.Error())
		default:
			answered++
			missing = max(missing, n)
		}
	}
	if answered == 0 {
		missing = len(want)
		if len(problems) == 0 {
			problems = append(problems, "no broker answered: "+strings.Join(unreachable, "; "))
		}
	}
	return missing, strings.Join(problems, "; ")
}

// missingOn counts the wanted segments broker base does not list with a
// location.
func (c *Cluster) missingOn(ctx context.Context, base string, want map[string]bool, byDS map[string][]string) (int, error) {
	// A broker that hangs must not hold the wait past the load timeout.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for ds, ivs := range byDS {
		b, code, err := c.do(ctx, http.MethodGet, base+"/svc/v2/datasources/"+url.PathEscape(ds)+"/candidates?intervals="+url.QueryEscape(strings.Join(ivs, ",")), nil)
		if err != nil {
			return 0, err
		}
		if code != http.StatusOK {
			return 0, fmt.Errorf("broker %s answered %d", base, code)
		}
		var cands []struct {
			Interval        string            `json:"interval"`
			Version         string            `json:"version"`
			PartitionNumber int32             `json:"partitionNumber"`
			Locations       []json.RawMessage `json:"locations"`
		}
		if err := json.Unmarshal(b, &cands); err != nil {
			return 0, fmt.Errorf("broker %s: candidates: %w", base, err)
		}
		for _, cd := range cands {
			if iv, perr := interval.Parse(cd.Interval); perr == nil && len(cd.Locations) > 0 {
				seen[fmt.Sprintf("%s|%s|%s|%d", ds, iv.String(), cd.Version, cd.PartitionNumber)] = true
			}
		}
	}
	n := 0
	for k := range want {
		if !seen[k] {
			n++
		}
	}
	return n, nil
}

// isDialError reports a connection that was never made (refused, no route,
// dial timeout): nothing listens there to answer queries.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// brokers lists the brokers the load waiter asks: the configured one, else
// the live ones discovery knows.
func (c *Cluster) brokers() []string {
	if c.Broker != "" {
		return []string{c.Broker}
	}
	if c.Brokers == nil {
		return nil
	}
	return c.Brokers()
}
