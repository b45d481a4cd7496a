package broker

import (
	"cmp"
	"encoding/json"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"strata/protocol"
	"strata/segmeta"
	"strata/storage/deep"
)

// Replicated realtime rows. A Kafka supervisor with ioConfig.replicas > 1
// runs each sequence of a task group as several tasks on different middle
// managers, reading the same records; each task serves realtime segments of
// its own (their version names the task) and its worker announces them with
// the sequence's name (protocol.Announcement.Sequences) and the stream
// position its rows reach (protocol.Announcement.Offsets). A query reads the
// segments of one replica per sequence: never two (each row would count
// twice) and never part of each (a mix of two positions in the stream). The
// replica that has read furthest is chosen, so that an answer holds as many
// of the stream's records as any replica serves; among replicas as far, the
// one of the lowest replica number (in the task id, so in the version), as
// it is the one that publishes first (streaming/replicas.go). The choice
// sticks while the chosen replica is announced and no other has read
// further, so that answers do not jump between replicas at one position.
// (Without positions, from an older middle manager, a lower replica takes
// over once it serves as many bytes.) When the chosen replica's server fails
// during a query, the query reads the furthest other replica instead, and
// when it stops being announced, the furthest other is chosen; catchup.go
// deals with one that is behind what earlier answers showed.
//
// A sequence is handed off once a segment one of its tasks published is in
// the broker's view (from any server: the file of a published segment is
// stored under the id of the task that published it, and a replica's id
// starts with its sequence's name): from that moment no realtime segment of
// the sequence is read, from any server, so the published rows are never
// read beside a replica that has not yet noticed the publish.

// handedMemory is how long a sequence seen handed off stays excluded; its
// replicas withdraw their realtime segments well within it.
const handedMemory = 10 * time.Minute

// replicaChoice is the view's record of the replica read per sequence;
// guarded by view.mu.
type replicaChoice struct {
	chosen map[string]rtReplica // sequence → the replica read
	handed map[string]time.Time // sequences seen handed off → when first seen
	// published are the sequences of the published segments seen, when
	// first seen: a replica announced after the hand-off is in view (a
	// broker polls the servers in any order) is handed off at once.
	published map[string]time.Time
}

// rtReplica is one task's realtime segments: their server and version.
type rtReplica struct {
	srv     *server
	version string
}

// rtStandby is a replica not read, with the query's segments of it and the
// stream position they reach (nil: not announced).
type rtStandby struct {
	rtReplica
	refs []protocol.SegmentRef
	pos  map[int32]int64
}

// settleReplicas updates the choices after an announcement changed (v.mu
// held for writing), given the published segments it added: a new or
// orphaned sequence gets the replica that has read furthest, of the lowest
// number (replicaNumber) among equals; a choice stays while its replica is
// announced, unless another overtook it.
func (v *view) settleReplicas(now time.Time, added []*segmeta.DataSegment) {
	c := &v.rt
	if c.chosen == nil {
		c.chosen, c.handed, c.published = map[string]rtReplica{}, map[string]time.Time{}, map[string]time.Time{}
	}
	cands := map[string][]rtReplica{}
	for _, s := range v.servers {
		for version, seq := range s.sequences {
			cands[seq] = append(cands[seq], rtReplica{srv: s, version: version})
		}
	}
	for _, seg := range added {
		seq := publishedSequence(seg)
		if seq == "" {
			continue
		}
		if _, ok := c.published[seq]; !ok {
			c.published[seq] = now
		}
		// A sequence known before this announcement (whose replica may
		// just have swapped its realtime segments for these), or whose rows
		// answers read (a replica started in place of lost ones may publish
		// without serving hydrants first).
		if c.chosen[seq] != (rtReplica{}) || v.shown.has(seq) {
			if _, ok := c.handed[seq]; !ok {
				c.handed[seq] = now
			}
		}
	}
	// A sequence with replicas now whose published segment is in view,
	// whichever was announced first.
	for seq := range cands {
		if _, ok := c.published[seq]; ok {
			if _, ok := c.handed[seq]; !ok {
				c.handed[seq] = now
			}
		}
	}
	for seq, at := range c.handed {
		if now.Sub(at) > handedMemory {
			delete(c.handed, seq)
		}
	}
	for seq, at := range c.published {
		if now.Sub(at) > handedMemory {
			delete(c.published, seq)
		}
	}
	for seq := range c.chosen {
		if len(cands[seq]) == 0 {
			delete(c.chosen, seq)
		}
	}
	for seq, list := range cands {
		best := slices.MinFunc(list, func(a, b rtReplica) int {
			return cmp.Or(-comparePositions(a.position(), b.position()),
				cmp.Compare(replicaNumber(a.version, seq), replicaNumber(b.version, seq)),
				strings.Compare(a.version, b.version), strings.Compare(a.srv.url, b.srv.url))
		})
		if cur, ok := c.chosen[seq]; ok && slices.Contains(list, cur) && !overtakes(best, cur) {
			continue
		}
		c.chosen[seq] = best
	}
	v.shown.forget(now, cands, c.handed)
}

// overtakes tells whether best is to be read in place of the chosen cur:
// it has read further; without positions, it serves as many bytes (best is
// then the lower replica).
func overtakes(best, cur rtReplica) bool {
	if best == cur {
		return false
	}
	bp, cp := best.position(), cur.position()
	if bp != nil && cp != nil {
		return comparePositions(bp, cp) > 0
	}
	return best.bytes() >= cur.bytes()
}

// position is how far the replica's served rows reach in the stream (nil:
// not announced).
func (r rtReplica) position() map[int32]int64 { return r.srv.offsets[r.version] }

