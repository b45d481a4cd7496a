package msq

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"strata/interval"
	"strata/segmeta"
)

// Report is the task report of a query (Druid's "multiStageQuery" report).
// It marshals to the JSON the reports endpoint returns.
type Report struct {
	MultiStageQuery ReportBody `json:"multiStageQuery"`
	// Published lists the segments the query published (INSERT/REPLACE,
	// including tombstones); not part of the JSON.
	Published []*segmeta.DataSegment `json:"-"`
}

// ReportBody is the value under "multiStageQuery".
type ReportBody struct {
	Type    string  `json:"type"`
	TaskID  string  `json:"taskId"`
	Payload Payload `json:"payload"`
}

// Payload holds status, stages, counters and results.
type Payload struct {
	Status   Status                               `json:"status"`
	Stages   []StageReport                        `json:"stages"`
	Counters map[string]map[string]map[string]any `json:"counters"`
	Results  *Results                             `json:"results,omitempty"`
}

// Status is payload.status.
type Status struct {
	Status                  string                    `json:"status"`
	StartTime               string                    `json:"startTime,omitempty"`
	DurationMs              int64                     `json:"durationMs"`
	Workers                 map[string][]WorkerStatus `json:"workers,omitempty"`
	PendingTasks            int                       `json:"pendingTasks"`
	RunningTasks            int                       `json:"runningTasks"`
	SegmentLoadWaiterStatus *SegmentLoadStatus        `json:"segmentLoadWaiterStatus,omitempty"`
	// SegmentLoadStatus repeats SegmentLoadWaiterStatus under the name the
	// API spec (§2.11) gives it; Druid itself writes the former.
	SegmentLoadStatus *SegmentLoadStatus `json:"segmentLoadStatus,omitempty"`
	SegmentReport     *SegmentReport     `json:"segmentReport,omitempty"`
	ErrorReport       *ErrorReport       `json:"errorReport,omitempty"`
	Warnings          []ErrorReport      `json:"warnings,omitempty"`
}

// WorkerStatus is one worker task.
type WorkerStatus struct {
	WorkerID string `json:"workerId"`
	State    string `json:"state"`
	// Status repeats State under the name the API spec (§2.11) gives it.
	Status     string `json:"status"`
	DurationMs int64  `json:"durationMs"`
	PendingMs  int64  `json:"pendingMs"`
}

// SegmentLoadStatus is payload.status.segmentLoadWaiterStatus.
type SegmentLoadStatus struct {
	State             string `json:"state"`
	DataSource        string `json:"dataSource"`
	StartTime         string `json:"startTime"`
	Duration          int64  `json:"duration"`
	TotalSegments     int    `json:"totalSegments"`
	UsedSegments      int    `json:"usedSegments"`
	PrecachedSegments int    `json:"precachedSegments"`
	OnDemandSegments  int    `json:"onDemandSegments"`
	PendingSegments   int    `json:"pendingSegments"`
	UnknownSegments   int    `json:"unknownSegments"`
	// ErrorMessage says why a wait failed or timed out (no broker known,
	// none answering), beyond Druid's fields.
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// SegmentReport tells which shard spec the segments got and why.
type SegmentReport struct {
	ShardSpec string `json:"shardSpec"`
	Details   string `json:"details"`
}

// ErrorReport is an error or a warning.
type ErrorReport struct {
	TaskID              string         `json:"taskId"`
	Host                string         `json:"host,omitempty"`
	StageNumber         *int           `json:"stageNumber,omitempty"`
	Error               map[string]any `json:"error"`
	ExceptionStackTrace string         `json:"exceptionStackTrace,omitempty"`
}

// StageReport is one stage.
type StageReport struct {
	StageNumber    int            `json:"stageNumber"`
	Definition     map[string]any `json:"definition"`
	Phase          string         `json:"phase,omitempty"`
	WorkerCount    int            `json:"workerCount,omitempty"`
	PartitionCount *int           `json:"partitionCount,omitempty"`
	Sort           bool           `json:"sort,omitempty"`
	StartTime      string         `json:"startTime,omitempty"`
	Duration       *int64         `json:"duration,omitempty"`
}

// Results holds the rows of a SELECT.
type Results struct {
	Signature        []map[string]any `json:"signature"`
	SQLTypeNames     []string         `json:"sqlTypeNames"`
	Results          [][]any          `json:"results"`
	ResultsTruncated bool             `json:"resultsTruncated"`
}

// State values.
const (
	StateRunning = "RUNNING"
	StateSuccess = "SUCCESS"
	StateFailed  = "FAILED"
	// StateWaiting is segmentLoadWaiterStatus.state while published segments
	// are not yet all loaded.
	StateWaiting = "WAITING"
)

// Stage phases.
const (
	PhaseNew          = "NEW"
	PhaseReadingInput = "READING_INPUT"
	PhasePostReading  = "POST_READING"
	PhaseResultsReady = "RESULTS_READY"
	PhaseFinished     = "FINISHED"
	PhaseFailed       = "FAILED"
)

// Failed reports whether the query failed.
func (r *Report) Failed() bool { return r.MultiStageQuery.Payload.Status.Status == StateFailed }

// Fault returns the error of a failed query (nil otherwise).
func (r *Report) Fault() map[string]any {
	if e := r.MultiStageQuery.Payload.Status.ErrorReport; e != nil {
		return e.Error
	}
	return nil
}

// MarshalJSON keeps the payload's counters non-nil.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	if r.MultiStageQuery.Payload.Counters == nil {
		r.MultiStageQuery.Payload.Counters = map[string]map[string]map[string]any{}
	}
	if r.MultiStageQuery.Payload.Stages == nil {
		r.MultiStageQuery.Payload.Stages = []StageReport{}
	}
	return json.Marshal(plain(r))
}

