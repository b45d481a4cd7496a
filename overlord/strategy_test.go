package overlord

import (
	"encoding/json"
	"fmt"
	"testing"

	"strata/commands"
	"strata/fsm"
)

func strategy(t *testing.T, js string) *commands.SelectStrategy {
	t.Helper()
	if js == "" {
		return nil
	}
	var s commands.SelectStrategy
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestSelectWorker(t *testing.T) {
	cands := []Candidate{
		{Host: "a:1", Category: "hot", Version: "1", Capacity: 4, Used: 1},
		{Host: "b:1", Category: "hot", Version: "1", Capacity: 4, Used: 3},
		{Host: "c:1", Category: "cold", Version: "1", Capacity: 2, Used: 0},
		{Host: "d:1", Category: "cold", Version: "1", Capacity: 1, Used: 1}, // full
	}
	cases := []struct {
		name, strategy, typ, ds string
		want                    string
	}{
		{"default is equalDistribution", "", "noop", "wiki", "a:1"}, // 3 free beats c's 2
		{"equalDistribution", `{"type":"equalDistribution"}`, "noop", "wiki", "a:1"},
		{"fillCapacity", `{"type":"fillCapacity"}`, "noop", "wiki", "b:1"},
		{"legacy alias", `{"type":"fillCapacityWithAffinity"}`, "noop", "wiki", "b:1"},
		{"affinity pool", `{"type":"equalDistribution","affinityConfig":{"affinity":{"wiki":["c:1"]}}}`, "noop", "wiki", "c:1"},
		{"unlisted datasource avoids pools", `{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":["b:1"]}}}`, "noop", "logs", "a:1"},
		{"weak affinity falls back outside pools", `{"type":"equalDistribution","affinityConfig":{"affinity":{"wiki":["d:1"],"logs":["a:1"]}}}`, "noop", "wiki", "c:1"},
		{"strong affinity waits", `{"type":"equalDistribution","affinityConfig":{"affinity":{"wiki":["d:1"]},"strong":true}}`, "noop", "wiki", ""},
		{"category default", `{"type":"equalDistributionWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":"cold"}}}}`, "noop", "wiki", "c:1"},
		{"category per datasource", `{"type":"fillCapacityWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":"cold","categoryAffinity":{"wiki":"hot"}}}}}`, "noop", "wiki", "b:1"},
		{"category for another type", `{"type":"fillCapacityWithCategorySpec","workerCategorySpec":{"categoryMap":{"kill":{"defaultCategory":"cold"}}}}`, "noop", "wiki", "b:1"},
		{"weak category falls back", `{"type":"equalDistributionWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":"gpu"}}}}`, "noop", "wiki", "a:1"},
		{"strong category waits", `{"type":"equalDistributionWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":"gpu"}},"strong":true}}`, "noop", "wiki", ""},
		{"category spec absent", `{"type":"fillCapacityWithCategorySpec"}`, "noop", "wiki", "b:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if i := SelectWorker(strategy(t, c.strategy), c.typ, c.ds, cands); i >= 0 {
				got = cands[i].Host
			}
			if got != c.want {
				t.Errorf("picked %q, want %q", got, c.want)
			}
		})
	}
}

func TestSelectWorkerTies(t *testing.T) {
	cands := []Candidate{
		{Host: "b:1", Version: "1", Capacity: 2},
		{Host: "a:1", Version: "1", Capacity: 2},
		{Host: "c:1", Version: "2", Capacity: 2},
	}
	if i := SelectWorker(nil, "noop", "x", cands); cands[i].Host != "c:1" {
		t.Fatalf("the higher version wins a tie, got %s", cands[i].Host)
	}
	cands[2].Version = "1"
	if i := SelectWorker(nil, "noop", "x", cands); cands[i].Host != "a:1" {
		t.Fatalf("then the lower host, got %s", cands[i].Host)
	}
	for i := range cands {
		cands[i].Used = 2
	}
	if i := SelectWorker(nil, "noop", "x", cands); i != -1 {
		t.Fatalf("no free slot, got %d", i)
	}
	if i := SelectWorker(nil, "noop", "x", nil); i != -1 {
		t.Fatalf("no workers, got %d", i)
	}
}

// BenchmarkSelectWorker picks among 100 workers with a weak affinity config.
func BenchmarkSelectWorker(b *testing.B) {
	cands := make([]Candidate, 100)
	for i := range cands {
		cands[i] = Candidate{Host: fmt.Sprintf("mm%03d:8091", i), Version: "1", Capacity: 8, Used: i % 8}
	}
	s := &commands.SelectStrategy{Type: "fillCapacity", AffinityConfig: &commands.AffinityConfig{Affinity: map[string][]string{"wiki": {"mm001:8091", "mm002:8091"}}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if SelectWorker(s, "index", "logs", cands) < 0 {
			b.Fatal("no worker")
		}
	}
}

// Replicas of a Kafka task group never share a worker: a replica goes to a
// worker without one, and waits while only such workers are full; other
// task types and groups are placed as usual.
func TestSelectReplicaWorker(t *testing.T) {
	cands := []Candidate{{Host: "a:1", Capacity: 4, Used: 0}, {Host: "b:1", Capacity: 2, Used: 1}}
	kafka := &fsm.TaskRecord{ID: "r2", Type: "index_kafka", GroupID: "index_kafka_ds_g0", DataSource: "ds"}
	on := map[string]map[string]bool{"index_kafka_ds_g0": {"a:1": true}}
	if i := selectReplicaWorker(nil, kafka, cands, on); i != 1 {
		t.Fatalf("replica placed on candidate %d, want the worker without a replica (1)", i)
	}
	cands[1].Used = 2
	if i := selectReplicaWorker(nil, kafka, cands, on); i != -1 {
		t.Fatalf("replica placed on candidate %d, want it to wait", i)
	}
	other := &fsm.TaskRecord{ID: "r3", Type: "index_kafka", GroupID: "index_kafka_ds_g1", DataSource: "ds"}
	if i := selectReplicaWorker(nil, other, cands, on); i != 0 {
		t.Fatalf("another group's task placed on candidate %d, want 0", i)
	}
	batch := &fsm.TaskRecord{ID: "b", Type: "index_parallel", GroupID: "index_kafka_ds_g0", DataSource: "ds"}
	if i := selectReplicaWorker(nil, batch, cands, on); i != 0 {
		t.Fatalf("a batch task placed on candidate %d, want 0", i)
	}
}
