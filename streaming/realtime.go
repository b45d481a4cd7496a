package streaming

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"strata/ingest/input"
	"strata/ingest/middlemanager"
	"strata/ingest/nativebatch"
	"strata/segmeta"
)

// defaultRealtimePeriod is how often a reading task makes the records it
// spooled since the last time queryable (task context realtimePeriod, ms).
const defaultRealtimePeriod = time.Second

// Hydrants are merged as they pile up so that a query of a long-running task
// reads a few segments, not one per period: mergeFanIn hydrants of one level
// and the new records are rebuilt as one hydrant of the next level (each
// spooled byte is rebuilt about log4(hydrants) times), as long as the rebuilt
// range stays under maxMergeBytes, which bounds how long one build delays the
// next records.
const (
	mergeFanIn    = 4
	maxMergeBytes = 64 << 20
)

// servingEnv is what the realtime builder needs from the worker
// (middlemanager.Env provides it).
type servingEnv interface {
	Serve(segs []middlemanager.Served) error
	Hold() (release func())
	Handoff(dataSource string, segs []middlemanager.Served) error
	Logf(format string, args ...any)
}

// realtime makes a reading task's rows queryable before it publishes, as
// Druid's realtime tasks do: every period it builds the records spooled since
// the last build into "hydrant" segments with the publish pipeline and serves
// all hydrants so far through the worker. Hydrants are never published: at
// hand-off the published segments replace them in one step.
//
// The read loop calls maybeBuild after every fetch; builds run in a
// background goroutine, at most one at a time, so reading never waits (a slow
// build covers more records the next time). A failed build changes nothing:
// the next one covers its records too. Only the final build decides what is
// published.
type realtime struct {
	spec    *nativebatch.Spec
	spool   string // the task's spool file: hydrants are byte ranges of it
	dir     string // hydrant files and build scratch space
	version string // of every hydrant: unique to the task, never a published version
	seq     string // the task's sequence (kafkaTask.seq): replicas share it
	period  time.Duration
	env     servingEnv

	ctx    context.Context // cancelled by stop: a build in flight is abandoned
	cancel context.CancelFunc
	wg     sync.WaitGroup
	last   time.Time // start of the last build (read loop only)
	// beforeServe, when set, runs before rows are served with the offsets
	// up to which the served hydrants hold the stream's records; an error
	// serves nothing new. Replicas report that position first, so that one
	// lost while serving them is known to have read them (agreeEnd).
	beforeServe func(ctx context.Context, at Offsets) error

	// Shared by the read loop and the build in flight.
	mu        sync.Mutex
	busy      bool                 // a build is in flight
	stopped   bool                 // no more builds: reading ended or serving is off
	covered   int64                // spool bytes the hydrants hold
	totals    nativebatch.RowStats // row counts of the served hydrants
	parseErrs []ParseError         // the newest saved parse exceptions, oldest first
	maxSaved  int                  // tuningConfig.maxSavedParseExceptions

	// Owned by the build in flight, and by the task after stop.
	hydrants []*hydrant // served now, in spool order
	release  func()     // of the hold on the hydrants while publishing (hold)
	nextPart int32      // partition number of the next hydrant segment
	lastErr  string     // of the last failed build, logged once
	builds   int        // successful builds, for the task log
}

// hydrant is what one build made of the spool bytes [lo, hi).
type hydrant struct {
	lo, hi  int64
	level   int // how many merges made it (see mergeFanIn)
	segs    []middlemanager.Served
	stats   nativebatch.RowStats // of the rows of [lo, hi)
	newErrs []ParseError         // saved exceptions of rows no earlier hydrant had
}

// ParseError is one saved parse exception, in Druid's ParseExceptionReport
// shape (the supervisor's /parseErrors lists them).
type ParseError struct {
	Input     *string  `json:"input"`
	ErrorType string   `json:"errorType"`
	Details   []string `json:"details"`
	TimeMs    int64    `json:"timeOfExceptionMillis"`
}

