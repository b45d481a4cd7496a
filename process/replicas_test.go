package process

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/props"
	"strata/storage/deep"
)

// replicaPipeline is Kafka ingestion with two middle managers: a broker
// polls the historical and both middle managers (rows of running tasks), a
// second broker only the historical (what is published and loaded).
type replicaPipeline struct {
	*kafkaPipeline
	published string   // historical-only broker
	mms       []string // the middle managers' host:port
	stopMM    []func() // stops middle manager i (its process and worker)
}

func newReplicaPipeline(t *testing.T) *replicaPipeline {
	k, mm, hist := newKafkaStack(t, 1)
	var urls []string
	for i := range k.c.procs {
		urls = append(urls, k.c.url(i))
	}
	// The stack's middle manager is the first; a second one like it.
	ports := freePorts(t, 3)
	mp := props.Defaults()
	mp.Set("svc.node.roles", "middleManager")
	mp.Set("svc.http.address", ports[0])
	mp.Set("svc.data.dir", t.TempDir())
	mp.Set("svc.worker.overlordUrls", strings.Join(urls, ","))
	mp.Set("svc.worker.capacity", "2")
	mp.Set("svc.worker.heartbeatPeriod", "100ms")
	mp.Set("svc.storage.storageDirectory", k.c.props[0].String("svc.storage.storageDirectory"))
	proc, err := StartServer(mp, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	worker := middlemanager.Attached(mp)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			proc.Close()
			<-worker.Done()
		}
	}
	t.Cleanup(stop)
	startRole(t, "broker", ports[1], map[string]string{
		"svc.broker.historicalUrls": "http://" + hist + ",http://" + mm + ",http://" + ports[0], "svc.broker.pollPeriod": "20ms"})
	startRole(t, "broker", ports[2], map[string]string{"svc.broker.historicalUrls": "http://" + hist, "svc.broker.pollPeriod": "20ms"})
	k.broker = "http://" + ports[1]
	return &replicaPipeline{kafkaPipeline: k, published: "http://" + ports[2], mms: []string{mm, ports[0]},
		stopMM: []func(){nil, stop}}
}

// replicaSpec is kafkaPipeline.spec with ioConfig.replicas.
func (k *replicaPipeline) replicaSpec(taskDuration string, taskCount, replicas int) string {
	s := k.spec(taskDuration, taskCount)
	return strings.Replace(s, `"taskCount":`, fmt.Sprintf(`"replicas":%d,"taskCount":`, replicas), 1)
}

type listedTask struct {
	ID       string `json:"id"`
	GroupID  string `json:"groupId"`
	Status   string `json:"status"`
	ErrorMsg string `json:"errorMsg"`
	Location struct {
		Host *string `json:"host"`
		Port int     `json:"port"`
	} `json:"location"`
}

func (lt listedTask) worker() string {
	if lt.Location.Host == nil || lt.Location.Port <= 0 {
		return ""
	}
	return net.JoinHostPort(*lt.Location.Host, strconv.Itoa(lt.Location.Port))
}

func (k *replicaPipeline) tasks(which string) []listedTask {
	k.t.Helper()
	code, _, body := do(k.t, "GET", k.c.url(k.c.leader())+"/svc/indexer/v1/"+which, "", "", nil)
	var out []listedTask
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil {
		k.t.Fatalf("%s: %d %s", which, code, body)
	}
	return out
}

func (k *replicaPipeline) taskLog(id string) string {
	k.t.Helper()
	_, _, log := do(k.t, "GET", k.c.url(k.c.leader())+"/svc/indexer/v1/task/"+id+"/log", "", "", nil)
	return log
}

// yields are the logs of the replicas that succeeded leaving the publish to
// another replica of their sequence.
func (k *replicaPipeline) yields() map[string]string {
	k.t.Helper()
	out := map[string]string{}
	for _, lt := range k.tasks("completeTasks") {
		if lt.Status != "SUCCESS" {
			continue
		}
		if log := k.taskLog(lt.ID); strings.Contains(log, "ending without publishing") {
			out[lt.ID] = log
		}
	}
	return out
}

