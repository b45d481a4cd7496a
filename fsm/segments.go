package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"strata/commands"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
)

// SegmentRecord is one segment's metadata row. Records are immutable once
// stored (a change stores a new record), which lets a snapshot hold pointers
// to them while Apply goes on.
type SegmentRecord struct {
	Segment       *segmeta.DataSegment
	Used          bool
	UsedUpdatedMs int64 // leader time of the last used/unused flip
	CreatedMs     int64 // leader time of the publish
}

// segmentsTable is the segment metadata of every datasource plus the timeline
// (an index over used segments) that answers which segments serve an interval.
type segmentsTable struct {
	records  map[segmeta.ID]*SegmentRecord
	byDS     map[string]map[segmeta.ID]*SegmentRecord
	used     *segmeta.Index
	metadata map[string]string // datasource → ingestion metadata (compact JSON)
	pending  map[string]string // deep-storage loadSpec awaiting deletion → segment id

	// Derived indexes (rebuilt on restore, not snapshotted), keyed by
	// deep.FileKey so that two spellings of one file count as one: how many
	// segment records (used or unused) name each deep-storage file, and how
	// many pending deletions do. A file is deleted only when no record names
	// it, and no segment may be published onto a file awaiting deletion.
	files        map[string]int32
	pendingFiles map[string]int32
}

func (t *segmentsTable) init() {
	if t.records == nil {
		t.records = map[segmeta.ID]*SegmentRecord{}
		t.byDS = map[string]map[segmeta.ID]*SegmentRecord{}
		t.used = segmeta.NewIndex()
		t.metadata = map[string]string{}
		t.pending = map[string]string{}
		t.files = map[string]int32{}
		t.pendingFiles = map[string]int32{}
	}
}

func (t *segmentsTable) put(r *SegmentRecord) {
	id := r.Segment.ID()
	if old := t.records[id]; old == nil {
		countFile(t.files, r.Segment.LoadSpec, 1)
	} else if old.Segment.LoadSpec != r.Segment.LoadSpec {
		countFile(t.files, old.Segment.LoadSpec, -1)
		countFile(t.files, r.Segment.LoadSpec, 1)
	}
	t.records[id] = r
	m := t.byDS[id.DataSource]
	if m == nil {
		m = map[segmeta.ID]*SegmentRecord{}
		t.byDS[id.DataSource] = m
	}
	m[id] = r
}

func (t *segmentsTable) delete(id segmeta.ID) {
	if old := t.records[id]; old != nil {
		countFile(t.files, old.Segment.LoadSpec, -1)
	}
	delete(t.records, id)
	if m := t.byDS[id.DataSource]; m != nil {
		delete(m, id)
		if len(m) == 0 {
			delete(t.byDS, id.DataSource)
		}
	}
}

// countFile adds delta to the count of the file loadSpec names (nothing for
// load specs naming no file, such as tombstones).
func countFile(m map[string]int32, loadSpec segmeta.RawJSON, delta int32) {
	k := deep.FileKey(string(loadSpec))
	if k == "" {
		return
	}
	if n := m[k] + delta; n > 0 {
		m[k] = n
	} else {
		delete(m, k)
	}
}

// queueDeletion adds a loadSpec to the pending deletions.
func (t *segmentsTable) queueDeletion(loadSpec, id string) {
	if _, ok := t.pending[loadSpec]; !ok {
		countFile(t.pendingFiles, segmeta.RawJSON(loadSpec), 1)
	}
	t.pending[loadSpec] = id
}

// dequeueDeletion removes a loadSpec from the pending deletions.
func (t *segmentsTable) dequeueDeletion(loadSpec string) bool {
	if _, ok := t.pending[loadSpec]; !ok {
		return false
	}
	delete(t.pending, loadSpec)
	countFile(t.pendingFiles, segmeta.RawJSON(loadSpec), -1)
	return true
}

// Audit types of segment changes, as Druid names them.
const (
	AuditSegmentMarkUnused = "segment.markUnused"
	AuditSegmentKill       = "segment.kill"
)

// PublishResult is the result of PublishSegments.
type PublishResult struct {
	Published int // segments newly added (ids already present are skipped)
}

