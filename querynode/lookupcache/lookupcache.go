// Package lookupcache holds the lookups of a querying process (broker,
// historical, a middle manager's task rows): those of its lookup tier,
// fetched from the coordinator and kept refreshed by polling, as Druid's
// LookupReferencesManager keeps them. Each poll also reports what the
// process has loaded, which the coordinator's /lookups/status and
// /lookups/nodeStatus show.
package lookupcache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/ingest/input"
	"strata/javacompat"
	"strata/lookups"
)

// SyncPath is the coordinator's internal endpoint a process polls: it posts
// a SyncRequest and gets its tier's lookups (or 304 when its ETag is
// current).
const SyncPath = "/svc-internal/v1/lookups/sync"

// SyncRequest is what a process reports with each poll.
type SyncRequest struct {
	Node string `json:"node"` // host:port
	Tier string `json:"tier"`
	// ETag is the version of the configuration the process holds ("": none).
	ETag string `json:"etag"`
	// Current maps each loaded lookup to its version.
	Current map[string]string `json:"current"`
	// PeriodMs is how often the process polls, so the coordinator knows
	// when a silent one is gone.
	PeriodMs int64 `json:"periodMs,omitempty"`
}

// SyncResponse is the coordinator's answer: the lookups of the tier and the
// ETag of the configuration they come from.
type SyncResponse struct {
	ETag    string                     `json:"etag"`
	Lookups map[string]json.RawMessage `json:"lookups"`
}

// loaded is one lookup as a process holds it.
type loaded struct {
	c         *lookups.Container
	canonical []byte
	m         map[string]string // c.Map, or what was read from c.URI
	readAt    time.Time         // a URI lookup: when m was read
}

type snapshot struct {
	etag string
	// want is every lookup of the tier as the coordinator defines it;
	// lookups the ones loaded (a URI lookup only once it has been read).
	want    map[string]loaded
	lookups map[string]loaded
}

// Registry is a process's loaded lookups. It implements query.LookupSource.
// Its state is replaced whole, so readers need no lock; mu orders the
// writers (a poll's apply and refresh).
type Registry struct {
	tier string
	cur  atomic.Pointer[snapshot]
	mu   sync.Mutex
}

// New returns an empty registry for tier ("" is lookups.DefaultTier).
func New(tier string) *Registry {
	if tier == "" {
		tier = lookups.DefaultTier
	}
	r := &Registry{tier: tier}
	r.cur.Store(&snapshot{want: map[string]loaded{}, lookups: map[string]loaded{}})
	return r
}

// Tier is the lookup tier the process belongs to.
func (r *Registry) Tier() string { return r.tier }

// Lookup implements query.LookupSource.
func (r *Registry) Lookup(name string) (map[string]string, bool, bool) {
	l, ok := r.cur.Load().lookups[name]
	if !ok {
		return nil, false, false
	}
	return l.m, l.c.OneToOne, true
}

// Names lists the loaded lookups, sorted.
func (r *Registry) Names() []string { return slices.Sorted(maps.Keys(r.cur.Load().lookups)) }

// Versions maps each loaded lookup to its version.
func (r *Registry) Versions() map[string]string {
	s := r.cur.Load()
	out := make(map[string]string, len(s.lookups))
	for n, l := range s.lookups {
		out[n] = l.c.Version
	}
	return out
}

// AppendStateJSON appends Druid's LookupsState of this process:
// {"current": {name: container}, "toLoad": {}, "toDrop": []}. Loading is
// all at once (a poll's answer replaces the set), so nothing is ever
// pending here.
func (r *Registry) AppendStateJSON(b []byte) []byte {
	s := r.cur.Load()
	b = append(b, `{"current":{`...)
	for i, n := range slices.Sorted(maps.Keys(s.lookups)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, n)
		b = append(b, ':')
		b = append(b, s.lookups[n].canonical...)
	}
	return append(b, `},"toLoad":{},"toDrop":[]}`...)
}