// sequenceOf is a task's ioConfig.baseSequenceName: replicas share it.
func (k *replicaPipeline) sequenceOf(id string) string {
	k.t.Helper()
	code, _, body := do(k.t, "GET", k.c.url(k.c.leader())+"/svc/indexer/v1/task/"+id, "", "", nil)
	var tk struct {
		Payload struct {
			IOConfig struct {
				BaseSequenceName string `json:"baseSequenceName"`
			} `json:"ioConfig"`
		} `json:"payload"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &tk) != nil {
		k.t.Fatalf("task %s: %d %s", id, code, body)
	}
	return tk.Payload.IOConfig.BaseSequenceName
}

// replicasSpread waits until every task group runs want tasks, each on
// another middle manager, and returns the groups' worker sets.
func (k *replicaPipeline) replicasSpread(groups, want int) {
	k.t.Helper()
	var last string
	eventually.True(k.t, fmt.Sprintf("%d groups of %d replicas on different workers", groups, want), func() bool {
		byGroup := map[string][]string{}
		for _, lt := range k.tasks("runningTasks") {
			byGroup[lt.GroupID] = append(byGroup[lt.GroupID], lt.worker())
		}
		last = fmt.Sprint(byGroup)
		if len(byGroup) != groups {
			return false
		}
		for _, ws := range byGroup {
			if len(ws) != want {
				return false
			}
			seen := map[string]bool{}
			for _, w := range ws {
				if w == "" || seen[w] {
					return false
				}
				seen[w] = true
			}
		}
		return true
	}, slow, eventually.Showing(func() string { return last }))
}

// With ioConfig.replicas 2 every task group runs on both middle managers,
// reading the same offsets; a broker polling both counts every record once
// (it reads one replica's rows per group); stopping one middle manager
// mid-stream loses neither queryable rows nor ingestion; each sequence of a
// group is published by one replica only, and in the end every record is
// published exactly once.
func TestKafkaReplicasSurviveMiddleManagerLoss(t *testing.T) {
	k := newReplicaPipeline(t)
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
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.replicaSpec("PT4S", 2, 2), nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	k.replicasSpread(2, 2)
	waitRows(t, "rows of the replicated tasks", k.broker, k.sent, c)
	// Several task durations: sequences hand over while records arrive,
	// replica 0 publishing and replica 1 yielding.
	// (Task logs are read from their middle managers: the yields are
	// collected before one stops.)
	yields := k.yields()
	for len(yields) < 2 {
		c.setSent(k.sent + 15)
		k.produce(15)
		waitRows(t, "rows across sequences", k.broker, k.sent, c)
		yields = k.yields()
	}

	// Stop the second middle manager while its replicas read. The rows of
	// a replica read there give way to its replica's on the other, which may
	// be a moment behind (it builds what it read into queryable rows every
	// realtime period): the broker waits for it to catch up, or flags the
	// answer (realtimeBehind); no answer has fewer rows unflagged.
	k.replicasSpread(2, 2)
	c.setSent(k.sent + 20)
	k.produce(20)
	k.stopMM[1]()
	stopped := k.mms[1]
	waitRows(t, "rows read while a middle manager stops", k.broker, k.sent, c)
	for range 3 {
		c.setSent(k.sent + 15)
		k.produce(15)
		waitRows(t, "rows after the middle manager stopped", k.broker, k.sent, c)
	}
	// The overlord gives up on the stopped worker's tasks (heartbeat
	// timeout); the groups read on, one replica each, and later sequences
	// too (their second replicas wait for a worker).
	eventually.True(t, "no task left on the stopped middle manager", func() bool {
		for _, lt := range k.tasks("runningTasks") {
			if lt.worker() == stopped {
				return false
			}
		}
		return true
	}, slow)
	for range 3 {
		c.setSent(k.sent + 15)
		k.produce(15)
		waitRows(t, "rows after the stopped worker's tasks ended", k.broker, k.sent, c)
	}

	// Suspended: the readers publish; the historical-only broker then serves
	// every record once.
	if code, _, body := do(t, "POST", k.supervisors()+"/events/suspend", "", "", nil); code != 200 {
		t.Fatalf("suspend: %d %s", code, body)
	}
	waitRows(t, "published rows", k.published, k.sent, c)
	eventually.True(t, "no task running", func() bool { return len(k.tasks("runningTasks")) == 0 }, slow)
	close(c.stop)
	<-c.done
	if c.bad != "" {
		t.Fatal(c.bad)
	}
	if len(c.dips) > 0 {
		t.Fatalf("answers lost rows: %v", c.dips)
	}
	t.Logf("answers below the one before, flagged realtimeBehind: %v", c.flagged)

	// Exactly one publish per sequence: the published files name the task
	// that uploaded them, and the replicas of a sequence share its name.
	code, _, body := do(t, "GET", k.c.url(k.c.leader())+"/svc/coordinator/v1/metadata/datasources/events/segments?full", "", "", nil)
	var segs []struct {
		LoadSpec json.RawMessage `json:"loadSpec"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &segs) != nil || len(segs) == 0 {
		t.Fatalf("segments: %d %s", code, body)
	}
	publishers := map[string]map[string]bool{} // sequence → tasks that published
	for _, s := range segs {
		var ls deep.LoadSpec
		if err := json.Unmarshal(s.LoadSpec, &ls); err != nil {
			t.Fatal(err)
		}
		task := path.Base(path.Dir(path.Clean(strings.ReplaceAll(ls.Path+ls.Key, "\\", "/"))))
		seq := k.sequenceOf(task)
		if seq == "" {
			t.Fatalf("task %s has no baseSequenceName", task)
		}
		if publishers[seq] == nil {
			publishers[seq] = map[string]bool{}
		}
		publishers[seq][task] = true
	}
	for seq, ts := range publishers {
		if len(ts) != 1 {
			t.Fatalf("sequence %s was published by %d tasks: %v", seq, len(ts), ts)
		}
	}
	if len(publishers) < 4 {
		t.Fatalf("only %d sequences published", len(publishers))
	}
	// A replica whose sequence another published stops cleanly: only the
	// stopped middle manager's tasks may have failed, and replicas that
	// waited for a worker until their sequence was published (cancelled).
	// Those that yielded served the published segments in place of their
	// realtime ones, as the publisher does.
	for _, lt := range k.tasks("completeTasks") {
		if lt.Status != "SUCCESS" && lt.worker() != stopped && lt.worker() != "" {
			t.Fatalf("task %s on %s ended %s: %s\n%s", lt.ID, lt.worker(), lt.Status, lt.ErrorMsg, k.taskLog(lt.ID))
		}
	}
	handedOff := 0
	maps.Copy(yields, k.yields())
	for _, log := range yields {
		if strings.Contains(log, "Handed off") {
			handedOff++
		}
	}
	if handedOff == 0 {
		t.Fatalf("none of %d replicas that yielded handed off the published segments: %v", len(yields), yields)
	}
	t.Logf("%d replicas yielded, %d handed off the published segments", len(yields), handedOff)
	t.Logf("%d queries; %d sequences published", c.queries, len(publishers))
}
