package nativebatch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"strata/expr"
	"strata/ingest"
	"strata/ingest/input"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/segment"
)

// RowStats counts input rows as Druid's buildSegments row stats do.
type RowStats struct {
	Processed          int64 `json:"processed"`
	ProcessedBytes     int64 `json:"processedBytes"`
	ProcessedWithError int64 `json:"processedWithError"`
	ThrownAway         int64 `json:"thrownAway"`
	Unparseable        int64 `json:"unparseable"`
}

// LiveStats are the row stats of a Build under way, readable from other
// goroutines (for live reports). Workers add to them every 1024 records and
// at the end of each split, so they trail the true counts a little until
// Build returns; ProcessedBytes moves at the end of each split.
type LiveStats struct {
	processed, processedBytes, processedWithError, thrownAway, unparseable atomic.Int64
}

// Snapshot returns the counts so far.
func (l *LiveStats) Snapshot() RowStats {
	return RowStats{
		Processed:          l.processed.Load(),
		ProcessedBytes:     l.processedBytes.Load(),
		ProcessedWithError: l.processedWithError.Load(),
		ThrownAway:         l.thrownAway.Load(),
		Unparseable:        l.unparseable.Load(),
	}
}

func (l *LiveStats) add(d RowStats) {
	l.processed.Add(d.Processed)
	l.processedBytes.Add(d.ProcessedBytes)
	l.processedWithError.Add(d.ProcessedWithError)
	l.thrownAway.Add(d.ThrownAway)
	l.unparseable.Add(d.Unparseable)
}

// BuildOptions is what Build needs besides the spec.
type BuildOptions struct {
	Version  string          // version of the segments written
	TempDir  string          // scratch space ("" = a new temp dir)
	Uploader ingest.Uploader // stores finished segment files
	// Logf receives parse exceptions and progress; nil discards them.
	Logf func(format string, args ...any)
	// OnParseError hears each unparseable row's message (nil: none), for
	// callers that keep them (a streaming task's parseErrors).
	OnParseError func(msg string)
	// Live, when set, receives the row stats as the input is read.
	Live *LiveStats
}

// ParseExceptionsError is the failure of a task whose unparseable rows
// exceeded tuningConfig.maxParseExceptions.
type ParseExceptionsError struct {
	Max  int64
	Last string
}

func (e *ParseExceptionsError) Error() string {
	return fmt.Sprintf("Max parse exceptions[%d] exceeded; last: %s", e.Max, e.Last)
}

// layout places every column a row needs in a slot: the input fields first
// (read from the files), then one slot per transform. A transform named like
// an input field shadows it for the filter, the dimensions and the metrics.
type layout struct {
	inputs     []input.Column
	tsSlot     int
	view       map[string]int // column name as seen after transforms → slot
	transforms []compiledTransform
	timeSlot   int // slot of a "__time" transform, or -1
	filter     rowFilter
	fields     []segment.Field
	fieldSlot  []int // per segment field, its slot
	// fieldMV is, per segment field, how a list is stored: as read, sorted
	// or sorted without duplicates (the dimension's multiValueHandling).
	fieldMV []mvOrder
	dims    []segment.Dimension
}

// mvOrder is a string dimension's multiValueHandling.
type mvOrder uint8

const (
	mvAsIs      mvOrder = iota // ARRAY (and every field that is no multi-value dimension)
	mvSorted                   // SORTED_ARRAY, Druid's default
	mvSortedSet                // SORTED_SET
)

type compiledTransform struct {
	x    *expr.Expr
	bind slotBindings // over the input slots
	slot int
}