// DecodeSegments decodes the binary segment list of a PublishSegments command.
func DecodeSegments(b []byte, count int) ([]*segmeta.DataSegment, error) {
	if count < 0 || count > len(b) {
		return nil, fmt.Errorf("segment count %d does not fit %d bytes", count, len(b))
	}
	out := make([]*segmeta.DataSegment, 0, count)
	for len(b) > 0 {
		s := new(segmeta.DataSegment)
		rest, err := s.DecodeBinary(b)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		b = rest
	}
	if len(out) != count {
		return nil, fmt.Errorf("decoded %d segments, command says %d", len(out), count)
	}
	return out, nil
}

// EncodeSegments builds the binary segment list for PublishSegments.
func EncodeSegments(segs []*segmeta.DataSegment) []byte {
	var b []byte
	for _, s := range segs {
		b = s.AppendBinary(b)
	}
	return b
}

func canonicalJSON(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "null", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func applyPublishSegments(s *State, m Meta, c commands.PublishSegments) (any, error) {
	t := &s.segments
	t.init()
	segs, err := DecodeSegments(c.Segments, c.Count)
	if err != nil {
		return nil, Invalid("bad segment list: %v", err)
	}
	for _, seg := range segs {
		if seg.DataSource != c.DataSource {
			return nil, Invalid("segment %s belongs to datasource %q, not %q", seg.ID(), seg.DataSource, c.DataSource)
		}
		if err := seg.Validate(); err != nil {
			return nil, Invalid("segment %s: %v", seg.ID(), err)
		}
	}
	if c.TaskID != "" {
		if task, ok := s.Task(c.TaskID); !ok || !task.Active() {
			return nil, Conflict("task %s is not running: it may not publish", c.TaskID)
		}
		for _, seg := range segs {
			if !s.LockCovers(c.TaskID, seg.Interval) {
				return nil, Conflict("task %s holds no lock covering %s: it may not publish segment %s", c.TaskID, seg.Interval, seg.ID())
			}
		}
	}
	var end string
	switch {
	case c.MetadataMode == commands.MetadataModeKafka:
		if end, err = kafkaMetadataSwap(t.metadata[c.DataSource], c); err != nil {
			return nil, err
		}
	case c.MetadataMode != "":
		return nil, Invalid("unknown metadataMode %q (kafka, or none)", c.MetadataMode)
	case c.StartMetadata != nil || c.EndMetadata != nil:
		want, err := canonicalJSON(c.StartMetadata)
		if err != nil {
			return nil, Invalid("startMetadata: %v", err)
		}
		have, ok := t.metadata[c.DataSource]
		if !ok {
			have = "null"
		} else if c.StartMetadata != nil {
			// Kafka-mode metadata is stored in its own canonical form.
			have, _ = canonicalJSON(json.RawMessage(have))
		}
		if have != want {
			return nil, Conflict("ingestion metadata of %s is %s, not the expected %s: another writer published first", c.DataSource, have, want)
		}
		if end, err = canonicalJSON(c.EndMetadata); err != nil {
			return nil, Invalid("endMetadata: %v", err)
		}
	}
	var fresh []*segmeta.DataSegment
	seen := map[segmeta.ID]bool{}
	for _, seg := range segs {
		id := seg.ID()
		if r := t.records[id]; r != nil {
			// Republishing the same segment is idempotent; a different segment under
			// an existing id (two writers allocating the same partition) is refused,
			// or one writer's data would silently vanish.
			if r.Segment.LoadSpec != seg.LoadSpec || r.Segment.Size != seg.Size {
				return nil, Conflict("segment %s already exists with other contents: allocate a new partition number", id)
			}
			continue
		}
		if seen[id] {
			return nil, Invalid("segment %s is listed twice", id)
		}
		seen[id] = true
		fresh = append(fresh, seg)
	}
	// Every segment has a file of its own: a segment published onto another
	// segment's file would have a kill of either delete the other's data, and
	// one published onto a killed segment's file would lose its data to the
	// pending deletion. (Only commands that ask: entries written before the
	// check existed replay as they applied then.)
	claimed := map[string]segmeta.ID{}
	for _, seg := range fresh {
		k := deep.FileKey(string(seg.LoadSpec))
		if !c.OwnFiles || k == "" {
			continue
		}
		if t.files[k] > 0 {
			return nil, Conflict("segment %s: its loadSpec %s names the file of another segment; every segment needs a file of its own", seg.ID(), seg.LoadSpec)
		}
		if t.pendingFiles[k] > 0 {
			return nil, Conflict("segment %s: its loadSpec %s names the file of a killed segment, which is queued for deletion; store the segment under a new key", seg.ID(), seg.LoadSpec)
		}
		if other, ok := claimed[k]; ok {
			return nil, Invalid("segments %s and %s name the same file %s; every segment needs a file of its own", other, seg.ID(), seg.LoadSpec)
		}
		claimed[k] = seg.ID()
	}
	if _, err := t.used.Add(fresh); err != nil {
		return nil, Invalid("%v", err)
	}
	for _, seg := range fresh {
		t.put(&SegmentRecord{Segment: seg, Used: true, UsedUpdatedMs: m.TimeMs, CreatedMs: m.TimeMs})
	}
	if c.MetadataMode != "" || c.StartMetadata != nil || c.EndMetadata != nil {
		if end == "null" {
			delete(t.metadata, c.DataSource)
		} else {
			t.metadata[c.DataSource] = end
		}
	}
	return PublishResult{Published: len(fresh)}, nil
}

// MarkResult is the result of MarkSegments.
type MarkResult struct {
	Changed int
}

func applyMarkSegments(s *State, m Meta, c commands.MarkSegments) (any, error) {
	t := &s.segments
	t.init()
	selectors := 0
	for _, set := range []bool{len(c.IDs) > 0, c.Interval != "", c.All} {
		if set {
			selectors++
		}
	}
	if selectors != 1 {
		return nil, Invalid("Invalid request payload, either interval or segmentIds array must be specified")
	}
	var cands []*SegmentRecord
	switch {
	case len(c.IDs) > 0:
		var unknown []string
		for _, raw := range c.IDs {
			found := false
			for _, id := range segmeta.PossibleIDsWithDataSource(c.DataSource, raw) {
				if r := t.records[id]; r != nil {
					cands = append(cands, r)
					found = true
					break
				}
			}
			if !found {
				unknown = append(unknown, raw)
			}
		}
		if c.FailOnUnknown && len(unknown) > 0 {
			return nil, NotFound("Could not find the following segment ids: %s", strings.Join(unknown, ", "))
		}
	case c.Interval != "":
		iv, err := interval.Parse(c.Interval)
		if err != nil {
			return nil, Invalid("invalid interval %q: %v", c.Interval, err)
		}
		for _, r := range t.byDS[c.DataSource] {
			if iv.Contains(r.Segment.Interval) {
				cands = append(cands, r)
			}
		}
	default:
		for _, r := range t.byDS[c.DataSource] {
			cands = append(cands, r)
		}
	}
	// Deterministic order regardless of map iteration.
	slices.SortFunc(cands, func(a, b *SegmentRecord) int { return a.Segment.ID().Compare(b.Segment.ID()) })
	cands = slices.CompactFunc(cands, func(a, b *SegmentRecord) bool { return a == b })
	var flip []*SegmentRecord
	for _, r := range cands {
		if r.Used == c.Used {
			continue
		}
		// Only non-overshadowed segments come back (Druid's markUsed rule).
		if c.Used && t.used.IsOvershadowed(r.Segment) {
			continue
		}
		flip = append(flip, r)
	}
	if len(flip) == 0 {
		return MarkResult{}, nil
	}
	segs := make([]*segmeta.DataSegment, len(flip))
	ids := make([]segmeta.ID, len(flip))
	for i, r := range flip {
		segs[i], ids[i] = r.Segment, r.Segment.ID()
	}
	if c.Used {
		if _, err := t.used.Add(segs); err != nil {
			return nil, Invalid("%v", err)
		}
	} else {
		t.used.Remove(ids)
	}
	for _, r := range flip {
		t.put(&SegmentRecord{Segment: r.Segment, Used: c.Used, UsedUpdatedMs: m.TimeMs, CreatedMs: r.CreatedMs})
	}
	if !c.Used {
		payload := c.AuditPayload
		if payload == "" {
			payload = fmt.Sprintf(`{"numChangedSegments":%d}`, len(flip))
		}
		s.audit.add(m, c.DataSource, AuditSegmentMarkUnused, payload)
	}
	return MarkResult{Changed: len(flip)}, nil
}

// KillResult is the result of KillSegments.
type KillResult struct {
	Deleted []string // ids of the segments whose metadata was deleted
}

func applyKillSegments(s *State, m Meta, c commands.KillSegments) (any, error) {
	t := &s.segments
	t.init()
	iv, err := interval.Parse(c.Interval)
	if err != nil {
		return nil, Invalid("invalid interval %q: %v", c.Interval, err)
	}
	if c.DataSource == "" {
		return nil, Invalid("dataSource is empty")
	}
	var doomed []*SegmentRecord
	for _, r := range t.byDS[c.DataSource] {
		if !r.Used && iv.Contains(r.Segment.Interval) {
			doomed = append(doomed, r)
		}
	}
	slices.SortFunc(doomed, func(a, b *SegmentRecord) int { return a.Segment.ID().Compare(b.Segment.ID()) })
	res := KillResult{Deleted: make([]string, 0, len(doomed))}
	for _, r := range doomed {
		id := r.Segment.ID()
		t.delete(id)
		// The sweeper deletes the file only if no other segment names it
		// by then (State.FileInUse).
		if ls := string(r.Segment.LoadSpec); ls != "" && ls != "null" {
			t.queueDeletion(ls, id.String())
		}
		res.Deleted = append(res.Deleted, id.String())
	}
	payload, _ := json.Marshal(map[string]string{"killTaskId": c.TaskID, "interval": iv.String()})
	s.audit.add(m, c.DataSource, AuditSegmentKill, string(payload))
	return res, nil
}

func applyAckFileDeletions(s *State, m Meta, c commands.AckFileDeletions) (any, error) {
	t := &s.segments
	t.init()
	n := 0
	for _, ls := range c.LoadSpecs {
		if t.dequeueDeletion(ls) {
			n++
		}
	}
	return n, nil
}

// ---- reads ----

// Segments returns the records of a datasource ("" = all), sorted by id.
func (s *State) Segments(dataSource string) []*SegmentRecord {
	t := &s.segments
	var out []*SegmentRecord
	if dataSource == "" {
		out = make([]*SegmentRecord, 0, len(t.records))
		for _, r := range t.records {
			out = append(out, r)
		}
	} else {
		out = make([]*SegmentRecord, 0, len(t.byDS[dataSource]))
		for _, r := range t.byDS[dataSource] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *SegmentRecord) int { return a.Segment.ID().Compare(b.Segment.ID()) })
	return out
}

