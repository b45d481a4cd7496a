// Package sqltask runs SQL-based ingestion as a task: the `query_controller`
// task type that middle managers run with the msq engine, and the glue between
// that engine and the cluster (segment metadata and publishing through the
// coordinator, deep storage, waiting for historicals to load what was
// published). The HTTP endpoint POST /svc/v2/sql/task submits these tasks.
package sqltask

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"strata/ingest"
	"strata/interval"
	"strata/middlemanager"
	"strata/msq"
	"strata/props"
	"strata/segment"
	"strata/sql"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

// TaskType is the type of SQL ingestion controller tasks.
const TaskType = "query_controller"

// SelectDataSource is the datasource recorded for SELECT-only tasks, which write none.
const SelectDataSource = "__query_select"

// Payload is the task JSON of a SQL task.
type Payload struct {
	Type       string          `json:"type"`
	ID         string          `json:"id"`
	DataSource string          `json:"dataSource"`
	SQL        string          `json:"sqlQuery"`
	Context    map[string]any  `json:"sqlQueryContext"`
	Parameters []msq.Parameter `json:"sqlParameters,omitempty"`
}

// Target parses the statement and returns the datasource it writes ("" for a
// SELECT), or a syntax error with line and column.
func Target(sqlText string) (string, error) {
	script, err := sql.ParseScript(sqlText)
	if err != nil {
		return "", err
	}
	switch st := script.Statement.(type) {
	case *sql.Insert:
		return lastName(st.Table)
	case *sql.Replace:
		return lastName(st.Table)
	case *sql.Query:
		return "", nil
	}
	return "", fmt.Errorf("only INSERT, REPLACE and SELECT statements run as SQL tasks")
}

func lastName(name []sql.Ident) (string, error) {
	if len(name) == 0 || name[len(name)-1].Name == "" {
		return "", fmt.Errorf("the statement names no target datasource")
	}
	return name[len(name)-1].Name, nil
}

// Config is how query_controller tasks reach the cluster. Configure sets it
// when a middle manager starts.
type Config struct {
	Coordinator string // control-plane URL (leader or any node; redirects are followed)
	Broker      string // broker URL, to wait for segments to be loaded
	Storage     deep.DeepStorage
	LoadTimeout time.Duration
}

var (
	cfgMu sync.RWMutex
	cfg   Config
)

// Configure sets the cluster access of SQL tasks from properties.
func Configure(p *props.Properties) error {
	ds, err := ingest.DeepStorageFromProps(p)
	if err != nil {
		return err
	}
	c := Config{
		Coordinator: firstURL(p.String("svc.indexer.coordinatorUrls"), "http://127.0.0.1:8081"),
		Broker:      firstURL(p.String("svc.router.brokerUrls"), "http://127.0.0.1:8082"),
		Storage:     ds,
		LoadTimeout: 5 * time.Minute,
	}
	cfgMu.Lock()
	cfg = c
	cfgMu.Unlock()
	return nil
}

func firstURL(list, def string) string {
	for _, u := range props.ParseList(list) {
		return strings.TrimRight(u, "/")
	}
	return def
}

type runner struct{}

func init() { middlemanager.Register(TaskType, runner{}) }

// Validate fills in the datasource and asks for a lock on the whole datasource
// for INSERT and REPLACE: writers of one datasource run one at a time, and a kill
// racing them waits for the lock instead of deleting under them.
func (runner) Validate(t *middlemanager.Task) ([]interval.Interval, error) {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil {
		return nil, fmt.Errorf("query_controller task: %v", err)
	}
	target, err := Target(p.SQL)
	if err != nil {
		return nil, err
	}
	if target == "" {
		t.DataSource = SelectDataSource
		return nil, nil
	}
	t.DataSource = target
	return []interval.Interval{interval.Eternity}, nil
}

// Run executes the statement with the msq engine.
func (runner) Run(ctx context.Context, t middlemanager.Task, env middlemanager.Env) (middlemanager.Report, error) {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil {
		return nil, err
	}
	cfgMu.RLock()
	c := cfg
	cfgMu.RUnlock()
	if c.Storage == nil {
		return nil, fmt.Errorf("SQL tasks are not configured on this worker (no deep storage)")
	}
	version := interval.FormatMillis(time.Now().UnixMilli())
	if t.DataSource != SelectDataSource {
		raw, err := env.Act(ctx, middlemanager.Action{Type: middlemanager.ActionLockAcquire, Interval: interval.Eternity.String()})
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", t.DataSource, err)
		}
		var lock struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &lock); err == nil && lock.Version != "" {
			version = lock.Version
		}
	}
	env.Logf("running SQL task %s (version %s)", t.ID, version)
	ce := &clusterEnv{cfg: c, dir: filepath.Join(env.Dir(), "segments"), http: &http.Client{Timeout: 5 * time.Minute}}
	defer os.RemoveAll(ce.dir)
	req := msq.Request{SQL: p.SQL, Context: p.Context, Parameters: p.Parameters, TaskID: t.ID, Version: version, TempDir: env.Dir()}
	rep, err := msq.Run(ctx, req, ce, nil)
	b, merr := json.Marshal(rep)
	if merr != nil {
		return nil, merr
	}
	if err != nil {
		env.Logf("SQL task failed: %v", err)
		return middlemanager.Report(b), err
	}
	env.Logf("SQL task done: %d segments published", len(rep.Published))
	return middlemanager.Report(b), nil
}

