package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const kafkaTopic = "chaos_events"

// KafkaExactlyOnce produces records with distinct values of n to an
// in-process Kafka broker (kfake, listening where the cluster's hosts reach
// it) that a supervisor ingests, while index_kafka tasks are shut down and
// middle managers, the historical, the broker and the control node are
// killed (-9). While it runs no answer may count more rows than were produced;
// at the end the served rows must be exactly the produced records: the count
// equal and the sum of n equal (a lost record and a duplicate would not cancel
// out in both).
func KafkaExactlyOnce(ctx context.Context, o *Options) *Result { return kafkaExactlyOnce(ctx, o, 1) }

// KafkaReplicas is KafkaExactlyOnce with ioConfig.replicas 2: each task
// group runs on both middle managers, so a middle manager killed (-9) leaves
// every group a replica that reads on and publishes; each record must still
// be served exactly once.
func KafkaReplicas(ctx context.Context, o *Options) *Result { return kafkaExactlyOnce(ctx, o, 2) }

func kafkaExactlyOnce(ctx context.Context, o *Options, replicas int) *Result {
	res := &Result{}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, kafkaTopic),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return o.Net.Listen(network, ":0") }))
	if err != nil {
		res.Err = "kfake: " + err.Error()
		return res
	}
	defer kc.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic(kafkaTopic),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			return o.Net.Dial(ctx, network, host)
		}))
	if err != nil {
		res.Err = "kafka producer: " + err.Error()
		return res
	}
	defer producer.Close()

	c, hist, brokers, mms, err := startDataCluster(ctx, o, o.controlNodes(), 1, 1, 2)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer c.Close()
	k := &kafkaRun{o: o, c: c, res: res, hist: hist, brokers: brokers, mms: mms, client: NewHTTPClient(o.Net, 10*time.Second), producer: producer,
		replicas: replicas}
	if id, why := submitTask(ctx, c, k.client, "/svc/indexer/v1/supervisor", []byte(k.spec(kc.ListenAddrs()))); id == "" {
		res.Err = "supervisor: " + why
		return res
	}

	runCtx, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); k.produceLoop(runCtx) }()
	go func() { defer wg.Done(); k.queryLoop(runCtx) }()
	nem := &nemesis{rng: rand.New(rand.NewSource(o.Seed)), pause: 2 * time.Second, res: res, o: o}
	nem.actions = k.faults(nem.rng)
	nem.loop(runCtx)
	wg.Wait()
	res.MaxUnavail = k.avail.finish(time.Now())
	if replicas > 1 {
		o.logf("  %d of %d answers flagged realtimeBehind", k.flagged, k.queries)
	}

	for _, p := range c.Procs {
		if !p.Running() {
			p.Start()
		}
	}
	k.final(ctx, 120*time.Second)
	return res
}

type kafkaRun struct {
	o        *Options
	c        *Cluster
	res      *Result
	hist     []*Proc
	brokers  []*Proc
	mms      []*Proc
	client   *httpClient
	producer *kgo.Client
	replicas int // ioConfig.replicas
	avail    availability

	invoked  atomic.Int64 // records whose produce began (n = 0 .. invoked-1)
	mu       sync.Mutex
	acked    int64 // records the broker acknowledged
	ackedSum int64
	failed   int64 // produce errors: such a record may or may not be in the topic
	queries  int
	flagged  int // answers flagged realtimeBehind
	// mmFault is the number of the last fault begun (faultsBegun counts them)
	// while that one is the kill of a middle manager; 0 otherwise.
	mmFault     atomic.Int64
	faultsBegun atomic.Int64
}

func (k *kafkaRun) spec(bootstrap []string) string {
	return fmt.Sprintf(`{"type":"kafka","spec":{
	  "dataSchema":{"dataSource":%q,"timestampSpec":{"column":"ts","format":"iso"},
	    "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
	    "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
	  "ioConfig":{"topic":%q,"consumerProperties":{"bootstrap.servers":%q},"taskCount":2,"replicas":%d,
	    "taskDuration":"PT8S","startDelay":"PT0S","period":"PT0.5S","useEarliestOffset":true,"inputFormat":{"type":"json"}},
	  "tuningConfig":{"type":"kafka"}}}`, kafkaTopic, kafkaTopic, strings.Join(bootstrap, ","), k.replicas)
}

