package chaos

import (
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"
)

func w(v, inv, ret int64) RegOp { return RegOp{Write: true, Value: v, Inv: inv, Ret: ret} }
func r(v, inv, ret int64) RegOp { return RegOp{Value: v, Inv: inv, Ret: ret} }

func TestCheckRegister(t *testing.T) {
	cases := []struct {
		name string
		ops  []RegOp
		bad  string // substring of the first violation; "" = linearizable
	}{
		{"sequential", []RegOp{w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(2, 6, 7)}, ""},
		{"initial value read first", []RegOp{r(0, 0, 1), w(1, 2, 3), r(1, 4, 5)}, ""},
		{"read concurrent with write sees old", []RegOp{w(1, 0, 1), w(2, 2, 10), r(1, 3, 4)}, ""},
		{"read concurrent with write sees new", []RegOp{w(1, 0, 1), w(2, 2, 10), r(2, 3, 4)}, ""},
		{"concurrent writes any order", []RegOp{w(1, 0, 10), w(2, 0, 10), r(2, 11, 12), r(2, 13, 14)}, ""},
		{"unknown write never read is ignored", []RegOp{w(1, 0, 1), w(2, 2, Never), r(1, 5, 6)}, ""},
		{"unknown write read later took effect", []RegOp{w(1, 0, 1), w(2, 2, Never), r(2, 50, 60), r(2, 70, 80)}, ""},
		{"unknown write that came back before a newer one", []RegOp{w(1, 0, 1), w(2, 2, Never), r(2, 5, 6), w(3, 7, 8), r(3, 9, 10)}, ""},

		{"stale read after acknowledged write", []RegOp{w(1, 0, 1), w(2, 2, 3), r(1, 4, 5)}, "entirely within"},
		{"read of initial value after a write", []RegOp{w(1, 0, 1), r(0, 2, 3)}, "entirely within"},
		{"new then old (inversion)", []RegOp{w(1, 0, 1), w(2, 2, 20), r(2, 3, 4), r(1, 5, 6)}, "entirely within"},
		{"read of a value never written", []RegOp{w(1, 0, 1), r(7, 2, 3)}, "no one wrote"},
		{"read before its write began", []RegOp{r(1, 0, 1), w(1, 2, 3)}, "before"},
		{"lost write (later reads miss it)", []RegOp{w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(1, 6, 7)}, "entirely within"},
		{"value comes back", []RegOp{w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(2, 6, 7), r(1, 8, 9)}, "each current"},
		{"duplicate value", []RegOp{w(1, 0, 1), w(1, 2, 3)}, "written twice"},
	}
	for _, c := range cases {
		bad := CheckRegister(0, c.ops)
		if c.bad == "" && len(bad) > 0 {
			t.Errorf("%s: linearizable history reported: %v", c.name, bad)
		}
		if c.bad != "" && (len(bad) == 0 || !strings.Contains(bad[0], c.bad)) {
			t.Errorf("%s: want a violation containing %q, got %v", c.name, c.bad, bad)
		}
	}
}

// The zone check must agree with a brute-force search over every order on
// small random histories, both ways: every history it accepts has a valid
// order and every history it rejects has none.
func TestCheckRegisterMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	nonLin := 0
	for iter := 0; iter < 3000; iter++ {
		ops := randomHistory(rng)
		got := len(CheckRegister(0, ops)) == 0
		want := bruteForceLinearizable(0, ops)
		if got != want {
			t.Fatalf("history %v: zone check says linearizable=%v, brute force %v (%v)", ops, got, want, CheckRegister(0, ops))
		}
		if !want {
			nonLin++
		}
	}
	if nonLin < 100 {
		t.Fatalf("only %d of the random histories are not linearizable: the generator does not test rejection", nonLin)
	}
}

func randomHistory(rng *rand.Rand) []RegOp {
	n := 2 + rng.Intn(5)
	var ops []RegOp
	written := []int64{0}
	for i := 0; i < n; i++ {
		inv := int64(rng.Intn(20))
		ret := inv + 1 + int64(rng.Intn(8))
		if rng.Intn(2) == 0 {
			v := int64(len(written))
			written = append(written, v)
			if rng.Intn(6) == 0 {
				ret = Never
			}
			ops = append(ops, w(v, inv, ret))
		} else {
			ops = append(ops, r(written[rng.Intn(len(written))], inv, ret))
		}
	}
	return ops
}

