package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"strata/commands"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/interval"
	"strata/javacompat"
	"strata/overlord"
	"strata/segmeta"
	"strata/storage/deep"
)

// badMarkPayload is Druid's exact 400 sentence for a mark request without exactly
// one selector (ADMIN-API §6.1).
const badMarkPayload = "Invalid request payload, either interval or segmentIds array must be specified"

// markPayload is the body of markUsed/markUnused. Null members count as absent.
type markPayload struct {
	Interval   *string  `json:"interval"`
	SegmentIDs []string `json:"segmentIds"` // nil: absent; empty: invalid
}

func (p markPayload) valid() bool {
	return (p.Interval != nil) != (p.SegmentIDs != nil) && (p.SegmentIDs == nil || len(p.SegmentIDs) > 0)
}

// markSegments serves POST /{ds}/markUsed and /{ds}/markUnused.
func (s *Server) markSegments(used bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.readJSONBody(w, r)
		if !ok {
			return
		}
		ds, ok := dataSourceParam(w, r)
		if !ok {
			return
		}
		var p markPayload
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &p); err != nil {
				writeError(w, http.StatusBadRequest, "cannot read request payload: "+err.Error())
				return
			}
		}
		if !p.valid() {
			writeText(w, http.StatusBadRequest, badMarkPayload)
			return
		}
		cmd := commands.MarkSegments{DataSource: ds, Used: used}
		if p.Interval != nil {
			iv, err := interval.Parse(*p.Interval)
			if err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
			cmd.Interval = iv.String()
		} else {
			cmd.IDs = p.SegmentIDs
		}
		if !used {
			cmd.AuditPayload = string(body)
		}
		// The served view is the used set until historicals report their
		// segments: a datasource without used segments is "not found" (204).
		var known bool
		var unknown []string
		s.node.FSM().Read(func(st *fsm.State) {
			known = st.UsedIndex().Timeline(ds) != nil
			if known && used {
				unknown = unknownIDs(st, ds, cmd.IDs)
			}
		})
		if !known {
			writeEmpty(w, http.StatusNoContent)
			return
		}
		if len(unknown) > 0 {
			// Checked here for Druid's {"message"} body (shape C); the FSM checks
			// again under FailOnUnknown in case a kill slipped in between.
			writeJSONPlain(w, http.StatusNotFound, map[string]string{"message": unknownIDsMessage(unknown)})
			return
		}
		cmd.FailOnUnknown = used && len(cmd.IDs) > 0
		if res, ok := s.proposeMark(w, r, cmd); ok {
			writeJSONPlain(w, http.StatusOK, map[string]int{"numChangedSegments": res.Changed})
		}
	}
}

// unknownIDs lists the ids that name no segment of ds in metadata.
func unknownIDs(st *fsm.State, ds string, ids []string) []string {
	var out []string
	for _, raw := range ids {
		found := false
		for _, id := range segmeta.PossibleIDsWithDataSource(ds, raw) {
			if _, ok := st.Segment(id); ok {
				found = true
				break
			}
		}
		if !found {
			out = append(out, raw)
		}
	}
	return out
}

func unknownIDsMessage(ids []string) string {
	return "Could not find the following segment ids: " + strings.Join(ids, ", ")
}

func (s *Server) proposeMark(w http.ResponseWriter, r *http.Request, cmd commands.MarkSegments) (fsm.MarkResult, bool) {
	v, ok := s.propose(w, r, cmd)
	if !ok {
		return fsm.MarkResult{}, false
	}
	res, _ := v.(fsm.MarkResult)
	return res, true
}

// markOneUnused serves DELETE /{ds}/segments/{segmentId}: an id that does not
// parse for the datasource changes nothing (200 false).
func (s *Server) markOneUnused(w http.ResponseWriter, r *http.Request) {
	ds, ok := dataSourceParam(w, r)
	if !ok {
		return
	}
	raw := mux.Vars(r)["segmentId"]
	if _, err := segmeta.ParseID(ds, raw); err != nil {
		writeJSONPlain(w, http.StatusOK, map[string]bool{"segmentStateChanged": false})
		return
	}
	if res, ok := s.proposeMark(w, r, commands.MarkSegments{DataSource: ds, IDs: []string{raw}}); ok {
		writeJSONPlain(w, http.StatusOK, map[string]bool{"segmentStateChanged": res.Changed > 0})
	}
}

