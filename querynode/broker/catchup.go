package broker

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/interval"
)

// Falling back on a replica that is behind. The replicas of a Kafka
// sequence read the same records, but each builds what it read into
// queryable segments on its own schedule (every realtime period), so at any
// moment one may serve up to a period fewer records than another. A broker
// reads the furthest (replicas.go); when that one is lost, the next one may
// be behind what this broker's answers already held, and an answer read
// from it would silently hold fewer rows than the one before.
//
// So the broker remembers, per sequence, the furthest position its answers
// read and the time chunks of the rows read (shownPositions). A query that
// would read a replica behind it waits, up to the context's
// realtimeCatchUpTimeout (defaultCatchUp), for a replica to catch up: it
// re-reads the view each time an announcement changes it. So does a query
// of a time chunk that earlier answers read rows of a sequence from, and
// that no replica of the sequence serves now (every replica lost, or the
// ones left have not built that far yet), unless the sequence was handed
// off. A sequence that a failed task group's successor (a new sequence of
// the same group, from the same offsets) reads on is compared with the
// successor's position. A query whose replica failed during the query and
// whose fallback is behind is run again the same way. When the wait ends
// without a replica that far, the query answers from what there is and says
// so in the response context (realtimeBehind: the sequence, the positions
// shown and read, and how many records lie between, or that none of the
// sequence was read); later queries then flag at once rather than wait
// again, until a replica catches up.

// defaultCatchUp is how long a query waits by default for a replica to
// catch up: the default realtime period (1 s), a build and a broker poll,
// with room for a loaded machine.
const defaultCatchUp = 3 * time.Second

// RealtimeBehind names a sequence whose realtime rows an answer read from a
// replica behind what earlier answers of this broker read: the answer
// lacks Records records of the stream that earlier ones held. Unread: no
// replica of the sequence (nor a successor) served its rows (ReadOffsets
// is null, Records 0: how many is not known).
type RealtimeBehind struct {
	Sequence string `json:"sequence"`
	// ShownOffsets is the furthest position (partition → next offset)
	// earlier answers read; ReadOffsets is this answer's.
	ShownOffsets map[int32]int64 `json:"shownOffsets"`
	ReadOffsets  map[int32]int64 `json:"readOffsets"`
	Records      int64           `json:"records"`
	Unread       bool            `json:"unread,omitempty"`
}

// shownPositions is how far this broker's answers have read each
// replicated sequence. Queries update it while holding view.mu for reading,
// so it has its own lock (taken after view.mu, never before).
type shownPositions struct {
	mu   sync.Mutex
	seqs map[string]*shownSeq
}

type shownSeq struct {
	pos    map[int32]int64     // the furthest position an answer read
	ds     string              // the sequence's datasource
	chunks []interval.Interval // the intervals of the hydrants answers read
	seen   time.Time           // when a replica of the sequence was last announced
	// gaveUp: a wait for a replica to reach pos ended without one; queries
	// flag at once until one does.
	gaveUp bool
}

// seqRead is what a query reads of a replicated sequence: the position of
// the replica read (nil: not announced), its datasource and the intervals
// of its hydrants.
type seqRead struct {
	pos    map[int32]int64
	ds     string
	chunks []interval.Interval
}

// forget drops the sequences handed off (no realtime row of them is read
// again) and those no replica announced for handedMemory (view.mu held for
// writing).
func (p *shownPositions) forget(now time.Time, cands map[string][]rtReplica, handed map[string]time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for seq, sh := range p.seqs {
		_, gone := handed[seq]
		switch {
		case gone:
			delete(p.seqs, seq)
		case len(cands[seq]) > 0:
			sh.seen = now
		case now.Sub(sh.seen) > handedMemory:
			delete(p.seqs, seq)
		}
	}
}

// has tells whether answers read rows of seq.
func (p *shownPositions) has(seq string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seqs[seq] != nil
}

// behind lists, by sequence name, the sequences a query of f reads (reads)
// behind what answers read before, and those earlier answers read rows of
// in f's datasources and intervals that the query reads nothing of. A
// sequence whose successor (a later sequence of its task group, over the
// same partitions) has read as far is forgotten: its rows are the
// successor's now.
func (p *shownPositions) behind(reads map[string]seqRead, f queryFacts) []RealtimeBehind {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []RealtimeBehind
	for seq, sh := range p.seqs {
		var pos map[int32]int64
		if r, ok := reads[seq]; ok {
			if r.pos == nil {
				continue // a replica without positions (an older version) is read
			}
			pos = r.pos
		} else {
			if !sh.readBy(f) {
				continue
			}
			if next := successor(seq, sh.pos, reads); next != nil {
				if records(next) >= records(sh.pos) {
					delete(p.seqs, seq)
					continue
				}
				pos = next
			}
		}
		b := RealtimeBehind{Sequence: seq, ShownOffsets: maps.Clone(sh.pos), ReadOffsets: maps.Clone(pos), Unread: pos == nil}
		if pos != nil {
			b.Records = records(sh.pos) - records(pos)
		}
		if b.Unread || b.Records > 0 {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b RealtimeBehind) int { return strings.Compare(a.Sequence, b.Sequence) })
	return out
}