// clusterEnv is msq.Env over the cluster's HTTP APIs and deep storage.
type clusterEnv struct {
	cfg  Config
	dir  string
	http *http.Client
}

func (e *clusterEnv) do(ctx context.Context, method, u string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

// UsedSegments asks the coordinator for the used segments overlapping iv.
func (e *clusterEnv) UsedSegments(ctx context.Context, ds string, iv interval.Interval) ([]*segment.DataSegment, error) {
	body, _ := json.Marshal([]string{iv.String()})
	b, code, err := e.do(ctx, http.MethodPost, e.cfg.Coordinator+"/svc/coordinator/v1/metadata/datasources/"+url.PathEscape(ds)+"/segments?full", body)
	if err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", ds, err)
	}
	if code == http.StatusNotFound || code == http.StatusNoContent {
		return nil, nil
	}
	if code != 200 {
		return nil, fmt.Errorf("list segments of %s: HTTP %d %s", ds, code, b)
	}
	var segs []*segment.DataSegment
	if err := json.Unmarshal(b, &segs); err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", ds, err)
	}
	return segs, nil
}

// OpenSegment downloads a segment from deep storage into the task's directory.
func (e *clusterEnv) OpenSegment(ctx context.Context, seg *segment.DataSegment) (*stseg.Segment, func(), error) {
	var ls deep.LoadSpec
	if err := json.Unmarshal([]byte(seg.LoadSpec), &ls); err != nil {
		return nil, nil, fmt.Errorf("segment %s: bad loadSpec: %v", seg.ID(), err)
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp(e.dir, "seg-*.seg")
	if err != nil {
		return nil, nil, err
	}
	path := f.Name()
	f.Close()
	if err := e.cfg.Storage.Get(ctx, ls, path); err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("fetch segment %s: %w", seg.ID(), err)
	}
	s, err := stseg.Open(path)
	if err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("open segment %s: %w", seg.ID(), err)
	}
	return s, func() { s.Close(); os.Remove(path) }, nil
}

// Uploader stores segment files in deep storage.
func (e *clusterEnv) Uploader() ingest.Uploader { return ingest.DeepUploader{Storage: e.cfg.Storage} }

// Publish publishes the segments in one atomic command through the coordinator.
// REPLACE's segments carry the lock's newer version, so the timeline makes them
// overshadow what they replace (tombstones included) in one step.
func (e *clusterEnv) Publish(ctx context.Context, ds string, segs []*segment.DataSegment, replace []interval.Interval) error {
	if len(segs) == 0 {
		return nil
	}
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
	buf.WriteString("]}")
	b, code, err := e.do(ctx, http.MethodPost, e.cfg.Coordinator+"/svc-internal/v1/segments/publish", buf.Bytes())
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if code != 200 {
		return fmt.Errorf("publish: HTTP %d %s", code, b)
	}
	return nil
}

// WaitLoaded waits until the broker lists every published data segment among
// its candidates (tombstones are never loaded).
func (e *clusterEnv) WaitLoaded(ctx context.Context, segs []*segment.DataSegment) error {
	want := map[string]bool{}
	byDS := map[string][]string{}
	for _, s := range segs {
		if s.IsTombstone() {
			continue
		}
		key := fmt.Sprintf("%s|%s|%d", s.Interval.String(), s.Version, s.ShardSpec.PartitionNum)
		want[s.DataSource+"|"+key] = true
		byDS[s.DataSource] = append(byDS[s.DataSource], s.Interval.String())
	}
	if len(want) == 0 {
		return nil
	}
	deadline := time.Now().Add(e.cfg.LoadTimeout)
	for {
		missing := 0
		for ds, ivs := range byDS {
			u := e.cfg.Broker + "/svc/v2/datasources/" + url.PathEscape(ds) + "/candidates?intervals=" + url.QueryEscape(strings.Join(ivs, ","))
			b, code, err := e.do(ctx, http.MethodGet, u, nil)
			var cands []struct {
				Interval        string            `json:"interval"`
				Version         string            `json:"version"`
				PartitionNumber int32             `json:"partitionNumber"`
				Locations       []json.RawMessage `json:"locations"`
			}
			seen := map[string]bool{}
			if err == nil && code == 200 && json.Unmarshal(b, &cands) == nil {
				for _, c := range cands {
					if len(c.Locations) > 0 {
						iv, perr := interval.Parse(c.Interval)
						if perr == nil {
							seen[fmt.Sprintf("%s|%s|%s|%d", ds, iv.String(), c.Version, c.PartitionNumber)] = true
						}
					}
				}
			}
			for k := range want {
				if strings.HasPrefix(k, ds+"|") && !seen[k] {
					missing++
				}
			}
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d published segments were not loaded within %s", missing, e.cfg.LoadTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
