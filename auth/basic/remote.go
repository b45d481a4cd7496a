package basic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// FuncSource is a Source whose DB is always current: a control node's FSM.
type FuncSource func() *DB

// Current implements Source.
func (f FuncSource) Current() *DB { return f() }

// Refresh implements Source: the FSM's DB needs none.
func (f FuncSource) Refresh(bool) *DB { return f() }

// DBPath is the internal endpoint of the control nodes that answers the
// database (internal client only): ?version=V waits up to ?waitMs until the
// leader's database is at another version.
const DBPath = "/svc-internal/v1/security/db"

// maxDBBytes bounds the answer a data node reads.
const maxDBBytes = 256 << 20

// Remote is a data node's copy of the leader's database (brokers,
// historicals, middle managers, routers): fetched at start, then kept
// current by a long poll that the leader answers as soon as a change
// commits, and fetched again on an unknown user, a wrong password or a
// denied check, at most once per MinGap, so a request right after an
// acknowledged change never sees the state before it.
type Remote struct {
	// URLs returns the control nodes to ask; followers redirect to the leader.
	URLs   func() []string
	Client *http.Client
	// PollWait is how long the leader may hold one long poll
	// (svc.auth.basic.common.pollingPeriod).
	PollWait time.Duration
	// MinGap is the least time between two fetches caused by requests.
	MinGap time.Duration
	Log    hclog.Logger

	cur atomic.Pointer[DB]

	mu        sync.Mutex // one request-caused fetch at a time
	lastStart time.Time  // when the last request-caused fetch started
}

// Current implements Source: nil until the first fetch succeeded.
func (r *Remote) Current() *DB { return r.cur.Load() }

// Refresh implements Source. It fetches unless a fetch that started after
// this call did has finished meanwhile (its answer is fresh enough), so a
// change acknowledged before the call is always seen. Concurrent calls share
// fetches. With limit (failed logins, which anyone can send) fetches are at
// least MinGap apart; without (a denied check of a known user) they are
// not, and each costs a round trip that the leader answers with 304 when
// nothing changed.
func (r *Remote) Refresh(limit bool) *DB {
	asked := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastStart.After(asked) {
		return r.Current()
	}
	if gap := r.MinGap - time.Since(r.lastStart); limit && gap > 0 {
		time.Sleep(gap)
	}
	r.lastStart = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var known *uint64
	if db := r.Current(); db != nil {
		v := db.Version
		known = &v
	}
	if db, err := r.fetch(ctx, known, 0); err != nil {
		r.logger().Warn("cannot fetch the user database from the control nodes", "error", err)
	} else if db != nil {
		r.set(db)
	}
	return r.Current()
}

// Run keeps the copy current until ctx ends: a first fetch, then long polls.
func (r *Remote) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		var known *uint64
		if db := r.Current(); db != nil {
			v := db.Version
			known = &v
		}
		pctx, cancel := context.WithTimeout(ctx, r.PollWait+30*time.Second)
		db, err := r.fetch(pctx, known, r.PollWait)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.logger().Debug("user database poll failed; retrying", "error", err, "in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if db != nil {
			r.set(db)
		}
	}
}

// set publishes db unless the copy is newer already (a fetch that raced).
func (r *Remote) set(db *DB) {
	for {
		old := r.cur.Load()
		if old != nil && old.Version > db.Version {
			return
		}
		if r.cur.CompareAndSwap(old, db) {
			return
		}
	}
}

// fetch asks the control nodes in turn for the database; with known set,
// the leader holds the answer up to wait until its version differs, and a
// nil DB means it did not (304).
func (r *Remote) fetch(ctx context.Context, known *uint64, wait time.Duration) (*DB, error) {
	q := url.Values{}
	if known != nil {
		q.Set("version", strconv.FormatUint(*known, 10))
		q.Set("waitMs", strconv.FormatInt(wait.Milliseconds(), 10))
	}
	var errs []error
	for _, base := range r.URLs() {
		db, err := r.fetchFrom(ctx, base+DBPath+"?"+q.Encode())
		if err == nil {
			return db, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("no control node is known")
	}
	return nil, fmt.Errorf("%v", errs)
}

func (r *Remote) fetchFrom(ctx context.Context, u string) (*DB, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, b)
	}
	var db DB
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDBBytes)).Decode(&db); err != nil {
		return nil, fmt.Errorf("%s: %v", u, err)
	}
	if err := db.Prepare(); err != nil {
		return nil, fmt.Errorf("%s: %v", u, err)
	}
	return &db, nil
}

func (r *Remote) logger() hclog.Logger {
	if r.Log == nil {
		return hclog.NewNullLogger()
	}
	return r.Log
}