// apply replaces the loaded lookups with those of resp. A lookup the
// process cannot parse is an error and nothing changes: the coordinator
// validated it, so this is a version mismatch to report, not to half-apply.
// A URI lookup is loaded once refresh has read it; until then the process
// keeps the version it had, if any.
func (r *Registry) apply(resp SyncResponse) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := &snapshot{etag: resp.ETag, want: make(map[string]loaded, len(resp.Lookups)), lookups: make(map[string]loaded, len(resp.Lookups))}
	prev := r.cur.Load()
	for name, raw := range resp.Lookups {
		if old, ok := prev.want[name]; ok && bytes.Equal(old.canonical, raw) {
			next.want[name] = old // unchanged: keep the parsed definition
		} else {
			c, err := lookups.Parse(raw)
			if err != nil {
				return fmt.Errorf("lookup [%s]: %w", name, err)
			}
			next.want[name] = loaded{c: c, canonical: c.AppendJSON(nil), m: c.Map}
		}
		switch old, held := prev.lookups[name]; {
		case next.want[name].c.URI == nil:
			next.lookups[name] = next.want[name]
		case held:
			next.lookups[name] = old // until refresh reads the new definition
		}
	}
	r.cur.Store(next)
	return nil
}

const (
	// maxURILookupBytes bounds what one URI lookup may read.
	maxURILookupBytes = 256 << 20
	// uriReadTimeout bounds one read, so a stalled server cannot hold up
	// the polling of the coordinator.
	uriReadTimeout = time.Minute
)

// refresh reads the URI lookups that are not loaded in their current
// definition, or whose pollPeriod has passed, and installs each it could
// read; it returns the failures.
func (r *Registry) refresh(ctx context.Context, now time.Time) error {
	cur := r.cur.Load()
	var errs []error
	read := map[string]loaded{}
	for name, w := range cur.want {
		if w.c.URI == nil {
			continue
		}
		have, held := cur.lookups[name]
		due := !held || !bytes.Equal(have.canonical, w.canonical) ||
			(w.c.URI.PollPeriodMs > 0 && now.Sub(have.readAt) >= time.Duration(w.c.URI.PollPeriodMs)*time.Millisecond)
		if !due {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, uriReadTimeout)
		m, err := readURI(rctx, w.c.URI)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("lookup [%s] from %s: %w", name, w.c.URI.URI, err))
			continue
		}
		l := w
		l.m, l.readAt = m, now
		read[name] = l
	}
	if len(read) > 0 {
		r.mu.Lock()
		next := r.cur.Load()
		updated := &snapshot{etag: next.etag, want: next.want, lookups: maps.Clone(next.lookups)}
		for name, l := range read {
			// Only if the definition read is still the wanted one.
			if w, ok := next.want[name]; ok && bytes.Equal(w.canonical, l.canonical) {
				updated.lookups[name] = l
			}
		}
		r.cur.Store(updated)
		r.mu.Unlock()
	}
	return errors.Join(errs...)
}

// inputSource is a URI lookup's resource as one of ingestion's input
// sources, so the process's input policy (allowed directories, protocols
// and hosts) applies to lookups as it does to ingestion.
func inputSource(ctx context.Context, src *lookups.URISource) (input.Source, error) {
	u, err := url.Parse(src.URI)
	if err != nil {
		return nil, err
	}
	var spec []byte
	if u.Scheme == "file" {
		spec, err = json.Marshal(map[string]any{"type": "local", "files": []string{u.Path}})
	} else {
		spec, err = json.Marshal(map[string]any{"type": "http", "uris": []string{src.URI}})
	}
	if err != nil {
		return nil, err
	}
	in, err := input.ParseSource(spec)
	if err != nil {
		return nil, err
	}
	if err := input.ActivePolicy().Check(ctx, in); err != nil {
		return nil, err
	}
	return in, nil
}

// CheckURI refuses a URI lookup this process's input policy would not let
// it read, before it is stored (the coordinator's early 400; each querying
// process checks again when it reads).
func CheckURI(ctx context.Context, src *lookups.URISource) error {
	_, err := inputSource(ctx, src)
	return err
}

// readURI reads and parses a URI lookup's resource.
func readURI(ctx context.Context, src *lookups.URISource) (map[string]string, error) {
	in, err := inputSource(ctx, src)
	if err != nil {
		return nil, err
	}
	splits, err := in.Splits(ctx)
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, sp := range splits {
		rc, err := input.OpenRaw(ctx, sp)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxURILookupBytes+1))
		rc.Close()
		if err != nil {
			return nil, err
		}
		data = append(data, b...)
	}
	if len(data) > maxURILookupBytes {
		return nil, fmt.Errorf("more than %d bytes", maxURILookupBytes)
	}
	return src.ParseRows(data)
}

