package msq

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"

	"strata/expr"
	"strata/granularity"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// genResult collects what the segment generator produced.
type genResult struct {
	mu     sync.Mutex
	alloc  map[int64]*chunkAlloc
	segs   []*segmeta.DataSegment
	chunks map[int64]bool // chunk keys that got rows
}

// chunkAlloc is where a time chunk's new segments go.
type chunkAlloc struct {
	iv      interval.Interval
	version string
	first   int32 // partition number of the first new segment
	core    int32 // INSERT into an existing chunk: its core partition count
	append  bool  // INSERT into an existing chunk
	linear  bool  // the existing chunk uses linear shard specs
}

func (g *segGenPlan) chunkInterval(key int64) interval.Interval {
	if g.gran.IsAll() {
		return interval.Eternity
	}
	return interval.Interval{Start: key, End: g.gran.Next(key)}
}

// allocate decides version and partition numbers for every chunk that got
// rows: REPLACE writes the lock version from partition 0; INSERT appends to
// the chunk's visible version after its highest partition, or starts the
// chunk with the lock version.
func (x *executor) allocate(g *segGenPlan, keys []int64, version string) (map[int64]*chunkAlloc, error) {
	out := map[int64]*chunkAlloc{}
	for _, key := range keys {
		iv := g.chunkInterval(key)
		a := &chunkAlloc{iv: iv, version: version}
		out[key] = a
		used, err := x.env.UsedSegments(x.ctx, g.dataSource, iv)
		if err != nil {
			return nil, err
		}
		if g.replace {
			for _, s := range used {
				if s.Version >= version {
					return nil, newFault(CodeInsertLockPreempted,
						"Segment %s has version %s, not older than this query's lock version %s; the replace cannot overshadow it",
						s.ID(), s.Version, version)
				}
			}
			continue
		}
		tl := segmeta.NewTimeline(g.dataSource)
		if _, err := tl.Add(used); err != nil {
			return nil, err
		}
		for _, h := range tl.Lookup(iv) {
			if h.TrueInterval != iv && h.HasData {
				return nil, newFault(CodeInsertCannotAllocate,
					"Cannot allocate a segment for datasource [%s] interval [%s]: existing segments use interval [%s]; "+
						"use the same PARTITIONED BY granularity as the existing data", g.dataSource, iv, h.TrueInterval).
					with("dataSource", g.dataSource).with("interval", iv.String()).with("allocatedInterval", nil)
			}
		}
		for _, h := range tl.Lookup(iv) {
			if h.TrueInterval != iv {
				continue
			}
			if !h.HasData {
				if h.Version >= version {
					return nil, newFault(CodeInsertLockPreempted, "Time chunk %s holds a tombstone of version %s, not older than %s", iv, h.Version, version)
				}
				continue // a tombstone chunk is replaced by a new version
			}
			a.version, a.append = h.Version, true
			a.first = 0
			a.core = 0
			for _, s := range used {
				if s.Interval != iv || s.Version != h.Version {
					continue
				}
				switch s.ShardSpec.Type {
				case segmeta.ShardNone:
					return nil, newFault(CodeInsertCannotAllocate,
						"Cannot append to interval [%s] of datasource [%s]: its segment does not allow more partitions", iv, g.dataSource).
						with("dataSource", g.dataSource).with("interval", iv.String()).with("allocatedInterval", nil)
				case segmeta.ShardLinear:
					a.linear = true
				case segmeta.ShardNumbered, segmeta.ShardHashed:
					a.core = max(a.core, s.ShardSpec.CorePartitions)
				case segmeta.ShardSingle, segmeta.ShardRange:
					if s.ShardSpec.CorePartitions >= 0 {
						a.core = max(a.core, s.ShardSpec.CorePartitions)
					}
				}
				a.first = max(a.first, s.ShardSpec.PartitionNum+1)
			}
			if a.core == 0 && !a.linear {
				// Unknown core size: every existing root partition is core.
				a.core = a.first
			}
		}
	}
	return out, nil
}

// segGenProc writes the segments of the chunk partitions given to one worker.
// Without CLUSTERED BY, rows stream into a segment builder that cuts a new
// partition every rowsPerSegment rows; with it, the chunk's rows are sorted
// by the clustering keys first so that each partition holds a key range.
type segGenProc struct {
	x       *executor
	st      *stage
	g       *segGenPlan
	w       int
	wc      *workerCounters
	dir     string
	alloc   *chunkAlloc
	spec    segment.Spec
	key     int64
	builder *segment.Builder
	rows    int64
	buf     [][]expr.Value
	out     segment.Row
}

