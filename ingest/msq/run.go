package msq

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"strata/expr"
	"strata/ingest"
	"strata/interval"
	"strata/javacompat"
	"strata/segmeta"
	"strata/sql"
	"strata/sqlexpr"
	"strata/storage/segment"
)

// Env is what the engine needs from the cluster.
type Env interface {
	// UsedSegments returns the used segments of dataSource overlapping iv,
	// overshadowed ones included (the engine works out visibility).
	UsedSegments(ctx context.Context, dataSource string, iv interval.Interval) ([]*segmeta.DataSegment, error)
	// OpenSegment opens the file of a segment; release is called when the
	// engine is done with it.
	OpenSegment(ctx context.Context, seg *segmeta.DataSegment) (s *segment.Segment, release func(), err error)
	// Uploader stores segment files in deep storage.
	Uploader() ingest.Uploader
	// Publish makes segs used, atomically. For REPLACE, replaceIntervals are
	// the overwritten intervals (the time chunks the query locked): the new
	// segments carry a newer version and overshadow what they cover,
	// tombstones included; INSERT passes none.
	Publish(ctx context.Context, dataSource string, segs []*segmeta.DataSegment, replaceIntervals []interval.Interval) error
	// WaitLoaded returns once the published segments are served (context
	// waitUntilSegmentsLoad).
	WaitLoaded(ctx context.Context, segs []*segmeta.DataSegment) error
}

// Request is one SQL task.
type Request struct {
	SQL        string
	Context    map[string]any // query context; SET statements in SQL override it
	Parameters []Parameter
	TaskID     string // controller task id ("query-<uuid>")
	// Version is the version of the time-chunk lock, given to the segments a
	// REPLACE writes and to new chunks of an INSERT. It must sort after the
	// versions of existing segments (an ISO timestamp of the lock).
	Version string
	// TempDir holds spill files and segments being built ("" = os.TempDir()).
	TempDir string
	// MemoryBytes bounds shuffle data held in memory (0 = 256 MiB).
	MemoryBytes int64
	// Now is CURRENT_TIMESTAMP (zero = the start of Run).
	Now time.Time
}

// Parameter is a dynamic parameter of the statement ({"type":"VARCHAR","value":"x"}).
type Parameter struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Info describes a validated statement.
type Info struct {
	Kind       string // SELECT, INSERT or REPLACE
	DataSource string // target datasource of INSERT/REPLACE
	Context    map[string]any
}

// options are the context parameters the engine uses.
type options struct {
	finalize           bool
	maxWorkers         int
	rowsPerSegment     int
	maxParseExceptions int64
	failOnEmptyInsert  bool
	waitLoad           bool
	arrayIngestMode    string
	timeout            time.Duration
	maxInputFiles      int
	maxPartitions      int
	tempDir            string
}

func ctxBool(m map[string]any, key string, def bool) (bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(x)
		if err != nil {
			return def, invalidInput("context parameter %s must be a boolean, got %q", key, x)
		}
		return b, nil
	}
	return def, invalidInput("context parameter %s must be a boolean", key)
}

func ctxInt(m map[string]any, key string, def int64) (int64, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) {
			return def, invalidInput("context parameter %s must be an integer", key)
		}
		return int64(x), nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return def, invalidInput("context parameter %s must be an integer", key)
		}
		return n, nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return def, invalidInput("context parameter %s must be an integer, got %q", key, x)
		}
		return n, nil
	}
	return def, invalidInput("context parameter %s must be an integer", key)
}

