package broker

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
)

// server is one historical the broker polls.
type server struct {
	url  string // base URL, e.g. http://127.0.0.1:8083
	host string // host:port of url; url and host never change
	// The rest is guarded by view.mu.
	meta       protocol.ServerMetadata
	version    string
	segs       map[segmeta.ID]*segmeta.DataSegment
	realtime   []*segmeta.DataSegment     // rows not yet published, outside the timeline
	sequences  map[string]string          // realtime version → sequence (protocol.Announcement.Sequences)
	offsets    map[string]map[int32]int64 // realtime version → stream position (protocol.Announcement.Offsets)
	tried      bool                       // polled at least once
	lastLogged string
}

// entry is an available segment and the servers holding it. servers is
// copied on write, so a query may keep the slice it read.
type entry struct {
	seg     *segmeta.DataSegment
	id      string // seg.ID().String()
	iv      string // seg.Interval.String()
	servers []*server
}

// view is the broker's picture of the cluster: which servers hold which
// segments, and the timeline of available segments (segmeta.Index), in
// which a version only counts once all its core partitions are available.
type view struct {
	mu      sync.RWMutex
	servers []*server

	// undiscovered: the servers come from discovery, which has listed none
	// yet, so the view knows nothing (discover.go).
	undiscovered bool

	entries map[segmeta.ID]*entry
	index   *segmeta.Index
	rt      replicaChoice  // which replica's realtime rows queries read (replicas.go)
	shown   shownPositions // how far queries read each sequence (catchup.go)

	// changed is closed, and replaced, whenever apply changes the view: a
	// query waiting for a replica to catch up wakes on it (catchup.go).
	changed chan struct{}
}

func newView(urls []string) *view {
	v := &view{entries: map[segmeta.ID]*entry{}, index: segmeta.NewIndex(), changed: make(chan struct{})}
	for _, u := range urls {
		u = strings.TrimRight(u, "/")
		host := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
		v.servers = append(v.servers, &server{url: u, host: host, meta: protocol.ServerMetadata{Name: host, Host: host, Type: "historical", Tier: "_default_tier"}})
	}
	return v
}

// initialized reports whether every configured server was polled once.
func (v *view) initialized() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.undiscovered {
		return false
	}
	for _, s := range v.servers {
		if !s.tried {
			return false
		}
	}
	return true
}

// apply replaces a server's segment set (nil: the server is unreachable
// and serves nothing) and updates entries and timeline incrementally.
func (v *view) apply(s *server, ann *protocol.Announcement, pollErr error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	// A server still loading its cache is not known yet (an unreachable one
	// is: it serves nothing, and waiting for it would never end).
	if pollErr != nil || !ann.Loading {
		s.tried = true
	}
	var next map[segmeta.ID]*segmeta.DataSegment
	if pollErr != nil {
		s.version, s.realtime = "", nil
		s.sequences, s.offsets = nil, nil
	} else {
		s.meta = ann.Server
		if ann.Unchanged {
			return
		}
		s.version, s.realtime = ann.Version, ann.Realtime
		s.sequences, s.offsets = ann.Sequences, ann.Offsets
		next = make(map[segmeta.ID]*segmeta.DataSegment, len(ann.Segments))
		for _, seg := range ann.Segments {
			if seg != nil {
				next[seg.ID()] = seg
			}
		}
	}
	var gone []segmeta.ID
	for id := range s.segs {
		if _, ok := next[id]; ok {
			continue
		}
		e := v.entries[id]
		if e == nil {
			continue
		}
		e.servers = slices.DeleteFunc(slices.Clone(e.servers), func(x *server) bool { return x == s })
		if len(e.servers) == 0 {
			delete(v.entries, id)
			gone = append(gone, id)
		}
	}
	var added []*segmeta.DataSegment
	for id, seg := range next {
		if _, ok := s.segs[id]; ok {
			continue
		}
		e := v.entries[id]
		if e == nil {
			e = &entry{seg: seg, id: id.String(), iv: seg.Interval.String()}
			v.entries[id] = e
			added = append(added, seg)
		}
		e.servers = append(slices.Clip(e.servers), s)
	}
	s.segs = next
	if len(gone) > 0 {
		v.index.Remove(gone)
	}
	if len(added) > 0 {
		if _, err := v.index.Add(added); err != nil { // unreachable: decoded segments are valid
			for _, seg := range added {
				delete(v.entries, seg.ID())
			}
		}
	}
	v.settleReplicas(time.Now(), added)
	close(v.changed)
	v.changed = make(chan struct{})
}

// unit is one piece of work of a query: a segment and the part of it that
// is visible in the query's intervals, with the servers that hold it.
type unit struct {
	ref     protocol.SegmentRef
	servers []*server
	seg     *segmeta.DataSegment // the published segment read (nil for realtime units)
	// realtime units read a running task's rows. One its server no longer
	// has was published meanwhile and is read from the timeline's segments
	// instead, so it is skipped rather than retried.
	realtime bool
	seq      string      // the realtime rows' sequence, when replicas read it (replicas.go)
	standby  []rtStandby // the sequence's other replicas, furthest first, read if this unit's server fails
	// pos is the stream position the replica read reaches (nil: not
	// announced), for the sequence's units; ds and iv are the datasource
	// and interval of a realtime segment of a sequence (catchup.go).
	pos map[int32]int64
	ds  string
	iv  interval.Interval
}