func newSegGenProc(x *executor, st *stage, w int, wc *workerCounters) *segGenProc {
	wc.mu.Lock()
	if wc.segGen == nil {
		wc.segGen = &segGenCounter{}
	}
	wc.mu.Unlock()
	return &segGenProc{x: x, st: st, g: st.gen, w: w, wc: wc}
}

// beginSplit prepares the writer of the chunk about to be read.
func (p *segGenProc) beginSplit(sp *split) error {
	key := sp.part.key
	p.x.gen.mu.Lock()
	p.alloc = p.x.gen.alloc[key]
	p.x.gen.chunks[key] = true
	p.x.gen.mu.Unlock()
	if p.alloc == nil {
		return fmt.Errorf("msq: no allocation for chunk %d", key)
	}
	if p.dir == "" {
		d, err := os.MkdirTemp(p.x.opts.tempDir, "msq-gen-")
		if err != nil {
			return err
		}
		p.dir = d
	}
	g := p.g
	p.key, p.rows, p.buf = key, 0, nil
	p.spec = segment.Spec{
		Dimensions: slices.Clone(g.dims),
		Metrics:    g.metrics,
		Rollup:     g.rollup,
		Interval:   segment.Interval{Start: p.alloc.iv.Start, End: p.alloc.iv.End},
		Metadata: map[string]string{
			"segmentGranularity": granularity.String(g.gran),
			"queryGranularity":   granularity.String(orNone(g.queryGran)),
		},
	}
	for _, f := range g.fields {
		p.spec.Fields = append(p.spec.Fields, segment.Field{Name: f.name, Kind: f.kind})
	}
	// String dimensions that received arrays in this chunk are multi-value.
	for i := range p.spec.Dimensions {
		d := &p.spec.Dimensions[i]
		col := g.sig.index(d.Name)
		if d.Kind == segment.KindString && col < len(sp.part.arrays) && sp.part.arrays[col] {
			d.MultiValue = true
		}
	}
	p.builder = nil
	if len(g.cluster) == 0 {
		b, err := segment.NewBuilder(p.spec, g.rowsPerSeg, segment.DirPaths(p.dir, fmt.Sprintf("chunk%d", key)))
		if err != nil {
			return fmt.Errorf("msq: segment spec: %w", err)
		}
		p.builder = b
	}
	return nil
}

func (p *segGenProc) row(row []expr.Value) error {
	p.rows++
	if p.builder != nil {
		return p.add(p.builder.Add, row)
	}
	kept := make([]expr.Value, len(row))
	for i, v := range row {
		kept[i] = cloneValue(v)
	}
	p.buf = append(p.buf, kept)
	return nil
}

func (p *segGenProc) finish() error {
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
	return nil
}

// endSplit finishes the chunk whose rows were just read.
func (p *segGenProc) endSplit(sp *split) error {
	if p.rows == 0 {
		if p.builder != nil {
			p.builder.Abort()
		}
		return nil
	}
	g := p.g
	var infos []segment.Info
	var firsts [][]expr.Value // first row of each partition, for range bounds
	if p.builder != nil {
		var err error
		if infos, err = p.builder.Close(); err != nil {
			return newFault(CodeUnknownError, "writing segment: %v", err).with("message", err.Error())
		}
	} else {
		rows := p.buf
		p.buf = nil
		slices.SortStableFunc(rows, func(a, b []expr.Value) int {
			for _, c := range g.cluster {
				if r := compareValues(a[c], b[c]); r != 0 {
					return r
				}
			}
			if g.timeCol >= 0 {
				return compareValues(a[g.timeCol], b[g.timeCol])
			}
			return 0
		})
		for gi, grp := range p.cut(rows) {
			w, err := segment.NewWriter(p.spec)
			if err != nil {
				return fmt.Errorf("msq: segment spec: %w", err)
			}
			for _, r := range grp {
				if err := p.add(w.Add, r); err != nil {
					return err
				}
			}
			info, err := w.WriteFile(filepath.Join(p.dir, fmt.Sprintf("chunk%d_part%d.seg", p.key, gi)))
			if err != nil {
				return err
			}
			info.Partition = gi
			infos = append(infos, info)
			firsts = append(firsts, grp[0])
		}
	}
	var persisted int64
	for _, in := range infos {
		persisted += int64(in.Rows)
	}
	p.wc.mu.Lock()
	p.wc.segGen.rowsProcessed += p.rows
	p.wc.segGen.rowsPersisted += persisted
	p.wc.segGen.rowsMerged += persisted
	p.wc.mu.Unlock()
	if err := p.x.ctx.Err(); err != nil {
		return err
	}
	return p.publishChunk(p.alloc, infos, firsts)
}

