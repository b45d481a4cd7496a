package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"strata/storage/deep"
)

const replaceDataSource = "chaos_wiki"

// DataPlaneReplace re-ingests byte-identical data with REPLACE ... OVERWRITE
// ALL in a loop (SQL-based ingestion on the middle managers) while clients
// query count(*) and sum(added) through the brokers, over all days and per
// day, and historicals, brokers and middle managers are killed (-9) and
// loaded segment files corrupted in a historical's cache. The data never
// changes, so every answer must equal the reference answer, whichever version
// of the segments serves it: a 200 with anything else (no rows, some days
// missing, a changed sum) is a wrong answer; an error is unavailability.
func DataPlaneReplace(ctx context.Context, o *Options) *Result {
	res := &Result{}
	scale := max(1, o.Scale)
	c, hist, brokers, mms, err := startDataCluster(ctx, o, o.controlNodes(), 2, 2, 2)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer c.Close()
	d := &replaceRun{o: o, c: c, res: res, hist: hist, brokers: brokers, mms: mms, client: NewHTTPClient(o.Net, 10*time.Second)}
	const days = 7
	rowsPerDay := 1500 * scale
	if err := d.writeData(days, rowsPerDay); err != nil {
		res.Err = err.Error()
		return res
	}
	// The first REPLACE loads the data; its answers become the reference.
	o.logf("  loading %d rows over %d days", days*rowsPerDay, days)
	if ok, why := d.replace(ctx, rowsPerDay/2+1); !ok {
		res.Err = "initial ingestion failed: " + why
		return res
	}
	if err := d.reference(ctx); err != nil {
		res.Err = err.Error()
		return res
	}

	runCtx, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // REPLACE in a loop
		defer wg.Done()
		for runCtx.Err() == nil {
			ok, why := d.replace(runCtx, rowsPerDay/2+1)
			d.mu.Lock()
			res.Ops++
			if ok {
				res.Acked++
			} else if runCtx.Err() == nil {
				d.failedReplaces++
				d.lastReplaceErr = why
			}
			d.mu.Unlock()
		}
	}()
	for i := 0; i < 3*scale; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); d.queryLoop(runCtx, i) }()
	}
	nem := &nemesis{rng: rand.New(rand.NewSource(o.Seed)), pause: 2 * time.Second, res: res, o: o}
	nem.actions = d.faults(nem.rng)
	nem.loop(runCtx)
	wg.Wait()
	res.MaxUnavail = d.avail.finish(time.Now())
	if d.failedReplaces > 0 {
		o.logf("  %d REPLACE tasks failed (the last: %s)", d.failedReplaces, d.lastReplaceErr)
	}

	// Everything back up: the data must be served again, exactly.
	for _, p := range c.Procs {
		if !p.Running() {
			p.Start()
		}
	}
	if err := d.settle(ctx, 90*time.Second); err != nil {
		res.Lost++
		res.example("after the faults: %v", err)
	}
	o.logf("  data plane: %d REPLACE (%d succeeded), %d queries (%d wrong, %d unavailable)", res.Ops-d.queries, res.Acked, d.queries, res.Wrong, d.unavailable)
	return res
}

// controlNodes is how many control nodes the data-plane clusters have: one
// in the short run (two cores), three in the long one, where killing one
// makes the others elect a leader under ingestion.
func (o *Options) controlNodes() int {
	if o.Scale > 1 {
		return 3
	}
	return 1
}