// resolve finds the visible segments of the query in the timeline. Union
// members without segments are skipped silently.
func (v *view) resolve(f queryFacts) []unit {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []unit
	add := func(seg *segmeta.DataSegment, clip interval.Interval) {
		e := v.entries[seg.ID()]
		if e == nil || len(e.servers) == 0 {
			return
		}
		ivs := e.iv
		if clip != seg.Interval {
			ivs = clip.String()
		}
		out = append(out, unit{ref: protocol.SegmentRef{ID: e.id, Interval: ivs}, servers: e.servers, seg: e.seg})
	}
	for _, ds := range f.dataSources {
		if len(f.specific) == 0 {
			out = v.appendRealtime(out, ds, f.intervals)
		}
		visitVisible(f, v.index.Timeline(ds), add)
	}
	return out
}

// visitVisible calls add with every segment with data the query reads in a
// datasource's timeline (nil: no segments) and the piece of it that is
// visible, in time order: the pieces of the query's intervals, or of the
// specific segments it names.
func visitVisible(f queryFacts, tl *segmeta.Timeline, add func(seg *segmeta.DataSegment, clip interval.Interval)) {
	if tl == nil {
		return
	}
	if len(f.specific) > 0 {
		for _, sp := range f.specific {
			tl.LookupFunc(sp.interval, func(h segmeta.Holder) bool {
				if h.Version != sp.version {
					return true
				}
				for _, seg := range h.Segments {
					if seg.ShardSpec.PartitionNum == sp.partition && !seg.IsTombstone() {
						add(seg, h.Interval)
					}
				}
				return true
			})
		}
		return
	}
	for _, iv := range f.intervals {
		tl.LookupFunc(iv, func(h segmeta.Holder) bool {
			if h.HasData {
				for _, seg := range h.Segments {
					if !seg.IsTombstone() {
						add(seg, h.Interval)
					}
				}
			}
			return true
		})
	}
}

// appendRealtime adds a unit for each realtime segment of ds that overlaps
// the intervals. Realtime segments are not versioned against the timeline:
// each holds rows no published segment has yet. Of the replicas of a
// sequence only the chosen one is read (replicas.go).
func (v *view) appendRealtime(out []unit, ds string, ivs []interval.Interval) []unit {
	overlaps := func(seg *segmeta.DataSegment) bool {
		return slices.ContainsFunc(ivs, func(iv interval.Interval) bool { return iv.Overlaps(seg.Interval) })
	}
	var standby map[string][]rtStandby // computed when a replicated sequence is read
	listed := false
	for _, s := range v.servers {
		for _, seg := range s.realtime {
			if seg.DataSource != ds || seg.IsTombstone() || !overlaps(seg) {
				continue
			}
			seq, read := v.rt.reads(s, seg)
			if !read {
				continue
			}
			if seq != "" && !listed {
				standby, listed = v.standby(ds, overlaps), true
			}
			out = append(out, unit{ref: protocol.SegmentRef{ID: seg.ID().String(), Interval: seg.Interval.String()},
				servers: []*server{s}, realtime: true, seq: seq, standby: standby[seq], pos: s.offsets[seg.Version],
				ds: seg.DataSource, iv: seg.Interval})
		}
	}
	return out
}

// dataSources lists the datasources with available segments, realtime ones
// included.
func (v *view) dataSources() []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	names := v.index.DataSources()
	for _, s := range v.servers {
		for _, seg := range s.realtime {
			if !slices.Contains(names, seg.DataSource) {
				names = append(names, seg.DataSource)
			}
		}
	}
	slices.Sort(names)
	return names
}

// poller keeps one server's entry in the view current.
func (b *Broker) poll(s *server) {
	defer b.wg.Done()
	for {
		ann, err := b.fetchAnnouncement(s)
		b.view.apply(s, ann, err)
		b.logPoll(s, err)
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(b.cfg.PollPeriod):
		}
	}
}

func (b *Broker) fetchAnnouncement(s *server) (*protocol.Announcement, error) {
	b.view.mu.RLock()
	since := s.version
	b.view.mu.RUnlock()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	return protocol.FetchAnnouncement(ctx, b.client, s.url, since)
}

// logPoll logs a server going down or coming back, once per change.
func (b *Broker) logPoll(s *server, err error) {
	b.view.mu.Lock()
	defer b.view.mu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == s.lastLogged {
		return
	}
	if err != nil && b.ctx.Err() == nil {
		b.log.Warn("historical unreachable; its segments are unavailable", "server", s.url, "error", msg)
	} else if s.lastLogged != "" {
		b.log.Info("historical reachable again", "server", s.url)
	}
	s.lastLogged = msg
}

// byPriority orders servers for candidate lists: higher priority first,
// then by name.
func byPriority(a, b *server) int {
	return cmp.Or(cmp.Compare(b.meta.Priority, a.meta.Priority), strings.Compare(a.meta.Name, b.meta.Name))
}