// Build reads the input of s and writes its segments; it does not publish
// them. Rows are dropped (thrownAway) by the transform filter or when outside
// granularitySpec.intervals; unparseable rows count until maxParseExceptions.
//
// With s.MaxConcurrency > 1 and several input splits, that many workers (at
// most one per split) take splits from a shared queue, so that uneven files
// balance, and each writes its own ingest.Builder; the builders are finished
// as one (ingest.FinishAll). Row stats and the parse-exception limit cover
// all workers, and the first error stops them all. Which worker reads which
// split depends on timing, so the partitions a row lands in (and how far
// equal rows roll up) may differ between runs; the rows and metric totals
// stored do not.
func Build(ctx context.Context, s *Spec, opts BuildOptions) ([]*segmeta.DataSegment, RowStats, error) {
	var stats RowStats
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	splits, err := s.Source.Splits(ctx)
	if err != nil {
		return nil, stats, fmt.Errorf("list input: %w", err)
	}
	dims := s.Dimensions
	var inputKinds map[string]input.Kind
	if s.Discover || len(s.Auto) > 0 {
		if dims, inputKinds, err = discover(ctx, s, splits); err != nil {
			return nil, stats, err
		}
		logf("Discovered dimensions %v", dimNames(dims))
	}
	n := max(min(s.MaxConcurrency, len(splits)), 1)
	var ws []*worker
	ok := false
	defer func() {
		if !ok {
			for _, w := range ws {
				w.b.Abort()
			}
		}
	}()
	if n > 1 && opts.TempDir != "" {
		// The workers' dirs are removed with their builders; this one after.
		defer os.RemoveAll(opts.TempDir)
	}
	for i := range n {
		// Transforms bind the row being evaluated: each worker needs its own.
		lay, err := newLayout(s, dims, inputKinds)
		if err != nil {
			return nil, stats, err
		}
		tmp := opts.TempDir
		if n > 1 && tmp != "" {
			tmp = filepath.Join(tmp, fmt.Sprintf("worker_%d", i))
		}
		b, err := ingest.NewBuilder(ingest.Spec{
			DataSource:         s.DataSource,
			Fields:             lay.fields,
			Dimensions:         lay.dims,
			Metrics:            s.Metrics,
			Rollup:             s.Rollup,
			SegmentGranularity: s.SegmentGranularity,
			QueryGranularity:   s.QueryGranularity,
			RowsPerSegment:     s.MaxRowsPerSegment,
			Version:            opts.Version,
			TempDir:            tmp,
		})
		if err != nil {
			return nil, stats, err
		}
		w := newWorker(s, lay, b)
		w.live = opts.Live
		ws = append(ws, w)
	}
	// Unparseable rows are counted, logged and reported under one lock:
	// the limit is over all workers, and callers' hooks expect one goroutine.
	// Once over the limit, every worker fails with the same error.
	var (
		mu       sync.Mutex
		total    int64
		exceeded *ParseExceptionsError
	)
	unparseable := func(msg string) error {
		mu.Lock()
		defer mu.Unlock()
		total++
		logf("Encountered parse exception: %s", msg)
		if opts.OnParseError != nil {
			opts.OnParseError(msg)
		}
		if exceeded == nil && total > s.MaxParseExceptions {
			exceeded = &ParseExceptionsError{Max: s.MaxParseExceptions, Last: msg}
		}
		if exceeded != nil {
			return exceeded
		}
		return nil
	}
	if n > 1 {
		logf("Reading %d input splits with %d concurrent workers", len(splits), n)
	}
	err = readSplits(ctx, ws, splits, unparseable)
	builders := make([]*ingest.Builder, len(ws))
	for i, w := range ws {
		stats.Processed += w.stats.Processed
		stats.ProcessedBytes += w.stats.ProcessedBytes
		stats.ProcessedWithError += w.stats.ProcessedWithError
		stats.ThrownAway += w.stats.ThrownAway
		stats.Unparseable += w.stats.Unparseable
		builders[i] = w.b
	}
	if err != nil {
		return nil, stats, err
	}
	if opts.Uploader == nil {
		return nil, stats, fmt.Errorf("no deep storage to upload segments to")
	}
	segs, err := ingest.FinishAll(ctx, opts.Uploader, builders)
	ok = true
	if err != nil {
		return nil, stats, err
	}
	return segs, stats, nil
}

