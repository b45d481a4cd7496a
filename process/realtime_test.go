package process

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/protocol"
)

// realtimePipeline is kafkaPipeline with two brokers: one polls the
// historical and the middle manager (the rows of running tasks), the other
// only the historical (what is published and loaded).
type realtimePipeline struct {
	*kafkaPipeline
	published string // broker URL of the historical-only broker
	mm        string // middle manager URL
}

func newRealtimePipeline(t *testing.T) *realtimePipeline {
	k, mm, hist := newKafkaStack(t, 1)
	ports := freePorts(t, 2)
	startRole(t, "broker", ports[0], map[string]string{
		"svc.broker.historicalUrls": "http://" + hist + ",http://" + mm, "svc.broker.pollPeriod": "20ms"})
	startRole(t, "broker", ports[1], map[string]string{"svc.broker.historicalUrls": "http://" + hist, "svc.broker.pollPeriod": "20ms"})
	k.broker = "http://" + ports[0]
	return &realtimePipeline{kafkaPipeline: k, published: "http://" + ports[1], mm: "http://" + mm}
}

// count asks a broker for the rows and the sum of n; safe off the test's
// goroutine.
func count(broker string) (rows, sum int64, err error) {
	rows, sum, _, err = countFlagged(broker)
	return rows, sum, err
}

