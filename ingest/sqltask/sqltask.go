// Package sqltask runs SQL-based ingestion as a task: the `query_controller`
// task type that middle managers run with the msq engine, and the glue between
// that engine and the cluster (segment metadata and publishing through the
// coordinator, deep storage, waiting for historicals to load what was
// published). The HTTP endpoint POST /svc/v2/sql/task submits these tasks.
package sqltask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"strata/ingest"
	"strata/ingest/input"
	"strata/ingest/middlemanager"
	"strata/ingest/msq"
	"strata/ingest/msq/live"
	"strata/interval"
	"strata/props"
	"strata/segmeta"
	"strata/sql"
	"strata/storage/segment"
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
	// Now is CURRENT_TIMESTAMP in milliseconds, stamped by the overlord
	// leader when it accepted the statement (0: the start of the run).
	Now int64 `json:"sqlCurrentTimestamp,omitempty"`
}

// request is the msq request that runs the task's statement.
func (p Payload) request(taskID, version, tempDir string) msq.Request {
	req := msq.Request{SQL: p.SQL, Context: p.Context, Parameters: p.Parameters, TaskID: taskID, Version: version, TempDir: tempDir}
	if p.Now != 0 {
		req.Now = time.UnixMilli(p.Now)
	}
	return req
}

// Target parses the statement and returns the datasource it writes ("" for a
// SELECT), or a syntax error with line and column.
func Target(sqlText string) (string, error) {
	script, err := sql.ParseScript(sqlText)
	if err != nil {
		return "", err
	}
	return target(script.Statement)
}

// Check is Target plus the check Druid's broker makes before it creates a
// task: every datasource the statement reads must exist, that is, exists
// must report it has used segments. A missing one gives the error the task
// itself would fail with (see MissingTable). The target need not exist.
func Check(sqlText string, exists func(dataSource string) bool) (string, error) {
	script, err := sql.ParseScript(sqlText)
	if err != nil {
		return "", err
	}
	ds, err := target(script.Statement)
	if err != nil {
		return "", err
	}
	if err := MissingTable(script.Statement, exists); err != nil {
		return "", err
	}
	return ds, nil
}

// MissingTable returns, for the first table stmt reads (in the msq planner's
// order) that exists reports missing, the planner's own error:
// "Object 'x' not found (line [l], column [c])". Names the planner refuses
// for other reasons (schemas other than druid: lookup, sys,
// INFORMATION_SCHEMA) are left to it; a statement naming them fails anyway.
func MissingTable(stmt sql.Statement, exists func(dataSource string) bool) error {
	var err error
	known := map[string]bool{}
	sql.BaseTables(stmt, func(ref *sql.TableRef) bool {
		if len(ref.Name) > 2 || (len(ref.Name) == 2 && ref.Name[0].Name != "druid") {
			return true
		}
		name := ref.Name[len(ref.Name)-1].Name
		found, asked := known[name]
		if !asked {
			found = exists(name)
			known[name] = found
		}
		if found {
			return true
		}
		err = errors.New(sql.AtPos(ref, fmt.Sprintf("Object '%s' not found", name)))
		return false
	})
	return err
}

