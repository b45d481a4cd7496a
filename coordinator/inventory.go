package coordinator

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/protocol"
	"strata/segmeta"
)

// Inventory is the coordinator's picture of what the historicals serve, the
// source of its served view (servers, load status, load queues). Historicals
// make themselves known by polling their assignment (protocol.AssignedPath);
// the inventory then polls each one's
// announcement, as brokers do, and forgets a historical that has not polled
// the listing for Expiry. It is not replicated: a new leader learns the
// historicals at their next poll.
type Inventory struct {
	Client *http.Client
	Scheme string        // of the historicals' URLs; "" is http
	Period time.Duration // announcement polls (default 1s)
	Expiry time.Duration // forget a historical silent this long (default 30s)
	Logger hclog.Logger

	mu      sync.Mutex
	servers map[string]*invServer // by name (host:port)
	wake    chan struct{}
	gen     uint64 // bumped on every change of what Servers returns
}

type invServer struct {
	name      string
	seen      time.Time // last listing poll
	meta      protocol.ServerMetadata
	currSize  int64
	version   string
	segs      map[segmeta.ID]*segmeta.DataSegment // replaced, never changed in place
	reachable bool
	lastErr   string
}

// Server is one historical as the inventory knows it. Segments is shared:
// read it, do not change it.
type Server struct {
	Meta      protocol.ServerMetadata
	CurrSize  int64
	Segments  map[segmeta.ID]*segmeta.DataSegment
	Reachable bool // its last announcement poll succeeded
}

// Seen records a listing poll by the historical named name (host:port).
func (v *Inventory) Seen(name string, now time.Time) {
	if name == "" || strings.ContainsAny(name, "/?#@ ") {
		return // not a host:port; nothing to poll
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.init()
	s := v.servers[name]
	if s == nil {
		s = &invServer{name: name, meta: protocol.ServerMetadata{Name: name, Host: name, Type: "historical", Tier: "_default_tier"}}
		v.servers[name] = s
		v.gen++
		select { // poll the newcomer at once
		case v.wake <- struct{}{}:
		default:
		}
	}
	s.seen = now
}

// Forget drops the historical named name (host:port) at once: discovery
// says it is gone, so its segments are placed elsewhere now rather than
// after Expiry. A historical that comes back is learnt again at its next
// assignment poll.
func (v *Inventory) Forget(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.servers[name]; ok {
		delete(v.servers, name)
		v.gen++
	}
}

func (v *Inventory) init() {
	if v.servers == nil {
		v.servers = map[string]*invServer{}
		v.wake = make(chan struct{}, 1)
	}
}

// Servers returns the known historicals, by name.
func (v *Inventory) Servers() []Server {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]Server, 0, len(v.servers))
	for _, s := range v.servers {
		out = append(out, Server{Meta: s.meta, CurrSize: s.currSize, Segments: s.segs, Reachable: s.reachable})
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
	return out
}

// Generation changes whenever what Servers returns may have changed, so that
// plans built from it can be cached.
func (v *Inventory) Generation() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gen
}

// Run polls the known historicals every Period until ctx ends.
func (v *Inventory) Run(ctx context.Context) {
	v.mu.Lock()
	v.init()
	wake := v.wake
	v.mu.Unlock()
	period, expiry := v.Period, v.Expiry
	if period <= 0 {
		period = time.Second
	}
	if expiry <= 0 {
		expiry = 30 * time.Second
	}
	for {
		v.PollOnce(ctx, time.Now(), expiry)
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-time.After(period):
		}
	}
}

// PollOnce forgets the historicals silent for expiry and polls the others'
// announcements, at once.
func (v *Inventory) PollOnce(ctx context.Context, now time.Time, expiry time.Duration) {
	v.mu.Lock()
	v.init()
	var polls []*invServer
	var versions []string
	for name, s := range v.servers {
		if now.Sub(s.seen) > expiry {
			delete(v.servers, name)
			v.gen++
			continue
		}
		polls = append(polls, s)
		versions = append(versions, s.version)
	}
	v.mu.Unlock()
	client := v.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	scheme := v.Scheme
	if scheme == "" {
		scheme = "http"
	}
	var wg sync.WaitGroup
	for i, s := range polls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ann, err := protocol.FetchAnnouncement(ctx, client, scheme+"://"+s.name, versions[i])
			v.apply(s, ann, err)
		}()
	}
	wg.Wait()
}

// apply records one announcement poll: an unreachable historical serves
// nothing as far as the coordinator can tell.
func (v *Inventory) apply(s *invServer, ann *protocol.Announcement, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		if s.reachable || s.segs != nil {
			v.gen++
		}
		s.reachable, s.version, s.segs, s.currSize = false, "", nil, 0
		if msg := err.Error(); msg != s.lastErr && v.Logger != nil {
			v.Logger.Warn("historical unreachable; counting its segments as not loaded", "server", s.name, "error", msg)
		}
		s.lastErr = err.Error()
		return
	}
	if !s.reachable || !samePlacement(s.meta, ann.Server) {
		v.gen++
	}
	s.reachable, s.lastErr = true, ""
	s.meta, s.currSize = ann.Server, ann.CurrSize
	if ann.Unchanged {
		return
	}
	v.gen++
	segs := make(map[segmeta.ID]*segmeta.DataSegment, len(ann.Segments))
	for _, seg := range ann.Segments {
		if seg != nil {
			segs[seg.ID()] = seg
		}
	}
	s.segs, s.version = segs, ann.Version
}

// samePlacement reports whether two announcements agree on what placement
// reads: tier, capacity and priority.
func samePlacement(a, b protocol.ServerMetadata) bool {
	return a.Tier == b.Tier && a.MaxSize == b.MaxSize && a.Priority == b.Priority
}
