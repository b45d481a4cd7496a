package coordinator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
)

// A historical answering the announcement protocol over real HTTP: one
// segment, announced again only when its version changes.
func annServer(t *testing.T, polls *atomic.Int64) *httptest.Server {
	seg := &segmeta.DataSegment{DataSource: "wiki", Interval: interval.Interval{Start: 0, End: 3600000}, Version: "v1",
		LoadSpec: segmeta.RawJSON(`{"type":"local","path":"/x"}`), ShardSpec: segmeta.NumberedShard(0, 1), Size: 42}
	seg.Intern()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		polls.Add(1)
		if r.URL.Path != protocol.AnnouncePath {
			http.NotFound(w, r)
			return
		}
		name := strings.TrimPrefix(r.Host, "http://")
		ann := protocol.Announcement{Server: protocol.ServerMetadata{Name: name, Host: name, Type: "historical", Tier: "hot", MaxSize: 100},
			CurrSize: 42, Version: "1"}
		if r.URL.Query().Get("since") == "1" {
			ann.Unchanged = true
		} else {
			ann.Segments = []*segmeta.DataSegment{seg}
		}
		json.NewEncoder(w).Encode(ann)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestInventoryFollowsHistoricals(t *testing.T) {
	var polls atomic.Int64
	ts := annServer(t, &polls)
	name := strings.TrimPrefix(ts.URL, "http://")
	v := &Inventory{Client: ts.Client()}
	now := time.Unix(1000, 0)
	v.Seen("not a host/port", now) // ignored: nothing to poll
	v.Seen(name, now)
	v.PollOnce(context.Background(), now, time.Minute)
	servers := v.Servers()
	if len(servers) != 1 || !servers[0].Reachable || servers[0].Meta.Tier != "hot" || servers[0].CurrSize != 42 || len(servers[0].Segments) != 1 {
		t.Fatalf("servers %+v", servers)
	}
	// Unchanged: the segments stay, and no full listing is sent.
	v.PollOnce(context.Background(), now, time.Minute)
	if s := v.Servers()[0]; len(s.Segments) != 1 || polls.Load() != 2 {
		t.Fatalf("after an unchanged poll: %+v, %d polls", s, polls.Load())
	}
	// Unreachable: holds nothing as far as the coordinator can tell.
	ts.Close()
	v.PollOnce(context.Background(), now, time.Minute)
	if s := v.Servers()[0]; s.Reachable || len(s.Segments) != 0 {
		t.Fatalf("unreachable server %+v", s)
	}
	// Silent for longer than the expiry: forgotten.
	v.PollOnce(context.Background(), now.Add(2*time.Minute), time.Minute)
	if len(v.Servers()) != 0 {
		t.Fatalf("expired server kept: %+v", v.Servers())
	}
}