// produceLoop produces batches of records, record n carrying n, over the
// 24 hours of 2024-01-01.
func (k *kafkaRun) produceLoop(ctx context.Context) {
	batch := 10 * max(1, k.o.Scale)
	for ctx.Err() == nil {
		var recs []*kgo.Record
		for i := 0; i < batch; i++ {
			n := k.invoked.Add(1) - 1
			ts := time.Date(2024, 1, 1, int(n%24), int(n%60), 0, 0, time.UTC).Format(time.RFC3339)
			recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(n)),
				Value: []byte(fmt.Sprintf(`{"ts":%q,"page":"p%d","n":%d}`, ts, n%7, n))})
		}
		// Not ctx: a produce cut short would leave its records' fate unknown.
		results := k.producer.ProduceSync(context.Background(), recs...)
		k.mu.Lock()
		for _, r := range results {
			if r.Err != nil {
				k.failed++
				continue
			}
			var v struct{ N int64 }
			json.Unmarshal(r.Record.Value, &v)
			k.acked++
			k.ackedSum += v.N
		}
		k.res.Ops += len(results)
		k.res.Acked = int(k.acked)
		k.mu.Unlock()
		sleep(ctx, 20*time.Millisecond)
	}
}

// served asks the broker how many rows it serves and their sum of n, and
// whether it flagged the answer as read from a replica behind what its
// earlier answers read (the response context's realtimeBehind).
func (k *kafkaRun) served(ctx context.Context) (rows, sum int64, behind bool, err error) {
	q := fmt.Sprintf(`{"queryType":"timeseries","dataSource":%q,"intervals":["2024-01-01/2024-01-02"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"rows","fieldName":"count"},{"type":"longSum","name":"sum","fieldName":"n"}]}`, kafkaTopic)
	code, body, hdr, err := k.client.doHeader(ctx, "POST", k.brokers[0].URL()+"/svc/v2/", []byte(q), nil)
	if err != nil {
		return 0, 0, false, err
	}
	if code != 200 {
		return 0, 0, false, fmt.Errorf("status %d: %s", code, abbreviate(body))
	}
	var res []struct {
		Result struct{ Rows, Sum int64 } `json:"result"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return 0, 0, false, fmt.Errorf("answer %s: %v", abbreviate(body), err)
	}
	var rc struct {
		RealtimeBehind []json.RawMessage `json:"realtimeBehind"`
	}
	json.Unmarshal([]byte(hdr.Get("X-Druid-Response-Context")), &rc)
	if len(res) == 0 { // nothing ingested yet
		return 0, 0, len(rc.RealtimeBehind) > 0, nil
	}
	return res[0].Result.Rows, res[0].Result.Sum, len(rc.RealtimeBehind) > 0, nil
}

// queryLoop checks, while records flow, that no answer shows more rows, or
// a larger sum of n, than the records produced so far: either means a
// record counted twice. With replicas, from the kill of a middle manager
// until the next fault, no answer may hold fewer rows than the one before
// unless the broker flags it (realtimeBehind): the replica it falls back on
// may be behind, and the broker waits for it or says so.
func (k *kafkaRun) queryLoop(ctx context.Context) {
	var last, lastAt int64 // the last unflagged answer's rows, and the number of the fault begun before it
	for ctx.Err() == nil {
		cur := k.faultsBegun.Load()
		window := k.replicas > 1 && cur > 0 && k.mmFault.Load() == cur
		rows, sum, behind, err := k.served(ctx)
		n := k.invoked.Load() // read after the answer: an upper bound of what it may count
		if ctx.Err() != nil {
			return
		}
		k.avail.record(0, err == nil, time.Now())
		k.mu.Lock()
		k.queries++
		k.res.Ops++
		if err == nil && (rows > n || sum > n*(n-1)/2) {
			k.res.Wrong++
			k.res.example("%d rows with sum of n %d served while only %d records were produced (sum at most %d): duplicates",
				rows, sum, n, n*(n-1)/2)
		}
		switch {
		case err != nil || cur != k.faultsBegun.Load(): // a fault began meanwhile: the answer is of neither
		case behind:
			k.flagged++
		case window && (lastAt == cur || lastAt == cur-1) && rows < last:
			// The answer before (since the kill, or the last before it) held more.
			k.res.Wrong++
			k.res.example("%d rows after %d, not flagged realtimeBehind, after a middle manager was killed (replicas %d)",
				rows, last, k.replicas)
			last, lastAt = rows, cur
		default:
			last, lastAt = rows, cur
		}
		k.mu.Unlock()
		sleep(ctx, 200*time.Millisecond)
	}
}

// runningTasks lists the ids of the supervisor's running tasks.
func (k *kafkaRun) runningTasks(ctx context.Context) []string {
	for _, p := range k.c.Control {
		code, body, err := k.client.do(ctx, "GET", p.URL()+"/svc/indexer/v1/tasks?state=running&datasource="+kafkaTopic, nil, nil)
		if err != nil || code != 200 {
			continue
		}
		var tasks []struct {
			ID string `json:"id"`
		}
		json.Unmarshal(body, &tasks)
		var ids []string
		for _, t := range tasks {
			ids = append(ids, t.ID)
		}
		return ids
	}
	return nil
}

func (k *kafkaRun) faults(rng *rand.Rand) []action {
	var mu sync.Mutex
	killOne := func(ps []*Proc) func(context.Context) error {
		return func(ctx context.Context) error {
			mu.Lock()
			p := ps[rng.Intn(len(ps))]
			mu.Unlock()
			p.Kill()
			hold(ctx, jitter(rng, &mu, 2*time.Second))
			if err := p.Start(); err != nil {
				return err
			}
			return k.c.WaitUp(context.Background(), p, 60*time.Second)
		}
	}
	killMM := killOne(k.mms)
	actions := []action{
		{"kill-9-middlemanager", func(ctx context.Context) error {
			k.mmFault.Store(k.faultsBegun.Add(1))
			return killMM(ctx)
		}},
		{"kill-9-historical", killOne(k.hist)},
		{"kill-9-broker", killOne(k.brokers)},
		{"kill-9-control", killOne(k.c.Control)},
		{"shutdown-task", func(ctx context.Context) error {
			ids := k.runningTasks(ctx)
			if len(ids) == 0 {
				return fmt.Errorf("no running task to shut down")
			}
			mu.Lock()
			id := ids[rng.Intn(len(ids))]
			mu.Unlock()
			if id, why := submitTask(ctx, k.c, k.client, "/svc/indexer/v1/task/"+id+"/shutdown", nil); id == "" && why != "" {
				return fmt.Errorf("shutdown: %s", why)
			}
			return nil
		}},
	}
	// Other faults end the window of a middle manager's kill.
	for i, a := range actions {
		if a.name != "kill-9-middlemanager" {
			run := a.run
			actions[i].run = func(ctx context.Context) error {
				k.faultsBegun.Add(1)
				k.mmFault.Store(0)
				return run(ctx)
			}
		}
	}
	return actions
}

// final waits until the broker serves exactly the acknowledged records.
func (k *kafkaRun) final(ctx context.Context, timeout time.Duration) {
	k.mu.Lock()
	acked, sum, failed := k.acked, k.ackedSum, k.failed
	k.mu.Unlock()
	deadline := time.Now().Add(timeout)
	var rows, got int64
	var err error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		rows, got, _, err = k.served(ctx)
		if err == nil && rows == acked && got == sum {
			break
		}
		if err == nil && failed == 0 && rows > acked {
			break // more rows than records can only grow worse
		}
		sleep(ctx, 500*time.Millisecond)
	}
	k.o.logf("  kafka: %d records produced (%d produce errors), %d rows served with sum %d (want %d)", acked, failed, rows, got, sum)
	switch {
	case err != nil:
		k.res.Lost = int(acked)
		k.res.example("the broker did not answer after the faults: %v", err)
	case rows < acked:
		k.res.Lost = int(acked - rows)
		k.res.example("%d of %d produced records not ingested after %s", acked-rows, acked, timeout)
	case failed == 0 && (rows > acked || got != sum):
		k.res.Wrong++
		k.res.example("%d rows with sum of n %d served for %d records with sum %d", rows, got, acked, sum)
	}
}
