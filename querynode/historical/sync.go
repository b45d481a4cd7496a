package historical

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"strata/protocol"
	"strata/segmeta"
	"strata/storage/deep"
)

// syncLoop polls the coordinator every PollPeriod until Close.
func (n *Node) syncLoop() {
	for {
		n.syncOnce()
		select {
		case <-n.ctx.Done():
			return
		case <-time.After(n.cfg.PollPeriod):
		}
	}
}

// syncOnce fetches the assignment and reconciles the cache with it.
// Failures are logged once per distinct error, not every second; a
// coordinator that is busy (503: electing or settling after a leader change)
// is routine and logged at info, and at debug before the first assignment
// was read (a cluster starting, not news).
func (n *Node) syncOnce() {
	want, err := n.fetchListing()
	starting := !n.synced
	if err != nil {
		if msg := err.Error(); msg != n.pollErr {
			n.pollErr = msg
			const what = "cannot read this historical's assignment from the coordinator; serving what is loaded"
			switch {
			case errors.Is(err, errUnavailable) && starting:
				n.log.Debug(what, "error", msg)
			case errors.Is(err, errUnavailable):
				n.log.Info(what, "error", msg)
			default:
				n.log.Warn(what, "error", msg)
			}
		}
		n.reconcile(nil)
		return
	}
	n.synced = true
	if n.pollErr != "" {
		n.pollErr = ""
		if starting {
			n.log.Debug("coordinator reachable again")
		} else {
			n.log.Info("coordinator reachable again")
		}
	}
	n.reconcile(want)
}

