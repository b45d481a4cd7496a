package msq

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"strata/expr"
	"strata/granularity"
	"strata/ingest/input"
	"strata/interval"
	"strata/sql"
)

// executor runs the stages of a plan in order, each with up to maxWorkers
// goroutines ("workers").
type executor struct {
	ctx       context.Context
	env       Env
	opts      *options
	tr        *tracker
	sp        *spiller
	stages    []*stage
	parseErrs atomic.Int64
	taskID    string
	seed      maphash.Seed
	gen       *genResult // segment generation output
}

// split is one unit of work of a stage.
type split struct {
	seq    int // position in the stage's list of splits
	branch int
	ext    *input.Split
	piece  *tablePiece
	part   *partition
	pidx   int // partition index within the input stage
	values [][]expr.Value
	size   int64
}

func (x *executor) run() error {
	for _, st := range x.stages {
		if err := x.runStage(st); err != nil {
			f := asFault(x.ctx, err)
			if f.Stage < 0 {
				f.Stage = st.num
			}
			return f
		}
	}
	return nil
}

// splits lists the work of a stage.
func (x *executor) splits(st *stage) ([]split, map[int]int64, error) {
	var out []split
	totals := map[int]int64{}
	for bi, b := range st.inputs {
		switch s := b.src.(type) {
		case *externalSource:
			list, err := s.src.Splits(x.ctx)
			if err != nil {
				return nil, nil, newFault(CodeUnknownError, "reading input source: %v", err)
			}
			for i := range list {
				out = append(out, split{branch: bi, ext: &list[i], size: list[i].Size})
			}
			totals[bi] = int64(len(list))
		case *tableSource:
			for i := range s.pieces {
				out = append(out, split{branch: bi, piece: &s.pieces[i], size: s.pieces[i].seg.Size})
			}
			totals[bi] = int64(len(s.pieces))
		case *stageSource:
			for i, p := range s.st.out.sorted() {
				out = append(out, split{branch: bi, part: p, pidx: i, size: p.bytes})
			}
		case *valuesSource:
			out = append(out, split{branch: bi, values: s.rows})
		}
	}
	for i := range out {
		out[i].seq = i
	}
	return out, totals, nil
}

// assign spreads splits over n workers, largest first onto the least loaded.
func assign(splits []split, n int) [][]split {
	order := make([]int, len(splits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case splits[a].size > splits[b].size:
			return -1
		case splits[a].size < splits[b].size:
			return 1
		}
		return 0
	})
	load := make([]int64, n)
	out := make([][]split, n)
	for _, i := range order {
		w := 0
		for j := 1; j < n; j++ {
			if load[j] < load[w] {
				w = j
			}
		}
		out[w] = append(out[w], splits[i])
		load[w] += max(splits[i].size, 1)
	}
	// Keep each worker's splits in their original order (file order, partition order).
	for _, l := range out {
		slices.SortFunc(l, func(a, b split) int { return a.seq - b.seq })
	}
	return out
}

