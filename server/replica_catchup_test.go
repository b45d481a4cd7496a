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
	"time"

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

// replicaFixture is two real middle-manager servers over loopback serving
// the replicas of one Kafka sequence, and a broker reading them (started
// once the replicas serve).
type replicaFixture struct {
	t       *testing.T
	f       *dpFixture
	nodes   [2]*historical.Node
	urls    [2]string
	stops   [2]func()
	br      *dpBroker
	waiting *lineSignal // the broker logged that a query waits for a replica
}

const replicaSeq = "index_kafka_wiki_g0_0123456789abcdef"

var replicaNames = [2]string{"0_aaaa", "1_bbbb"}

func newReplicaFixture(t *testing.T) *replicaFixture {
	r := &replicaFixture{t: t, f: newDPFixture(t), waiting: &lineSignal{want: "waiting for a replica to catch up", seen: make(chan struct{})}}
	for i := range 2 {
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
		r.stops[i] = func() { once.Do(func() { ts.CloseClientConnections(); ts.Close(); n.Close() }) }
		t.Cleanup(r.stops[i])
		r.nodes[i], r.urls[i] = n, ts.URL
	}
	return r
}

// startBroker starts the broker reading both replicas.
func (r *replicaFixture) startBroker(tweak func(*broker.Config)) {
	r.br = startBroker(r.t, r.urls[:], func(c *broker.Config) {
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: r.waiting, Level: hclog.Info})
		if tweak != nil {
			tweak(c)
		}
	})
	r.br.b.Start()
}

// serve makes replica i serve the first records of the stream: 4 rows per
// realtime segment, and the position (partition 0's offset) they reach.
func (r *replicaFixture) serve(i, records int) {
	r.t.Helper()
	version := "realtime-" + replicaSeq + "_" + replicaNames[i]
	var segs []historical.Served
	for p := range records / 4 {
		sg, path := r.f.segmentFile("wiki", "2013-09-02/2013-09-03", version, p, 0, wikiRows("2013-09-02", int64(100*p)))
		segs = append(segs, historical.Served{Segment: sg, Path: path, Realtime: true, Sequence: replicaSeq,
			Offsets: map[int32]int64{0: int64(records)}})
	}
	if err := r.nodes[i].ServeLocal(version, segs); err != nil {
		r.t.Fatal(err)
	}
}

type rowsReply struct {
	code int
	body string
	rc   string
	err  error
}

