package streaming_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/streaming"
)

// publishGate holds the first segment publish that goes through it until
// release is closed; held is closed when it arrives.
type publishGate struct {
	next          http.RoundTripper
	once          sync.Once
	held, release chan struct{}
}

func (g *publishGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/segments/publish") {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.held)
			<-g.release
		}
	}
	return g.next.RoundTrip(req)
}

// replicaPayload is e.payload as replica n of sequence seq (two replicas).
func (e *env) replicaPayload(seq string, n int, start map[int32]int64, duration string) (id, payload string) {
	id = seq + "_" + string(rune('0'+n)) + "_r"
	p := strings.Replace(e.payload(start, duration), `{"type":"index_kafka",`,
		`{"type":"index_kafka","id":"`+id+`","groupId":"`+seq+`_group",`, 1)
	p = strings.Replace(p, `"taskDuration"`, `"baseSequenceName":"`+seq+`","replicas":2,"taskDuration"`, 1)
	return id, p
}

var stoppedAt = regexp.MustCompile(`(?:Stopped reading after \d+ records|Read up to the furthest replica); next offsets \{.*"partitionOffsetMap":\{"0":(\d+)\}`)

// The replicas of a sequence stop reading on their own clocks. Whichever
// publishes must cover every record any replica read (and served as
// realtime rows): otherwise a broker that read the replica further ahead
// answers with fewer rows once the sequence is handed off, until the next
// sequence reads those records again. Here replica 0's clock ends first (a
// shorter taskDuration) and its publish is held while more records arrive;
// replica 1, whose clock runs on, must not end up past what was published.
func TestReplicaPublishCoversEveryReplicasRecords(t *testing.T) {
	defer streaming.SetProgressPeriod(20 * time.Millisecond)()
	e := newEnv(t)
	startWorker(t, e.url, false) // replicas of one group run on different workers
	gate := &publishGate{next: http.DefaultTransport, held: make(chan struct{}), release: make(chan struct{})}
	e.c.HTTP.Transport = gate
	var released sync.Once
	release := func() { released.Do(func() { close(gate.release) }) }
	t.Cleanup(release) // a failed test must not leave a task held

	for i := range 10 {
		e.produce(t, 0, row(1, 1, "a", i))
	}
	seq := "index_kafka_k_g0_s1"
	id0, p0 := e.replicaPayload(seq, 0, map[int32]int64{0: 0}, "PT2S")
	id1, p1 := e.replicaPayload(seq, 1, map[int32]int64{0: 0}, "PT1H")
	e.submit(t, p0)
	e.submit(t, p1)
	reports := func(id string) string {
		_, body := e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
		return body
	}
	select {
	case <-gate.held:
	case <-time.After(30 * time.Second):
		t.Fatal("no publish")
	}
	// Records arrive while the publish is on its way; replica 1 reads them
	// unless it already stopped reading.
	for i := range 5 {
		e.produce(t, 0, row(1, 1, "b", i))
	}
	eventually.True(t, id1+" to read on or stop", func() bool {
		r := reports(id1)
		return strings.Contains(r, `"recordsRead":15`) || strings.Contains(r, `"stopped":true`)
	})
	release()
	for _, id := range []string{id0, id1} {
		if status, msg := e.wait(t, id); status != "SUCCESS" {
			t.Fatalf("%s: %s %s", id, status, msg)
		}
	}

	published := e.offsets(t).Partitions[0]
	for _, id := range []string{id0, id1} {
		_, log := e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/log", "")
		matches := stoppedAt.FindAllStringSubmatch(log, -1)
		if len(matches) == 0 {
			t.Fatalf("%s's log says nowhere where it stopped reading:\n%s", id, log)
		}
		for _, m := range matches {
			if n, _ := strconv.ParseInt(m[1], 10, 64); n > published {
				t.Errorf("%s read up to offset %s, the sequence was published up to %d: rows it served are in no published segment", id, m[1], published)
			}
		}
	}
	if _, rows, _ := e.contents(t); rows != published {
		t.Errorf("%d rows published for offsets up to %d", rows, published)
	}
}

// A replica whose middle manager stops leaves the publish to the others
// without making them stop: the one left reads on.
func TestReplicaLeavingDoesNotStopTheOthers(t *testing.T) {
	defer streaming.SetProgressPeriod(20 * time.Millisecond)()
	e := newEnv(t)
	mm2 := startWorker(t, e.url, false)
	for i := range 10 {
		e.produce(t, 0, row(1, 1, "a", i))
	}
	seq := "index_kafka_k_g0_s2"
	id0, p0 := e.replicaPayload(seq, 0, map[int32]int64{0: 0}, "PT1H")
	id1, p1 := e.replicaPayload(seq, 1, map[int32]int64{0: 0}, "PT1H")
	e.submit(t, p0)
	e.submit(t, p1)
	reports := func(id string) string {
		_, body := e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
		return body
	}
	for _, id := range []string{id0, id1} {
		eventually.True(t, id+" to read 10 records", func() bool { return strings.Contains(reports(id), `"recordsRead":10`) })
	}
	mm2.Stop()
	status := func(id string) string {
		_, body := e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/status", "")
		return body
	}
	var survivor string
	eventually.True(t, "the replica of the stopped worker to end", func() bool {
		for i, id := range []string{id0, id1} {
			if s := status(id); strings.Contains(s, `"SUCCESS"`) || strings.Contains(s, `"FAILED"`) {
				survivor = []string{id1, id0}[i]
				return true
			}
		}
		return false
	}, eventually.Within(time.Minute)) // a stopped worker's task may end only when its heartbeats lapse
	for i := range 5 {
		e.produce(t, 0, row(1, 1, "b", i))
	}
	eventually.True(t, survivor+" to read on", func() bool { return strings.Contains(reports(survivor), `"recordsRead":15`) })
	if r := reports(survivor); strings.Contains(r, `"stopped":true`) {
		t.Fatalf("%s stopped reading: %s", survivor, r)
	}
}