// newRealtime returns the hydrant builder of a task, or nil when its rows
// cannot be served before they are published: the worker serves no queries,
// or the input format reads a header from the spool's first line (a range of
// the spool has none).
func newRealtime(k *kafkaTask, taskID, spool, dir string, env servingEnv) *realtime {
	if wholeSpool(k.spec.Format) {
		env.Logf("Rows become queryable when published: the %s inputFormat reads a header", k.spec.Format.Type())
		return nil
	}
	// Serving nothing is harmless and tells whether the worker serves at all.
	if err := env.Serve(nil); err != nil {
		logServeError(env, err)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &realtime{spec: k.spec, spool: spool, dir: dir, version: "realtime-" + taskID, seq: k.seq, period: k.realtimePeriod,
		env: env, ctx: ctx, cancel: cancel, maxSaved: k.maxSavedParseExceptions}
}

func logServeError(env servingEnv, err error) {
	if errors.Is(err, middlemanager.ErrNoServing) {
		env.Logf("Rows become queryable when published: %v", err)
		return
	}
	env.Logf("Serving rows before they are published: %v", err)
}

// wholeSpool reports a format whose reading depends on the file's first
// lines (a header row, rows to skip).
func wholeSpool(f input.Format) bool {
	if f == nil {
		return false
	}
	spec := f.Spec()
	header, _ := spec["findColumnsFromHeader"].(bool)
	skip, _ := spec["skipHeaderRows"].(int)
	return header || skip > 0
}

// maybeBuild starts a build of the spool up to byte hi when the period has
// passed, no build is in flight and there are new records. flush makes the
// spool's bytes up to hi readable; its error ends reading.
func (r *realtime) maybeBuild(hi int64, at Offsets, flush func() error) error {
	if r == nil || time.Since(r.last) < r.period {
		return nil
	}
	r.mu.Lock()
	start := !r.busy && !r.stopped && hi > r.covered
	if start {
		r.busy = true
	}
	r.mu.Unlock()
	if !start {
		return nil
	}
	if err := flush(); err != nil {
		r.mu.Lock()
		r.busy = false
		r.mu.Unlock()
		return err
	}
	r.last = time.Now()
	at.Partitions = maps.Clone(at.Partitions) // the read loop moves on
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.build(hi, at)
	}()
	return nil
}

// build makes the spool bytes up to hi (the records before offsets at)
// queryable: the records past the served hydrants, merged with the trailing
// hydrants plan picks. While busy, only this goroutine changes the hydrants;
// the lock guards what the read loop reads, and stop waits for this
// goroutine before a hand-off.
func (r *realtime) build(hi int64, at Offsets) {
	first, lo, level := r.plan(hi)
	var rebuilt int64 // unparseable rows of the hydrants this build merges
	for _, old := range r.hydrants[first:] {
		rebuilt += old.stats.Unparseable
	}
	h, err := r.buildRange(lo, hi, level, r.nextPart, rebuilt)
	if err == nil && r.ctx.Err() != nil {
		err = r.ctx.Err()
	}
	next := append(slices.Clip(r.hydrants[:first]), h)
	if err == nil && (len(h.segs) > 0 || first < len(r.hydrants)) {
		if r.beforeServe != nil {
			err = r.beforeServe(r.ctx, at)
		}
		if err == nil {
			err = r.env.Serve(atOffsets(servedSet(next), at))
		}
	}
	if err != nil {
		if h != nil {
			removeFiles(h.segs)
		}
		r.failed(lo, hi, err)
		return
	}
	// The replaced hydrants are no longer served: their files may go.
	for _, old := range r.hydrants[first:] {
		removeFiles(old.segs)
	}
	if r.lastErr != "" || r.builds == 0 {
		r.env.Logf("Serving the rows of %d spooled bytes in %d realtime segments", hi, len(servedSet(next)))
	}
	r.hydrants, r.nextPart, r.lastErr = next, r.nextPart+int32(len(h.segs)), ""
	r.builds++
	var totals nativebatch.RowStats
	for _, hy := range next {
		totals = addStats(totals, hy.stats)
	}
	r.mu.Lock()
	r.busy, r.covered, r.totals = false, hi, totals
	// A merge rebuilds rows whose exceptions were saved already: only the
	// new bytes' exceptions are new.
	r.parseErrs = append(r.parseErrs, h.newErrs...)
	if over := len(r.parseErrs) - r.maxSaved; over > 0 {
		r.parseErrs = slices.Delete(r.parseErrs, 0, over)
	}
	r.mu.Unlock()
}