// readSplits has the workers read every split: one worker reads them in
// order; several take the next unread split each time they are free, and the
// first error cancels the others.
func readSplits(ctx context.Context, ws []*worker, splits []input.Split, unparseable func(string) error) error {
	if len(ws) == 1 {
		for _, sp := range splits {
			if err := ws[0].read(ctx, sp, unparseable); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			cancel()
		})
	}
	for _, w := range ws {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(splits)) {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := w.read(ctx, splits[i], unparseable); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// worker reads splits into its own builder, with its own row buffers.
type worker struct {
	s     *Spec
	lay   *layout
	b     *ingest.Builder
	row   []expr.Value
	out   segment.Row
	strs  []mvBuf // per field, reused multi-value buffers
	stats RowStats
	live  *LiveStats // nil: no live stats
	told  RowStats   // the part of stats already added to live
}

// tell adds what the worker counted since the last call to its live stats.
func (w *worker) tell() {
	if w.live == nil {
		return
	}
	s, t := w.stats, w.told
	w.live.add(RowStats{Processed: s.Processed - t.Processed, ProcessedBytes: s.ProcessedBytes - t.ProcessedBytes,
		ProcessedWithError: s.ProcessedWithError - t.ProcessedWithError, ThrownAway: s.ThrownAway - t.ThrownAway,
		Unparseable: s.Unparseable - t.Unparseable})
	w.told = s
}

func newWorker(s *Spec, lay *layout, b *ingest.Builder) *worker {
	return &worker{
		s:    s,
		lay:  lay,
		b:    b,
		row:  make([]expr.Value, len(lay.inputs)+len(lay.transforms)),
		out:  segment.Row{Values: make([]segment.Value, len(lay.fields))},
		strs: make([]mvBuf, len(lay.fields)),
	}
}

// read ingests one split.
func (w *worker) read(ctx context.Context, sp input.Split, unparseable func(string) error) error {
	s, lay, row := w.s, w.lay, w.row
	fr, err := input.Open(ctx, sp, s.Format, lay.inputs, s.Source.SystemFields())
	if err != nil {
		return fmt.Errorf("open %s: %w", sp.URI, err)
	}
	defer fr.Close()
	defer w.tell()
	rec := int64(0)
	for {
		if rec++; rec&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			w.tell()
		}
		err := fr.Next(row[:len(lay.inputs)])
		if err == io.EOF {
			break
		}
		var pe *input.ParseError
		if errors.As(err, &pe) {
			w.stats.Unparseable++
			if err := unparseable(pe.Error()); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", sp.URI, err)
		}
		t, msg := lay.process(s, row)
		if msg != "" {
			w.stats.Unparseable++
			if err := unparseable(fmt.Sprintf("%s (Path: %s, Record: %d)", msg, sp.URI, rec)); err != nil {
				return err
			}
			continue
		}
		if (lay.filter != nil && !lay.filter(row)) || !inIntervals(s.Intervals, t) {
			w.stats.ThrownAway++
			continue
		}
		w.out.Time = t
		for i, sl := range lay.fieldSlot {
			w.out.Values[i] = toStorage(row[sl], &w.strs[i], lay.mvOrderOf(i))
		}
		if err := w.b.Add(w.out); err != nil {
			return fmt.Errorf("%s record %d: %w", sp.URI, rec, err)
		}
		w.stats.Processed++
	}
	w.stats.ProcessedBytes += fr.Bytes()
	return nil
}

// process parses the time and applies the transforms of one row; it returns
// a message when the row is unparseable.
func (l *layout) process(s *Spec, row []expr.Value) (int64, string) {
	for i := range l.transforms {
		tr := &l.transforms[i]
		tr.bind.row = row
		v, err := tr.x.Eval(tr.bind)
		if err != nil {
			return 0, fmt.Sprintf("transform %s: %v", tr.x.Source(), err)
		}
		row[tr.slot] = v
	}
	if l.timeSlot >= 0 {
		v := row[l.timeSlot]
		if ms, ok := v.AsLong(); ok && !v.IsNull() {
			return ms, ""
		}
		return 0, "transform __time produced no time"
	}
	v := row[l.tsSlot]
	if v.IsNull() {
		if s.TimestampMissing != nil {
			return *s.TimestampMissing, ""
		}
		return 0, fmt.Sprintf("Timestamp[null] is unparseable! Event: missing %s", s.TimestampColumn)
	}
	var arg any
	switch v.Type() {
	case expr.TypeLong:
		arg = v.Long()
	case expr.TypeDouble:
		arg = v.Double()
	default:
		str, _ := v.AsString()
		arg = str
	}
	ms, err := s.TimestampParse(arg)
	if err != nil {
		return 0, fmt.Sprintf("Timestamp[%s] is unparseable! (%v)", v, err)
	}
	return ms, ""
}