func target(stmt sql.Statement) (string, error) {
	switch st := stmt.(type) {
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

var cluster ingest.ClusterSlot

// Configure sets the cluster access of the SQL tasks of the worker at host
// from properties; brokers lists the live brokers they wait on
// (ingest.ClusterSlot.Configure).
func Configure(p *props.Properties, host string, brokers func() []string) error {
	return cluster.Configure(p, host, brokers, true)
}

// Forget drops the cluster access of the worker at host (stopped).
func Forget(host string) { cluster.SetFor(host, nil) }

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
	if _, ok, err := AsOf(p.SQL, p.Context); err != nil {
		return nil, err
	} else if ok && target != "" {
		return nil, errAsOfWrites
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
	c := cluster.Get(env.Host())
	if c == nil {
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
	ce := &clusterEnv{c: c, dir: filepath.Join(env.Dir(), "segments"), task: env}
	if at, ok, err := AsOf(p.SQL, p.Context); err != nil {
		return nil, err
	} else if ok {
		if t.DataSource != SelectDataSource {
			return nil, errAsOfWrites
		}
		// A SELECT as of a past moment reads the segments used then.
		ce.past = c.PastAt(at)
		env.Logf("reading the data as of %s", at)
	}
	defer os.RemoveAll(ce.dir)
	req := p.request(t.ID, version, env.Dir())
	publish := func(ctx context.Context, b []byte) error { return env.PublishReport(ctx, middlemanager.Report(b)) }
	rep, b, err := runQuery(ctx, req, ce, publish, live.Period, env.Logf)
	if err != nil {
		env.Logf("SQL task failed: %v", err)
		return middlemanager.Report(b), err
	}
	env.Logf("SQL task done: %d segments published", len(rep.Published))
	return middlemanager.Report(b), nil
}

// runQuery runs a statement, publishing its live multiStageQuery report
// every period while it runs, and returns the final report and its JSON.
// The final report of a failed query is published too: the worker keeps
// only the report of a task that succeeds, and the failure's errorReport
// must replace the last live (RUNNING) one.
func runQuery(ctx context.Context, req msq.Request, env msq.Env, publish live.Publish, period time.Duration,
	logf func(string, ...any)) (msq.Report, []byte, error) {
	var mu sync.Mutex
	var latest *msq.Report
	progress := func(r msq.Report) {
		mu.Lock()
		latest = &r
		mu.Unlock()
	}
	snapshot := func() ([]byte, string) {
		mu.Lock()
		r := latest
		mu.Unlock()
		if r == nil || r.MultiStageQuery.Payload.Status.Status != msq.StateRunning {
			return nil, ""
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, ""
		}
		return b, r.ProgressKey()
	}
	pub := live.Start(ctx, period, snapshot, publish, logf)
	rep, err := msq.Run(ctx, req, env, progress)
	pub.Stop()
	b, merr := json.Marshal(rep)
	if merr != nil {
		return rep, nil, merr
	}
	if err != nil {
		// A shutdown cancelled ctx; the failure is worth recording anyway.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if perr := publish(pctx, b); perr != nil && logf != nil {
			logf("Publishing the final report: %v", perr)
		}
		cancel()
	}
	return rep, b, err
}

// clusterEnv is msq.Env over the shared ingestion cluster access.
type clusterEnv struct {
	c    *ingest.Cluster
	dir  string
	past *ingest.PastSegments // a SELECT with asOf: the timeline of that moment
	task middlemanager.Env    // records the publish and hand-off times
}

func (e *clusterEnv) UsedSegments(ctx context.Context, ds string, iv interval.Interval) ([]*segmeta.DataSegment, error) {
	if e.past != nil {
		return e.past.UsedSegments(ctx, ds, iv)
	}
	return e.c.UsedSegments(ctx, ds, iv)
}

func (e *clusterEnv) OpenSegment(ctx context.Context, seg *segmeta.DataSegment) (*segment.Segment, func(), error) {
	s, release, err := e.c.OpenSegment(ctx, e.dir, seg)
	if err != nil && e.past != nil {
		err = e.past.Killed(seg, err)
	}
	return s, release, err
}

// errAsOfWrites refuses asOf on INSERT and REPLACE: what they overwrite and
// the partitions they allocate are decided on the current timeline, which
// reading the tables as of another moment would contradict.
var errAsOfWrites = errors.New("asOf applies to SELECT statements only: an INSERT or REPLACE reads the current timeline")

// AsOf reads the context key asOf of a SQL statement, from a SET statement
// of the script or else the request's context (SET overrides the context, as
// for every key): a Raft log index (a whole number, or a string of digits)
// or an ISO-8601 time, as a string.
func AsOf(sqlText string, ctx map[string]any) (string, bool, error) {
	if script, err := sql.ParseScript(sqlText); err == nil { // a script that does not parse fails elsewhere
		for i := len(script.Sets) - 1; i >= 0; i-- {
			st := script.Sets[i]
			if st.Key.Name != "asOf" {
				continue
			}
			switch x := st.Value.(type) {
			case *sql.StringLit:
				return x.Value, true, nil
			case *sql.NumberLit:
				return x.Text, true, nil
			}
			return "", false, fmt.Errorf("SET asOf: the value must be a Raft log index or an ISO-8601 time string")
		}
	}
	v, ok := ctx["asOf"]
	if !ok || v == nil {
		return "", false, nil
	}
	switch x := v.(type) {
	case string:
		return x, true, nil
	case float64:
		if x >= 0 && x == math.Trunc(x) && x < 1<<53 {
			return strconv.FormatInt(int64(x), 10), true, nil
		}
	case json.Number:
		return x.String(), true, nil
	}
	return "", false, fmt.Errorf("asOf must be a Raft log index or an ISO-8601 time, got %v", v)
}

func (e *clusterEnv) Uploader() ingest.Uploader { return e.c.Uploader() }

// Publish publishes atomically. REPLACE's segments carry the lock's newer
// version, so the timeline makes them overshadow what they replace (tombstones
// included) in one step; replaceIntervals need no further action.
func (e *clusterEnv) Publish(ctx context.Context, ds string, segs []*segmeta.DataSegment, _ []interval.Interval) error {
	start := time.Now()
	if err := e.c.Publish(ctx, ds, segs); err != nil {
		return err
	}
	e.task.Published(ds, segs, start)
	return nil
}

func (e *clusterEnv) WaitLoaded(ctx context.Context, segs []*segmeta.DataSegment) error {
	err := e.c.WaitLoaded(ctx, segs, e.c.LoadTimeout)
	if len(segs) > 0 {
		e.task.HandedOff(ctx, segs[0].DataSource, len(segs), err)
	}
	return err
}

// InputSources returns the input sources the task's statement reads.
func (runner) InputSources(t middlemanager.Task) ([]input.Source, error) {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil {
		return nil, fmt.Errorf("query_controller task: %v", err)
	}
	return msq.InputSources(p.SQL, p.Parameters)
}

// ReadTables returns the datasources a statement reads (tables of the
// druid schema, in the planner's order, each once): what the node that
// takes the task authorizes (READ on each).
func ReadTables(sqlText string) ([]string, error) {
	script, err := sql.ParseScript(sqlText)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	sql.BaseTables(script.Statement, func(ref *sql.TableRef) bool {
		if len(ref.Name) > 2 || (len(ref.Name) == 2 && ref.Name[0].Name != "druid") {
			return true
		}
		if name := ref.Name[len(ref.Name)-1].Name; !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		return true
	})
	return out, nil
}