// SyncerConfig configures the polling of the coordinator.
type SyncerConfig struct {
	Coordinators []string // control nodes' base URLs; any of them (followers redirect)
	Client       *http.Client
	Node         string // this process's host:port, what the coordinator reports it as
	Period       time.Duration
	Logger       hclog.Logger
}

// Syncer keeps a Registry refreshed from the coordinator.
type Syncer struct {
	cfg SyncerConfig
	reg *Registry

	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{}
	once       sync.Once
	lastErr    string // the last logged errors, so a down coordinator or resource is logged once
	synced     bool   // the coordinator has answered once (poll's goroutine only)
	lastURIErr string
}

// NewSyncer returns a syncer for reg; Start begins polling.
func NewSyncer(reg *Registry, cfg SyncerConfig) *Syncer {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.Period <= 0 {
		cfg.Period = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Syncer{cfg: cfg, reg: reg, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Start polls every period until Close.
func (s *Syncer) Start() {
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.Period)
		defer t.Stop()
		for {
			s.poll()
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Close stops polling and waits for the poll in flight.
func (s *Syncer) Close() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
	})
}

func (s *Syncer) poll() {
	err := s.SyncOnce(s.ctx)
	s.logOnce(&s.lastErr, err, "cannot refresh the lookups from the coordinator; keeping those loaded")
	s.synced = s.synced || err == nil
	err = s.reg.refresh(s.ctx, time.Now())
	s.logOnce(&s.lastURIErr, err, "cannot read URI lookups; one never read is not loaded, one read before keeps that version")
}

// logOnce logs err unless it is the one last logged (*last), and that
// things work again once they do. A control plane that has no leader yet
// (503) before the first sync is a cluster starting: said at debug, and so
// is the first sync after it.
func (s *Syncer) logOnce(last *string, err error, what string) {
	starting := last == &s.lastErr && !s.synced
	switch {
	case err == nil && *last != "":
		*last = ""
		if starting {
			s.cfg.Logger.Debug("recovered: " + what)
		} else {
			s.cfg.Logger.Info("recovered: " + what)
		}
	case err != nil && err.Error() != *last && s.ctx.Err() == nil:
		*last = err.Error()
		if errors.Is(err, errUnavailable) && starting {
			s.cfg.Logger.Debug(what, "tier", s.reg.tier, "error", err)
		} else if errors.Is(err, errUnavailable) {
			// An election after the first sync: a failover, worth a line.
			s.cfg.Logger.Info(what, "tier", s.reg.tier, "error", err)
		} else {
			s.cfg.Logger.Warn(what, "tier", s.reg.tier, "error", err)
		}
	}
}

var (
	// errNotModified: the coordinator's configuration is the one held.
	errNotModified = errors.New("not modified")
	// errUnavailable is a control node's 503: no leader elected yet.
	errUnavailable = errors.New("503 Service Unavailable")
)

// SyncOnce reports the loaded lookups and applies the coordinator's answer,
// trying each control node in turn.
func (s *Syncer) SyncOnce(ctx context.Context) error {
	cur := s.reg.cur.Load()
	body, err := json.Marshal(SyncRequest{Node: s.cfg.Node, Tier: s.reg.tier, ETag: cur.etag, Current: s.reg.Versions(),
		PeriodMs: s.cfg.Period.Milliseconds()})
	if err != nil {
		return err
	}
	var errs []error
	for _, base := range s.cfg.Coordinators {
		resp, err := s.post(ctx, strings.TrimRight(base, "/")+SyncPath, body)
		if errors.Is(err, errNotModified) {
			return nil
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return s.reg.apply(resp)
	}
	if len(errs) == 0 {
		return errors.New("no control node to read lookups from")
	}
	return errors.Join(errs...)
}

// maxSyncResponse bounds the answer read from the coordinator.
const maxSyncResponse = 1 << 30

func (s *Syncer) post(ctx context.Context, url string, body []byte) (SyncResponse, error) {
	var out SyncResponse
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.cfg.Client.Do(req) // a follower's 307 leads to the leader, body and all
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return out, errNotModified
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxSyncResponse))
	if err != nil {
		return out, err
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		return out, fmt.Errorf("POST %s: %w: %.200s", url, errUnavailable, b)
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("POST %s: %s: %.200s", url, resp.Status, b)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("POST %s: %w", url, err)
	}
	return out, nil
}