func inIntervals(ivs []interval.Interval, t int64) bool {
	if len(ivs) == 0 {
		return true
	}
	for _, iv := range ivs {
		if t >= iv.Start && t < iv.End {
			return true
		}
	}
	return false
}

// mvBuf holds a multi-value's elements while toStorage converts it.
type mvBuf struct {
	vals []string
	null []bool
}

// sort orders the elements as Druid's SORTED_ARRAY does (nulls first, then
// by value), dropping repeats when set (SORTED_SET), and returns them.
func (b *mvBuf) sort(set bool) ([]string, []bool) {
	type elem struct {
		s    string
		null bool
	}
	es := make([]elem, len(b.vals))
	for i := range es {
		es[i] = elem{b.vals[i], b.null[i]}
	}
	slices.SortFunc(es, func(x, y elem) int {
		if x.null || y.null {
			return cmpBool(y.null, x.null)
		}
		return strings.Compare(x.s, y.s)
	})
	if set {
		es = slices.Compact(es)
	}
	b.vals, b.null = b.vals[:0], b.null[:0]
	for _, e := range es {
		b.vals, b.null = append(b.vals, e.s), append(b.null, e.null)
	}
	return b.vals, b.null
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// mvOrderOf is how field i stores a list.
func (l *layout) mvOrderOf(i int) mvOrder {
	if i < len(l.fieldMV) {
		return l.fieldMV[i]
	}
	return mvAsIs
}

// toStorage converts an expression value into a storage value; buf is reused
// for multi-value strings (the writer copies what it keeps). A list keeps
// its null elements, as Druid's multi-value rows do ([null, "", "1"] is
// three values); a list of one element is that value.
func toStorage(v expr.Value, buf *mvBuf, order mvOrder) segment.Value {
	if v.IsNull() {
		return segment.Null()
	}
	switch t := v.Type(); {
	case t == expr.TypeLong:
		return segment.Long(v.Long())
	case t == expr.TypeDouble:
		return segment.Double(v.Double())
	case t == expr.TypeString:
		return segment.String(v.Str())
	case t.IsArray():
		vals, null := buf.vals[:0], buf.null[:0]
		for _, e := range v.Elems() {
			s, ok := e.AsString()
			ok = ok && !e.IsNull()
			vals, null = append(vals, s), append(null, !ok)
		}
		buf.vals, buf.null = vals, null
		if order != mvAsIs && len(vals) > 1 {
			vals, null = buf.sort(order == mvSortedSet)
		}
		if len(vals) == 1 {
			if null[0] {
				return segment.Null()
			}
			return segment.String(vals[0])
		}
		return segment.StringsWithNulls(vals, null)
	}
	if s, ok := v.AsString(); ok {
		return segment.String(s)
	}
	return segment.Null()
}

func readKind(k segment.Kind) input.Kind {
	switch k {
	case segment.KindLong:
		return input.KindLong
	case segment.KindDouble, segment.KindFloat:
		return input.KindDouble
	}
	return input.KindString
}

func metricInputKind(typ string) input.Kind {
	switch {
	case typ == "longSum" || typ == "longMin" || typ == "longMax" || typ == "longFirst" || typ == "longLast":
		return input.KindLong
	case strings.HasPrefix(typ, "double") || strings.HasPrefix(typ, "float"):
		return input.KindDouble
	}
	return input.KindString
}

// newLayout lays out the input fields, transforms and segment fields of a
// build; inputKinds (nil: none) are the discovered kinds transforms read
// their input fields as, strings otherwise.
func newLayout(s *Spec, dims []segment.Dimension, inputKinds map[string]input.Kind) (*layout, error) {
	l := &layout{view: map[string]int{}, timeSlot: -1, dims: dims}
	inSlot := map[string]int{}
	// want records the read kind of each input field; a field wanted with
	// two different kinds is read as a string and coerced by the writer.
	want := func(name string, k input.Kind) {
		if i, ok := inSlot[name]; ok {
			if l.inputs[i].Kind != k {
				l.inputs[i].Kind = input.KindString
			}
			return
		}
		inSlot[name] = len(l.inputs)
		l.inputs = append(l.inputs, input.Column{Name: name, Kind: k})
	}
	want(s.TimestampColumn, input.KindString)
	l.tsSlot = 0
	trNames := map[string]bool{}
	for _, tr := range s.Transforms {
		trNames[tr.Name] = true
		for _, c := range tr.Expr.RequiredColumns() {
			k, ok := inputKinds[c]
			if !ok {
				k = input.KindString
			}
			want(c, k)
		}
	}
	for _, d := range dims {
		if !trNames[d.Name] {
			want(d.Name, readKind(d.Kind))
		}
	}
	for _, m := range s.Metrics {
		if m.FieldName != "" && !trNames[m.FieldName] {
			want(m.FieldName, metricInputKind(m.Type))
		}
	}
	if s.Filter != nil {
		for _, c := range filterColumns(s.Filter, nil) {
			if !trNames[c] {
				want(c, input.KindString)
			}
		}
	}
	for name, i := range inSlot {
		l.view[name] = i
	}
	next := len(l.inputs)
	for _, tr := range s.Transforms {
		cols := tr.Expr.RequiredColumns()
		idx := make([]int, len(cols))
		for k, c := range cols {
			idx[k] = inSlot[c]
		}
		l.transforms = append(l.transforms, compiledTransform{x: tr.Expr, bind: slotBindings{names: cols, idx: idx}, slot: next})
		l.view[tr.Name] = next
		if tr.Name == "__time" {
			l.timeSlot = next
		}
		next++
	}
	if s.Filter != nil {
		f, err := compileFilter(s.Filter, func(name string) int { return l.view[name] })
		if err != nil {
			return nil, err
		}
		l.filter = f
	}
	// Segment fields: each dimension and metric input by name, once.
	fieldIdx := map[string]bool{}
	addField := func(name string, k segment.Kind) {
		if fieldIdx[name] {
			return
		}
		fieldIdx[name] = true
		l.fields = append(l.fields, segment.Field{Name: name, Kind: k})
		l.fieldSlot = append(l.fieldSlot, l.view[name])
	}
	declared := map[string]bool{}
	for _, d := range s.Dimensions {
		declared[d.Name] = true
	}
	for _, d := range dims {
		addField(d.Name, d.Kind)
		order := mvAsIs
		// A multi-value string dimension sorts its lists unless its spec
		// says ARRAY; auto (typed) columns keep arrays as they are.
		if d.MultiValue && !s.Auto[d.Name] && (declared[d.Name] || !s.TypedDiscovery) {
			switch s.MVHandling[d.Name] {
			case "", "SORTED_ARRAY":
				order = mvSorted
			case "SORTED_SET":
				order = mvSortedSet
			}
		}
		if len(l.fieldMV) < len(l.fields) {
			l.fieldMV = append(l.fieldMV, order)
		}
	}
	for _, m := range s.Metrics {
		if m.FieldName != "" {
			k := segment.KindString
			switch metricInputKind(m.Type) {
			case input.KindLong:
				k = segment.KindLong
			case input.KindDouble:
				k = segment.KindDouble
			}
			addField(m.FieldName, k)
		}
	}
	return l, nil
}

func dimNames(dims []segment.Dimension) []string {
	out := make([]string, len(dims))
	for i, d := range dims {
		out[i] = d.Name
	}
	return out
}

// fieldKinds records which kinds of value an input field held.
type fieldKinds struct {
	long, double, str, boolean bool
	array, nested              bool // a list of scalars; an object or a list holding objects or lists
	flattened                  bool // a flattenSpec field
}

// typed is the column kind type-aware discovery and the auto dimension type
// give a field: any string makes it a STRING, any fraction a DOUBLE, whole
// numbers and booleans (1/0) a LONG, only nulls a STRING. Arrays and nested
// data would be ARRAY and COMPLEX<json> columns, which Strata does not store
// yet: they are an error naming the column, never a column of another type.
func (f fieldKinds) typed(name string) (segment.Kind, error) {
	switch {
	case f.nested:
		return 0, fmt.Errorf("column %q holds nested JSON data: typed (auto) COMPLEX<json> columns are not supported yet; "+
			"list it in dimensionExclusions, declare it as a string dimension or lift its fields with a flattenSpec", name)
	case f.array:
		return 0, fmt.Errorf("column %q holds JSON arrays: typed (auto) ARRAY columns are not supported yet; "+
			"declare it as a string dimension to store a multi-value string", name)
	case f.str:
		return segment.KindString, nil
	case f.double:
		return segment.KindDouble, nil
	case f.long || f.boolean:
		return segment.KindLong, nil
	}
	return segment.KindString, nil
}

// discover decides the dimensions Build writes: the declared ones, each of
// type auto typed by its values, then, when s.Discover is set, every other
// input field except the timestamp column, the exclusions,
// the metrics and the fields the metrics read. Fields come in document
// order (a record's keys as written, new keys of later records after), as
// Druid keeps them. Classic discovery stores strings and multi-value strings and
// leaves out fields that only ever hold nested data, as Druid's string-based
// discovery does; typed discovery (useSchemaDiscovery) types them as the
// auto type does. It also returns the discovered kind of each input field,
// which transforms read their inputs as.
func discover(ctx context.Context, s *Spec, splits []input.Split) ([]segment.Dimension, map[string]input.Kind, error) {
	var order []string
	kinds := map[string]*fieldKinds{}
	note := func(name string, set func(*fieldKinds)) {
		k, seen := kinds[name]
		if !seen {
			k = &fieldKinds{}
			kinds[name] = k
			order = append(order, name)
		}
		set(k)
	}
	if s.Format.Type() == "json" {
		fs, _ := s.Format.Spec()["flattenSpec"].(map[string]any)
		// With flattenSpec.useFieldDiscovery false only its fields exist.
		if fd, ok := fs["useFieldDiscovery"].(bool); !ok || fd {
			for _, sp := range splits {
				if err := documentKeys(ctx, sp, note); err != nil {
					return nil, nil, err
				}
			}
		}
		// flattenSpec fields are fields too, even when no record has the key,
		// and string discovery keeps them whatever they hold.
		if fields, ok := fs["fields"].([]any); ok {
			for _, f := range fields {
				if m, ok := f.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						note(n, func(k *fieldKinds) { k.flattened = true })
					}
				}
			}
		}
	} else {
		cols, _ := s.Format.Spec()["columns"].([]string)
		if len(cols) == 0 {
			if anyCols, ok := s.Format.Spec()["columns"].([]any); ok {
				for _, c := range anyCols {
					if n, ok := c.(string); ok {
						cols = append(cols, n)
					}
				}
			}
		}
		if len(cols) == 0 && s.Discover {
			return nil, nil, fmt.Errorf("schemaless ingestion of %s input needs inputFormat.columns", s.Format.Type())
		}
		// Delimited values are text: typed, they are strings.
		for _, c := range cols {
			note(c, func(k *fieldKinds) { k.str = true })
		}
	}

	// The kinds input fields are read as, then those of the transforms in
	// order (a transform may read an earlier one), from their expressions.
	inputKinds := map[string]input.Kind{}
	exprTypes := map[string]expr.Type{}
	for _, n := range order {
		if k, err := kinds[n].typed(n); err == nil {
			inputKinds[n] = readKind(k)
			exprTypes[n] = map[segment.Kind]expr.Type{segment.KindLong: expr.TypeLong, segment.KindDouble: expr.TypeDouble}[k]
			if exprTypes[n] == expr.TypeUnknown {
				exprTypes[n] = expr.TypeString
			}
		}
	}
	trKinds := map[string]fieldKinds{}
	for _, tr := range s.Transforms {
		var k fieldKinds
		switch t := tr.Expr.OutputType(func(n string) (expr.Type, bool) { ty, ok := exprTypes[n]; return ty, ok }); {
		case t == expr.TypeLong:
			k.long = true
		case t == expr.TypeDouble:
			k.double = true
		case t.IsArray():
			k.array = true
		default:
			k.str = true
		}
		trKinds[tr.Name] = k
		if tk, err := k.typed(tr.Name); err == nil {
			exprTypes[tr.Name] = map[segment.Kind]expr.Type{segment.KindLong: expr.TypeLong, segment.KindDouble: expr.TypeDouble, segment.KindString: expr.TypeString}[tk]
		}
	}
	kindOf := func(name string) fieldKinds {
		if k, ok := trKinds[name]; ok {
			return k
		}
		if k, ok := kinds[name]; ok {
			return *k
		}
		return fieldKinds{}
	}

	var dims []segment.Dimension
	declared := map[string]bool{}
	for _, d := range s.Dimensions {
		declared[d.Name] = true
		if s.Auto[d.Name] {
			k, err := kindOf(d.Name).typed(d.Name)
			if err != nil {
				return nil, nil, err
			}
			d.Kind, d.MultiValue = k, k == segment.KindString
		}
		dims = append(dims, d)
	}
	if !s.Discover {
		return dims, inputKinds, nil
	}
	skip := map[string]bool{s.TimestampColumn: true, "__time": true}
	for k := range s.Exclusions {
		skip[k] = true
	}
	for _, m := range s.Metrics {
		skip[m.Name] = true
		if m.FieldName != "" {
			skip[m.FieldName] = true
		}
	}
	// Only input fields: a transform is a dimension when it shadows one or
	// is declared, as in Druid (its schemaless rules leave other
	// transforms out).
	for _, n := range order {
		if skip[n] || declared[n] {
			continue
		}
		fk := kindOf(n)
		d := segment.Dimension{Name: n, Kind: segment.KindString, MultiValue: true}
		if s.TypedDiscovery {
			k, err := fk.typed(n)
			if err != nil {
				return nil, nil, err
			}
			d.Kind, d.MultiValue = k, k == segment.KindString
		} else if fk.nested && !fk.flattened && !fk.long && !fk.double && !fk.str && !fk.boolean && !fk.array {
			continue // only ever nested data: string discovery leaves it out
		}
		dims = append(dims, d)
	}
	if len(dims) == 0 {
		return nil, nil, fmt.Errorf("schemaless ingestion found no dimensions in the input")
	}
	return dims, inputKinds, nil
}

