package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
)

// Never is the completion time of an operation whose outcome the client never
// learned (a timeout, a dropped connection, a 5xx): it may take effect at any
// time after its invocation.
const Never = int64(math.MaxInt64)

// RegOp is one operation on a register whose writes all carry distinct
// values. Times are nanoseconds on one monotonic clock, taken by the client
// just before sending the request (Inv) and just after reading the answer
// (Ret).
type RegOp struct {
	Write    bool
	Value    int64
	Inv, Ret int64
	Client   int
}

func (o RegOp) String() string {
	kind := "read"
	if o.Write {
		kind = "write"
	}
	ret := "?"
	if o.Ret != Never {
		ret = fmt.Sprint(o.Ret)
	}
	return fmt.Sprintf("%s(%d)@[%d,%s]", kind, o.Value, o.Inv, ret)
}

// CheckRegister reports why a history of a single register is not
// linearizable (nil when it is). init is the value the register holds before
// every operation of the history.
//
// Because every write has a distinct value, each read names the one write it
// read from, and linearizability of a register is then decidable in
// O(n log n) (Gibbons and Korach, "Testing shared memories", 1997), with no
// search over orders, so 100k operations take milliseconds where a general
// checker (porcupine, Knossos) runs out of memory:
//
//   - A cluster is a write and the reads that returned its value. A read must
//     not end before its write began, and a read of a value nobody wrote is a
//     violation outright.
//   - A cluster's zone runs from the earliest completion (minRet) to the latest
//     invocation (maxInv) among its operations. If minRet < maxInv the zone is
//     forward: the value was certainly current at minRet (one of its operations
//     had finished) and still at maxInv (one began after and saw it), so
//     during [minRet, maxInv] no other value can have been written and read.
//     Otherwise the zone is backward: [maxInv, minRet] is a span in which all
//     of the cluster's operations could take effect at one point.
//   - The history is linearizable if and only if no two forward zones
//     overlap and no backward zone lies entirely inside a forward zone (the
//     other value would have had to be overwritten and come back).
//
// Writes whose outcome is unknown (Ret == Never) and that no read returned
// are left out: they may never have taken effect. Those some read returned did
// take effect, somewhere after their invocation.
func CheckRegister(init int64, ops []RegOp) []string {
	type cluster struct {
		write  *RegOp
		reads  []RegOp
		minRet int64
		maxInv int64
	}
	clusters := map[int64]*cluster{}
	get := func(v int64) *cluster {
		c := clusters[v]
		if c == nil {
			c = &cluster{minRet: Never, maxInv: math.MinInt64}
			clusters[v] = c
		}
		return c
	}
	// The initial value was written before everything.
	get(init).write = &RegOp{Write: true, Value: init, Inv: math.MinInt64, Ret: math.MinInt64}
	var bad []string
	for i := range ops {
		op := ops[i]
		c := get(op.Value)
		if op.Write {
			if c.write != nil {
				bad = append(bad, fmt.Sprintf("value %d written twice (%v, %v): values must be unique", op.Value, *c.write, op))
				continue
			}
			c.write = &ops[i]
		} else {
			c.reads = append(c.reads, op)
		}
	}
	type zone struct {
		lo, hi int64
		value  int64
	}
	var forward, backward []zone
	values := make([]int64, 0, len(clusters))
	for v := range clusters {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool { return values[i] < values[j] })
	for _, v := range values {
		c := clusters[v]
		if c.write == nil {
			for _, r := range c.reads {
				bad = append(bad, fmt.Sprintf("%v returned a value no one wrote", r))
			}
			continue
		}
		if len(c.reads) == 0 && c.write.Ret == Never {
			continue // may never have happened
		}
		ok := true
		for _, r := range c.reads {
			if r.Ret < c.write.Inv {
				bad = append(bad, fmt.Sprintf("%v returned the value before %v began", r, *c.write))
				ok = false
			}
		}
		if !ok {
			continue
		}
		for _, op := range append([]RegOp{*c.write}, c.reads...) {
			c.minRet = min(c.minRet, op.Ret)
			c.maxInv = max(c.maxInv, op.Inv)
		}
		if c.minRet < c.maxInv {
			forward = append(forward, zone{c.minRet, c.maxInv, v})
		} else {
			backward = append(backward, zone{c.maxInv, c.minRet, v})
		}
	}
	sort.Slice(forward, func(i, j int) bool { return forward[i].lo < forward[j].lo })
	// reach[i] is the zone reaching furthest among forward[:i+1]. Sorted by
	// start, a zone overlaps an earlier one if and only if it starts before
	// the furthest end so far.
	reach := make([]zone, len(forward))
	for i, f := range forward {
		reach[i] = f
		if i == 0 {
			continue
		}
		if r := reach[i-1]; f.lo < r.hi {
			bad = append(bad, fmt.Sprintf("values %d and %d were each current while the other was read "+
				"(value %d from %d to %d, value %d from %d to %d)", r.value, f.value, r.value, r.lo, r.hi, f.value, f.lo, f.hi))
		}
		if reach[i-1].hi > f.hi {
			reach[i] = reach[i-1]
		}
	}
	// A backward zone lies inside a forward zone if and only if, among the
	// forward zones starting before it, the one reaching furthest ends after it.
	for _, b := range backward {
		k := sort.Search(len(forward), func(i int) bool { return forward[i].lo >= b.lo }) - 1
		if k >= 0 && b.hi < reach[k].hi {
			f := reach[k]
			bad = append(bad, fmt.Sprintf("value %d was written and read entirely within [%d, %d], while value %d was "+
				"current from %d to %d", b.value, b.lo, b.hi, f.value, f.lo, f.hi))
		}
	}
	return bad
}