// countFlagged is count, also telling whether the broker flagged the answer
// as read from a Kafka replica behind what its earlier answers read (the
// response context's realtimeBehind).
func countFlagged(broker string) (rows, sum int64, behind bool, err error) {
	resp, err := http.Post(broker+"/svc/v2/", "application/json", strings.NewReader(`{"queryType":"timeseries","dataSource":"events",
	  "intervals":["2024-01-01/2024-01-02"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"rows","fieldName":"count"},{"type":"longSum","name":"sum","fieldName":"n"}]}`))
	if err != nil {
		return 0, 0, false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, 0, false, fmt.Errorf("%s: %s", resp.Status, body)
	}
	var res []struct {
		Result struct{ Rows, Sum int64 } `json:"result"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return 0, 0, false, fmt.Errorf("%v: %s", err, body)
	}
	var rc struct {
		RealtimeBehind []json.RawMessage `json:"realtimeBehind"`
	}
	if err := json.Unmarshal([]byte(resp.Header.Get("X-Druid-Response-Context")), &rc); err != nil {
		return 0, 0, false, fmt.Errorf("response context %q: %v", resp.Header.Get("X-Druid-Response-Context"), err)
	}
	behind = len(rc.RealtimeBehind) > 0
	if len(res) == 0 {
		return 0, 0, behind, nil
	}
	return res[0].Result.Rows, res[0].Result.Sum, behind, nil
}

// announced is what the middle manager serves: published and realtime segments.
func (k *realtimePipeline) announced() (published, realtime []string) {
	k.t.Helper()
	_, _, body := do(k.t, "GET", k.mm+protocol.AnnouncePath, "", "", nil)
	var a protocol.Announcement
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		k.t.Fatalf("announcement: %v: %s", err, body)
	}
	for _, s := range a.Segments {
		published = append(published, s.ID().String())
	}
	for _, s := range a.Realtime {
		realtime = append(realtime, s.ID().String())
	}
	return published, realtime
}

// checker queries the realtime broker in a loop and remembers the first
// answer that counts a row twice (more rows than records sent, or all rows
// with the wrong sum).
type checker struct {
	mu      sync.Mutex
	sent    int64 // raised before records are produced: rows never exceed it
	bad     string
	queries int
	dips    []string // answers below the one before: rows lost for a moment
	// flagged are answers below the one before that the broker flagged as
	// read from a replica behind (realtimeBehind): fewer rows, but said so.
	flagged []string
	last    int64
	stop    chan struct{}
	done    chan struct{}
}

func (c *checker) run(broker string) {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-time.After(15 * time.Millisecond):
		}
		rows, sum, behind, err := countFlagged(broker)
		c.mu.Lock()
		c.queries++
		switch {
		case err != nil:
			c.bad = fmt.Sprintf("query failed: %v", err)
		case rows > c.sent || (rows == c.sent && sum != c.sent*(c.sent-1)/2):
			c.bad = fmt.Sprintf("%d rows with sum %d for %d records sent: duplicates", rows, sum, c.sent)
		}
		switch {
		case behind:
			// A flagged answer is compared with, and leaves, the last
			// unflagged one: the next must not be below that either.
			if rows < c.last {
				c.flagged = append(c.flagged, fmt.Sprintf("%d→%d", c.last, rows))
			}
		case rows < c.last:
			c.dips = append(c.dips, fmt.Sprintf("%d→%d", c.last, rows))
			c.last = rows
		default:
			c.last = rows
		}
		c.mu.Unlock()
		if c.bad != "" {
			return
		}
	}
}

func (c *checker) setSent(n int) {
	c.mu.Lock()
	c.sent = int64(n)
	c.mu.Unlock()
}

// waitRows waits until broker serves exactly want rows with the right sum.
func waitRows(t *testing.T, what, broker string, want int, c *checker) {
	t.Helper()
	wantSum := int64(want * (want - 1) / 2)
	var rows, sum int64
	var err error
	eventually.True(t, fmt.Sprintf("%s: %d rows (sum %d)", what, want, wantSum), func() bool {
		rows, sum, err = count(broker)
		if err == nil && rows == int64(want) && sum == wantSum {
			return true
		}
		c.mu.Lock()
		bad := c.bad
		c.mu.Unlock()
		if bad != "" {
			t.Fatalf("%s: %s", what, bad)
		}
		return false
	}, eventually.Within(20*time.Second), eventually.Showing(func() string { return fmt.Sprintf("%d rows (sum %d, %v)", rows, sum, err) }))
}

// Rows of a running index_kafka task are queryable through a broker that
// polls the middle manager long before the task publishes; when it does,
// the published segments replace them on the middle manager and then on the
// historical, and no answer along the way counts a row twice.
func TestKafkaRowsQueryableBeforePublish(t *testing.T) {
	k := newRealtimePipeline(t)
	c := &checker{stop: make(chan struct{}), done: make(chan struct{})}
	c.setSent(40)
	k.produce(40)
	go c.run(k.broker)
	defer func() {
		select {
		case <-c.stop:
		default:
			close(c.stop)
		}
		<-c.done
	}()
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.spec("PT20S", 1), nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	start := time.Now()
	waitRows(t, "rows of the running task", k.broker, k.sent, c)
	// Records produced while the task reads follow within a few periods.
	c.setSent(k.sent + 25)
	k.produce(25)
	waitRows(t, "later rows of the running task", k.broker, k.sent, c)
	if time.Since(start) > 15*time.Second {
		t.Fatalf("rows took %s to become queryable (taskDuration 20s): the task may have published", time.Since(start))
	}
	// Nothing is published yet: the middle manager serves realtime segments
	// only, and the historical-only broker sees no row.
	pub, rt := k.announced()
	if len(pub) != 0 || len(rt) == 0 {
		t.Fatalf("before publish the middle manager serves %d published and %d realtime segments", len(pub), len(rt))
	}
	for _, id := range rt {
		if !strings.Contains(id, "realtime-index_kafka_events") {
			t.Fatalf("realtime segment id %s", id)
		}
	}
	if rows, _, err := count(k.published); err != nil || rows != 0 {
		t.Fatalf("before publish the historical-only broker serves %d rows (%v)", rows, err)
	}
	// The supervisor's row stats follow the reading task (its progress reports).
	eventually.True(t, "row stats of the reading task", func() bool {
		code, _, body := do(t, "GET", k.supervisors()+"/events/stats", "", "", nil)
		var st map[string]map[string]struct {
			Totals map[string]struct {
				Processed int64 `json:"processed"`
			} `json:"totals"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
			return false
		}
		for _, task := range st["0"] {
			return task.Totals["buildSegments"].Processed == int64(k.sent)
		}
		return false
	}, slow)
	if code, _, body := do(t, "GET", k.supervisors()+"/events/parseErrors", "", "", nil); code != 200 || body != "[]" {
		t.Fatalf("parseErrors: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", k.supervisors()+"/nope/stats", "", "", nil); code != 404 {
		t.Fatalf("stats of an unknown supervisor: %d", code)
	}

	// Suspending makes the task publish now; the rows move to the published
	// segments, served by the middle manager until the historical has them.
	if code, _, body := do(t, "POST", k.supervisors()+"/events/suspend", "", "", nil); code != 200 {
		t.Fatalf("suspend: %d %s", code, body)
	}
	waitRows(t, "published rows on the historical", k.published, k.sent, c)
	eventually.True(t, "the middle manager to stop serving", func() bool {
		pub, rt := k.announced()
		return len(pub) == 0 && len(rt) == 0
	}, slow)
	waitRows(t, "rows after hand-off", k.broker, k.sent, c)
	close(c.stop)
	<-c.done
	if c.bad != "" {
		t.Fatal(c.bad)
	}
	if c.queries < 20 {
		t.Fatalf("only %d queries checked", c.queries)
	}
	// A broker a poll behind the hand-off learns from the middle manager what
	// replaced the realtime segments it asked for, so no answer loses rows.
	if len(c.dips) > 0 {
		t.Fatalf("answers lost rows during the hand-off: %v", c.dips)
	}
	t.Logf("%d queries in %s; answers below the one before: %v", c.queries, time.Since(start).Round(time.Millisecond), c.dips)
}
