package broker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"strata/protocol"
)

// errGone is the poll "error" of a server discovery no longer lists.
var errGone = errors.New("no longer a live member of the cluster (discovery)")

// discoverLoop keeps the polled data servers equal to what cfg.Discover
// lists (discovery's live historicals and middle managers), checked every
// poll period: a newcomer is polled at once, and a server that is gone
// stops being polled and its segments stop being read from it. An empty
// list (the control plane not reached yet) changes nothing.
func (b *Broker) discoverLoop() {
	defer b.wg.Done()
	pollers := map[string]*discovered{} // by base URL
	defer func() {
		for _, d := range pollers {
			d.cancel()
			<-d.done
		}
	}()
	for {
		if urls := b.cfg.Discover(); len(urls) > 0 {
			want := map[string]bool{}
			for _, u := range urls {
				u = strings.TrimRight(u, "/")
				want[u] = true
				if pollers[u] == nil {
					pollers[u] = b.startPolling(b.view.addServer(u))
				}
			}
			b.view.mu.Lock()
			b.view.undiscovered = false // queries now wait for these servers' first polls
			b.view.mu.Unlock()
			for u, d := range pollers {
				if !want[u] {
					d.cancel()
					<-d.done
					b.view.removeServer(d.s)
					delete(pollers, u)
					b.log.Info("data server left the cluster; no longer queried", "server", u)
				}
			}
		}
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(b.cfg.PollPeriod):
		}
	}
}

type discovered struct {
	s      *server
	cancel context.CancelFunc
	done   chan struct{}
}

func (b *Broker) startPolling(s *server) *discovered {
	ctx, cancel := context.WithCancel(b.ctx)
	d := &discovered{s: s, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for {
			b.view.mu.RLock()
			since := s.version
			b.view.mu.RUnlock()
			fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
			ann, err := protocol.FetchAnnouncement(fctx, b.client, s.url, since)
			fcancel()
			if ctx.Err() != nil {
				return // removed or closing: its last answer must not be applied
			}
			b.view.apply(s, ann, err)
			b.logPoll(s, err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(b.cfg.PollPeriod):
			}
		}
	}()
	return d
}

// addServer adds a data server to poll. The slice is replaced, not
// appended to in place, so a reader holding the old one is unaffected.
func (v *view) addServer(url string) *server {
	host := strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
	s := &server{url: url, host: host, meta: protocol.ServerMetadata{Name: host, Host: host, Type: "historical", Tier: "_default_tier"}}
	v.mu.Lock()
	v.servers = append(slices.Clip(v.servers), s)
	v.mu.Unlock()
	return s
}

// removeServer forgets a data server whose poller has stopped: its
// segments leave the view (and the timeline, when no one else holds them).
func (v *view) removeServer(s *server) {
	v.apply(s, nil, errGone)
	v.mu.Lock()
	v.servers = slices.DeleteFunc(slices.Clone(v.servers), func(x *server) bool { return x == s })
	v.mu.Unlock()
}