// SetOp is one operation on a grow-only set whose adds carry distinct
// elements: an add of Elem, or a read that returned Elems.
type SetOp struct {
	Add      bool
	Elem     string
	Elems    []string
	Inv, Ret int64
}

// CheckSet reports reads of a grow-only set (segments published with
// distinct ids, never removed) that no linearization can explain. Each check
// is a necessary condition, so every report is a real violation:
//
//   - a read misses an add that was acknowledged before the read began
//     (a stale read, or a lost write);
//   - a read returns an element whose add began only after the read ended,
//     or that no one added;
//   - a read misses an element that a read which ended before it began had
//     returned (sets only grow).
//
// Real-time order between the adds themselves is not checked.
func CheckSet(ops []SetOp) []string {
	adds := map[string]SetOp{}
	var reads []SetOp
	var acked []SetOp
	for _, op := range ops {
		if op.Add {
			adds[op.Elem] = op
			if op.Ret != Never {
				acked = append(acked, op)
			}
		} else {
			reads = append(reads, op)
		}
	}
	var bad []string
	sort.Slice(acked, func(i, j int) bool { return acked[i].Ret < acked[j].Ret })
	sort.Slice(reads, func(i, j int) bool { return reads[i].Inv < reads[j].Inv })
	// Reads in order of invocation; "seen" is the union of the sets of the
	// reads that ended before the current one began.
	byRet := append([]SetOp(nil), reads...)
	sort.Slice(byRet, func(i, j int) bool { return byRet[i].Ret < byRet[j].Ret })
	seen := map[string]bool{}
	nr, na := 0, 0
	for _, r := range reads {
		for ; nr < len(byRet) && byRet[nr].Ret < r.Inv; nr++ {
			for _, e := range byRet[nr].Elems {
				seen[e] = true
			}
		}
		for ; na < len(acked) && acked[na].Ret < r.Inv; na++ {
		}
		has := make(map[string]bool, len(r.Elems))
		for _, e := range r.Elems {
			has[e] = true
			a, ok := adds[e]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("read@[%d,%d] returned %s, which no one added", r.Inv, r.Ret, e))
			case a.Inv > r.Ret:
				bad = append(bad, fmt.Sprintf("read@[%d,%d] returned %s, added only from %d", r.Inv, r.Ret, e, a.Inv))
			}
		}
		for _, a := range acked[:na] {
			if !has[a.Elem] {
				bad = append(bad, fmt.Sprintf("read@[%d,%d] misses %s, acknowledged at %d", r.Inv, r.Ret, a.Elem, a.Ret))
			}
		}
		for e := range seen {
			if !has[e] {
				if _, acknowledgedEarlier := adds[e]; acknowledgedEarlier && adds[e].Ret != Never && adds[e].Ret < r.Inv {
					continue // already reported as a missed acknowledged add
				}
				bad = append(bad, fmt.Sprintf("read@[%d,%d] misses %s, which an earlier read returned", r.Inv, r.Ret, e))
			}
		}
	}
	return bad
}

// Outcome classifies one answer of the data plane.
type Outcome int

const (
	// Correct: status 200 and the reference answer.
	Correct Outcome = iota
	// Unavailable: an error the client can see (a non-200 status, a
	// transport error): the query was refused, not answered.
	Unavailable
	// Wrong: status 200 with an answer other than the reference.
	Wrong
)

func (o Outcome) String() string {
	return [...]string{"correct", "unavailable", "WRONG"}[o]
}

// Classify compares one query answer with the reference answer. Both are
// compared as JSON values (numbers by their text), so key order and spacing do
// not matter but any difference in rows, keys or numbers does. An error or a
// status other than 200 counts as unavailability; a 200 whose body is not the
// reference (an empty result, a partial sum, unparseable JSON) is Wrong.
func Classify(status int, body []byte, err error, reference []byte) (Outcome, string) {
	if err != nil {
		return Unavailable, err.Error()
	}
	if status != 200 {
		return Unavailable, fmt.Sprintf("status %d: %s", status, abbreviate(body))
	}
	same, why := SameJSON(body, reference)
	if !same {
		return Wrong, why
	}
	return Correct, ""
}

// SameJSON reports whether a and b hold the same JSON value.
func SameJSON(a, b []byte) (bool, string) {
	va, err := decodeJSON(a)
	if err != nil {
		return false, fmt.Sprintf("answer is not JSON (%v): %s", err, abbreviate(a))
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return false, fmt.Sprintf("reference is not JSON (%v)", err)
	}
	if !reflect.DeepEqual(va, vb) {
		return false, fmt.Sprintf("answer %s, want %s", abbreviate(a), abbreviate(b))
	}
	return true, ""
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func abbreviate(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