// failed notes a build that changed nothing; the next one retries its
// records. A worker without serving ends building.
func (r *realtime) failed(lo, hi int64, err error) {
	switch {
	case r.ctx.Err() != nil: // stopped: the final build takes over
	case errors.Is(err, middlemanager.ErrNoServing):
		logServeError(r.env, err)
	case err.Error() != r.lastErr:
		r.env.Logf("Realtime segments of spool bytes [%d, %d) failed (the next build retries them; publishing is unaffected): %v", lo, hi, err)
	}
	r.lastErr = err.Error()
	r.mu.Lock()
	r.busy = false
	r.stopped = r.stopped || errors.Is(err, middlemanager.ErrNoServing)
	r.mu.Unlock()
}

// plan picks the range of the next build ending at hi: the new records, and
// in front of them the trailing hydrants they merge with. It returns the
// index of the first hydrant replaced, where the range starts and the level
// of the result.
func (r *realtime) plan(hi int64) (first int, lo int64, level int) {
	first, lo = len(r.hydrants), r.covered
	for {
		j := first
		for j > 0 && first-j < mergeFanIn-1 && r.hydrants[j-1].level == level {
			j--
		}
		if first-j < mergeFanIn-1 || hi-r.hydrants[j].lo > maxMergeBytes {
			return first, lo, level
		}
		first, lo, level = j, r.hydrants[j].lo, level+1
	}
}

// buildRange runs the publish pipeline (nativebatch.Build) over the spool
// bytes [lo, hi) and names the segments as hydrants: the task's realtime
// version and partition numbers from part on, so that no two hydrants and no
// published segment share an id.
func (r *realtime) buildRange(lo, hi int64, level int, part int32, skip int64) (*hydrant, error) {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	s := *r.spec
	s.Source = &spoolRange{path: r.spool, lo: lo, hi: hi}
	// Parse exceptions are logged once, by the final build. The new bytes'
	// are saved for the supervisor's /parseErrors; the first skip come from
	// rows a merge rebuilds, saved when they were new (one split reads the
	// range in order).
	var errs []ParseError
	seen := int64(0)
	segs, stats, err := nativebatch.Build(r.ctx, &s, nativebatch.BuildOptions{
		Version:  r.version,
		TempDir:  filepath.Join(r.dir, "build"),
		Uploader: holdUploader{dir: r.dir},
		OnParseError: func(msg string) {
			if seen++; seen > skip && r.maxSaved > 0 {
				errs = append(errs, ParseError{ErrorType: "unparseable", Details: []string{msg}, TimeMs: time.Now().UnixMilli()})
			}
		},
	})
	if err != nil {
		return nil, err
	}
	h := &hydrant{lo: lo, hi: hi, level: level, stats: stats, newErrs: errs}
	for i, sg := range segs {
		path, err := heldPath(sg)
		if err != nil {
			return h, err
		}
		sg.ShardSpec = segmeta.NumberedShard(part+int32(i), 0)
		sg.LoadSpec = "" // served from the local file, never loaded from elsewhere
		h.segs = append(h.segs, middlemanager.Served{Segment: sg, Path: path, Realtime: true, Sequence: r.seq})
	}
	return h, nil
}

// heldPath is the local file of a segment built with holdUploader.
func heldPath(s *segmeta.DataSegment) (string, error) {
	var h heldSpec
	if err := json.Unmarshal([]byte(s.LoadSpec), &h); err != nil || h.Type != "held" || h.Path == "" {
		return "", fmt.Errorf("segment %s was not built here", s.ID())
	}
	return h.Path, nil
}

func servedSet(hs []*hydrant) []middlemanager.Served {
	var out []middlemanager.Served
	for _, h := range hs {
		out = append(out, h.segs...)
	}
	return out
}

// atOffsets marks the served set with the position its rows reach, which
// the worker announces with it: a broker then reads the replica of a
// sequence that has read furthest (querynode/broker/replicas.go). Every
// hydrant is marked anew, the older ones included: the set as a whole
// holds the records before at.
func atOffsets(segs []middlemanager.Served, at Offsets) []middlemanager.Served {
	for i := range segs {
		segs[i].Offsets = at.Partitions
	}
	return segs
}