// fetchListing returns the segments the coordinator assigns to this
// historical; an unchanged assignment costs a 304 or one hash, not a parse.
func (n *Node) fetchListing() (map[string]*segmeta.DataSegment, error) {
	if n.cfg.Name == "" {
		return nil, errors.New("this historical has no name (host:port) to ask the coordinator for its segments under")
	}
	path := protocol.AssignedPath + url.PathEscape(n.cfg.Name)
	var errs []error
	for _, base := range n.cfg.Coordinators {
		etag := ""
		if n.want != nil {
			etag = n.listETag
		}
		body, newTag, err := n.get(strings.TrimRight(base, "/")+path, etag)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if body == nil { // 304: nothing applied since the last listing
			return n.want, nil
		}
		n.listETag = newTag
		sum := sha256.Sum256(body)
		if sum == n.lastList && n.want != nil {
			return n.want, nil
		}
		want, keepOnly, err := parseListing(body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
		n.lastList = sum
		n.mu.Lock()
		n.keepOnly = keepOnly
		n.mu.Unlock()
		return want, nil
	}
	if len(errs) == 0 {
		return nil, errors.New("no coordinator configured (svc.historical.coordinatorUrls)")
	}
	return nil, errors.Join(errs...)
}

// errUnavailable is a coordinator's 503: no leader yet, or a new leader still
// taking stock of the historicals.
var errUnavailable = errors.New("503 Service Unavailable")

// get fetches url; with etag set, an unchanged resource answers 304 and get
// returns a nil body. It returns the response's ETag.
func (n *Node) get(url, etag string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(n.ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := n.cfg.Client.Do(req) // follows the followers' 307 to the leader
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if etag != "" && resp.StatusCode == http.StatusNotModified {
		return nil, etag, nil
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		return nil, "", fmt.Errorf("GET %s: %w: %.200s", url, errUnavailable, body)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, body)
	}
	if body == nil {
		body = []byte{}
	}
	return body, resp.Header.Get("ETag"), nil
}

// parseListing reads a JSON array of segments, skipping any marked
// overshadowed. Segments marked keepOnly are listed for a handover: the
// historical keeps them while it has them but does not load them (the
// coordinator's picture of what it holds may be out of date).
func parseListing(body []byte) (map[string]*segmeta.DataSegment, map[string]bool, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, nil, fmt.Errorf("segment listing: %w", err)
	}
	want := make(map[string]*segmeta.DataSegment, len(raws))
	var keepOnly map[string]bool
	for _, raw := range raws {
		var st struct {
			Overshadowed bool `json:"overshadowed"`
			KeepOnly     bool `json:"keepOnly"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, nil, fmt.Errorf("segment listing: %w", err)
		}
		if st.Overshadowed {
			continue
		}
		seg := new(segmeta.DataSegment)
		if err := json.Unmarshal(raw, seg); err != nil {
			return nil, nil, fmt.Errorf("segment listing: %w", err)
		}
		id := seg.ID().String()
		want[id] = seg
		if st.KeepOnly {
			if keepOnly == nil {
				keepOnly = map[string]bool{}
			}
			keepOnly[id] = true
		}
	}
	return want, keepOnly, nil
}

// reconcile unannounces segments no longer wanted (keeping them queryable
// for DropDelay), removes those whose delay has passed, and starts loads of
// wanted segments it lacks. want nil means "unknown": nothing is dropped or
// loaded, only expired drops are finished.
func (n *Node) reconcile(want map[string]*segmeta.DataSegment) {
	now := time.Now()
	var destroyNow []*loaded
	var toLoad []*segmeta.DataSegment
	n.mu.Lock()
	if want != nil {
		n.want = want
		for id, l := range n.served {
			if want[id] == nil && l.owner == "" {
				delete(n.served, id)
				l.dropAt = now.Add(n.cfg.DropDelay)
				n.dropping[id] = l
				n.version++
			}
		}
		for id, seg := range want {
			if l := n.served[id]; l != nil && l.owner != "" {
				continue // a local copy (a task's, handing off) serves it meanwhile
			}
			if n.served[id] != nil || n.loading[id] || now.Before(n.retryAt[id]) {
				continue
			}
			if l := n.dropping[id]; l != nil { // wanted again
				delete(n.dropping, id)
				n.served[id] = l
				n.version++
				continue
			}
			if n.keepOnly[id] {
				continue // kept for a handover, not worth a download
			}
			n.loading[id] = true
			toLoad = append(toLoad, seg)
		}
	}
	for id, l := range n.dropping {
		if now.Before(l.dropAt) {
			continue
		}
		delete(n.dropping, id)
		l.gone = true
		if l.refs == 0 {
			destroyNow = append(destroyNow, l)
		}
	}
	n.mu.Unlock()
	for _, l := range destroyNow {
		n.destroy(l)
	}
	for _, seg := range toLoad {
		n.wg.Add(1)
		go n.load(seg)
	}
}

// load downloads, verifies and opens one segment.
func (n *Node) load(seg *segmeta.DataSegment) {
	defer n.wg.Done()
	select {
	case n.loadSem <- struct{}{}:
	case <-n.ctx.Done():
		n.mu.Lock()
		delete(n.loading, seg.ID().String())
		n.mu.Unlock()
		return
	}
	l, err := n.fetch(seg)
	<-n.loadSem
	id := seg.ID().String()
	n.mu.Lock()
	delete(n.loading, id)
	if err != nil {
		n.failures[id]++
		backoff := min(time.Second<<min(n.failures[id]-1, 6), time.Minute)
		n.retryAt[id] = time.Now().Add(backoff)
		n.mu.Unlock()
		if n.ctx.Err() == nil {
			n.log.Warn("cannot load segment; will retry", "segment", id, "retryIn", backoff.String(), "error", err)
		}
		return
	}
	delete(n.failures, id)
	delete(n.retryAt, id)
	if n.want[id] == nil || n.ctx.Err() != nil { // dropped (or closing) while loading
		n.mu.Unlock()
		l.gone = true
		if n.ctx.Err() != nil {
			if l.es != nil {
				l.es.Data.Close()
			}
			return
		}
		n.destroy(l)
		return
	}
	n.served[id] = l
	n.version++
	n.mu.Unlock()
	n.log.Debug("segment loaded", "segment", id, "bytes", l.size)
}

// fetch brings a segment into the cache: download into a temporary
// directory, move it into place, verify every checksum, then write the
// descriptor that marks it complete. Tombstones have no file.
func (n *Node) fetch(seg *segmeta.DataSegment) (*loaded, error) {
	if seg.IsTombstone() {
		return &loaded{seg: seg}, nil
	}
	if seg.LoadSpec == "" || seg.LoadSpec == "null" {
		return nil, errors.New("the segment has no loadSpec")
	}
	var spec deep.LoadSpec
	if err := json.Unmarshal([]byte(seg.LoadSpec), &spec); err != nil {
		return nil, fmt.Errorf("loadSpec %s: %w", seg.LoadSpec, err)
	}
	loc, err := n.reserve(seg.Size)
	if err != nil {
		return nil, err
	}
	reserved := seg.Size
	ok := false
	defer func() {
		if !ok {
			n.mu.Lock()
			loc.used -= reserved
			n.mu.Unlock()
		}
	}()
	id := seg.ID().String()
	name := dirName(id)
	tmp := filepath.Join(loc.Path, fmt.Sprintf("%s%s-%08x", tmpPrefix, name, rand.Uint32()))
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := n.cfg.Storage.Get(n.ctx, spec, filepath.Join(tmp, segmentFile)); err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	final := filepath.Join(loc.Path, name)
	if err := os.RemoveAll(final); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	data, size, err := openVerified(final, seg)
	if err != nil {
		os.RemoveAll(final)
		return nil, err
	}
	if err := writeDescriptor(final, seg); err != nil {
		data.Close()
		os.RemoveAll(final)
		return nil, err
	}
	n.mu.Lock()
	loc.used += size - reserved
	n.mu.Unlock()
	ok = true
	return &loaded{seg: seg, dir: final, loc: loc, size: size, es: newEngineSegment(id, data)}, nil
}

// reserve picks the location with the most free space that fits size.
func (n *Node) reserve(size int64) (*location, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var best *location
	for _, l := range n.locs {
		free := l.MaxSize - l.used
		if free >= size && (best == nil || free > best.MaxSize-best.used) {
			best = l
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no segment cache location has %d bytes free (svc.segmentCache.locations)", size)
	}
	best.used += size
	return best, nil
}