// startDataCluster starts control nodes, historicals, middle managers and
// brokers (which query the historicals and the middle managers), with short
// poll periods so that a run sees many version switches.
func startDataCluster(ctx context.Context, o *Options, control, historicals, brokers, middleManagers int) (c *Cluster, hist, brk, mms []*Proc, err error) {
	if c, err = NewCluster(o.Bin, o.Dir, o.Net); err != nil {
		return nil, nil, nil, nil, err
	}
	c.Props = append(append([]string(nil), raftTimings...),
		"svc.worker.heartbeatTimeout=4s", "svc.coordinator.startDelay=1s",
		"svc.historical.pollPeriod=100ms", "svc.broker.pollPeriod=100ms", "svc.worker.heartbeatPeriod=300ms",
		"svc.segmentCache.dropSegmentDelayMillis=5000")
	fail := func(e error) (*Cluster, []*Proc, []*Proc, []*Proc, error) {
		c.Close()
		return nil, nil, nil, nil, e
	}
	if err := c.AddControl(control); err != nil {
		return fail(err)
	}
	for i := 1; i <= historicals; i++ {
		p, err := c.AddHistorical(fmt.Sprintf("historical%d", i))
		if err != nil {
			return fail(err)
		}
		hist = append(hist, p)
	}
	for i := 1; i <= middleManagers; i++ {
		p, err := c.AddMiddleManager(fmt.Sprintf("middlemanager%d", i), "svc.worker.capacity=2")
		if err != nil {
			return fail(err)
		}
		mms = append(mms, p)
	}
	for i := 1; i <= brokers; i++ {
		p, err := c.AddBroker(fmt.Sprintf("broker%d", i), append(append([]*Proc(nil), hist...), mms...))
		if err != nil {
			return fail(err)
		}
		brk = append(brk, p)
	}
	// SQL tasks wait for their segments to load by asking a broker.
	var urls []string
	for _, b := range brk {
		urls = append(urls, b.URL())
	}
	for _, p := range mms {
		p.Set("svc.router.brokerUrls=" + strings.Join(urls, ","))
	}
	if err := c.StartAll(); err != nil {
		return fail(err)
	}
	if _, err := c.WaitLeader(ctx, 60*time.Second); err != nil {
		return fail(err)
	}
	for _, p := range c.Procs {
		if err := c.WaitUp(ctx, p, 60*time.Second); err != nil {
			return fail(err)
		}
	}
	return c, hist, brk, mms, nil
}

type replaceRun struct {
	o       *Options
	c       *Cluster
	res     *Result
	hist    []*Proc
	brokers []*Proc
	mms     []*Proc
	client  *httpClient
	data    string
	avail   availability

	queriesJSON []string // the queries clients send
	refs        [][]byte // their reference answers
	wantRows    int64
	wantAdded   int64
	perDay      map[string][2]int64

	mu             sync.Mutex
	queries        int
	unavailable    int
	failedReplaces int
	lastReplaceErr string
	running        string // id of the REPLACE task running now
}

