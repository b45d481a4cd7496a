// Package broker is the broker role: it keeps a view of which historicals
// serve which segments (polling each historical's announcement), resolves
// each native query against the timeline of available segments, sends one
// sub-query per server with the segments it is to read, retries the
// segments of a failed server on a replica, merges the partial results and
// renders the final JSON.
package broker

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/interval"
	"strata/metrics"
	"strata/querynode/segcache"
)

// Config configures a Broker.
type Config struct {
	// Name is this broker's host:port (the "host" of errors it raises).
	Name string
	// Historicals are the base URLs of the historicals to poll.
	Historicals []string
	// Discover, when set, lists the data servers to poll besides
	// Historicals, asked every PollPeriod (discovery's live historicals and
	// middle managers; see discover.go).
	Discover func() []string
	// PollPeriod is the time between announcement polls (default 250 ms; an
	// unchanged announcement costs a short "unchanged" answer).
	PollPeriod time.Duration
	// DefaultTimeout applies when the query context has no timeout
	// (default 300 s); MaxTimeout, when positive, rejects larger ones.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// MaxConcurrent bounds running queries; more get 429 (0: no bound).
	MaxConcurrent int
	// MaxSubqueryRows bounds the rows the subqueries of one query may
	// produce on the broker (druid.server.http.maxSubqueryRows; default
	// 100000, negative: no bound); the query context's maxSubqueryRows
	// overrides it.
	MaxSubqueryRows int64
	// DefaultHistory is the window of the datasource metadata endpoints
	// when no interval is given (svc.query.segmentMetadata.defaultHistory,
	// default P1W).
	DefaultHistory interval.Period
	// FailOnMissingSegments is the default of the query context's
	// failOnMissingSegments (svc.query.failOnMissingSegments): fail a query
	// that would read less than its data (see completeness.go) instead of
	// answering from what is available.
	FailOnMissingSegments bool
	// PastTimelines answers which segments were used at a past moment, for
	// queries with the context key asOf (nil: such queries fail, 501).
	PastTimelines PastTimelines
	// PastSegments reads the segments of asOf queries that no data server
	// holds from deep storage (nil: such queries fail, 501).
	PastSegments *segcache.Cache
	Client       *http.Client
	Logger       hclog.Logger
	// Now is the clock of the metadata endpoints (tests); default time.Now.
	Now func() time.Time
}

// Broker is a running broker.
type Broker struct {
	cfg    Config
	log    hclog.Logger
	view   *view
	merger *merger
	past   pastTimelines   // cached past timelines (asof.go)
	cache  *segcache.Cache // cfg.PastSegments
	client *http.Client
	slots  chan struct{} // nil: unbounded

	metrics atomic.Pointer[metrics.Queries] // nil: not recorded (metrics.go)

	columns columnsMemo // datasources' columns over all time (metadata.go)

	mu      sync.Mutex
	running map[string][]*runningQuery

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

type runningQuery struct {
	cancel context.CancelCauseFunc
	tables []string // what it reads: cancelling it needs WRITE on them (Druid's)
}

// New validates cfg.
func New(cfg Config) (*Broker, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("broker: no server name")
	}
	if cfg.PollPeriod <= 0 {
		cfg.PollPeriod = 250 * time.Millisecond
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 300 * time.Second
	}
	if cfg.MaxSubqueryRows == 0 {
		cfg.MaxSubqueryRows = DefaultMaxSubqueryRows
	}
	if cfg.DefaultHistory.IsZero() {
		cfg.DefaultHistory = interval.Period{Weeks: 1}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	b := &Broker{
		cfg:     cfg,
		log:     cfg.Logger,
		view:    newView(cfg.Historicals),
		merger:  newMerger(),
		client:  cfg.Client,
		cache:   cfg.PastSegments,
		running: map[string][]*runningQuery{},
	}
	b.view.undiscovered = cfg.Discover != nil
	if cfg.MaxConcurrent > 0 {
		b.slots = make(chan struct{}, cfg.MaxConcurrent)
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b, nil
}

// Start begins polling the historicals.
func (b *Broker) Start() {
	b.once.Do(func() {
		for _, s := range b.view.servers {
			b.wg.Add(1)
			go b.poll(s)
		}
		if b.cfg.Discover != nil {
			b.wg.Add(1)
			go b.discoverLoop()
		}
	})
}

// Close stops polling and cancels running queries; the asOf cache
// (PastSegments) closes once their reads are released.
func (b *Broker) Close() error {
	b.cancel()
	b.wg.Wait()
	if b.cache != nil {
		defer b.cache.Close()
	}
	// A poll cancelled while dialing leaves a fresh connection in the pool,
	// which would hold up the historical's graceful shutdown.
	b.client.CloseIdleConnections()
	b.mu.Lock()
	for _, list := range b.running {
		for _, rq := range list {
			rq.cancel(errShutdown)
		}
	}
	b.mu.Unlock()
	return nil
}

// Ready reports whether every configured historical has been polled once
// (Druid's inventoryInitialized).
func (b *Broker) Ready() bool { return b.view.initialized() }

// Closing reports whether Close was called: a query that arrives now is
// not run (the server answers that it did not run, so a router sends it to
// another broker).
func (b *Broker) Closing() bool { return b.ctx.Err() != nil }

// Name returns the broker's host:port.
func (b *Broker) Name() string { return b.cfg.Name }

// Cancel cancels every running query with the id (DELETE /svc/v2/{id});
// unknown ids are ignored.
func (b *Broker) Cancel(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, rq := range b.running[id] {
		rq.cancel(errCancelled)
	}
}

// RunningTables returns the tables the running queries with the id read,
// each once, or nil when none runs: DELETE /svc/v2/{id} needs WRITE on
// them, as Druid's cancel does.
func (b *Broker) RunningTables(id string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, rq := range b.running[id] {
		for _, t := range rq.tables {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	if out == nil && len(b.running[id]) > 0 {
		out = []string{} // running, reading no table (inline data)
	}
	return out
}

func (b *Broker) register(id string, tables []string, cancel context.CancelCauseFunc) func() {
	rq := &runningQuery{cancel: cancel, tables: tables}
	b.mu.Lock()
	b.running[id] = append(b.running[id], rq)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		list := slices.DeleteFunc(b.running[id], func(x *runningQuery) bool { return x == rq })
		if len(list) == 0 {
			delete(b.running, id)
		} else {
			b.running[id] = list
		}
		b.mu.Unlock()
	}
}

// NewUUID returns a random (version 4) UUID, the form of Druid's query and SQL task ids.
func NewUUID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