// tracker builds the report while the query runs. All methods are safe for
// concurrent use.
type tracker struct {
	mu       sync.Mutex
	taskID   string
	start    time.Time
	started  bool
	status   string
	workers  int
	stages   []*stageTrack
	err      *ErrorReport
	warnings []ErrorReport
	loadStat *SegmentLoadStatus
	loadFrom time.Time // start of the wait for segments to load
	segRep   *SegmentReport
	results  *Results
	progress func(Report)
	lastSent time.Time
	sendMu   sync.Mutex // progress is called by one goroutine at a time
	// tick, while running, sends a snapshot every tickPeriod so that the
	// counters of long splits reach progress between phase changes.
	tickStop chan struct{}
	tickDone chan struct{}
}

// tickPeriod is how often a running query sends progress snapshots besides
// those of phase changes and finished splits.
const tickPeriod = time.Second

// stageTrack is the live state of one stage.
type stageTrack struct {
	def        map[string]any
	phase      string
	workers    int
	partitions int
	hasParts   bool
	sort       bool
	start      time.Time
	end        time.Time
	counters   map[int]*workerCounters
}

// workerCounters are the counters of one worker in one stage.
type workerCounters struct {
	mu       sync.Mutex
	inputs   map[int]*inputCounter
	output   map[int]*chanStats // by partition index
	outKeys  []int64
	segGen   *segGenCounter
	warnings map[string]int64
}

type inputCounter struct {
	rows, bytes, files, totalFiles, frames int64
	kind                                   string // external, table, stage
	byPart                                 map[int]*chanStats
}

// addPart counts rows read from the partition of split sp; done adds the
// partition's bytes and frames once it has been read to the end (rows are
// counted along the way, for live reports). The caller holds the worker
// counters' lock.
func (in *inputCounter) addPart(sp *split, rows int64, done bool) {
	s := in.byPart[sp.pidx]
	if s == nil {
		s = &chanStats{}
		in.byPart[sp.pidx] = s
	}
	s.rows += rows
	if done {
		s.bytes += sp.part.bytes
		s.frames += sp.part.nframes
	}
}

// liveFlushRows is how many rows a reader counts before adding them to the
// shared counters, so that live reports move during long splits without a
// lock per row.
const liveFlushRows = 1 << 16

type segGenCounter struct {
	rowsProcessed, rowsPersisted, rowsMerged, rowsPushed int64
}

func newTracker(taskID string, progress func(Report)) *tracker {
	return &tracker{taskID: taskID, status: StateRunning, progress: progress}
}

// startTicker sends a snapshot every period until finish.
func (t *tracker) startTicker(period time.Duration) {
	if t.progress == nil {
		return
	}
	t.tickStop, t.tickDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(t.tickDone)
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-t.tickStop:
				return
			case <-tk.C:
				t.notify(false)
			}
		}
	}()
}

// finish stops the ticker and sends the final snapshot: nothing reaches
// progress after it.
func (t *tracker) finish() {
	if t.tickStop != nil {
		close(t.tickStop)
		<-t.tickDone
		t.tickStop = nil
	}
	t.notify(true)
}

// loadWait records that the query waits for its n published segments to
// load: Druid's WAITING state, every segment's state still unknown.
func (t *tracker) loadWait(dataSource string, start time.Time, n int) {
	t.mu.Lock()
	t.loadStat = &SegmentLoadStatus{State: StateWaiting, DataSource: dataSource, StartTime: isoTime(start),
		TotalSegments: n, UnknownSegments: n}
	t.loadFrom = start
	t.mu.Unlock()
	t.notify(true)
}