func (x *executor) runStage(st *stage) error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	splits, totals, err := x.splits(st)
	if err != nil {
		return err
	}
	n := min(x.opts.maxWorkers, max(1, len(splits)))
	if st.kind == procSort {
		n = 1
	}
	for _, l := range assign(splits, n) {
		if len(l) > x.opts.maxInputFiles {
			return newFault(CodeTooManyInputFiles, "Too many input files or segments [%d] for one worker (limit %d); use more workers",
				len(l), x.opts.maxInputFiles).with("numInputFiles", len(l)).with("maxInputFiles", x.opts.maxInputFiles).
				with("minNumWorker", (len(splits)+x.opts.maxInputFiles-1)/x.opts.maxInputFiles)
		}
	}
	work := assign(splits, n)
	x.tr.setWorkers(n)
	x.tr.stageWorkers(st.num, n)
	x.tr.stagePhase(st.num, PhaseReadingInput)
	if st.kind != procSegGen {
		st.out = newPartitionSet(x.sp, st.outSig)
	}
	ctx, cancel := context.WithCancelCause(x.ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	writers := make([]*partWriter, n)
	var firstErr error
	var errOnce sync.Once
	for w := 0; w < n; w++ {
		wc := x.tr.counters(st.num, w)
		for bi, total := range totals {
			in := wc.input(bi, st.inputs[bi].src)
			wc.mu.Lock()
			in.totalFiles = total
			wc.mu.Unlock()
		}
		if st.out != nil {
			writers[w] = newPartWriter(st.out)
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			err := x.runWorker(ctx, st, w, work[w], writers[w], wc)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				cancel(err)
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		if errors.Is(firstErr, context.Canceled) && x.ctx.Err() != nil {
			return x.ctx.Err()
		}
		return firstErr
	}
	x.tr.stagePhase(st.num, PhasePostReading)
	// Output counters by partition number.
	if st.out != nil {
		parts := st.out.sorted()
		index := map[int64]int{}
		for i, p := range parts {
			index[p.key] = i
		}
		if st.part.kind == partChunk && len(parts) > maxTimeChunks {
			return newFault(CodeTooManyBuckets, "Too many time chunks [%d] (limit %d); use a coarser PARTITIONED BY", len(parts), maxTimeChunks).
				with("maxBuckets", maxTimeChunks)
		}
		for w, pw := range writers {
			wc := x.tr.counters(st.num, w)
			wc.mu.Lock()
			for key, s := range pw.stats {
				wc.output[index[key]] = s
			}
			wc.mu.Unlock()
		}
		x.tr.stagePartitions(st.num, len(parts))
	} else {
		x.tr.stagePartitions(st.num, len(splits))
	}
	// Inputs read from earlier stages are done with.
	for _, b := range st.inputs {
		if s, ok := b.src.(*stageSource); ok {
			s.st.out.release()
			x.tr.stagePhase(s.st.num, PhaseFinished)
		}
	}
	x.tr.stagePhase(st.num, PhaseResultsReady)
	return nil
}

// input returns the counter of input channel i.
func (c *workerCounters) input(i int, src source) *inputCounter {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.inputs[i]
	if in == nil {
		in = &inputCounter{byPart: map[int]*chanStats{}}
		switch src.(type) {
		case *externalSource:
			in.kind = "external"
		case *tableSource:
			in.kind = "table"
		default:
			in.kind = "stage"
		}
		c.inputs[i] = in
	}
	return in
}

// runWorker processes the splits of one worker. A segment generating worker
// with several chunks builds them on parallel lanes (one per core): chunks
// are independent, and their segments are sorted before publishing. More
// lanes than cores balance the last chunks better but hold more segments in
// memory at once, for no measurable gain.
func (x *executor) runWorker(ctx context.Context, st *stage, w int, work []split, pw *partWriter, wc *workerCounters) error {
	lanes := min(runtime.GOMAXPROCS(0), len(work))
	if st.kind != procSegGen || pw != nil || lanes < 2 {
		return x.runSplits(ctx, st, w, work, pw, wc)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	for _, l := range assign(work, lanes) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := x.runSplits(ctx, st, w, l, nil, wc); err != nil {
				once.Do(func() { firstErr = err })
				cancel(err)
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// runSplits processes splits in order with one processor.
func (x *executor) runSplits(ctx context.Context, st *stage, w int, work []split, pw *partWriter, wc *workerCounters) error {
	out := newOutWriter(x, st, pw)
	proc, err := x.newProc(st, w, out, wc)
	if err != nil {
		return err
	}
	runners := make([]*opRunner, len(st.inputs))
	for i, b := range st.inputs {
		runners[i] = newOpRunner(b.ops)
	}
	for i := range work {
		sp := &work[i]
		r := runners[sp.branch]
		emit := func(row []expr.Value) error {
			out, keep, err := r.apply(row)
			if err != nil || !keep {
				return err
			}
			return proc.row(out)
		}
		if err := proc.beginSplit(sp); err != nil {
			return err
		}
		// Two common cases have paths of their own: a scan of a large local
		// file (read in parallel ranges) and the chunks of an ingestion
		// without CLUSTERED BY (frames straight into the segment builder).
		gp, isGen := proc.(*segGenProc)
		switch {
		case st.kind == procScan && sp.ext != nil && pw != nil:
			done, err := x.scanRanges(ctx, st, sp, wc, out)
			if err == nil && !done {
				err = x.readSplit(ctx, st, sp, wc, emit)
			}
			if err != nil {
				return err
			}
		case isGen && sp.part != nil && len(st.inputs[sp.branch].ops) == 0 && gp.builder != nil:
			if err := x.readPartitionDirect(ctx, st, sp, wc, gp); err != nil {
				return err
			}
		default:
			if err := x.readSplit(ctx, st, sp, wc, emit); err != nil {
				return err
			}
		}
		if err := proc.endSplit(sp); err != nil {
			return err
		}
		x.tr.notify(false)
	}
	if err := proc.finish(); err != nil {
		return err
	}
	if pw != nil {
		return pw.flush()
	}
	return nil
}

// readSplit pushes the rows of one split to emit and counts them.
func (x *executor) readSplit(ctx context.Context, st *stage, sp *split, wc *workerCounters, emit func([]expr.Value) error) error {
	in := wc.input(sp.branch, st.inputs[sp.branch].src)
	switch {
	case sp.ext != nil:
		es := st.inputs[sp.branch].src.(*externalSource)
		pf, err := openPrefetcher(ctx, fileSource{split: *sp.ext, format: es.format, cols: es.cols, sys: es.src.SystemFields()})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return newFault(CodeUnknownError, "cannot read %s: %v", sp.ext.URI, err).with("message", err.Error())
		}
		defer pf.Close()
		// rows not yet in the shared counter; bytes are added at the end
		// (the decoder counts them on its own goroutine).
		var rows int64
		for n := int64(0); ; n++ {
			if n&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if rows >= liveFlushRows {
				wc.mu.Lock()
				in.rows += rows
				wc.mu.Unlock()
				rows = 0
			}
			row, err := pf.Next(ctx, len(es.cols))
			if err == io.EOF {
				break
			}
			if err != nil {
				var pe *input.ParseError
				if errors.As(err, &pe) {
					if err := x.parseError(st, wc, pe.Error()); err != nil {
						return err
					}
					continue
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return newFault(CodeCannotParseExternalData, "%s: %v", sp.ext.URI, err)
			}
			rows++
			if err := emit(row); err != nil {
				return err
			}
		}
		wc.mu.Lock()
		in.rows += rows
		in.bytes += pf.Bytes()
		in.files++
		wc.mu.Unlock()
	case sp.piece != nil:
		ts := st.inputs[sp.branch].src.(*tableSource)
		seg, release, err := x.env.OpenSegment(ctx, sp.piece.seg)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return newFault(CodeUnknownError, "cannot open segment %s: %v", sp.piece.seg.ID(), err).with("message", err.Error())
		}
		n, err := readSegment(ctx, seg, ts.sig, [2]int64{sp.piece.clip.Start, sp.piece.clip.End}, emit)
		release()
		wc.mu.Lock()
		in.rows += n
		in.bytes += sp.piece.seg.Size
		in.files++
		wc.mu.Unlock()
		if err != nil {
			return err
		}
	case sp.part != nil:
		src := st.inputs[sp.branch].src.(*stageSource)
		var rows, n int64
		err := sp.part.eachRow(x.sp, src.st.out.types, func(row []expr.Value) error {
			rows++
			if n++; n&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if rows >= liveFlushRows {
				wc.mu.Lock()
				in.addPart(sp, rows, false)
				wc.mu.Unlock()
				rows = 0
			}
			return emit(row)
		})
		wc.mu.Lock()
		in.addPart(sp, rows, true)
		wc.mu.Unlock()
		if err != nil {
			return err
		}
	default:
		for _, r := range sp.values {
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseError counts a row that could not be parsed against maxParseExceptions.
func (x *executor) parseError(st *stage, wc *workerCounters, msg string) error {
	n := x.parseErrs.Add(1)
	wc.mu.Lock()
	wc.warnings[CodeCannotParseExternalData]++
	wc.mu.Unlock()
	f := newFault(CodeCannotParseExternalData, "%s", msg)
	f.Stage = st.num
	limit := x.opts.maxParseExceptions
	if limit < 0 || n <= limit {
		x.tr.warn(f, st.num)
		return nil
	}
	if limit == 0 {
		return f
	}
	tf := newFault(CodeTooManyWarnings, "Too many warnings of type %s generated (max = %d)", CodeCannotParseExternalData, limit).
		with("rootErrorCode", CodeCannotParseExternalData).with("maxWarnings", limit)
	tf.Stage = st.num
	return tf
}

// opRunner applies a branch's operators to rows, reusing buffers.
type opRunner struct {
	ops  []rowOp
	bufs [][]expr.Value
	b    rowBindings
}

func newOpRunner(ops []rowOp) *opRunner {
	r := &opRunner{ops: ops, bufs: make([][]expr.Value, len(ops))}
	for i, op := range ops {
		if op.project != nil {
			r.bufs[i] = make([]expr.Value, len(op.project))
		}
	}
	return r
}

func (r *opRunner) apply(row []expr.Value) ([]expr.Value, bool, error) {
	for i, op := range r.ops {
		r.b.row = row
		if op.filter != nil {
			v, err := op.filter.eval(&r.b)
			if err != nil {
				return nil, false, err
			}
			if !v.AsBool() {
				return nil, false, nil
			}
			continue
		}
		out := r.bufs[i]
		for j, c := range op.project {
			if c.col >= 0 { // a column as it is: no call
				out[j] = row[c.col]
				continue
			}
			v, err := c.eval(&r.b)
			if err != nil {
				return nil, false, err
			}
			out[j] = v
		}
		row = out
	}
	return row, true, nil
}

// outWriter applies a stage's output operators and partitions its rows,
// into the worker's partitions or, for a range of a file read in parallel,
// into the range's encoded rows.
type outWriter struct {
	x         *executor
	st        *stage
	pw        *partWriter
	enc       *encodedRows
	ops       *opRunner
	gran      granularity.Granularity
	hb        []byte
	lastChunk int64
	lastOK    bool
}

func newOutWriter(x *executor, st *stage, pw *partWriter) *outWriter {
	o := &outWriter{x: x, st: st, pw: pw, ops: newOpRunner(st.outOps)}
	if g := st.part.gen; g != nil && st.part.kind == partChunk {
		o.gran = granularity.Clone(g.gran)
	}
	return o
}

func (o *outWriter) emit(row []expr.Value) error {
	row, keep, err := o.ops.apply(row)
	if err != nil || !keep {
		return err
	}
	var key int64
	switch o.st.part.kind {
	case partHash:
		o.hb = o.hb[:0]
		for _, v := range row[:o.st.part.keys] {
			o.hb = appendValue(o.hb, v)
		}
		key = int64(maphash.Bytes(o.x.seed, o.hb) % uint64(o.st.part.n))
	case partChunk:
		if key, err = o.chunk(row); err != nil {
			return err
		}
	}
	if o.enc != nil {
		o.enc.write(key, row)
		return nil
	}
	return o.pw.write(key, row)
}

// chunk is the time chunk of an output row of an ingestion.
func (o *outWriter) chunk(row []expr.Value) (int64, error) {
	g := o.st.part.gen
	if g.timeCol < 0 {
		return 0, nil
	}
	return o.chunkOf(row[g.timeCol])
}

// chunkOf is the time chunk of a row whose __time is tv.
func (o *outWriter) chunkOf(tv expr.Value) (int64, error) {
	g := o.st.part.gen
	t, ok := tv.AsLong()
	if !ok || tv.IsNull() {
		return 0, newFault(CodeInsertTimeNull, "Encountered a null timestamp in the __time field during INSERT or REPLACE")
	}
	if o.gran.IsAll() {
		return 0, nil
	}
	start := o.gran.Bucket(t)
	if o.lastOK && start == o.lastChunk {
		return start, nil
	}
	if g.bounds != nil {
		iv := interval.Interval{Start: start, End: o.gran.Next(start)}
		inside := false
		for _, b := range g.bounds {
			if b.Contains(iv) {
				inside = true
				break
			}
		}
		if !inside {
			return 0, timeOutOfBounds(iv, g.bounds)
		}
	}
	o.lastChunk, o.lastOK = start, true
	return start, nil
}

// workerProc is a stage's processing in one worker.
type workerProc interface {
	beginSplit(sp *split) error
	row(row []expr.Value) error
	endSplit(sp *split) error
	finish() error
}

func (x *executor) newProc(st *stage, w int, out *outWriter, wc *workerCounters) (workerProc, error) {
	switch st.kind {
	case procScan:
		return &scanProc{out: out}, nil
	case procGroupPre:
		return newGroupPre(st.group, out), nil
	case procGroupPost:
		return newGroupPost(st.group, out), nil
	case procSort:
		return &sortProc{plan: st.sort, out: out}, nil
	case procSegGen:
		return newSegGenProc(x, st, w, wc), nil
	}
	return nil, errors.New("msq: unknown stage kind")
}

type scanProc struct{ out *outWriter }

func (p *scanProc) row(row []expr.Value) error { return p.out.emit(row) }
func (p *scanProc) beginSplit(*split) error    { return nil }
func (p *scanProc) endSplit(*split) error      { return nil }
func (p *scanProc) finish() error              { return nil }

// groupTable maps encoded group keys to group numbers and keeps the keys.
type groupTable struct {
	index map[string]int32
	keys  [][]expr.Value
	aggs  []aggregator
	specs []*aggSpec
	kb    []byte
}

func newGroupTable(specs []*aggSpec) *groupTable {
	t := &groupTable{index: map[string]int32{}, specs: specs}
	for _, s := range specs {
		t.aggs = append(t.aggs, newAggregator(s))
	}
	return t
}

// group returns the number of the group with the given key values.
func (t *groupTable) group(keys []expr.Value) int {
	t.kb = t.kb[:0]
	for _, v := range keys {
		t.kb = appendValue(t.kb, v)
	}
	if g, ok := t.index[string(t.kb)]; ok {
		return int(g)
	}
	g := len(t.keys)
	t.index[string(t.kb)] = int32(g)
	kept := make([]expr.Value, len(keys))
	for i, v := range keys {
		kept[i] = cloneValue(v)
	}
	t.keys = append(t.keys, kept)
	for _, a := range t.aggs {
		a.grow()
	}
	return g
}

// cloneValue copies the strings of v so it outlives the buffers it came from.
func cloneValue(v expr.Value) expr.Value {
	switch v.Type() {
	case expr.TypeString:
		if s, ok := v.AsString(); ok {
			return expr.String(strings.Clone(s))
		}
		return v
	case expr.TypeStringArray:
		if v.IsNull() {
			return v
		}
		elems := slices.Clone(v.Elems())
		for i, e := range elems {
			elems[i] = cloneValue(e)
		}
		return expr.Array(expr.TypeStringArray, elems)
	}
	return v
}

// groupPre is the pre-shuffle half of a GROUP BY: partial aggregation of a
// worker's input, emitted as [keys..., intermediate values...].
type groupPre struct {
	plan *groupPlan
	out  *outWriter
	t    *groupTable
	b    rowBindings
	keys []expr.Value
	args [][]expr.Value
}

func newGroupPre(gp *groupPlan, out *outWriter) *groupPre {
	p := &groupPre{plan: gp, out: out, t: newGroupTable(gp.aggs), keys: make([]expr.Value, len(gp.keys))}
	for _, a := range gp.aggs {
		p.args = append(p.args, make([]expr.Value, len(a.args)))
	}
	return p
}

func (p *groupPre) row(row []expr.Value) error {
	p.b.row = row
	for i, k := range p.plan.keys {
		v, err := k.eval(&p.b)
		if err != nil {
			return err
		}
		if !v.Type().IsArray() { // multi-value strings group as a whole
			v = castTo(v, p.plan.keyTypes[i])
		}
		p.keys[i] = v
	}
	g := p.t.group(p.keys)
	for i, a := range p.plan.aggs {
		if a.filter != nil {
			v, err := a.filter.eval(&p.b)
			if err != nil {
				return err
			}
			if !v.AsBool() {
				continue
			}
		}
		args := p.args[i]
		for j, c := range a.args {
			v, err := c.eval(&p.b)
			if err != nil {
				return err
			}
			args[j] = v
		}
		if err := p.t.aggs[i].add(g, args); err != nil {
			return newFault(CodeQueryRuntimeError, "%s: %v", a.sql, err)
		}
	}
	return nil
}

func (p *groupPre) beginSplit(*split) error { return nil }
func (p *groupPre) endSplit(*split) error   { return nil }

func (p *groupPre) finish() error {
	row := make([]expr.Value, len(p.plan.keys)+len(p.plan.aggs))
	for g, keys := range p.t.keys {
		copy(row, keys)
		for i, a := range p.t.aggs {
			v, err := a.inter(g)
			if err != nil {
				return err
			}
			row[len(keys)+i] = v
		}
		if err := p.out.emit(row); err != nil {
			return err
		}
	}
	return nil
}

// groupPost merges the partial groups of one partition and emits the
// output rows.
type groupPost struct {
	plan  *groupPlan
	out   *outWriter
	t     *groupTable
	b     rowBindings
	seen  bool
	nkeys int
}

func newGroupPost(gp *groupPlan, out *outWriter) *groupPost {
	return &groupPost{plan: gp, out: out, t: newGroupTable(gp.aggs), nkeys: len(gp.keys)}
}

func (p *groupPost) row(row []expr.Value) error {
	g := p.t.group(row[:p.nkeys])
	for i, a := range p.t.aggs {
		if err := a.merge(g, row[p.nkeys+i]); err != nil {
			return newFault(CodeQueryRuntimeError, "%s: %v", p.plan.aggs[i].sql, err)
		}
	}
	return nil
}

// endSplit emits the groups of the partition just read.
func (p *groupPost) beginSplit(*split) error { return nil }
func (p *groupPost) endSplit(*split) error {
	p.seen = true
	err := p.emitGroups()
	p.t = newGroupTable(p.plan.aggs)
	return err
}

func (p *groupPost) emitGroups() error {
	post := make([]expr.Value, p.nkeys+len(p.plan.aggs))
	inter := make([]expr.Value, len(p.plan.aggs))
	out := make([]expr.Value, len(p.plan.outputs))
	if len(p.t.keys) == 0 && p.plan.implicit && !p.seen {
		p.t.group(nil) // aggregates over no rows: one row
	}
	// Groups come out ordered by their keys, as Druid's groupBy returns them.
	order := make([]int, len(p.t.keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ka, kb := p.t.keys[a], p.t.keys[b]
		for i := range ka {
			if c := compareValues(ka[i], kb[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	for _, g := range order {
		keys := p.t.keys[g]
		copy(post, keys)
		for i, a := range p.t.aggs {
			v, err := a.final(g)
			if err != nil {
				return err
			}
			post[p.nkeys+i] = v
			if p.plan.rollup {
				if inter[i], err = a.inter(g); err != nil {
					return err
				}
			}
		}
		p.b.row = post
		if p.plan.having != nil {
			v, err := p.plan.having.eval(&p.b)
			if err != nil {
				return err
			}
			if !v.AsBool() {
				continue
			}
		}
		for i, oc := range p.plan.outputs {
			if oc.agg >= 0 && p.plan.rollup && p.plan.aggs[oc.agg].metric() != "" {
				out[i] = inter[oc.agg]
				continue
			}
			v, err := oc.c.eval(&p.b)
			if err != nil {
				return err
			}
			out[i] = v
		}
		if err := p.out.emit(out); err != nil {
			return err
		}
	}
	return nil
}

// finish covers aggregates without GROUP BY over empty input: the single
// partition of the pre stage then does not exist.
func (p *groupPost) finish() error {
	if p.seen || !p.plan.implicit {
		return nil
	}
	return p.emitGroups()
}

// sortProc collects all rows, sorts them and applies OFFSET / LIMIT.
type sortProc struct {
	plan *sortPlan
	out  *outWriter
	rows [][]expr.Value
}

func (p *sortProc) row(row []expr.Value) error {
	kept := make([]expr.Value, len(row))
	for i, v := range row {
		kept[i] = cloneValue(v)
	}
	p.rows = append(p.rows, kept)
	return nil
}

func (p *sortProc) beginSplit(*split) error { return nil }
func (p *sortProc) endSplit(*split) error   { return nil }

func (p *sortProc) finish() error {
	sp := p.plan
	if len(sp.keys) > 0 {
		slices.SortStableFunc(p.rows, func(a, b []expr.Value) int {
			for i, k := range sp.keys {
				an, bn := a[k].IsNull(), b[k].IsNull()
				if an != bn {
					// Default: nulls first ascending, last descending.
					nullsFirst := !sp.desc[i]
					switch sp.nulls[i] {
					case sql.NullsFirst:
						nullsFirst = true
					case sql.NullsLast:
						nullsFirst = false
					}
					if an == nullsFirst {
						return -1
					}
					return 1
				}
				c := compareValues(a[k], b[k])
				if sp.desc[i] {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	rows := p.rows
	if sp.offset > 0 {
		rows = rows[min(int(sp.offset), len(rows)):]
	}
	if sp.limit >= 0 && int64(len(rows)) > sp.limit {
		rows = rows[:sp.limit]
	}
	for _, r := range rows {
		if err := p.out.emit(r); err != nil {
			return err
		}
	}
	return nil
}