// writeData writes the input file: rowsPerDay rows on each of days days,
// and remembers the totals the reference answers must show.
func (d *replaceRun) writeData(days, rowsPerDay int) error {
	d.data = filepath.Join(d.o.Dir, "wiki.json")
	f, err := os.Create(d.data)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	d.perDay = map[string][2]int64{}
	for day := 0; day < days; day++ {
		t0 := time.Date(2024, 1, 1+day, 0, 0, 0, 0, time.UTC)
		var added int64
		for i := 0; i < rowsPerDay; i++ {
			ts := t0.Add(time.Duration(i) * 24 * time.Hour / time.Duration(rowsPerDay))
			a := int64((day*rowsPerDay+i)*7%1000 + 1)
			fmt.Fprintf(w, `{"timestamp":%q,"page":"page-%d","added":%d}`+"\n", ts.Format(time.RFC3339Nano), i%37, a)
			added += a
		}
		d.perDay[t0.Format("2006-01-02T15:04:05.000Z")] = [2]int64{int64(rowsPerDay), added}
		d.wantRows += int64(rowsPerDay)
		d.wantAdded += added
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replace runs one REPLACE of the whole datasource from the input file and
// waits for the task to end; true when it succeeded.
func (d *replaceRun) replace(ctx context.Context, rowsPerSegment int) (bool, string) {
	sql := fmt.Sprintf(`REPLACE INTO %s OVERWRITE ALL
SELECT TIME_PARSE("timestamp") AS __time, page, added
FROM TABLE(EXTERN('{"type":"local","files":[%q]}', '{"type":"json"}',
  '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"}]'))
PARTITIONED BY DAY`, replaceDataSource, d.data)
	body, _ := json.Marshal(map[string]any{"query": sql, "context": map[string]any{"rowsPerSegment": rowsPerSegment}})
	id, why := submitTask(ctx, d.c, d.client, "/svc/v2/sql/task", body)
	if id == "" {
		return false, why
	}
	d.mu.Lock()
	d.running = id
	d.mu.Unlock()
	defer func() { d.mu.Lock(); d.running = ""; d.mu.Unlock() }()
	return waitTask(ctx, d.c, d.client, id, 5*time.Minute)
}

// submitTask posts a task to the control nodes (trying each until one takes
// it) and returns its id, or "" and why.
func submitTask(ctx context.Context, c *Cluster, hc *httpClient, path string, body []byte) (string, string) {
	why := "no control node took the task"
	for attempt := 0; attempt < 30 && ctx.Err() == nil; attempt++ {
		p := c.Control[attempt%len(c.Control)]
		code, resp, err := hc.do(ctx, "POST", p.URL()+path, body, nil)
		if err != nil {
			why = err.Error()
		} else if code != 200 {
			why = fmt.Sprintf("status %d: %s", code, abbreviate(resp))
			if code >= 400 && code < 500 {
				return "", why
			}
		} else {
			// A task's id ("taskId", or "task" for a shutdown), or a supervisor's ("id").
			var out struct {
				TaskID string `json:"taskId"`
				Task   string `json:"task"`
				ID     string `json:"id"`
			}
			json.Unmarshal(resp, &out)
			return out.TaskID + out.Task + out.ID, ""
		}
		sleep(ctx, 500*time.Millisecond)
	}
	return "", why
}

// taskStatus is the part of a task's status the harness reads.
type taskStatus struct {
	Status   string  `json:"status"`
	ErrorMsg *string `json:"errorMsg"`
	Location struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	} `json:"location"`
}

func getTask(ctx context.Context, c *Cluster, hc *httpClient, id string) (taskStatus, bool) {
	var out struct {
		Status *taskStatus `json:"status"`
	}
	for _, p := range c.Control {
		code, body, err := hc.do(ctx, "GET", p.URL()+"/svc/indexer/v1/task/"+id+"/status", nil, nil)
		if err == nil && code == 200 && json.Unmarshal(body, &out) == nil && out.Status != nil {
			return *out.Status, true
		}
	}
	return taskStatus{}, false
}

// waitTask polls a task until it ends; true when it succeeded.
func waitTask(ctx context.Context, c *Cluster, hc *httpClient, id string, timeout time.Duration) (bool, string) {
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		st, ok := getTask(ctx, c, hc, id)
		if ok {
			switch st.Status {
			case "SUCCESS":
				return true, ""
			case "FAILED":
				msg := ""
				if st.ErrorMsg != nil {
					msg = *st.ErrorMsg
				}
				return false, "task " + id + " failed: " + msg
			}
		}
		sleep(ctx, 250*time.Millisecond)
	}
	return false, "task " + id + " did not end in time"
}

// The two queries: totals over every day, and one row per day.
func (d *replaceRun) queryTexts() []string {
	q := `{"queryType":"timeseries","dataSource":%q,"intervals":["2024-01-01/2024-02-01"],"granularity":%q,
	  "aggregations":[{"type":"count","name":"rows"},{"type":"longSum","name":"added","fieldName":"added"}]}`
	return []string{fmt.Sprintf(q, replaceDataSource, "all"), fmt.Sprintf(q, replaceDataSource, "day")}
}