func (t *tracker) addStage(def map[string]any, sort bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stages = append(t.stages, &stageTrack{def: def, phase: PhaseNew, sort: sort, counters: map[int]*workerCounters{}})
	return len(t.stages) - 1
}

func (t *tracker) begin() {
	t.mu.Lock()
	t.start, t.started = time.Now(), true
	t.mu.Unlock()
	t.notify(true)
}

func (t *tracker) setWorkers(n int) {
	t.mu.Lock()
	if n > t.workers {
		t.workers = n
	}
	t.mu.Unlock()
}

func (t *tracker) stagePhase(i int, phase string) {
	t.mu.Lock()
	st := t.stages[i]
	now := time.Now()
	if st.phase == PhaseNew && phase != PhaseNew {
		st.start = now
	}
	if phase == PhaseResultsReady || phase == PhaseFinished || phase == PhaseFailed {
		if st.end.IsZero() {
			st.end = now
		}
	}
	st.phase = phase
	t.mu.Unlock()
	t.notify(true)
}

func (t *tracker) stageWorkers(i, n int) {
	t.mu.Lock()
	t.stages[i].workers = n
	t.mu.Unlock()
}

func (t *tracker) stagePartitions(i, n int) {
	t.mu.Lock()
	t.stages[i].partitions, t.stages[i].hasParts = n, true
	t.mu.Unlock()
}

// counters returns the counters of worker w in stage i.
func (t *tracker) counters(i, w int) *workerCounters {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.stages[i]
	c := st.counters[w]
	if c == nil {
		c = &workerCounters{inputs: map[int]*inputCounter{}, output: map[int]*chanStats{}, warnings: map[string]int64{}}
		st.counters[w] = c
	}
	return c
}

func (t *tracker) warn(f *Fault, stage int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.warnings) < 10 { // keep the report small, as Druid does
		s := stage
		t.warnings = append(t.warnings, ErrorReport{TaskID: t.taskID, StageNumber: &s, Error: f.errorJSON()})
	}
}

func (t *tracker) fail(f *Fault) {
	t.mu.Lock()
	rep := &ErrorReport{TaskID: t.taskID, Error: f.errorJSON()}
	if f.Stage >= 0 {
		s := f.Stage
		rep.StageNumber = &s
	}
	t.err = rep
	t.status = StateFailed
	for _, st := range t.stages {
		if st.phase != PhaseFinished && st.phase != PhaseNew {
			st.phase = PhaseFailed
			if st.end.IsZero() {
				st.end = time.Now()
			}
		}
	}
	t.mu.Unlock()
}

func (t *tracker) succeed() {
	t.mu.Lock()
	t.status = StateSuccess
	for _, st := range t.stages {
		st.phase = PhaseFinished
	}
	t.mu.Unlock()
}

// notify sends a snapshot to the progress callback: always when forced,
// otherwise at most every 250 ms.
func (t *tracker) notify(force bool) {
	if t.progress == nil {
		return
	}
	t.mu.Lock()
	if !force && time.Since(t.lastSent) < 250*time.Millisecond {
		t.mu.Unlock()
		return
	}
	t.lastSent = time.Now()
	t.mu.Unlock()
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	t.progress(t.snapshot())
}

func isoTime(tm time.Time) string { return interval.FormatMillis(tm.UnixMilli()) }