// ask runs the count query with a catch-up budget ("": the default), on
// any goroutine; read checks and decodes its answer.
func (r *replicaFixture) ask(budget string) rowsReply {
	ctx := ""
	if budget != "" {
		ctx = `,"context":{"realtimeCatchUpTimeout":` + budget + `}`
	}
	resp, err := http.Post(r.br.url+"/svc/v2/", "application/json", strings.NewReader(`{"queryType":"timeseries","dataSource":"wiki",
	  "intervals":["2013-01-01/2014-01-01"],"granularity":"all","aggregations":[{"type":"count","name":"rows"}]`+ctx+`}`))
	if err != nil {
		return rowsReply{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return rowsReply{code: resp.StatusCode, body: string(body), rc: resp.Header.Get("X-Druid-Response-Context"), err: err}
}

type rowsAnswer struct {
	rows   int
	behind []broker.RealtimeBehind
}

func (r *replicaFixture) read(rep rowsReply) rowsAnswer {
	r.t.Helper()
	var res []struct{ Result struct{ Rows int } }
	var rc struct {
		RealtimeBehind []broker.RealtimeBehind `json:"realtimeBehind"`
	}
	if rep.err != nil || rep.code != 200 || json.Unmarshal([]byte(rep.body), &res) != nil || json.Unmarshal([]byte(rep.rc), &rc) != nil {
		r.t.Fatalf("query: %d %s %v (response context %q)", rep.code, rep.body, rep.err, rep.rc)
	}
	if len(res) == 0 {
		return rowsAnswer{behind: rc.RealtimeBehind}
	}
	return rowsAnswer{rows: res[0].Result.Rows, behind: rc.RealtimeBehind}
}

func (r *replicaFixture) count(budget string) rowsAnswer { r.t.Helper(); return r.read(r.ask(budget)) }

// waitRows waits for an unflagged answer of want rows.
func (r *replicaFixture) waitRows(what string, want int) {
	r.t.Helper()
	var got rowsAnswer
	eventually.True(r.t, what, func() bool { got = r.count(""); return got.rows == want && got.behind == nil },
		eventually.Showing(func() string { return fmt.Sprintf("%+v", got) }))
}

// checkBehind checks an answer of rows flagged behind the shown position.
func checkBehind(t *testing.T, what string, got rowsAnswer, rows int, shown, read int64) {
	t.Helper()
	if got.rows != rows || len(got.behind) != 1 || got.behind[0].Sequence != replicaSeq || got.behind[0].Records != shown-read ||
		got.behind[0].ShownOffsets[0] != shown || got.behind[0].ReadOffsets[0] != read {
		t.Fatalf("%s: %+v, want %d rows flagged %d records behind", what, got, rows, shown-read)
	}
}

// A broker reading the replicas of a Kafka sequence reads the replica that
// has read furthest (replica 1 here, ahead of replica 0); when that one's
// server dies, the other is behind what answers showed, and a query either
// says so in the response context (no catch-up budget) or waits until the
// replica has caught up and answers every row.
func TestBrokerFallsBackOnReplicaBehind(t *testing.T) {
	r := newReplicaFixture(t)
	r.serve(0, 4)
	r.serve(1, 8)
	r.startBroker(nil)
	r.waitRows("the furthest replica's 8 rows", 8)

	// Replica 1's server dies; once the broker knows, replica 0 is read,
	// which has built 4 records fewer into queryable rows.
	r.stops[1]()
	host := strings.TrimPrefix(r.urls[1], "http://")
	eventually.True(t, "the broker drops the dead replica", func() bool {
		for _, s := range r.br.b.RealtimeSegments() {
			if s.Server == host {
				return false
			}
		}
		return true
	})
	checkBehind(t, "without a catch-up budget", r.count("0"), 4, 8, 4)

	// With the default budget the query waits for replica 0 to catch up.
	done := make(chan rowsReply, 1)
	go func() { done <- r.ask("") }()
	select {
	case <-r.waiting.seen:
	case rep := <-done:
		t.Fatalf("answered without waiting for the replica behind: %+v", r.read(rep))
	}
	r.serve(0, 8)
	if got := r.read(<-done); got.rows != 8 || got.behind != nil {
		t.Fatalf("after waiting for the replica to catch up: %+v, want 8 rows, not flagged", got)
	}
}

// The replica read dies during a query, before the broker's view knows (it
// polls once an hour here): the query falls back on the other replica,
// which is behind; no announcement comes within the catch-up budget, so
// the answer is flagged, and so is the next one at once (the broker gave up
// waiting for that sequence).
func TestBrokerFlagsFailoverDuringQuery(t *testing.T) {
	r := newReplicaFixture(t)
	r.serve(0, 4)
	r.serve(1, 8)
	r.startBroker(func(c *broker.Config) { c.PollPeriod = time.Hour })
	eventually.True(t, "the broker polled both replicas", func() bool { return len(r.br.b.RealtimeSegments()) == 3 })
	if got := r.count(""); got.rows != 8 || got.behind != nil {
		t.Fatalf("reading the furthest replica: %+v", got)
	}
	r.stops[1]()
	checkBehind(t, "failed over during the query", r.count("100"), 4, 8, 4)
	checkBehind(t, "the next query", r.count(""), 4, 8, 4)
}

// The only replica that served a sequence's rows dies while the other has
// built none yet: a query reads nothing of the sequence, which it says
// (unread), or waits until a replica serves the rows again.
func TestBrokerFlagsSequenceNoReplicaServes(t *testing.T) {
	r := newReplicaFixture(t)
	r.serve(1, 8)
	r.startBroker(nil)
	r.waitRows("replica 1's 8 rows", 8)
	r.stops[1]()
	eventually.True(t, "the broker drops the dead replica", func() bool { return len(r.br.b.RealtimeSegments()) == 0 })
	got := r.count("0")
	if got.rows != 0 || len(got.behind) != 1 || !got.behind[0].Unread || got.behind[0].Sequence != replicaSeq ||
		got.behind[0].ShownOffsets[0] != 8 || got.behind[0].ReadOffsets != nil {
		t.Fatalf("no replica serving: %+v, want no rows, flagged unread", got)
	}
	done := make(chan rowsReply, 1)
	go func() { done <- r.ask("") }()
	select {
	case <-r.waiting.seen:
	case rep := <-done:
		t.Fatalf("answered without waiting for a replica: %+v", r.read(rep))
	}
	r.serve(0, 8)
	if got := r.read(<-done); got.rows != 8 || got.behind != nil {
		t.Fatalf("after waiting for a replica: %+v, want 8 rows, not flagged", got)
	}
}