// documentKeys notes the top-level keys of every JSON object in the split,
// in document order. A malformed record is skipped to the end of its line
// (the ingesting pass counts it as unparseable).
func documentKeys(ctx context.Context, sp input.Split, note func(string, func(*fieldKinds))) error {
	f, err := input.OpenRaw(ctx, sp)
	if err != nil {
		return fmt.Errorf("open %s: %w", sp.URI, err)
	}
	defer f.Close()
	var r io.Reader = f
	for {
		dec := json.NewDecoder(r)
		for {
			var doc json.RawMessage
			err := dec.Decode(&doc)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				var se *json.SyntaxError
				if !errors.As(err, &se) && !errors.Is(err, io.ErrUnexpectedEOF) {
					return fmt.Errorf("read %s: %w", sp.URI, err)
				}
				break
			}
			objectKeys(doc, note) // a non-object is the ingesting pass's to report
		}
		rest := bufio.NewReader(io.MultiReader(dec.Buffered(), r))
		if _, err := rest.ReadBytes('\n'); err != nil {
			return nil // the bad record ran to the end of the file
		}
		r = rest
	}
}

// objectKeys calls note for each top-level key of a JSON object with what
// its value shows of the field's kind.
func objectKeys(doc []byte, note func(string, func(*fieldKinds))) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		switch x := v.(type) {
		case nil:
			note(key, func(*fieldKinds) {})
		case json.Number:
			if _, err := x.Int64(); err == nil && !strings.ContainsAny(string(x), ".eE") {
				note(key, func(k *fieldKinds) { k.long = true })
			} else {
				note(key, func(k *fieldKinds) { k.double = true })
			}
		case bool:
			note(key, func(k *fieldKinds) { k.boolean = true })
		case string:
			note(key, func(k *fieldKinds) { k.str = true })
		case []any:
			nested := false
			for _, e := range x {
				switch e.(type) {
				case []any, map[string]any:
					nested = true
				}
			}
			note(key, func(k *fieldKinds) {
				if nested {
					k.nested = true
				} else {
					k.array = true
				}
			})
		default:
			note(key, func(k *fieldKinds) { k.nested = true })
		}
	}
	return nil
}