// Segment returns one record.
func (s *State) Segment(id segmeta.ID) (*SegmentRecord, bool) {
	r, ok := s.segments.records[id]
	return r, ok
}

// SegmentCount is the number of segment records.
func (s *State) SegmentCount() int { return len(s.segments.records) }

// DataSourceNames returns the datasources with at least one used segment, or with
// any segment when includeUnused, sorted.
func (s *State) DataSourceNames(includeUnused bool) []string {
	var out []string
	for ds := range s.segments.byDS {
		if includeUnused || s.segments.used.Timeline(ds) != nil {
			out = append(out, ds)
		}
	}
	slices.Sort(out)
	return out
}

// UsedIndex is the timeline index over used segments. Callers must only read it
// inside FSM.Read.
func (s *State) UsedIndex() *segmeta.Index {
	if s.segments.used == nil {
		return segmeta.NewIndex()
	}
	return s.segments.used
}

// IsOvershadowed reports whether seg is overshadowed by used segments.
func (s *State) IsOvershadowed(seg *segmeta.DataSegment) bool {
	if s.segments.used == nil {
		return false
	}
	return s.segments.used.IsOvershadowed(seg)
}

// DataSourceMetadata returns a datasource's ingestion metadata.
func (s *State) DataSourceMetadata(ds string) (string, bool) {
	v, ok := s.segments.metadata[ds]
	return v, ok
}