// markOneUsed serves POST /{ds}/segments/{segmentId}.
func (s *Server) markOneUsed(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.readJSONBody(w, r); !ok {
		return
	}
	ds, ok := dataSourceParam(w, r)
	if !ok {
		return
	}
	raw := mux.Vars(r)["segmentId"]
	if len(segmeta.PossibleIDsWithDataSource(ds, raw)) == 0 {
		writeJSONPlain(w, http.StatusOK, map[string]bool{"segmentStateChanged": false})
		return
	}
	if res, ok := s.proposeMark(w, r, commands.MarkSegments{DataSource: ds, Used: true, IDs: []string{raw}}); ok {
		writeJSONPlain(w, http.StatusOK, map[string]bool{"segmentStateChanged": res.Changed > 0})
	}
}

// markOneUsedAnyDataSource serves POST /datasources/segments/{segmentId}, the
// spec's path without the datasource: the id is read every possible way and the
// first reading that names a stored segment wins.
func (s *Server) markOneUsedAnyDataSource(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.readJSONBody(w, r); !ok {
		return
	}
	raw := mux.Vars(r)["segmentId"]
	var ds string
	s.node.FSM().Read(func(st *fsm.State) {
		for _, id := range segmeta.PossibleIDs(raw) {
			if _, ok := st.Segment(id); ok {
				ds = id.DataSource
				return
			}
		}
	})
	if ds == "" {
		writeJSONPlain(w, http.StatusOK, map[string]bool{"segmentStateChanged": false})
		return
	}
	if res, ok := s.proposeMark(w, r, commands.MarkSegments{DataSource: ds, Used: true, IDs: []string{raw}}); ok {
		writeJSONPlain(w, http.StatusOK, map[string]bool{"segmentStateChanged": res.Changed > 0})
	}
}

// deleteDataSource serves DELETE /{ds}: marks every segment unused, or with the
// deprecated kill=true&interval=... kills like DELETE /{ds}/intervals/{i}.
func (s *Server) deleteDataSource(w http.ResponseWriter, r *http.Request) {
	ds, ok := dataSourceParam(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if strings.EqualFold(q.Get("kill"), "true") { // Java's Boolean.valueOf
		if !q.Has("interval") {
			writeError(w, http.StatusBadRequest, "kill=true needs an interval parameter (start_end)")
			return
		}
		s.kill(w, r, ds, q.Get("interval"))
		return
	}
	if res, ok := s.proposeMark(w, r, commands.MarkSegments{DataSource: ds, All: true}); ok {
		writeJSONPlain(w, http.StatusOK, map[string]int{"numChangedSegments": res.Changed})
	}
}

// markAllUsed serves POST /{ds}: every unused segment that no used segment
// overshadows becomes used.
func (s *Server) markAllUsed(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.readJSONBody(w, r); !ok {
		return
	}
	ds, ok := dataSourceParam(w, r)
	if !ok {
		return
	}
	if res, ok := s.proposeMark(w, r, commands.MarkSegments{DataSource: ds, Used: true, All: true}); ok {
		writeJSONPlain(w, http.StatusOK, map[string]int{"numChangedSegments": res.Changed})
	}
}

// killInterval serves DELETE /{ds}/intervals/{start_end}.
func (s *Server) killInterval(w http.ResponseWriter, r *http.Request) {
	ds, ok := dataSourceParam(w, r)
	if !ok {
		return
	}
	s.kill(w, r, ds, mux.Vars(r)["interval"])
}

// kill starts a kill task (Druid's api-issued kill) that deletes the metadata of
// the unused segments fully inside the interval and queues their files for
// deletion; the 200 comes once the task is accepted. The task locks the interval,
// so it is ordered with ingestion into it. Where no middle manager has ever
// registered (Druid answers "no indexing service found"), the deletion is done
// directly as one replicated command recorded under the same task id.
func (s *Server) kill(w http.ResponseWriter, r *http.Request, ds, rawInterval string) {
	iv, err := interval.ParsePath(rawInterval)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := killTaskID(ds, iv, time.Now().UnixMilli())
	workers := 0
	s.node.FSM().Read(func(st *fsm.State) { workers = len(st.Workers()) })
	if s.roles[RoleOverlord] && workers > 0 {
		spec, _ := json.Marshal(map[string]any{"type": "kill", "id": id, "dataSource": ds, "interval": iv.String(),
			"markAsUnused": false, "batchSize": nil, "limit": nil, "maxUsedStatusLastUpdatedTime": nil})
		task, locks, err := middlemanager.ParseTask(spec, time.Now())
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		cmd := commands.SubmitTask{ID: task.ID, Type: task.Type, GroupID: task.GroupID, DataSource: task.DataSource, Payload: task.Payload}
		for _, l := range locks {
			cmd.Locks = append(cmd.Locks, l.String())
		}
		if _, ok := s.propose(w, r, cmd); ok {
			if o := overlord.For(s.node); o != nil {
				o.Submitted()
			}
			writeEmpty(w, http.StatusOK)
		}
		return
	}
	cmd := commands.KillSegments{DataSource: ds, Interval: iv.String(), TaskID: id}
	if _, ok := s.propose(w, r, cmd); ok {
		writeEmpty(w, http.StatusOK)
	}
}

// killTaskID builds api-issued_kill_<ds>_<8 letters a–p>_<start>_<end>_<now>
// (Druid's IdUtils.newTaskId).
func killTaskID(ds string, iv interval.Interval, nowMs int64) string {
	var suffix [8]byte
	for i := range suffix {
		suffix[i] = 'a' + byte(rand.IntN(16))
	}
	return strings.Join([]string{"api-issued", "kill", ds, string(suffix[:]),
		interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), interval.FormatMillis(nowMs)}, "_")
}