func parseOptions(m map[string]any, tempDir string) (*options, error) {
	o := &options{tempDir: tempDir}
	var err error
	if o.finalize, err = ctxBool(m, "finalizeAggregations", true); err != nil {
		return nil, err
	}
	tasks, err := ctxInt(m, "maxNumTasks", 2)
	if err != nil {
		return nil, err
	}
	if _, ok := m["maxNumTasks"]; !ok {
		if tasks, err = ctxInt(m, "numTasks", 2); err != nil {
			return nil, err
		}
	}
	if tasks < 2 {
		return nil, invalidInput("maxNumTasks must be at least 2 (one controller and one worker), got %d", tasks)
	}
	o.maxWorkers = int(min(tasks-1, 1000))
	rps, err := ctxInt(m, "rowsPerSegment", 3_000_000)
	if err != nil {
		return nil, err
	}
	if rps < 1 || rps > math.MaxInt32 {
		return nil, invalidInput("rowsPerSegment must be positive")
	}
	o.rowsPerSegment = int(rps)
	if o.maxParseExceptions, err = ctxInt(m, "maxParseExceptions", 0); err != nil {
		return nil, err
	}
	if o.failOnEmptyInsert, err = ctxBool(m, "failOnEmptyInsert", false); err != nil {
		return nil, err
	}
	// Waiting is the default here (Druid's is false): a finished INSERT is then
	// immediately queryable, and the report carries segmentLoadWaiterStatus.
	if o.waitLoad, err = ctxBool(m, "waitUntilSegmentsLoad", true); err != nil {
		return nil, err
	}
	// SQL ingestion reads timestamp literals, time filters and the time
	// functions' defaults in UTC: a statement meant for another sqlTimeZone
	// would get other answers here than interactive SQL gives it, so it is
	// refused rather than read in the wrong zone.
	if z, ok := m["sqlTimeZone"]; ok {
		switch z {
		case "", "UTC", "Etc/UTC", "GMT", "Z":
		default:
			return nil, unsupported("sqlTimeZone [%v] is not supported by SQL ingestion: only UTC is", z)
		}
	}
	o.arrayIngestMode = "mvd"
	if v, ok := m["arrayIngestMode"].(string); ok {
		switch v {
		case "mvd", "array", "none":
			o.arrayIngestMode = v
		default:
			return nil, invalidInput("arrayIngestMode must be mvd, array or none")
		}
	}
	timeout, err := ctxInt(m, "timeout", 0)
	if err != nil {
		return nil, err
	}
	o.timeout = time.Duration(timeout) * time.Millisecond
	mif, err := ctxInt(m, "maxInputFilesPerWorker", 10000)
	if err != nil {
		return nil, err
	}
	o.maxInputFiles = int(max(mif, 1))
	mp, err := ctxInt(m, "maxPartitions", 25000)
	if err != nil {
		return nil, err
	}
	o.maxPartitions = int(max(mp, 1))
	return o, nil
}

// prepared is a parsed and planned statement.
type prepared struct {
	info    Info
	opts    *options
	p       *planner
	final   *stage // SELECT: the stage holding the result rows
	gen     *segGenPlan
	genSt   *stage
	resSig  Signature
	qenv    *queryEnv
	queryID string
}

// prepare parses the statement, applies SET statements and plans it.
func prepare(ctx context.Context, req *Request, env Env, now time.Time) (*prepared, error) {
	script, err := sql.ParseScript(req.SQL)
	if err != nil {
		return nil, asFault(ctx, err)
	}
	merged := map[string]any{}
	for k, v := range req.Context {
		merged[k] = v
	}
	for _, s := range script.Sets {
		v, err := setValue(s.Value)
		if err != nil {
			return nil, invalidInput("%s", sql.AtPos(s, "SET "+s.Key.Name+": "+err.Error()))
		}
		merged[s.Key.Name] = v
	}
	tempDir := req.TempDir
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	opts, err := parseOptions(merged, tempDir)
	if err != nil {
		return nil, err
	}
	qe := &queryEnv{now: now.UnixMilli()}
	for _, prm := range req.Parameters {
		qe.params = append(qe.params, paramValue{typ: prm.Type, value: prm.Value})
	}
	pl := &planner{ctx: ctx, env: env, q: qe, opts: opts, tables: map[string]*tableInfo{}}
	pr := &prepared{opts: opts, p: pl, qenv: qe, queryID: strings.TrimPrefix(req.TaskID, "query-")}
	pr.info.Context = merged
	switch x := script.Statement.(type) {
	case *sql.Query:
		pr.info.Kind = "SELECT"
		out, err := pl.planQuery(x, true)
		if err != nil {
			return nil, err
		}
		pr.final = pl.materialize(out.rel)
		pr.final.part = partSpec{kind: partSingle}
		if pr.final.kind == procGroupPost {
			// One post-shuffle partition keeps the result rows in key order.
			pre := pr.final.inputs[0].src.(*stageSource).st
			pre.part = partSpec{kind: partSingle}
		}
		pr.final.used = true
		pr.resSig = out.rel.sig
	case *sql.Insert, *sql.Replace:
		pr.info.Kind = "INSERT"
		if _, ok := x.(*sql.Replace); ok {
			pr.info.Kind = "REPLACE"
		}
		genSt, g, err := pl.planIngest(x)
		if err != nil {
			return nil, err
		}
		pr.gen, pr.genSt = g, genSt
		pr.info.DataSource = g.dataSource
	case *sql.Explain:
		return nil, unsupported("%s", sql.AtPos(x, "EXPLAIN PLAN FOR is not supported by the task engine"))
	default:
		return nil, unsupported("unsupported statement")
	}
	return pr, nil
}