// reference waits until the brokers answer the queries with the totals the
// input file holds and keeps those answers as the reference.
func (d *replaceRun) reference(ctx context.Context) error {
	d.queriesJSON = d.queryTexts()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		d.refs = nil
		for _, q := range d.queriesJSON {
			code, body, err := d.client.do(ctx, "POST", d.brokers[0].URL()+"/svc/v2/", []byte(q), nil)
			if err != nil || code != 200 {
				last = fmt.Sprintf("%d %v %s", code, err, abbreviate(body))
				break
			}
			if why := d.matchesInput(body); why != "" {
				last = why
				break
			}
			d.refs = append(d.refs, body)
		}
		if len(d.refs) == len(d.queriesJSON) {
			return d.replicated(ctx, deadline)
		}
		sleep(ctx, 300*time.Millisecond)
	}
	return fmt.Errorf("the brokers never answered with the loaded data (last: %s)", last)
}

// replicated waits until the coordinator reports every segment of the data
// source loaded on all its replicas. The faults start only then: a segment
// that a single historical holds is lost with it, and the brokers, which know
// only what data servers announce (as Druid's), would then answer without it:
// the run measures a cluster that has finished loading, not one mid-way
// through its very first load (the short run once killed a historical 50 ms
// after the reference, while a day's only copy was on it).
func (d *replaceRun) replicated(ctx context.Context, deadline time.Time) error {
	last := "no answer"
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p := d.c.Leader(ctx); p != nil {
			code, body, err := d.client.do(ctx, "GET", p.URL()+"/svc/coordinator/v1/loadstatus?full", nil, nil)
			var left map[string]map[string]int
			switch {
			case err != nil:
				last = err.Error()
			case code != 200 || json.Unmarshal(body, &left) != nil:
				last = fmt.Sprintf("%d %s", code, abbreviate(body))
			default:
				n := 0
				for _, perDS := range left {
					n += perDS[replaceDataSource]
				}
				if n == 0 {
					return nil
				}
				last = fmt.Sprintf("%d replicas left to load", n)
			}
		}
		sleep(ctx, 200*time.Millisecond)
	}
	return fmt.Errorf("the loaded data never reached its replicas (last: %s)", last)
}

// matchesInput checks an answer against the input file's totals, so that
// the reference itself is known right.
func (d *replaceRun) matchesInput(body []byte) string {
	var rows []struct {
		Timestamp string `json:"timestamp"`
		Result    struct{ Rows, Added int64 }
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		return err.Error()
	}
	var total [2]int64
	for _, r := range rows {
		if len(rows) > 1 && d.perDay[r.Timestamp] != [2]int64{r.Result.Rows, r.Result.Added} {
			return fmt.Sprintf("day %s: %d rows, added %d; the input has %v", r.Timestamp, r.Result.Rows, r.Result.Added, d.perDay[r.Timestamp])
		}
		total[0] += r.Result.Rows
		total[1] += r.Result.Added
	}
	if total != [2]int64{d.wantRows, d.wantAdded} {
		return fmt.Sprintf("%d rows, added %d; the input has %d rows, added %d", total[0], total[1], d.wantRows, d.wantAdded)
	}
	return ""
}

// queryLoop sends the queries to random brokers (another one when a broker
// cannot be reached, as a client behind a load balancer would) and
// classifies each answer.
func (d *replaceRun) queryLoop(ctx context.Context, id int) {
	rng := rand.New(rand.NewSource(d.o.Seed + int64(id)))
	for n := 0; ctx.Err() == nil; n++ {
		qi := n % len(d.queriesJSON)
		b := rng.Intn(len(d.brokers))
		var code int
		var body []byte
		var err error
		for try := 0; try < len(d.brokers); try++ {
			code, body, err = d.client.do(ctx, "POST", d.brokers[(b+try)%len(d.brokers)].URL()+"/svc/v2/", []byte(d.queriesJSON[qi]), nil)
			if err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		out, why := Classify(code, body, err, d.refs[qi])
		d.avail.record(id, out == Correct, time.Now())
		d.mu.Lock()
		d.queries++
		d.res.Ops++
		switch out {
		case Wrong:
			d.res.Wrong++
			d.res.example("%s %s: %s", time.Now().Format("15:04:05.000"), []string{"totals", "per day"}[qi], why)
		case Unavailable:
			d.unavailable++
		}
		d.mu.Unlock()
		sleep(ctx, 10*time.Millisecond)
	}
}

// settle waits until every query answers the reference again.
func (d *replaceRun) settle(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ok := true
		for qi, q := range d.queriesJSON {
			for _, b := range d.brokers {
				code, body, err := d.client.do(ctx, "POST", b.URL()+"/svc/v2/", []byte(q), nil)
				if out, why := Classify(code, body, err, d.refs[qi]); out != Correct {
					ok, last = false, fmt.Sprintf("%s: %v %s", b.Name, out, why)
				}
			}
		}
		if ok {
			return nil
		}
		sleep(ctx, 500*time.Millisecond)
	}
	return fmt.Errorf("the data is not served as loaded %s after the faults ended (last: %s)", timeout, last)
}

