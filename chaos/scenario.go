package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options configure a run.
type Options struct {
	Bin      string        // strata binary (a normal build: the race detector would slow the servers down too much)
	Dir      string        // working directory: data, deep storage and every process's log
	Duration time.Duration // how long each scenario injects faults
	Net      *Net
	Out      io.Writer // progress lines
	Seed     int64
	// Scale multiplies data sizes and client counts (1 for the short run).
	Scale int
}

func (o *Options) logf(format string, args ...any) {
	if o.Out != nil {
		fmt.Fprintf(o.Out, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
}

// Scenario is one named scenario.
type Scenario struct {
	Name string
	Run  func(ctx context.Context, o *Options) *Result
}

// Scenarios lists every scenario in run order.
func Scenarios() []Scenario {
	return []Scenario{
		{"control-plane", ControlPlane},
		{"data-plane-replace", DataPlaneReplace},
		{"kafka-exactly-once", KafkaExactlyOnce},
		{"kafka-replicas", KafkaReplicas},
	}
}

// Run runs the scenarios one after another, each on a cluster of its own
// under o.Dir/<name>.
func Run(ctx context.Context, o *Options, scenarios []Scenario) []*Result {
	var out []*Result
	for _, s := range scenarios {
		so := *o
		so.Dir = filepath.Join(o.Dir, s.Name)
		if err := os.MkdirAll(so.Dir, 0o755); err != nil {
			out = append(out, &Result{Scenario: s.Name, Err: err.Error()})
			continue
		}
		o.logf("scenario %s: start (logs in %s)", s.Name, so.Dir)
		t0 := time.Now()
		r := s.Run(ctx, &so)
		r.Scenario = s.Name
		o.logf("scenario %s: done in %s", s.Name, time.Since(t0).Round(time.Second))
		out = append(out, r)
	}
	return out
}

// clock gives operation times in nanoseconds since the scenario began, on
// the monotonic clock.
type clock struct{ t0 time.Time }

func (c clock) now() int64 { return int64(time.Since(c.t0)) }

// nemesis injects faults one after another until ctx ends; the faults it can
// choose from are given as named actions that each inject a fault and undo it
// (restart, resume, heal) before returning.
type nemesis struct {
	rng     *rand.Rand
	actions []action
	pause   time.Duration // quiet time between faults, for the cluster to recover
	res     *Result
	o       *Options
}

type action struct {
	name string
	run  func(ctx context.Context) error
}

// loop runs the actions in random order, each once per round, until ctx
// ends. The first round starts with the partitions, the faults a run on a
// loaded machine must not miss.
func (n *nemesis) loop(ctx context.Context) {
	order := n.rng.Perm(len(n.actions))
	sort.SliceStable(order, func(i, j int) bool {
		return strings.HasPrefix(n.actions[order[i]].name, "partition") && !strings.HasPrefix(n.actions[order[j]].name, "partition")
	})
	for i := 0; ctx.Err() == nil; i++ {
		if i%len(order) == 0 && i > 0 {
			order = n.rng.Perm(len(n.actions))
		}
		a := n.actions[order[i%len(order)]]
		n.o.logf("  fault: %s", a.name)
		if err := a.run(ctx); err != nil {
			n.o.logf("  fault %s: %v", a.name, err)
			continue
		}
		n.res.fault(a.name)
		sleep(ctx, n.pause)
	}
}

// hold waits d unless ctx ends first; faults use it for how long they last,
// and always undo themselves afterwards, even when ctx ended.
func hold(ctx context.Context, d time.Duration) { sleep(ctx, d) }

// jitter is d plus up to half of d more.
func jitter(rng *rand.Rand, mu *sync.Mutex, d time.Duration) time.Duration {
	mu.Lock()
	defer mu.Unlock()
	return d + time.Duration(rng.Int63n(int64(d)/2+1))
}