func setValue(e sql.Expr) (any, error) {
	switch x := e.(type) {
	case *sql.StringLit:
		return x.Value, nil
	case *sql.NumberLit:
		return x.Float64()
	case *sql.BoolLit:
		return x.Value, nil
	case *sql.NullLit:
		return nil, nil
	case *sql.UnaryExpr:
		if n, ok := x.X.(*sql.NumberLit); ok && x.Op == sql.OpNeg {
			f, err := n.Float64()
			return -f, err
		}
	}
	return nil, fmt.Errorf("value must be a literal")
}

// Validate parses and plans a statement without running it, so that invalid
// statements can be refused when they are submitted (Druid answers those with
// HTTP 400 instead of starting a task). The error is a *Fault.
func Validate(ctx context.Context, req Request, env Env) (*Info, error) {
	pr, err := prepare(ctx, &req, env, time.Now())
	if err != nil {
		return nil, asFault(ctx, err)
	}
	return &pr.info, nil
}

// Run executes a statement and returns its final report. progress, when not
// nil, receives report snapshots while the query runs (from one goroutine
// at a time). On failure the report carries the errorReport and the error is
// the *Fault. Cancelling ctx stops the query with error code Canceled and
// publishes nothing.
func Run(ctx context.Context, req Request, env Env, progress func(Report)) (Report, error) {
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	tr := newTracker(req.TaskID, progress)
	fail := func(err error) (Report, error) {
		f := asFault(ctx, err)
		tr.fail(f)
		r := tr.snapshot()
		tr.finish()
		return r, f
	}
	pr, err := prepare(ctx, &req, env, now)
	if err != nil {
		return fail(err)
	}
	if pr.opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pr.opts.timeout)
		defer cancel()
	}
	if pr.gen != nil && req.Version == "" {
		return fail(newFault(CodeUnknownError, "INSERT and REPLACE need the lock version of the task"))
	}
	stages := pr.p.stages
	for _, st := range stages {
		tr.addStage(pr.stageDef(st), st.kind == procSort || st.part.kind != partSingle)
	}
	budget := req.MemoryBytes
	if budget <= 0 {
		budget = 256 << 20
	}
	x := &executor{ctx: ctx, env: env, opts: pr.opts, tr: tr, stages: stages, taskID: req.TaskID,
		sp: &spiller{budget: budget, dir: pr.opts.tempDir}, seed: maphash.MakeSeed(),
		gen: &genResult{chunks: map[int64]bool{}}}
	defer x.sp.close()
	tr.setWorkers(pr.opts.maxWorkers) // the worker tasks a query launches
	tr.begin()
	tr.startTicker(tickPeriod)
	if err := pr.checkLimits(); err != nil {
		return fail(err)
	}
	if pr.gen == nil {
		if err := x.run(); err != nil {
			return fail(err)
		}
		tr.mu.Lock()
		tr.results = pr.results(x)
		tr.mu.Unlock()
		pr.final.out.release()
		tr.succeed()
		r := tr.snapshot()
		tr.finish()
		return r, nil
	}
	// Ingestion: run everything up to the segment generator, allocate the
	// chunks, generate, then publish.
	for _, st := range stages {
		if st == pr.genSt {
			producer := st.inputs[0].src.(*stageSource).st
			var keys []int64
			for _, p := range producer.out.sorted() {
				keys = append(keys, p.key)
			}
			alloc, err := x.allocate(pr.gen, keys, req.Version)
			if err != nil {
				return fail(err)
			}
			x.gen.alloc = alloc
		}
		if err := x.runStage(st); err != nil {
			f := asFault(ctx, err)
			if f.Stage < 0 {
				f.Stage = st.num
			}
			return fail(f)
		}
	}
	segs := x.gen.segs
	if len(segs) > pr.opts.maxPartitions {
		return fail(newFault(CodeTooManyPartitions, "Too many partitions (max = %d); try a coarser PARTITIONED BY or more rowsPerSegment",
			pr.opts.maxPartitions).with("maxPartitions", pr.opts.maxPartitions))
	}
	if len(segs) == 0 && pr.opts.failOnEmptyInsert {
		return fail(newFault(CodeInsertCannotBeEmpty, "No rows to insert for dataSource [%s]", pr.gen.dataSource).with("dataSource", pr.gen.dataSource))
	}
	tombs, err := x.tombstones(ctx, pr.gen, req.Version)
	if err != nil {
		return fail(err)
	}
	all := append(sortedSegments(segs), tombs...)
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if len(all) > 0 {
		var replace []interval.Interval
		if pr.gen.replace {
			replace = pr.gen.bounds
		}
		if err := env.Publish(ctx, pr.gen.dataSource, all, replace); err != nil {
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			return fail(newFault(CodeUnknownError, "publishing segments: %v", err).with("message", err.Error()))
		}
	}
	tr.mu.Lock()
	tr.segRep = &pr.gen.report
	tr.mu.Unlock()
	if pr.opts.waitLoad && len(all) > 0 {
		start := time.Now()
		tr.loadWait(pr.gen.dataSource, start, len(all))
		ls := &SegmentLoadStatus{State: StateSuccess, DataSource: pr.gen.dataSource, StartTime: isoTime(start),
			TotalSegments: len(all)}
		if err := env.WaitLoaded(ctx, all); err != nil {
			ls.State = StateFailed
			ls.ErrorMessage = err.Error()
			if errors.Is(err, context.DeadlineExceeded) {
				ls.State = "TIMED_OUT"
			}
			ls.PendingSegments = len(all)
		} else {
			ls.UsedSegments, ls.PrecachedSegments = len(all), len(all)
		}
		ls.Duration = time.Since(start).Milliseconds()
		tr.mu.Lock()
		tr.loadStat = ls
		tr.mu.Unlock()
	}
	tr.succeed()
	r := tr.snapshot()
	r.Published = all
	tr.finish()
	return r, nil
}