func removeFiles(segs []middlemanager.Served) {
	for _, s := range segs {
		if s.Path != "" {
			os.Remove(s.Path)
		}
	}
}

// stop ends building: a build in flight is abandoned and waited for, so that
// nothing serves hydrants after a hand-off replaced them.
func (r *realtime) stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// handOff, after a successful publish, replaces the served hydrants by the
// published segments read from their local files, and deletes the hydrants.
// It reports whether the worker took the files over; when not, the caller
// deletes them and the rows are queryable once a historical loads them.
func (r *realtime) handOff(dataSource string, published []middlemanager.Served) bool {
	if r == nil {
		return false
	}
	defer r.unhold()
	if len(published) == 0 {
		r.withdraw()
		return false
	}
	r.stop()
	err := r.env.Handoff(dataSource, published)
	if err != nil {
		logServeError(r.env, err)
		r.withdraw()
		return false
	}
	r.env.Logf("Handed off %d published segments (replacing %d realtime segments)", len(published), len(servedSet(r.hydrants)))
	r.dropHydrants()
	return true
}

// hold makes reads of the hydrants wait, from just before the publish until
// handOff or withdraw settles what serves the rows (see middlemanager.Env.Hold).
func (r *realtime) hold() {
	if r == nil || len(r.hydrants) == 0 || r.release != nil {
		return
	}
	r.release = r.env.Hold()
}

func (r *realtime) unhold() {
	if r != nil && r.release != nil {
		r.release()
		r.release = nil
	}
}

// withdraw stops serving the task's rows (nothing was published) and deletes
// the hydrants.
func (r *realtime) withdraw() {
	if r == nil {
		return
	}
	defer r.unhold()
	r.stop()
	if len(r.hydrants) > 0 {
		if err := r.env.Serve(nil); err != nil {
			r.env.Logf("Withdrawing realtime segments: %v", err) // the worker withdraws them when the task ends
		}
	}
	r.dropHydrants()
}

func (r *realtime) dropHydrants() {
	for _, h := range r.hydrants {
		removeFiles(h.segs)
	}
	r.hydrants, r.covered = nil, 0
	os.RemoveAll(r.dir)
}

// spoolRange is an input source reading the bytes [lo, hi) of the spool file:
// records spooled since the last hydrant. The read loop writes only past hi.
type spoolRange struct {
	path   string
	lo, hi int64
}

func (s *spoolRange) Type() string           { return "local" }
func (s *spoolRange) SystemFields() []string { return nil }
func (s *spoolRange) Spec() map[string]any {
	return map[string]any{"type": "local", "files": []string{s.path}}
}
func (s *spoolRange) Splits(context.Context) ([]input.Split, error) {
	if s.hi <= s.lo {
		return nil, nil
	}
	uri := fmt.Sprintf("file:%s#%d-%d", filepath.ToSlash(s.path), s.lo, s.hi)
	return []input.Split{input.NewSplit(uri, s.hi-s.lo, func(context.Context) (io.ReadCloser, error) {
		f, err := os.Open(s.path)
		if err != nil {
			return nil, err
		}
		return sectionFile{io.NewSectionReader(f, s.lo, s.hi-s.lo), f}, nil
	})}, nil
}

// sectionFile reads a section of a file and closes the file.
type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s sectionFile) Close() error { return s.f.Close() }

func addStats(a, b nativebatch.RowStats) nativebatch.RowStats {
	a.Processed += b.Processed
	a.ProcessedBytes += b.ProcessedBytes
	a.ProcessedWithError += b.ProcessedWithError
	a.ThrownAway += b.ThrownAway
	a.Unparseable += b.Unparseable
	return a
}

// rowProgress returns the row counts of what is served and the saved parse
// exceptions, for the task's progress report.
func (r *realtime) rowProgress() (nativebatch.RowStats, []ParseError) {
	if r == nil {
		return nativebatch.RowStats{}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.totals, slices.Clone(r.parseErrs)
}