// cut splits a chunk's sorted rows into segments of at most rowsPerSegment
// rows; with range shard specs a cut never separates equal range keys.
func (p *segGenProc) cut(rows [][]expr.Value) [][][]expr.Value {
	g := p.g
	n := max(g.rowsPerSeg, 1)
	var out [][][]expr.Value
	var rangeCols []int
	for _, d := range g.rangeDims {
		rangeCols = append(rangeCols, g.sig.index(d))
	}
	for start := 0; start < len(rows); {
		end := min(start+n, len(rows))
		if len(rangeCols) > 0 {
			for end < len(rows) && sameKey(rows[end-1], rows[end], rangeCols) {
				end++
			}
		}
		out = append(out, rows[start:end])
		start = end
	}
	return out
}

func sameKey(a, b []expr.Value, cols []int) bool {
	for _, c := range cols {
		if compareValues(a[c], b[c]) != 0 {
			return false
		}
	}
	return true
}

func orNone(g granularity.Granularity) granularity.Granularity {
	if g == nil {
		return granularity.None
	}
	return g
}

// add converts an output row into the writer's fields and passes it to add.
func (p *segGenProc) add(add func(segment.Row) error, r []expr.Value) error {
	g := p.g
	if cap(p.out.Values) < len(g.fields) {
		p.out.Values = make([]segment.Value, len(g.fields))
	}
	p.out.Values = p.out.Values[:len(g.fields)]
	p.out.Time = 0
	if g.timeCol >= 0 {
		t, ok := r[g.timeCol].AsLong()
		if !ok {
			return newFault(CodeInsertTimeNull, "Encountered a null timestamp in the __time field during INSERT or REPLACE")
		}
		p.out.Time = t
	}
	for i, f := range g.fields {
		v, err := storageValue(r[f.col], f)
		if err != nil {
			return err
		}
		p.out.Values[i] = v
	}
	if err := add(p.out); err != nil {
		return newFault(CodeUnknownError, "writing segment: %v", err).with("message", err.Error())
	}
	return nil
}

// storageValue converts a row value for the segment writer.
func storageValue(v expr.Value, f genField) (segment.Value, error) {
	if v.IsNull() {
		return segment.Null(), nil
	}
	switch f.conv {
	case convLong:
		n, ok := v.AsLong()
		if !ok {
			return segment.Null(), nil
		}
		return segment.Long(n), nil
	case convDouble:
		d, ok := v.AsDouble()
		if !ok {
			return segment.Null(), nil
		}
		return segment.Double(d), nil
	case convBytes:
		s, _ := v.AsString()
		return segment.Bytes([]byte(s)), nil
	case convPairValue:
		vt := pairValueType(f.ptype)
		a := newAggregator(&aggSpec{kind: aggLatest, inType: vt, outType: vt, maxBytes: 1 << 30})
		a.grow()
		if err := a.merge(0, v); err != nil {
			return segment.Null(), err
		}
		x, _ := a.final(0)
		return storageValue(x, genField{conv: pairValueType(f.ptype).conv()})
	}
	if v.Type().IsArray() {
		elems := v.Elems()
		ss := make([]string, 0, len(elems))
		for _, e := range elems {
			s, _ := e.AsString()
			ss = append(ss, s)
		}
		return segment.Strings(ss), nil
	}
	s, _ := v.AsString()
	return segment.String(s), nil
}