func sortedSegments(segs []*segmeta.DataSegment) []*segmeta.DataSegment {
	out := slices.Clone(segs)
	slices.SortFunc(out, func(a, b *segmeta.DataSegment) int { return a.ID().Compare(b.ID()) })
	return out
}

// checkLimits raises the faults Druid's controller raises before running.
func (pr *prepared) checkLimits() error {
	for _, st := range pr.p.stages {
		if len(st.outSig) > maxColumns {
			return newFault(CodeTooManyColumns, "Too many output columns [%d] (max = %d)", len(st.outSig), maxColumns).
				with("numColumns", len(st.outSig)).with("maxColumns", maxColumns)
		}
		for _, c := range st.outSig {
			for _, r := range restrictedColumns {
				if c.Name == r {
					return newFault(CodeColumnNameRestricted, "[%s] column name is reserved for MSQ's internal purpose. Please retry the query after renaming the column.", r).
						with("columnName", r)
				}
			}
		}
		for _, b := range st.inputs {
			if es, ok := b.src.(*externalSource); ok {
				for _, c := range es.sig {
					for _, r := range restrictedColumns {
						if c.Name == r {
							return newFault(CodeColumnNameRestricted, "[%s] column name is reserved for MSQ's internal purpose. Please retry the query after renaming the column.", r).
								with("columnName", r)
						}
					}
				}
			}
		}
	}
	return nil
}