func (d *replaceRun) faults(rng *rand.Rand) []action {
	var mu sync.Mutex
	killOne := func(ps []*Proc) func(context.Context) error {
		return func(ctx context.Context) error {
			mu.Lock()
			p := ps[rng.Intn(len(ps))]
			mu.Unlock()
			p.Kill()
			hold(ctx, jitter(rng, &mu, 2*time.Second))
			if err := p.Start(); err != nil {
				return err
			}
			return d.c.WaitUp(context.Background(), p, 60*time.Second)
		}
	}
	return []action{
		{"kill-9-historical", killOne(d.hist)},
		{"kill-9-broker", killOne(d.brokers)},
		{"kill-9-middlemanager", func(ctx context.Context) error {
			// The one running the current REPLACE, when there is one.
			mu.Lock()
			target := d.mms[rng.Intn(len(d.mms))]
			mu.Unlock()
			d.mu.Lock()
			id := d.running
			d.mu.Unlock()
			if id != "" {
				if st, ok := getTask(ctx, d.c, d.client, id); ok {
					for _, p := range d.mms {
						if p.HTTP == fmt.Sprintf("%s:%d", st.Location.Host, st.Location.Port) {
							target = p
						}
					}
				}
			}
			return killOne([]*Proc{target})(ctx)
		}},
		{"corrupt-segment-file", func(ctx context.Context) error {
			mu.Lock()
			p := d.hist[rng.Intn(len(d.hist))]
			mu.Unlock()
			file, err := corruptNewestFile(filepath.Join(p.Data, "segment-cache"), rng, &mu)
			if err != nil {
				return err
			}
			d.o.logf("    flipped 2 bytes of %s", file)
			hold(ctx, 3*time.Second) // queries read the damaged file meanwhile
			return nil
		}},
	}
}

// corruptNewestFile flips two adjacent bytes in the middle of one of the
// most recently written segment files under dir (a segment of the version being
// served), as a disk or a stray write would.
func corruptNewestFile(dir string, rng *rand.Rand, mu *sync.Mutex) (string, error) {
	type file struct {
		path string
		mod  time.Time
		size int64
	}
	var files []file
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() != deep.SegmentFile {
			return nil
		}
		if info, err := e.Info(); err == nil && info.Size() > 256 {
			files = append(files, file{path, info.ModTime(), info.Size()})
		}
		return nil
	})
	if len(files) == 0 {
		return "", fmt.Errorf("no segment file under %s", dir)
	}
	newest := files[0]
	for _, f := range files {
		if f.mod.After(newest.mod) {
			newest = f
		}
	}
	// Any file of the newest version (written within a second of the newest).
	var recent []file
	for _, f := range files {
		if newest.mod.Sub(f.mod) < time.Second {
			recent = append(recent, f)
		}
	}
	mu.Lock()
	f := recent[rng.Intn(len(recent))]
	off := f.size/4 + rng.Int63n(f.size/2)
	mu.Unlock()
	fh, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	b := make([]byte, 2)
	if _, err := fh.ReadAt(b, off); err != nil {
		return "", err
	}
	b[0], b[1] = ^b[0], ^b[1]
	if _, err := fh.WriteAt(b, off); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s at offset %d", f.path, off), nil
}