// records is how many records of the stream a position covers past offset
// 0 of each partition: replicas of a sequence read the same partitions from
// the same offsets, so the one with more has read further.
func records(pos map[int32]int64) int64 {
	var n int64
	for _, off := range pos {
		n += off
	}
	return n
}

// comparePositions orders two positions by the records they cover; an
// unknown position (nil) is before any known one.
func comparePositions(a, b map[int32]int64) int {
	if a == nil || b == nil {
		return cmp.Compare(boolInt(a != nil), boolInt(b != nil))
	}
	return cmp.Compare(records(a), records(b))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// replicaNumber is the replica number in the version of a realtime segment
// of sequence seq (realtime-<seq>_<number>_<random>); a version without one
// sorts last.
func replicaNumber(version, seq string) int {
	rest, ok := strings.CutPrefix(version, "realtime-"+seq+"_")
	if !ok {
		return math.MaxInt
	}
	num, _, _ := strings.Cut(rest, "_")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return math.MaxInt
	}
	return n
}

// bytes is the size of the replica's realtime segments.
func (r rtReplica) bytes() int64 {
	var n int64
	for _, seg := range r.srv.realtime {
		if seg.Version == r.version {
			n += seg.Size
		}
	}
	return n
}

// publishedSequence is the sequence whose task published seg, read from the
// file key of its loadSpec (.../<task id>/<file>, the task id being
// <sequence>_<replica number>_<suffix>); "" when the key has no such element.
func publishedSequence(seg *segmeta.DataSegment) string {
	key := deep.FileKey(string(seg.LoadSpec))
	if key == "" {
		return ""
	}
	var ls deep.LoadSpec
	if json.Unmarshal([]byte(key), &ls) != nil {
		return ""
	}
	task := path.Base(path.Dir(ls.Path + ls.Key))
	for range 2 {
		i := strings.LastIndexByte(task, '_')
		if i <= 0 {
			return ""
		}
		task = task[:i]
	}
	return task
}

// reads tells whether queries read realtime segment seg of server s, and
// the sequence it belongs to ("" when its task has no replicas).
func (c *replicaChoice) reads(s *server, seg *segmeta.DataSegment) (seq string, ok bool) {
	seq = s.sequences[seg.Version]
	if seq == "" {
		return "", true
	}
	if _, gone := c.handed[seq]; gone {
		return seq, false
	}
	return seq, c.chosen[seq] == rtReplica{srv: s, version: seg.Version}
}

// standby lists, per sequence, the replicas not read and their segments
// among refs of ds overlapping the query (v.mu held).
func (v *view) standby(ds string, overlaps func(*segmeta.DataSegment) bool) map[string][]rtStandby {
	var out map[string][]rtStandby
	for _, s := range v.servers {
		for _, seg := range s.realtime {
			if seg.DataSource != ds || seg.IsTombstone() || !overlaps(seg) {
				continue
			}
			seq, read := v.rt.reads(s, seg)
			if read || seq == "" {
				continue
			}
			if _, gone := v.rt.handed[seq]; gone {
				continue
			}
			if out == nil {
				out = map[string][]rtStandby{}
			}
			list := out[seq]
			i := slices.IndexFunc(list, func(r rtStandby) bool { return r.srv == s && r.version == seg.Version })
			if i < 0 {
				list = append(list, rtStandby{rtReplica: rtReplica{srv: s, version: seg.Version}, pos: s.offsets[seg.Version]})
				i = len(list) - 1
			}
			list[i].refs = append(list[i].refs, protocol.SegmentRef{ID: seg.ID().String(), Interval: seg.Interval.String()})
			out[seq] = list
		}
	}
	// A failover reads the furthest replica left.
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b rtStandby) int { return -comparePositions(a.pos, b.pos) })
	}
	return out
}

// replicaFailover handles the units of a server that failed to answer: the
// realtime units of a replicated sequence are replaced by the units of one
// standby replica on a server not known down, the furthest (all of that
// replica's: a query never mixes replicas); the others are to be retried as
// before.
func replicaFailover(units []unit, failed []int, srv *server, down map[*server]bool) (retry []int, added []unit) {
	down[srv] = true
	switched := map[string]bool{} // sequence → whether a standby took over
	for _, i := range failed {
		u := units[i]
		if !u.realtime || u.seq == "" {
			retry = append(retry, i)
			continue
		}
		ok, seen := switched[u.seq]
		if !seen {
			for _, sb := range u.standby {
				if down[sb.srv] {
					continue
				}
				for _, ref := range sb.refs {
					added = append(added, unit{ref: ref, servers: []*server{sb.srv}, realtime: true, seq: u.seq, standby: u.standby, pos: sb.pos})
				}
				ok = true
				break
			}
			switched[u.seq] = ok
		}
		if !ok {
			retry = append(retry, i) // no replica left: fails as an unread segment does
		}
	}
	return retry, added
}

// replicaGone lists the units of a reply whose replica left the server: for
// their sequence every unit the reply answers for is missing and nothing
// replaced them (the task withdrew its rows, or the server is stopping), so
// another replica is read instead of losing the rows from the answer.
func replicaGone(units []unit, r reply) []int {
	gone := map[string]bool{} // sequence → all its units missing, none replaced
	for _, i := range r.units {
		u := units[i]
		if !u.realtime || u.seq == "" || len(u.standby) == 0 {
			continue
		}
		ok := r.missing[u.ref.ID] && len(r.replaced[u.ref.ID]) == 0
		if prev, seen := gone[u.seq]; seen {
			ok = ok && prev
		}
		gone[u.seq] = ok
	}
	var out []int
	for _, i := range r.units {
		if u := units[i]; u.seq != "" && gone[u.seq] {
			out = append(out, i)
		}
	}
	return out
}