// results builds the report's results of a SELECT.
func (pr *prepared) results(x *executor) *Results {
	res := &Results{Signature: pr.resSig.reportJSON(), Results: [][]any{}}
	for _, c := range pr.resSig {
		res.SQLTypeNames = append(res.SQLTypeNames, c.Type.SQL())
	}
	types := pr.final.out.types
	for _, p := range pr.final.out.sorted() {
		err := p.eachRow(x.sp, types, func(row []expr.Value) error {
			if len(res.Results) >= maxResultRows {
				res.ResultsTruncated = true
				return errStop
			}
			out := make([]any, len(row))
			for i, v := range row {
				out[i] = resultValue(v, pr.resSig[i].Type)
			}
			res.Results = append(res.Results, out)
			return nil
		})
		if err != nil {
			break
		}
	}
	return res
}

var errStop = fmt.Errorf("stop")

// resultValue renders a value as Druid writes it in results: doubles in
// Java's format, complex values base64-encoded.
func resultValue(v expr.Value, t Type) any {
	if v.IsNull() {
		return nil
	}
	if t.Kind == KindComplex {
		s, _ := v.AsString()
		return base64.StdEncoding.EncodeToString([]byte(s))
	}
	switch v.Type() {
	case expr.TypeLong:
		n, _ := v.AsLong()
		return n
	case expr.TypeDouble:
		f, _ := v.AsDouble()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return javacompat.FormatDouble(f)
		}
		if t.Kind == KindFloat {
			return json.RawMessage(javacompat.FormatFloat(float32(f)))
		}
		return json.RawMessage(javacompat.FormatDouble(f))
	case expr.TypeString:
		s, _ := v.AsString()
		return strings.Clone(s)
	}
	elems := v.Elems()
	out := make([]any, len(elems))
	for i, e := range elems {
		out[i] = resultValue(e, elemType(typeOfSQL(sqlexpr.FromExprType(v.Type()))))
	}
	return out
}