// readBy tells whether a query of f would read rows earlier answers read
// of the sequence: its datasource, in a time chunk of them.
func (sh *shownSeq) readBy(f queryFacts) bool {
	if len(f.specific) > 0 || !slices.Contains(f.dataSources, sh.ds) {
		return false
	}
	for _, c := range sh.chunks {
		if slices.ContainsFunc(f.intervals, c.Overlaps) {
			return true
		}
	}
	return false
}

// successor is the position of the furthest sequence read of seq's task
// group (the sequence name without its random suffix) other than seq, over
// the same partitions as pos; nil when none is read.
func successor(seq string, pos map[int32]int64, reads map[string]seqRead) map[int32]int64 {
	group := taskGroupOf(seq)
	var best map[int32]int64
	for other, r := range reads {
		if other == seq || r.pos == nil || taskGroupOf(other) != group || !sameKeys(r.pos, pos) {
			continue
		}
		if best == nil || records(r.pos) > records(best) {
			best = r.pos
		}
	}
	return best
}

// taskGroupOf is a sequence name without its random suffix
// (<datasource prefix>_g<group>_<suffix>): the task group.
func taskGroupOf(seq string) string {
	if i := strings.LastIndexByte(seq, '_'); i > 0 {
		return seq[:i]
	}
	return seq
}

func sameKeys(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// waitedFor reports whether a wait for every listed sequence already ended
// without a replica catching up.
func (p *shownPositions) waitedFor(behind []RealtimeBehind) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range behind {
		if sh := p.seqs[b.Sequence]; sh == nil || !sh.gaveUp {
			return false
		}
	}
	return true
}

func (p *shownPositions) giveUp(behind []RealtimeBehind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range behind {
		if sh := p.seqs[b.Sequence]; sh != nil {
			sh.gaveUp = true
		}
	}
}

// record notes what an answer read: the furthest position stays, and a
// sequence read at least that far needs no more flagging.
func (p *shownPositions) record(now time.Time, reads map[string]seqRead) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for seq, r := range reads {
		if r.pos == nil {
			continue
		}
		if p.seqs == nil {
			p.seqs = map[string]*shownSeq{}
		}
		sh := p.seqs[seq]
		if sh == nil {
			sh = &shownSeq{ds: r.ds}
			p.seqs[seq] = sh
		}
		sh.seen = now
		for _, c := range r.chunks {
			if !slices.Contains(sh.chunks, c) {
				sh.chunks = append(sh.chunks, c)
			}
		}
		if records(r.pos) >= records(sh.pos) {
			sh.pos, sh.gaveUp = r.pos, false
		}
	}
}

// readPositions is what a query's units read of each replicated sequence.
func readPositions(units []unit) map[string]seqRead {
	out := map[string]seqRead{}
	for _, u := range units {
		if !u.realtime || u.seq == "" {
			continue
		}
		r := out[u.seq]
		r.pos, r.ds = u.pos, u.ds
		if u.iv != (interval.Interval{}) && !slices.Contains(r.chunks, u.iv) {
			r.chunks = append(r.chunks, u.iv)
		}
		out[u.seq] = r
	}
	return out
}

// changes returns a channel closed at the view's next change.
func (v *view) changes() <-chan struct{} {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.changed
}

// catchUp is one query's bounded wait for replicas to catch up. Its timer
// starts at the first wait: most queries never wait.
type catchUp struct {
	v       *view
	log     hclog.Logger
	queryID string
	budget  time.Duration // ≤ 0: no (more) waiting
	timer   *time.Timer
}

// newCatchUp gives the query its wait budget: the context's
// realtimeCatchUpTimeout, or defaultCatchUp.
func (b *Broker) newCatchUp(q *nativeQuery) *catchUp {
	d := defaultCatchUp
	if ms := q.Context.RealtimeCatchUpTimeout; ms >= 0 {
		d = time.Duration(min(ms, int64(time.Hour/time.Millisecond))) * time.Millisecond
	}
	return &catchUp{v: b.view, log: b.log, queryID: q.Context.QueryID, budget: d}
}

func (c *catchUp) release() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// wait waits for the view to change after changed was taken, and reports
// whether the query is to read the view again: false when every sequence
// behind was waited for already by an earlier query, or the budget ran out
// (then later queries do not wait for these sequences), or ctx ended. The
// wait takes at most half of what is left of the query's timeout: the
// answer still has to be computed.
func (c *catchUp) wait(ctx context.Context, changed <-chan struct{}, behind []RealtimeBehind) bool {
	if c.budget <= 0 || c.v.shown.waitedFor(behind) {
		return false
	}
	if c.timer == nil {
		d := c.budget
		if dl, ok := ctx.Deadline(); ok {
			d = min(d, time.Until(dl)/2)
		}
		if d <= 0 {
			c.budget = 0
			return false
		}
		c.timer = time.NewTimer(d)
		c.log.Info("waiting for a replica to catch up with earlier answers", "queryId", c.queryID,
			"sequence", behind[0].Sequence, "records", behind[0].Records)
	}
	select {
	case <-changed:
		return true
	case <-c.timer.C:
		c.budget = 0
		c.v.shown.giveUp(behind)
		c.log.Warn("no replica caught up with earlier answers; answers are flagged realtimeBehind until one does", "queryId", c.queryID,
			"sequence", behind[0].Sequence, "records", behind[0].Records)
		return false
	case <-ctx.Done():
		return false
	}
}