// fileInUse reports whether a segment record names the file loadSpec names.
func (t *segmentsTable) fileInUse(loadSpec string) bool {
	k := deep.FileKey(loadSpec)
	return k != "" && t.files[k] > 0
}

// FileInUse reports whether any segment known to the state (used or unused)
// names the deep-storage file loadSpec names: such a file must not be
// deleted.
func (s *State) FileInUse(loadSpec string) bool { return s.segments.fileInUse(loadSpec) }

// PendingFileDeletions returns deep-storage loadSpecs awaiting deletion, sorted.
func (s *State) PendingFileDeletions() []string {
	out := make([]string, 0, len(s.segments.pending))
	for ls := range s.segments.pending {
		out = append(out, ls)
	}
	slices.Sort(out)
	return out
}

// ---- snapshot ----

type kv struct {
	K string `json:"k"`
	V string `json:"v"`
}

func sortedKV(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	slices.SortFunc(out, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	return out
}

var segmentTables = []table{
	{
		name: "segments",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			recs := make([]*SegmentRecord, 0, len(s.segments.records))
			for _, r := range s.segments.records {
				recs = append(recs, r)
			}
			return len(recs), func(w *recordWriter) error {
				// Sorting happens here, outside the FSM lock.
				slices.SortFunc(recs, func(a, b *SegmentRecord) int { return a.Segment.ID().Compare(b.Segment.ID()) })
				var buf []byte
				enc := segmeta.NewEncoder() // shares a string dictionary across the table
				for _, r := range recs {
					buf = buf[:0]
					if r.Used {
						buf = append(buf, 1)
					} else {
						buf = append(buf, 0)
					}
					buf = binary.AppendVarint(buf, r.UsedUpdatedMs)
					buf = binary.AppendVarint(buf, r.CreatedMs)
					buf = enc.Append(buf, r.Segment)
					if err := w.writeRaw(buf); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			t := &s.segments
			t.init()
			var used []*segmeta.DataSegment
			dec := segmeta.NewDecoder()
			for i := 0; i < n; i++ {
				b, err := r.readRaw()
				if err != nil {
					return err
				}
				if len(b) < 3 || b[0] > 1 {
					return fmt.Errorf("segment record %d is malformed", i)
				}
				rec := &SegmentRecord{Used: b[0] == 1, Segment: new(segmeta.DataSegment)}
				b = b[1:]
				var k int
				if rec.UsedUpdatedMs, k = binary.Varint(b); k <= 0 {
					return fmt.Errorf("segment record %d is malformed", i)
				}
				b = b[k:]
				if rec.CreatedMs, k = binary.Varint(b); k <= 0 {
					return fmt.Errorf("segment record %d is malformed", i)
				}
				if rest, err := dec.Decode(rec.Segment, b[k:]); err != nil || len(rest) != 0 {
					return fmt.Errorf("segment record %d: %v", i, err)
				}
				t.put(rec)
				if rec.Used {
					used = append(used, rec.Segment)
				}
			}
			_, err := t.used.Add(used)
			return err
		},
	},
	kvTable("datasource_metadata", func(s *State) map[string]string { return s.segments.metadata }),
	withRestored(kvTable("pending_file_deletions", func(s *State) map[string]string { return s.segments.pending }),
		func(s *State) {
			for ls := range s.segments.pending {
				countFile(s.segments.pendingFiles, segmeta.RawJSON(ls), 1)
			}
		}),
}

// withRestored runs after once tb's records are restored (to rebuild derived
// indexes).
func withRestored(tb table, after func(s *State)) table {
	restore := tb.restore
	tb.restore = func(s *State, r *recordReader, n int) error {
		if err := restore(s, r, n); err != nil {
			return err
		}
		after(s)
		return nil
	}
	return tb
}

// kvTable snapshots a string map of the segments table as sorted key/value records.
func kvTable(name string, m func(s *State) map[string]string) table {
	return table{
		name: name,
		freeze: func(s *State) (int, func(*recordWriter) error) {
			kvs := sortedKV(m(s))
			return len(kvs), func(w *recordWriter) error {
				for _, e := range kvs {
					if err := w.write(e); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			s.segments.init()
			dst := m(s)
			for i := 0; i < n; i++ {
				var e kv
				if err := r.read(&e); err != nil {
					return err
				}
				dst[e.K] = e.V
			}
			return nil
		},
	}
}

func init() {
	on(applyPublishSegments)
	on(applyMarkSegments)
	on(applyKillSegments)
	on(applyAckFileDeletions)
	tables = append(tables, segmentTables...)
}

// ---- Kafka offsets (Druid's KafkaDataSourceMetadata) ----

// ParseKafkaMetadata reads Druid's Kafka ingestion metadata,
// {"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100}}},
// also with Druid's aliases "topic" for stream, "partitionSequenceNumberMap"
// for partitionOffsetMap and partitions type "start". "" and "null" are no
// offsets at all.
func ParseKafkaMetadata(metadata string) (stream string, offsets map[int32]int64, err error) {
	offsets = map[int32]int64{}
	t := strings.TrimSpace(metadata)
	if t == "" || t == "null" {
		return "", offsets, nil
	}
	var doc struct {
		Type       string `json:"type"`
		Partitions *struct {
			Type      string                 `json:"type"`
			Stream    string                 `json:"stream"`
			Topic     string                 `json:"topic"`
			OffsetMap map[string]json.Number `json:"partitionOffsetMap"`
			SeqMap    map[string]json.Number `json:"partitionSequenceNumberMap"`
		} `json:"partitions"`
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return "", nil, fmt.Errorf("invalid Kafka metadata: %v", err)
	}
	if dec.More() {
		return "", nil, fmt.Errorf("invalid Kafka metadata: data after the JSON object")
	}
	if doc.Type != "kafka" {
		return "", nil, fmt.Errorf("metadata type %q is not \"kafka\"", doc.Type)
	}
	p := doc.Partitions
	if p == nil {
		return "", nil, fmt.Errorf("Kafka metadata without partitions")
	}
	if p.Type != "" && p.Type != "end" && p.Type != "start" {
		return "", nil, fmt.Errorf("Kafka metadata partitions type %q (end, start)", p.Type)
	}
	stream = p.Stream
	if stream == "" {
		stream = p.Topic
	} else if p.Topic != "" && p.Topic != stream {
		return "", nil, fmt.Errorf("Kafka metadata names stream %q and topic %q", p.Stream, p.Topic)
	}
	m := p.OffsetMap
	if m == nil {
		m = p.SeqMap
	} else if p.SeqMap != nil {
		return "", nil, fmt.Errorf("Kafka metadata has both partitionOffsetMap and partitionSequenceNumberMap")
	}
	for k, v := range m {
		part, err := strconv.ParseInt(k, 10, 32)
		if err != nil || part < 0 {
			return "", nil, fmt.Errorf("Kafka metadata: bad partition %q", k)
		}
		off, err := strconv.ParseInt(v.String(), 10, 64)
		if err != nil || off < 0 {
			return "", nil, fmt.Errorf("Kafka metadata: bad offset %s for partition %s", v, k)
		}
		offsets[int32(part)] = off
	}
	if stream == "" && len(offsets) > 0 {
		return "", nil, fmt.Errorf("Kafka metadata without a stream")
	}
	return stream, offsets, nil
}

// KafkaMetadataJSON renders Kafka offsets as Druid's metadata JSON with the
// partitions in numeric order, the canonical stored form.
func KafkaMetadataJSON(stream string, offsets map[int32]int64) string {
	parts := make([]int32, 0, len(offsets))
	for p := range offsets {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	var b strings.Builder
	sj, _ := json.Marshal(stream)
	b.WriteString(`{"type":"kafka","partitions":{"type":"end","stream":`)
	b.Write(sj)
	b.WriteString(`,"partitionOffsetMap":{`)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strconv.FormatInt(int64(p), 10))
		b.WriteString(`":`)
		b.WriteString(strconv.FormatInt(offsets[p], 10))
	}
	b.WriteString("}}}")
	return b.String()
}

// kafkaMetadataSwap is the per-partition compare-and-swap of a Kafka publish:
// every partition of the start offsets must hold that offset in the stored
// metadata or be absent from it, and the stream must be the stored one. It
// returns the new stored metadata: the stored offsets overwritten by the end
// ones ("null" when there is nothing to store).
func kafkaMetadataSwap(stored string, c commands.PublishSegments) (string, error) {
	startStream, start, err := ParseKafkaMetadata(string(c.StartMetadata))
	if err != nil {
		return "", Invalid("startMetadata: %v", err)
	}
	endStream, end, err := ParseKafkaMetadata(string(c.EndMetadata))
	if err != nil {
		return "", Invalid("endMetadata: %v", err)
	}
	if startStream != "" && endStream != "" && startStream != endStream {
		return "", Invalid("startMetadata stream %q differs from endMetadata stream %q", startStream, endStream)
	}
	stream := endStream
	if stream == "" {
		stream = startStream
	}
	haveStream, have, err := ParseKafkaMetadata(stored)
	if err != nil {
		return "", Conflict("ingestion metadata of %s is not Kafka offsets (%v): reset it first", c.DataSource, err)
	}
	if haveStream != "" && stream != "" && haveStream != stream {
		return "", Conflict("ingestion metadata of %s is for stream %q, not %q: reset the offsets first", c.DataSource, haveStream, stream)
	}
	parts := make([]int32, 0, len(start))
	for p := range start {
		parts = append(parts, p)
	}
	slices.Sort(parts) // the first mismatch named in the error is deterministic
	for _, p := range parts {
		if cur, ok := have[p]; ok && cur != start[p] {
			return "", Conflict("offset of %s partition %d is %d, not the expected start %d: another writer published first", c.DataSource, p, cur, start[p])
		}
	}
	for p, off := range end {
		have[p] = off
	}
	if stream == "" {
		stream = haveStream
	}
	if stream == "" && len(have) == 0 {
		return "null", nil
	}
	return KafkaMetadataJSON(stream, have), nil
}
