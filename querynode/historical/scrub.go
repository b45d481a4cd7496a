package historical

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// A cached segment file can be damaged after it was loaded and verified: a
// failing disk, or a write to the file. Reads never use unverified bytes
// (package storage/segment): a query that meets the damage fails on that
// segment instead of answering from it, and one that reads verified copies
// kept in memory answers as before. The scrub re-verifies every cached file
// each ScrubPeriod to find damage no query has met. Either way the copy is
// dropped and, while the coordinator still assigns the segment, downloaded
// again.

// scrubLoop runs a scrub every ScrubPeriod until Close.
func (n *Node) scrubLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.ScrubPeriod)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			n.scrub()
		}
	}
}

// scrub verifies every cached segment file once, one at a time (it reads
// each whole file), dropping the damaged ones. It returns how many it
// dropped.
func (n *Node) scrub() int {
	n.mu.Lock()
	var ids []string
	for _, m := range []map[string]*loaded{n.served, n.dropping} {
		for id, l := range m {
			if l.es != nil && l.owner == "" {
				ids = append(ids, id)
			}
		}
	}
	n.mu.Unlock()
	dropped := 0
	for _, id := range ids {
		if n.ctx.Err() != nil {
			break
		}
		n.mu.Lock()
		l := n.served[id]
		if l == nil {
			l = n.dropping[id]
		}
		if l == nil || l.es == nil || l.owner != "" {
			n.mu.Unlock()
			continue
		}
		l.refs++ // held like a query, so it is not unmapped meanwhile
		n.mu.Unlock()
		if err := l.es.Data.Verify(); err != nil {
			n.dropDamaged(l, fmt.Errorf("%s: %w", filepath.Join(l.dir, segmentFile), err))
			dropped++
		}
		n.release([]*loaded{l})
	}
	return dropped
}

// dropDamaged stops serving l, a cached segment whose file failed a check,
// so that the next reconcile downloads it again if it is still assigned.
// Its directory is moved aside at once (under the temporary prefix, which a
// restart cleans up) so the new download gets a fresh one; the old copy is
// unmapped and deleted when its last reader leaves. Local copies (a task's
// files) are not the cache's to drop: they are only logged.
func (n *Node) dropDamaged(l *loaded, cause error) {
	id := l.seg.ID().String()
	if l.owner != "" {
		n.log.Error("segment file served for a task is damaged; queries that read it fail", "segment", id, "owner", l.owner, "error", cause)
		return
	}
	n.mu.Lock()
	switch {
	case n.served[id] == l:
		delete(n.served, id)
		n.version++
	case n.dropping[id] == l:
		delete(n.dropping, id)
	default: // dropped already (by another query or the scrub)
		n.mu.Unlock()
		return
	}
	l.gone = true
	if l.dir != "" {
		aside := filepath.Join(filepath.Dir(l.dir), fmt.Sprintf("%sdamaged-%s-%08x", tmpPrefix, filepath.Base(l.dir), rand.Uint32()))
		if err := os.Rename(l.dir, aside); err != nil {
			os.RemoveAll(l.dir) // a mapping outlives its file
			aside = ""
		}
		l.dir = aside
	}
	destroyNow := l.refs == 0
	n.mu.Unlock()
	n.log.Warn("cached segment file is damaged; dropped, and downloaded again while assigned", "segment", id, "error", cause)
	if destroyNow {
		n.destroy(l)
	}
}