// publishChunk uploads the files of one chunk and records its segments.
func (p *segGenProc) publishChunk(a *chunkAlloc, infos []segment.Info, firsts [][]expr.Value) error {
	g := p.g
	dims := make([]string, len(g.dims))
	for i, d := range g.dims {
		dims[i] = d.Name
	}
	mets := make([]string, len(g.metrics))
	for i, m := range g.metrics {
		mets[i] = m.Name
	}
	n := int32(len(infos))
	var rangeCols []int
	for _, d := range g.rangeDims {
		rangeCols = append(rangeCols, g.sig.index(d))
	}
	up := p.x.env.Uploader()
	var segs []*segmeta.DataSegment
	for i, info := range infos {
		pn := a.first + int32(i)
		var shard segmeta.ShardSpec
		switch {
		case a.append && a.linear:
			shard = segmeta.LinearShard(pn)
		case a.append:
			shard = segmeta.NumberedShard(pn, a.core)
		case len(rangeCols) > 0:
			d := &segmeta.ShardDetail{Dimensions: slices.Clone(g.rangeDims)}
			if i > 0 {
				d.Start = rangeBound(firsts[i], rangeCols)
			}
			if i+1 < len(infos) {
				d.End = rangeBound(firsts[i+1], rangeCols)
			}
			shard = segmeta.ShardSpec{Type: segmeta.ShardRange, PartitionNum: pn, CorePartitions: n, Detail: d}
		default:
			shard = segmeta.NumberedShard(pn, n)
		}
		seg := &segmeta.DataSegment{
			DataSource: g.dataSource,
			Interval:   a.iv,
			Version:    a.version,
			Dimensions: dims,
			Metrics:    mets,
			ShardSpec:  shard,
			Size:       info.Bytes,
		}
		seg.BinaryVersion = segmeta.NullInt32{V: 9, Valid: true}
		key := deepStorageKey(seg, p.x.taskID)
		ls, err := up.Put(p.x.ctx, key, info.Path)
		if err != nil {
			return newFault(CodeUnknownError, "uploading segment %s: %v", seg.ID(), err).with("message", err.Error())
		}
		os.Remove(info.Path)
		seg.LoadSpec = segmeta.RawJSON(ls)
		seg.Intern()
		segs = append(segs, seg)
		p.wc.mu.Lock()
		p.wc.segGen.rowsPushed += int64(info.Rows)
		p.wc.mu.Unlock()
	}
	p.x.gen.mu.Lock()
	p.x.gen.segs = append(p.x.gen.segs, segs...)
	p.x.gen.mu.Unlock()
	return nil
}

func rangeBound(row []expr.Value, cols []int) segmeta.Bound {
	b := make(segmeta.Bound, len(cols))
	for i, c := range cols {
		if s, ok := row[c].AsString(); ok && !row[c].IsNull() {
			b[i] = segmeta.NullString{S: s, Valid: true}
		}
	}
	return b
}

// deepStorageKey lays segment files out as Druid does
// (<ds>/<start>_<end>/<version>/<partitionNum>/...), with the task id so that
// concurrent appends never write the same key.
func deepStorageKey(s *segmeta.DataSegment, taskID string) string {
	return path.Join(deep.SegmentKey(s.DataSource, interval.FormatMillis(s.Interval.Start), interval.FormatMillis(s.Interval.End),
		s.Version, int(s.ShardSpec.PartitionNum)), taskID)
}