// snapshot renders the report as it stands.
func (t *tracker) snapshot() Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	st := Status{Status: t.status, DurationMs: -1, PendingTasks: 0, RunningTasks: 1 + t.workers}
	if t.started {
		st.StartTime = isoTime(t.start)
		st.DurationMs = now.Sub(t.start).Milliseconds()
	}
	if t.workers > 0 {
		st.Workers = map[string][]WorkerStatus{}
		state := StateRunning
		if t.status != StateRunning {
			state = t.status
		}
		for w := 0; w < t.workers; w++ {
			d := int64(-1)
			if state != StateRunning {
				d = st.DurationMs
			}
			st.Workers[strconv.Itoa(w)] = []WorkerStatus{{
				WorkerID: t.taskID + "-worker" + strconv.Itoa(w) + "_0", State: state, Status: state, DurationMs: d}}
		}
	}
	if t.status != StateRunning {
		st.RunningTasks = 0
		if t.status == StateSuccess {
			st.RunningTasks = 1 + t.workers // Druid's final reports still count the tasks
		}
	}
	st.ErrorReport = t.err
	if len(t.warnings) > 0 {
		st.Warnings = append([]ErrorReport(nil), t.warnings...)
	}
	if ls := t.loadStat; ls != nil {
		c := *ls
		if c.State == StateWaiting {
			c.Duration = now.Sub(t.loadFrom).Milliseconds()
		}
		st.SegmentLoadWaiterStatus, st.SegmentLoadStatus = &c, &c
	}
	st.SegmentReport = t.segRep
	p := Payload{Status: st, Counters: map[string]map[string]map[string]any{}, Results: t.results}
	for i, s := range t.stages {
		sr := StageReport{StageNumber: i, Definition: s.def, Sort: s.sort}
		if s.phase != PhaseNew {
			sr.Phase = s.phase
			sr.WorkerCount = s.workers
			if s.hasParts {
				n := s.partitions
				sr.PartitionCount = &n
			}
			sr.StartTime = isoTime(s.start)
			end := s.end
			if end.IsZero() {
				end = now
			}
			d := end.Sub(s.start).Milliseconds()
			sr.Duration = &d
		}
		p.Stages = append(p.Stages, sr)
		if len(s.counters) > 0 {
			byWorker := map[string]map[string]any{}
			for w, c := range s.counters {
				byWorker[strconv.Itoa(w)] = c.snapshot()
			}
			p.Counters[strconv.Itoa(i)] = byWorker
		}
	}
	return Report{MultiStageQuery: ReportBody{Type: "multiStageQuery", TaskID: t.taskID, Payload: p}}
}

func (c *workerCounters) snapshot() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]any{}
	for i, in := range c.inputs {
		m := map[string]any{"type": "channel"}
		switch in.kind {
		case "external":
			m["rows"] = []int64{in.rows}
			m["bytes"] = []int64{in.bytes}
			m["files"] = []int64{in.files}
			m["totalFiles"] = []int64{in.totalFiles}
		case "table":
			m["rows"] = []int64{in.rows}
			m["bytes"] = []int64{in.bytes}
			m["files"] = []int64{in.files}
			m["totalFiles"] = []int64{in.totalFiles}
		default:
			rows, bytes, frames := partArrays(in.byPart)
			m["rows"], m["bytes"], m["frames"] = rows, bytes, frames
		}
		out["input"+strconv.Itoa(i)] = m
	}
	if len(c.output) > 0 {
		rows, bytes, frames := partArrays(c.output)
		out["output"] = map[string]any{"type": "channel", "rows": rows, "bytes": bytes, "frames": frames}
	}
	if g := c.segGen; g != nil {
		out["segmentGenerationProgress"] = map[string]any{"type": "segmentGenerationProgress",
			"rowsProcessed": g.rowsProcessed, "rowsPersisted": g.rowsPersisted, "rowsMerged": g.rowsMerged, "rowsPushed": g.rowsPushed}
	}
	if len(c.warnings) > 0 {
		w := map[string]any{"type": "warnings"}
		for k, n := range c.warnings {
			w[k] = n
		}
		out["warnings"] = w
	}
	return out
}

// partArrays renders per-partition stats as Druid's arrays (index =
// partition number, zeros for partitions the worker did not touch).
func partArrays(m map[int]*chanStats) (rows, bytes, frames []int64) {
	n := 0
	for p := range m {
		if p+1 > n {
			n = p + 1
		}
	}
	rows, bytes, frames = make([]int64, n), make([]int64, n), make([]int64, n)
	for p, s := range m {
		rows[p], bytes[p], frames[p] = s.rows, s.bytes, s.frames
	}
	return
}

// ProgressKey changes exactly when the progress in the report does: the
// status, each stage's phase, workers and partitions, the counters, the
// segment load state and the errors; durations and start times are left out.
// Live reports are published only when it changes.
func (r *Report) ProgressKey() string {
	p := &r.MultiStageQuery.Payload
	type stageKey struct {
		Phase      string `json:"p"`
		Workers    int    `json:"w"`
		Partitions *int   `json:"n"`
	}
	k := struct {
		Status   string                               `json:"s"`
		Stages   []stageKey                           `json:"st"`
		Counters map[string]map[string]map[string]any `json:"c"`
		Load     *SegmentLoadStatus                   `json:"l"`
		Error    *ErrorReport                         `json:"e"`
		Warnings int                                  `json:"w"`
	}{Status: p.Status.Status, Counters: p.Counters, Error: p.Status.ErrorReport, Warnings: len(p.Status.Warnings)}
	for _, st := range p.Stages {
		k.Stages = append(k.Stages, stageKey{st.Phase, st.WorkerCount, st.PartitionCount})
	}
	if ls := p.Status.SegmentLoadWaiterStatus; ls != nil {
		c := *ls
		c.Duration = 0
		k.Load = &c
	}
	b, _ := json.Marshal(k)
	return string(b)
}
