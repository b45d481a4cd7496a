package overlord

import (
	"strings"

	"strata/commands"
	"strata/fsm"
	"strata/streaming"
)

// Candidate is a worker that may take a task: enabled, alive, with its slots.
type Candidate struct {
	Host     string
	Category string
	Version  string
	Capacity int
	Used     int
}

func (c Candidate) available() int { return c.Capacity - c.Used }

// SelectWorker applies the overlord's select strategy (Druid's
// WorkerSelectUtils) to a task of type typ on datasource ds and returns the
// index of the chosen candidate, or -1 when none may take it now.
//
//   - equalDistribution (the default when s is nil): the worker with the most
//     free slots; fillCapacity: the busiest worker that still has a free slot.
//     Ties go to the higher version, then the lower host.
//   - affinityConfig (equalDistribution, fillCapacity and their ...WithAffinity
//     aliases): a datasource listed in the affinity map runs on its workers; if
//     none of them has a slot, a strong affinity waits and a weak one falls back
//     to workers outside every affinity pool. Datasources not listed run only
//     on workers outside every pool.
//   - workerCategorySpec (...WithCategorySpec): the task type's categoryMap
//     entry picks a category (categoryAffinity for the datasource, else
//     defaultCategory); if no worker of that category has a slot, strong waits
//     and weak falls back to every worker.
func SelectWorker(s *commands.SelectStrategy, typ, ds string, cands []Candidate) int {
	kind := "equalDistribution"
	if s != nil && s.Type != "" {
		kind = s.Type
	}
	fill := strings.HasPrefix(kind, "fillCapacity")
	var runnable []int
	for i, c := range cands {
		if c.available() >= 1 {
			runnable = append(runnable, i)
		}
	}
	pick := func(idx []int) int {
		best := -1
		for _, i := range idx {
			if best < 0 || better(cands[i], cands[best], fill) {
				best = i
			}
		}
		return best
	}
	filter := func(keep func(Candidate) bool) []int {
		var out []int
		for _, i := range runnable {
			if keep(cands[i]) {
				out = append(out, i)
			}
		}
		return out
	}

	if strings.HasSuffix(kind, "WithCategorySpec") {
		if spec := s.WorkerCategorySpec; spec != nil {
			if cc, ok := spec.CategoryMap[typ]; ok {
				pref := cc.CategoryAffinity[ds]
				if pref == "" && cc.DefaultCategory != nil {
					pref = *cc.DefaultCategory
				}
				if pref != "" {
					if sel := pick(filter(func(c Candidate) bool { return c.Category == pref })); sel >= 0 || spec.Strong {
						return sel
					}
				}
			}
		}
		return pick(runnable)
	}

	var aff *commands.AffinityConfig
	if s != nil {
		aff = s.AffinityConfig
	}
	if aff == nil {
		return pick(runnable)
	}
	pooled := map[string]bool{}
	for _, hosts := range aff.Affinity {
		for _, h := range hosts {
			pooled[h] = true
		}
	}
	outside := func() int { return pick(filter(func(c Candidate) bool { return !pooled[c.Host] })) }
	pool, listed := aff.Affinity[ds]
	if !listed {
		return outside()
	}
	mine := map[string]bool{}
	for _, h := range pool {
		mine[h] = true
	}
	if sel := pick(filter(func(c Candidate) bool { return mine[c.Host] })); sel >= 0 || aff.Strong {
		return sel
	}
	return outside()
}

// spreadsReplicas tells the task types whose tasks of one group are replicas
// (ioConfig.replicas of a Kafka supervisor): as in Druid, replicas always run
// on different workers, so that losing one worker loses one copy only.
func spreadsReplicas(typ string) bool { return typ == streaming.TaskType }

// selectReplicaWorker is SelectWorker over the candidates that run no other
// replica of t's group; when none of them has a slot, t waits (a second copy
// on the same worker would not survive that worker).
func selectReplicaWorker(s *commands.SelectStrategy, t *fsm.TaskRecord, cands []Candidate, replicaOn map[string]map[string]bool) int {
	busy := replicaOn[t.GroupID]
	if !spreadsReplicas(t.Type) || len(busy) == 0 {
		return SelectWorker(s, t.Type, t.DataSource, cands)
	}
	var free []Candidate
	var idx []int
	for i, c := range cands {
		if !busy[c.Host] {
			free = append(free, c)
			idx = append(idx, i)
		}
	}
	if i := SelectWorker(s, t.Type, t.DataSource, free); i >= 0 {
		return idx[i]
	}
	return -1
}

// better reports whether a beats b under the strategy's order.
func better(a, b Candidate, fill bool) bool {
	if fill {
		if a.Used != b.Used {
			return a.Used > b.Used
		}
	} else if a.available() != b.available() {
		return a.available() > b.available()
	}
	if a.Version != b.Version {
		return a.Version > b.Version
	}
	return a.Host < b.Host
}