// stageDef renders a stage definition for the report.
func (pr *prepared) stageDef(st *stage) map[string]any {
	def := map[string]any{"id": pr.queryID + "_" + strconv.Itoa(st.num)}
	var inputs []any
	for _, b := range st.inputs {
		switch s := b.src.(type) {
		case *externalSource:
			inputs = append(inputs, map[string]any{"type": "external", "inputSource": s.src.Spec(),
				"inputFormat": s.format.Spec(), "signature": s.sig.reportJSON()})
		case *tableSource:
			segs := map[segmeta.ID]bool{}
			var ivs []string
			for _, pc := range s.pieces {
				if !segs[pc.seg.ID()] {
					segs[pc.seg.ID()] = true
				}
				ivs = append(ivs, pc.clip.String())
			}
			inputs = append(inputs, map[string]any{"type": "table", "dataSource": s.dataSource, "intervals": ivs})
		case *stageSource:
			inputs = append(inputs, map[string]any{"type": "stage", "stage": s.st.num})
		case *valuesSource:
			inputs = append(inputs, map[string]any{"type": "inline", "rows": len(s.rows)})
		}
	}
	def["input"] = inputs
	var ops []any
	for _, b := range st.inputs {
		var bo []any
		for _, op := range b.ops {
			bo = append(bo, opJSON(op))
		}
		ops = append(ops, bo)
	}
	proc := map[string]any{}
	switch st.kind {
	case procScan:
		proc["type"] = "scan"
		proc["inputOperators"] = ops
	case procGroupPre:
		proc["type"] = "groupByPreShuffle"
		proc["inputOperators"] = ops
		proc["dimensions"] = compiledSQL(st.group.keys)
		proc["aggregations"] = aggJSON(st.group.aggs)
	case procGroupPost:
		proc["type"] = "groupByPostShuffle"
		proc["finalize"] = !st.group.rollup
		if st.group.having != nil {
			proc["having"] = st.group.having.sql
		}
	case procSort:
		proc["type"] = "limit"
		proc["offset"] = st.sort.offset
		if st.sort.limit >= 0 {
			proc["limit"] = st.sort.limit
		}
	case procSegGen:
		g := st.gen
		proc["type"] = "segmentGenerator"
		dims := []any{}
		for _, d := range g.dims {
			t := strings.ToLower(d.Kind.String())
			dims = append(dims, map[string]any{"type": t, "name": d.Name, "multiValueHandling": "SORTED_ARRAY", "createBitmapIndex": true})
		}
		qg := any(map[string]any{"type": "none"})
		if g.queryGran != nil {
			qg = g.queryGran.JSON()
		}
		proc["dataSchema"] = map[string]any{
			"dataSource":      g.dataSource,
			"timestampSpec":   map[string]any{"column": "__time", "format": "millis", "missingValue": nil},
			"dimensionsSpec":  map[string]any{"dimensions": dims, "dimensionExclusions": []string{"__time"}, "includeAllDimensions": false},
			"metricsSpec":     g.metrics,
			"granularitySpec": map[string]any{"type": "arbitrary", "queryGranularity": qg, "rollup": g.rollup, "segmentGranularity": g.gran.JSON()},
		}
		var cm []any
		for _, c := range g.sig {
			cm = append(cm, map[string]any{"queryColumn": c.Name, "outputColumn": c.Name})
		}
		proc["columnMappings"] = cm
		proc["tuningConfig"] = map[string]any{"maxNumWorkers": pr.opts.maxWorkers, "rowsPerSegment": pr.opts.rowsPerSegment}
	}
	if len(st.outOps) > 0 {
		var oo []any
		for _, op := range st.outOps {
			oo = append(oo, opJSON(op))
		}
		proc["outputOperators"] = oo
	}
	def["processor"] = proc
	def["signature"] = st.outSig.reportJSON()
	if st.kind != procSegGen {
		switch st.part.kind {
		case partHash:
			var cols []any
			for i := 0; i < st.part.keys; i++ {
				cols = append(cols, map[string]any{"columnName": st.outSig[i].Name})
			}
			def["shuffleSpec"] = map[string]any{"type": "hash", "clusterBy": map[string]any{"columns": cols}, "partitions": st.part.n}
		case partChunk:
			cols := []any{map[string]any{"columnName": "__bucket"}}
			for _, c := range st.part.gen.cluster {
				cols = append(cols, map[string]any{"columnName": st.part.gen.sig[c].Name})
			}
			def["shuffleSpec"] = map[string]any{"type": "targetSize", "clusterBy": map[string]any{"columns": cols, "bucketByCount": 1},
				"targetSize": pr.opts.rowsPerSegment}
		default:
			def["shuffleSpec"] = map[string]any{"type": "mix"}
		}
	}
	def["maxWorkerCount"] = pr.opts.maxWorkers
	if st.kind == procSort {
		def["maxWorkerCount"] = 1
	}
	return def
}

func opJSON(op rowOp) any {
	if op.filter != nil {
		return map[string]any{"type": "filter", "expression": op.filter.sql}
	}
	return map[string]any{"type": "project", "expressions": compiledSQL(op.project)}
}

func compiledSQL(cs []*compiled) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.sql
	}
	return out
}

func aggJSON(aggs []*aggSpec) []any {
	out := make([]any, len(aggs))
	for i, a := range aggs {
		m := map[string]any{"name": "a" + strconv.Itoa(i), "function": a.sql}
		if a.filter != nil {
			m["filter"] = a.filter.sql
		}
		out[i] = m
	}
	return out
}
