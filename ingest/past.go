package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sync"

	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
)

// PastSegments answers which segments were used at a past moment (the SQL
// context key asOf of a SELECT): the control-plane leader rebuilds the state
// then (protocol.PastTimelinePath). The first answer pins the moment's log
// index, so every table a statement reads is read as of the same index, and
// each datasource is asked for once.
type PastSegments struct {
	c    *Cluster
	asOf string

	mu     sync.Mutex
	pinned bool
	index  uint64
	byDS   map[string][]*segmeta.DataSegment
}

// PastAt reads the timelines as of asOf: a Raft log index or an ISO-8601 time.
func (c *Cluster) PastAt(asOf string) *PastSegments {
	return &PastSegments{c: c, asOf: asOf, byDS: map[string][]*segmeta.DataSegment{}}
}

// UsedSegments lists the segments of ds that were used at the moment and
// overlap iv (fully overshadowed ones left out: they are visible nowhere).
func (p *PastSegments) UsedSegments(ctx context.Context, ds string, iv interval.Interval) ([]*segmeta.DataSegment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	all, ok := p.byDS[ds]
	if !ok {
		at := p.asOf
		if p.pinned {
			at = fmt.Sprint(p.index)
		}
		v := url.Values{"asOf": {at}, "dataSource": {ds}}
		b, code, err := p.c.coordinatorDo(ctx, http.MethodGet, protocol.PastTimelinePath+"?"+v.Encode(), nil)
		if err != nil {
			return nil, fmt.Errorf("segments of %s as of %s: %w", ds, p.asOf, err)
		}
		if code == http.StatusBadRequest {
			var e struct {
				Error string `json:"error"`
			}
			json.Unmarshal(b, &e)
			return nil, fmt.Errorf("asOf %s: %s", p.asOf, e.Error)
		}
		if code != http.StatusOK {
			return nil, fmt.Errorf("segments of %s as of %s: HTTP %d %.300s", ds, p.asOf, code, b)
		}
		var pt protocol.PastTimeline
		if err := json.Unmarshal(b, &pt); err != nil {
			return nil, fmt.Errorf("segments of %s as of %s: %w", ds, p.asOf, err)
		}
		if p.pinned && pt.Index != p.index {
			return nil, fmt.Errorf("segments of %s as of %s: asked for log index %d, the control plane answered %d", ds, p.asOf, p.index, pt.Index)
		}
		p.pinned, p.index = true, pt.Index
		all = pt.Segments
		p.byDS[ds] = all
	}
	var out []*segmeta.DataSegment
	for _, s := range all {
		if s.Interval.Overlaps(iv) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Killed explains a failure to fetch a segment of the moment: one whose file
// is gone from deep storage was killed since.
func (p *PastSegments) Killed(seg *segmeta.DataSegment, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("segment %s was used as of %s but has been killed since: its file is gone from deep storage, so the data as of that moment cannot be read: %w", seg.ID(), p.asOf, err)
	}
	return err
}