// tombstones returns the tombstone segments of a REPLACE: one per time chunk
// in the overwritten range that holds existing data but got no new rows.
func (x *executor) tombstones(ctx context.Context, g *segGenPlan, version string) ([]*segmeta.DataSegment, error) {
	if !g.replace {
		return nil, nil
	}
	var out []*segmeta.DataSegment
	seen := map[interval.Interval]bool{}
	for _, b := range g.bounds {
		used, err := x.env.UsedSegments(ctx, g.dataSource, b)
		if err != nil {
			return nil, err
		}
		for _, s := range used {
			ov, ok := s.Interval.Intersect(b)
			if !ok || ov.IsEmpty() {
				continue
			}
			for start := range granularity.Iter(g.gran, ov) {
				iv := g.chunkInterval(start)
				if g.gran.IsAll() {
					start = 0
				}
				if x.gen.chunks[start] || seen[iv] {
					continue
				}
				seen[iv] = true
				if len(seen) > maxTimeChunks {
					return nil, newFault(CodeTooManyBuckets, "Too many time chunks to tombstone (limit %d)", maxTimeChunks).with("maxBuckets", maxTimeChunks)
				}
				t := &segmeta.DataSegment{
					DataSource: g.dataSource, Interval: iv, Version: version,
					LoadSpec:  segmeta.RawJSON(`{"type":"tombstone"}`),
					ShardSpec: segmeta.TombstoneShard(),
				}
				t.BinaryVersion = segmeta.NullInt32{V: 9, Valid: true}
				t.Intern()
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// readPartitionDirect adds the rows of one chunk partition to the segment
// builder straight from their frames: values of the usual types (long,
// double and string columns, the long __time) become writer values without
// going through expr values; the others convert as add does.
func (x *executor) readPartitionDirect(ctx context.Context, st *stage, sp *split, wc *workerCounters, p *segGenProc) error {
	in := wc.input(sp.branch, st.inputs[sp.branch].src)
	src := st.inputs[sp.branch].src.(*stageSource)
	types := src.st.out.types
	g := p.g
	// What becomes of each column: a writer field, the time, or nothing.
	cols := make([]directCol, len(types))
	for c := range cols {
		cols[c] = directCol{field: -1, time: c == g.timeCol, t: types[c]}
	}
	for i, f := range g.fields {
		cols[f.col].field, cols[f.col].conv = i, f.conv
	}
	if cap(p.out.Values) < len(g.fields) {
		p.out.Values = make([]segment.Value, len(g.fields))
	}
	p.out.Values = p.out.Values[:len(g.fields)]
	var rows, n int64 // rows: not yet in the shared counter
	// The writer copies what it keeps: frames can go as soon as they are read.
	err := sp.part.consume(x.sp, func(f frame) error {
		if rows >= liveFlushRows {
			wc.mu.Lock()
			in.addPart(sp, rows, false)
			wc.mu.Unlock()
			rows = 0
		}
		b := f.data
		for range f.rows {
			if n&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			n++
			rows++
			p.rows++
			p.out.Time = 0
			for c := range cols {
				var err error
				if b, err = p.directValue(b, &cols[c]); err != nil {
					return err
				}
			}
			if err := p.builder.Add(p.out); err != nil {
				return newFault(CodeUnknownError, "writing segment: %v", err).with("message", err.Error())
			}
		}
		return nil
	})
	wc.mu.Lock()
	in.addPart(sp, rows, true)
	wc.mu.Unlock()
	return err
}

// directCol says what becomes of a column of the frames: writer field
// field (-1: none) converted by conv, or the row time.
type directCol struct {
	field int
	conv  convKind
	time  bool
	t     expr.Type
}

// directValue decodes the value of column c at the start of b into p.out.
func (p *segGenProc) directValue(b []byte, c *directCol) ([]byte, error) {
	if len(b) == 0 {
		return nil, errBadFrame
	}
	fi := c.field
	if fi < 0 && !c.time {
		_, rest, err := decodeValue(b, c.t)
		return rest, err
	}
	switch tag := b[0]; {
	case tag == tagNull && !c.time:
		p.out.Values[fi] = segment.Null()
		return b[1:], nil
	case tag == tagLong && (c.time || c.conv == convLong):
		var n int64
		k := 1
		if len(b) > 1 && b[1] < 0x80 { // one byte: small numbers
			n = int64(b[1]>>1) ^ -int64(b[1]&1)
		} else if n, k = binary.Varint(b[1:]); k <= 0 {
			return nil, errBadFrame
		}
		if c.time {
			p.out.Time = n
		} else {
			p.out.Values[fi] = segment.Long(n)
		}
		return b[1+k:], nil
	case tag == tagDouble && !c.time && c.conv == convDouble:
		if len(b) < 9 {
			return nil, errBadFrame
		}
		p.out.Values[fi] = segment.Double(math.Float64frombits(binary.LittleEndian.Uint64(b[1:])))
		return b[9:], nil
	case tag == tagString && !c.time && c.conv == convString:
		var n uint64
		k := 1
		if len(b) > 1 && b[1] < 0x80 { // one byte: short strings
			n = uint64(b[1])
		} else if n, k = binary.Uvarint(b[1:]); k <= 0 {
			return nil, errBadFrame
		}
		if uint64(len(b)-1-k) < n {
			return nil, errBadFrame
		}
		b = b[1+k:]
		if n == 0 {
			p.out.Values[fi] = segment.String("")
			return b, nil
		}
		p.out.Values[fi] = segment.String(unsafe.String(&b[0], int(n)))
		return b[n:], nil
	}
	v, rest, err := decodeValue(b, c.t)
	if err != nil {
		return nil, err
	}
	if c.time {
		n, ok := v.AsLong()
		if !ok {
			return nil, newFault(CodeInsertTimeNull, "Encountered a null timestamp in the __time field during INSERT or REPLACE")
		}
		p.out.Time = n
		return rest, nil
	}
	sv, err := storageValue(v, p.g.fields[fi])
	if err != nil {
		return nil, err
	}
	p.out.Values[fi] = sv
	return rest, nil
}