// publishRequest is the body of the internal publish endpoint.
type publishRequest struct {
	DataSource    string                 `json:"dataSource"`
	Segments      []*segmeta.DataSegment `json:"segments"`
	StartMetadata json.RawMessage        `json:"startMetadata"` // nil: absent
	EndMetadata   json.RawMessage        `json:"endMetadata"`
	MetadataMode  string                 `json:"metadataMode"` // "" whole-document CAS, "kafka" per partition
	TaskID        string                 `json:"taskId"`       // the publishing task, which must hold locks on the segments
}

// publishSegments serves POST /svc-internal/v1/segments/publish, which ingestion
// tools use to add segments atomically, optionally with a compare-and-swap of
// the datasource's ingestion metadata (409 on mismatch).
func (s *Server) publishSegments(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var req publishRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "cannot read publish request: "+err.Error())
		return
	}
	if msg := dataSourceNameProblem(req.DataSource); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	for i, seg := range req.Segments {
		if seg == nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("segments[%d] is null", i))
			return
		}
		if seg.DataSource != req.DataSource {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("segment %s belongs to datasource %q, not %q", seg.ID(), seg.DataSource, req.DataSource))
			return
		}
		if seg.Interval.IsEmpty() {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("segment %s has an empty interval", seg.ID()))
			return
		}
		if msg := s.loadSpecProblem(seg); msg != "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("segment %s: loadSpec %s is refused: %s", seg.ID(), seg.LoadSpec, msg))
			return
		}
	}
	cmd := commands.PublishSegments{
		DataSource:    req.DataSource,
		Segments:      fsm.EncodeSegments(req.Segments),
		Count:         len(req.Segments),
		StartMetadata: req.StartMetadata,
		EndMetadata:   req.EndMetadata,
		MetadataMode:  req.MetadataMode,
		TaskID:        req.TaskID,
		OwnFiles:      true,
	}
	v, ok := s.propose(w, r, cmd)
	if !ok {
		return
	}
	res, _ := v.(fsm.PublishResult)
	writeJSONPlain(w, http.StatusOK, map[string]int{"published": res.Published})
}

