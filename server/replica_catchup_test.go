package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/querynode/broker"
	"strata/querynode/historical"
)

// lineSignal is a log output that closes seen at the first line holding
// want: a test's explicit signal that a process reached a point.
type lineSignal struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (l *lineSignal) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(l.want)) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

// A broker reading the replicas of a Kafka sequence, served by two real
// middle-manager servers over loopback: it reads the replica that has read
// furthest (replica 1 here, ahead of replica 0); when that one's server
// dies, the other is behind what answers showed, and a query either says so
// in the response context (no catch-up budget) or waits until the replica
// has caught up and answers every row.
func TestBrokerFallsBackOnReplicaBehind(t *testing.T) {
	f := newDPFixture(t)
	startReplica := func() (*historical.Node, string, func()) {
		ts := httptest.NewUnstartedServer(nil)
		n, err := historical.New(historical.Config{Name: ts.Listener.Addr().String(), LocalOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		n.Start()
		s, err := New(Options{Roles: []string{RoleMiddleManager}, Historical: n, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn})})
		if err != nil {
			t.Fatal(err)
		}
		ts.Config.Handler = s.Handler()
		ts.Start()
		var once sync.Once
		stop := func() { once.Do(func() { ts.CloseClientConnections(); ts.Close(); n.Close() }) }
		t.Cleanup(stop)
		return n, ts.URL, stop
	}
	const seq = "index_kafka_wiki_g0_0123456789abcdef"
	// serve makes a replica serve the first records of the stream: 4 rows
	// per realtime segment, and the position (partition 0's offset) they
	// reach.
	serve := func(n *historical.Node, replica string, records int) {
		t.Helper()
		version := "realtime-" + seq + "_" + replica
		var segs []historical.Served
		for i := range records / 4 {
			sg, path := f.segmentFile("wiki", "2013-09-02/2013-09-03", version, i, 0, wikiRows("2013-09-02", int64(100*i)))
			segs = append(segs, historical.Served{Segment: sg, Path: path, Realtime: true, Sequence: seq,
				Offsets: map[int32]int64{0: int64(records)}})
		}
		if err := n.ServeLocal(version, segs); err != nil {
			t.Fatal(err)
		}
	}
	a, aURL, _ := startReplica()
	b, bURL, stopB := startReplica()
	waiting := &lineSignal{want: "waiting for a replica to catch up", seen: make(chan struct{})}
	br := startBroker(t, []string{aURL, bURL}, func(c *broker.Config) {
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: waiting, Level: hclog.Info})
	})
	br.b.Start()
	type answer struct {
		rows   int
		behind []broker.RealtimeBehind
	}
	// ask runs the count query (on any goroutine); read checks and decodes
	// its answer.
	type reply struct {
		code int
		body string
		rc   string
		err  error
	}
	ask := func(budget string) reply {
		ctx := ""
		if budget != "" {
			ctx = `,"context":{"realtimeCatchUpTimeout":` + budget + `}`
		}
		resp, err := http.Post(br.url+"/svc/v2/", "application/json", strings.NewReader(`{"queryType":"timeseries","dataSource":"wiki",
		  "intervals":["2013-01-01/2014-01-01"],"granularity":"all","aggregations":[{"type":"count","name":"rows"}]`+ctx+`}`))
		if err != nil {
			return reply{err: err}
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return reply{code: resp.StatusCode, body: string(body), rc: resp.Header.Get("X-Druid-Response-Context"), err: err}
	}
	read := func(r reply) answer {
		t.Helper()
		var res []struct{ Result struct{ Rows int } }
		var rc struct {
			RealtimeBehind []broker.RealtimeBehind `json:"realtimeBehind"`
		}
		if r.err != nil || r.code != 200 || json.Unmarshal([]byte(r.body), &res) != nil || json.Unmarshal([]byte(r.rc), &rc) != nil {
			t.Fatalf("query: %d %s %v (response context %q)", r.code, r.body, r.err, r.rc)
		}
		if len(res) == 0 {
			return answer{behind: rc.RealtimeBehind}
		}
		return answer{rows: res[0].Result.Rows, behind: rc.RealtimeBehind}
	}
	count := func(budget string) answer { t.Helper(); return read(ask(budget)) }

	serve(a, "0_aaaa", 4)
	serve(b, "1_bbbb", 8)
	var got answer
	eventually.True(t, "the furthest replica's 8 rows", func() bool { got = count(""); return got.rows == 8 },
		eventually.Showing(func() string { return fmt.Sprintf("%+v", got) }))
	if got.behind != nil {
		t.Fatalf("flagged behind reading the furthest replica: %+v", got.behind)
	}

	// Replica 1's server dies; once the broker knows, replica 0 is read,
	// which has built 4 records fewer into queryable rows.
	stopB()
	host := strings.TrimPrefix(bURL, "http://")
	eventually.True(t, "the broker drops the dead replica", func() bool {
		for _, s := range br.b.RealtimeSegments() {
			if s.Server == host {
				return false
			}
		}
		return true
	})
	got = count("0")
	if got.rows != 4 || len(got.behind) != 1 || got.behind[0].Sequence != seq || got.behind[0].Records != 4 ||
		got.behind[0].ShownOffsets[0] != 8 || got.behind[0].ReadOffsets[0] != 4 {
		t.Fatalf("without a catch-up budget: %+v, want 4 rows flagged 4 records behind", got)
	}

	// With the default budget the query waits for replica 0 to catch up.
	done := make(chan reply, 1)
	go func() { done <- ask("") }()
	select {
	case <-waiting.seen:
	case r := <-done:
		t.Fatalf("answered without waiting for the replica behind: %+v", read(r))
	}
	serve(a, "0_aaaa", 8)
	if got = read(<-done); got.rows != 8 || got.behind != nil {
		t.Fatalf("after waiting for the replica to catch up: %+v, want 8 rows, not flagged", got)
	}
}
