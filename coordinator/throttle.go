package coordinator

import (
	"maps"
	"slices"
	"strings"

	"strata/commands"
	"strata/segmeta"
)

// Limits bound how much loading a plan hands out at once, from the
// coordinator dynamic config. Druid applies them per coordinator run; here a
// plan is recomputed whenever what the historicals hold changes, so a limit
// bounds the loads handed out and not yet done ("in flight"): as loads finish,
// the next ones in priority order (newest data first) are handed out. Drops
// are never throttled.
type Limits struct {
	// LoadQueue is the most segments one server is asked to load at once
	// (maxSegmentsInNodeLoadingQueue); <= 0 is unbounded.
	LoadQueue int
	// Replication is the most non-primary replica loads per tier
	// (replicationThrottleLimit). A primary load, of a segment no server
	// holds, is never held back by it: unavailable data comes first.
	Replication int
	// NonPrimary is the most non-primary replica loads over all tiers
	// (maxNonPrimaryReplicantsToLoad).
	NonPrimary int
	// Moves is the most loads per tier of segments the tier already holds
	// enough copies of: moves onto a new server or off a decommissioning one
	// (maxSegmentsToMove).
	Moves int
	// DecommissioningPercent is the share of Moves that may move segments off
	// decommissioning servers (decommissioningMaxPercentOfMaxSegmentsToMove);
	// 0 leaves their segments where they are.
	DecommissioningPercent int
}

// Unlimited hands every load out at once.
var Unlimited = Limits{Replication: maxInt, NonPrimary: maxInt, Moves: maxInt, DecommissioningPercent: 100}

const maxInt = int(^uint(0) >> 1)

// LimitsOf reads the limits from the dynamic config. With smartSegmentLoading
// (the default) the configured values are ignored and computed as Druid does
// from the number of used segments: replicationThrottleLimit 2% of them (at
// least 100), maxSegmentsToMove the same but at most 1000, no load queue limit
// and no separate non-primary or decommissioning limit.
func LimitsOf(cfg commands.CoordinatorDynamicConfig, usedSegments int) Limits {
	if cfg.SmartSegmentLoading {
		rtl := max(100, usedSegments*2/100)
		return Limits{Replication: rtl, NonPrimary: maxInt, Moves: min(1000, rtl), DecommissioningPercent: 100}
	}
	return Limits{
		LoadQueue:              int(cfg.MaxSegmentsInNodeLoadingQueue),
		Replication:            int(cfg.ReplicationThrottleLimit),
		NonPrimary:             int(cfg.MaxNonPrimaryReplicantsToLoad),
		Moves:                  int(cfg.MaxSegmentsToMove),
		DecommissioningPercent: int(cfg.DecommissioningMaxPercentOfMaxSegmentsToMove),
	}
}

// Throttle holds back the loads of plan (targets that do not hold their
// segment yet) beyond the limits, taking segments newest first as the planner
// does. A held-back load stays a target, so the servers that hold the segment
// now keep it; it is handed out by a later plan. The result depends only on
// the inputs, so an unchanged cluster keeps the same loads in flight.
func Throttle(plan Plan, servers []Candidate, want func(*segmeta.DataSegment) Want, lim Limits) Plan {
	srv := slices.Clone(servers)
	slices.SortStableFunc(srv, func(a, b Candidate) int { return strings.Compare(a.Name, b.Name) })
	srv = slices.CompactFunc(srv, func(a, b Candidate) bool { return a.Name == b.Name })
	// The loads: entries of a server's hold list it does not hold yet (the
	// planner lists a non-target only when it holds the segment). Segments
	// are numbered in a map keyed by pointer; hashing their ids is the cost.
	num := map[*segmeta.DataSegment]int32{}
	var segs []*segmeta.DataSegment
	var loadsOf [][]int32 // per segment number, the servers loading it, in name order
	for i := range srv {
		for _, seg := range plan.Hold[srv[i].Name] {
			if _, held := srv[i].Held[seg.ID()]; held {
				continue
			}
			k, ok := num[seg]
			if !ok {
				k = int32(len(segs))
				num[seg] = k
				segs = append(segs, seg)
				loadsOf = append(loadsOf, nil)
			}
			loadsOf[k] = append(loadsOf[k], int32(i))
		}
	}
	if len(segs) == 0 {
		return plan
	}
	// Who holds each of them now.
	byID := make(map[segmeta.ID]int32, len(segs))
	for k, seg := range segs {
		byID[seg.ID()] = int32(k)
	}
	holders := make([][]int32, len(segs))
	for i := range srv {
		for id := range srv[i].Held {
			if k, ok := byID[id]; ok {
				holders[k] = append(holders[k], int32(i))
			}
		}
	}
	order := prioritySorted(segs)

	decomMoves := 0
	if lim.Moves > 0 && lim.DecommissioningPercent > 0 {
		decomMoves = int(int64(lim.Moves) * int64(min(lim.DecommissioningPercent, 100)) / 100)
	}
	queue := make([]int, len(srv))
	replicaLoads, moveLoads, decomLoads := map[string]int{}, map[string]int{}, map[string]int{}
	nonPrimary := 0
	heldBack := make([]map[*segmeta.DataSegment]bool, len(srv))
	inTier, decomInTier := map[string]int{}, map[string]bool{}
	for _, seg := range order {
		k := num[seg]
		w := want(seg)
		clear(inTier)
		clear(decomInTier)
		for _, i := range holders[k] {
			inTier[srv[i].Tier]++
			decomInTier[srv[i].Tier] = decomInTier[srv[i].Tier] || srv[i].Decommissioning
		}
		total := len(holders[k])
		primaryGiven := false
		for _, i := range loadsOf[k] {
			tier := srv[i].Tier
			admit := lim.LoadQueue <= 0 || queue[i] < lim.LoadQueue
			switch {
			case total == 0 && !primaryGiven:
				primaryGiven = admit
			case w.Broadcast || inTier[tier] < w.Replicas[tier]:
				admit = admit && replicaLoads[tier] < lim.Replication && nonPrimary < lim.NonPrimary
				if admit {
					replicaLoads[tier]++
					nonPrimary++
				}
			default: // the tier has its copies: this load moves one
				admit = admit && moveLoads[tier] < lim.Moves && (!decomInTier[tier] || decomLoads[tier] < decomMoves)
				if admit {
					moveLoads[tier]++
					if decomInTier[tier] {
						decomLoads[tier]++
					}
				}
			}
			if admit {
				queue[i]++
				continue
			}
			if heldBack[i] == nil {
				heldBack[i] = map[*segmeta.DataSegment]bool{}
			}
			heldBack[i][seg] = true
		}
	}
	out := Plan{Hold: make(map[string][]*segmeta.DataSegment, len(plan.Hold)), Targets: plan.Targets}
	maps.Copy(out.Hold, plan.Hold)
	for i, skip := range heldBack {
		if len(skip) == 0 {
			continue
		}
		all := plan.Hold[srv[i].Name]
		kept := make([]*segmeta.DataSegment, 0, len(all)-len(skip))
		for _, seg := range all {
			if !skip[seg] {
				kept = append(kept, seg)
			}
		}
		out.Hold[srv[i].Name] = kept
	}
	return out
}