// loadSpecProblem says why seg's loadSpec may not be published ("" if it
// may). A segment's loadSpec must name its own file in the configured deep
// storage, under the key its id gives (dataSource/interval/version/partition,
// as ingestion writes it, optionally with one more element such as the task
// id), so that a kill of one segment can never delete another's file nor
// anything outside deep storage. A tombstone has no file. The leader checks
// this before proposing: the FSM cannot know the storage configuration (it
// checks, with OwnFiles, that no other segment names the file).
func (s *Server) loadSpecProblem(seg *segmeta.DataSegment) string {
	raw := string(seg.LoadSpec)
	var spec deep.LoadSpec
	if raw != "" && raw != "null" {
		if err := json.Unmarshal([]byte(raw), &spec); err != nil {
			return "it is not a load spec object: " + err.Error()
		}
	}
	switch {
	case seg.IsTombstone():
		if raw == "" || raw == "null" || spec.Type == "tombstone" {
			return ""
		}
		return `a tombstone has no file: its loadSpec is {"type":"tombstone"}`
	case raw == "" || raw == "null":
		return "a segment needs a loadSpec naming its file in deep storage"
	case spec.Type == "tombstone":
		return "only a segment with a tombstone shardSpec can have a tombstone loadSpec"
	}
	key, err := deep.CheckedSegmentKey(seg.DataSource, interval.FormatMillis(seg.Interval.Start), interval.FormatMillis(seg.Interval.End),
		seg.Version, int(seg.ShardSpec.PartitionNum))
	if err != nil {
		return err.Error()
	}
	if err := s.deepStorage.CheckLoadSpec(spec, key); err != nil {
		return fmt.Sprintf("%v; a segment's loadSpec must name its own file in deep storage, under %s", err, s.deepStorage.KeyLocation(key))
	}
	return ""
}

// ---- helpers shared by the segment endpoints ----

// dataSourceParam returns the {dataSourceName} path variable, answering 400 when the name
// cannot be a datasource.
func dataSourceParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	ds := mux.Vars(r)["dataSourceName"]
	if msg := dataSourceNameProblem(ds); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return "", false
	}
	return ds, true
}

func dataSourceNameProblem(ds string) string {
	switch {
	case strings.TrimSpace(ds) == "":
		return "invalid datasource name: it must not be empty or whitespace"
	case strings.ContainsRune(ds, '/'):
		return fmt.Sprintf("invalid datasource name %q: it must not contain '/'", ds)
	case !utf8.ValidString(ds):
		return "invalid datasource name: it is not valid UTF-8"
	}
	return ""
}

// flag reports a presence-tested flag parameter (ADMIN-API §0): any value, even
// empty or "false", switches it on.
func flag(r *http.Request, name string) bool {
	_, ok := r.URL.Query()[name]
	return ok
}

// writeText answers a raw sentence (ADMIN-API §1.1 shape F).
func writeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(msg))
}

// writeJSONPlain is writeJSON without HTML escaping, so names with <, > or &
// come out as Jackson writes them.
func writeJSONPlain(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "cannot encode response")
		return
	}
	writeRawJSON(w, status, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func writeRawJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// appendSegments appends a JSON array of DataSegment objects.
func appendSegments(dst []byte, segs []*segmeta.DataSegment) []byte {
	dst = slices.Grow(dst, 2+len(segs)*segmentJSONSize)
	dst = append(dst, '[')
	for i, seg := range segs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = seg.AppendJSON(dst)
	}
	return append(dst, ']')
}

// segmentJSONSize is a typical DataSegment object's length, to size buffers.
const segmentJSONSize = 600

// appendSegmentIDs appends a JSON array of segment id strings.
func appendSegmentIDs(dst []byte, segs []*segmeta.DataSegment) []byte {
	dst = slices.Grow(dst, 2+len(segs)*120)
	dst = append(dst, '[')
	var id []byte
	for i, seg := range segs {
		if i > 0 {
			dst = append(dst, ',')
		}
		id = seg.ID().AppendTo(id[:0])
		dst = javacompat.AppendJSONString(dst, string(id))
	}
	return append(dst, ']')
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