// bruteForceLinearizable tries every order of the operations that respects
// real time (an op that returned before another began comes first), with
// unknown-outcome writes either placed or left out.
func bruteForceLinearizable(init int64, ops []RegOp) bool {
	n := len(ops)
	var try func(done uint, value int64) bool
	try = func(done uint, value int64) bool {
		if done == 1<<n-1 {
			return true
		}
		for i := 0; i < n; i++ {
			if done&(1<<i) != 0 {
				continue
			}
			// i may go next only if no pending op returned before i began.
			ok := true
			for j := 0; j < n; j++ {
				if j != i && done&(1<<j) == 0 && ops[j].Ret < ops[i].Inv {
					// An unknown-outcome write may be dropped, so it never blocks.
					if !(ops[j].Write && ops[j].Ret == Never) {
						ok = false
						break
					}
				}
			}
			if !ok {
				continue
			}
			op := ops[i]
			switch {
			case op.Write:
				if try(done|1<<i, op.Value) {
					return true
				}
				if op.Ret == Never && try(done|1<<i, value) { // never took effect
					return true
				}
			case op.Value == value:
				if try(done|1<<i, value) {
					return true
				}
			}
		}
		return false
	}
	return try(0, init)
}

func TestCheckSet(t *testing.T) {
	add := func(e string, inv, ret int64) SetOp { return SetOp{Add: true, Elem: e, Inv: inv, Ret: ret} }
	read := func(inv, ret int64, elems ...string) SetOp {
		sort.Strings(elems)
		return SetOp{Elems: elems, Inv: inv, Ret: ret}
	}
	cases := []struct {
		name string
		ops  []SetOp
		bad  string
	}{
		{"fine", []SetOp{add("a", 0, 1), read(2, 3, "a"), add("b", 4, 10), read(5, 6, "a"), read(7, 8, "a", "b"), read(11, 12, "a", "b")}, ""},
		{"unknown add seen", []SetOp{add("a", 0, Never), read(5, 6, "a")}, ""},
		{"acknowledged add missing", []SetOp{add("a", 0, 1), read(2, 3)}, "misses a, acknowledged"},
		{"element from the future", []SetOp{read(0, 1, "a"), add("a", 2, 3)}, "added only from"},
		{"element no one added", []SetOp{read(0, 1, "z")}, "no one added"},
		{"element disappears", []SetOp{add("a", 0, 100), read(1, 2, "a"), read(3, 4)}, "an earlier read returned"},
	}
	for _, c := range cases {
		bad := CheckSet(c.ops)
		if c.bad == "" && len(bad) > 0 {
			t.Errorf("%s: reported %v", c.name, bad)
		}
		if c.bad != "" && (len(bad) == 0 || !strings.Contains(bad[0], c.bad)) {
			t.Errorf("%s: want a violation containing %q, got %v", c.name, c.bad, bad)
		}
	}
}

func TestClassify(t *testing.T) {
	ref := []byte(`[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":14000,"sum":123}}]`)
	cases := []struct {
		status int
		body   string
		err    error
		want   Outcome
	}{
		{200, `[ {"result":{"sum":123,"rows":14000},"timestamp":"2024-01-01T00:00:00.000Z"} ]`, nil, Correct},
		{200, `[]`, nil, Wrong},
		{200, `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":0,"sum":0}}]`, nil, Wrong},
		{200, `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":10000,"sum":123}}]`, nil, Wrong},
		{200, `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":14000.0,"sum":123}}]`, nil, Wrong},
		{200, `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":14000,"sum":123}}] x`, nil, Wrong},
		{200, `<html>`, nil, Wrong},
		{500, `{"error":"Unknown exception"}`, nil, Unavailable},
		{503, ``, nil, Unavailable},
		{0, ``, errTest, Unavailable},
	}
	for i, c := range cases {
		if got, why := Classify(c.status, []byte(c.body), c.err, ref); got != c.want {
			t.Errorf("case %d (%d %s): %v (%s), want %v", i, c.status, c.body, got, why, c.want)
		}
	}
}

type testErr struct{}

func (testErr) Error() string { return "connection refused" }

var errTest error = testErr{}

func TestAvailabilityWindows(t *testing.T) {
	var a availability
	t0 := time.Unix(0, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	a.record(1, true, at(0))
	a.record(1, false, at(1)) // client 1 down from 1 s ...
	a.record(2, false, at(2)) // client 2 down from 2 s ...
	a.record(1, false, at(3))
	a.record(1, true, at(4)) // ... to 4 s: 3 s
	a.record(2, true, at(4.5))
	if got := a.finish(at(5)); got != 3*time.Second {
		t.Fatalf("longest window %v, want 3s", got)
	}
	a.record(3, false, at(6)) // still down at the end: counts to the end
	if got := a.finish(at(10)); got != 4*time.Second {
		t.Fatalf("longest window %v, want 4s (open at the end)", got)
	}
}
