package quantiles

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func mustNew(t testing.TB, k int) *Sketch {
	t.Helper()
	s, err := New(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exactQuantile is the INCLUSIVE quantile by definition: the smallest value x
// of the data with count(data <= x)/n >= r.
func exactQuantile(sorted []float64, r float64) float64 {
	n := float64(len(sorted))
	for i, x := range sorted {
		// count of values <= x: skip to the last duplicate.
		j := i
		for j+1 < len(sorted) && sorted[j+1] == x {
			j++
		}
		if float64(j+1)/n >= r-1e-12 {
			return x
		}
	}
	return sorted[len(sorted)-1]
}

func exactRank(sorted []float64, x float64) float64 {
	c := 0
	for _, v := range sorted {
		if v <= x {
			c++
		}
	}
	return float64(c) / float64(len(sorted))
}

// checkInvariants verifies the internal structure against DataSketches' rules.
func checkInvariants(t *testing.T, s *Sketch) {
	t.Helper()
	twoK := 2 * int64(s.k)
	if s.bitPattern != uint64(s.n/twoK) || int64(len(s.base)) != s.n%twoK {
		t.Fatalf("n=%d k=%d: bitPattern %b base %d", s.n, s.k, s.bitPattern, len(s.base))
	}
	if len(s.levels) < bits.Len64(s.bitPattern)*s.k {
		t.Fatalf("levels too short: %d", len(s.levels))
	}
	var total int64
	total += int64(len(s.base))
	for lvl, b := 0, s.bitPattern; b != 0; lvl, b = lvl+1, b>>1 {
		if b&1 == 0 {
			continue
		}
		l := s.level(lvl)
		if !slices.IsSorted(l) {
			t.Fatalf("level %d not sorted", lvl)
		}
		for _, v := range l {
			if v < s.minV || v > s.maxV {
				t.Fatalf("level item %v outside [%v,%v]", v, s.minV, s.maxV)
			}
		}
		total += int64(s.k) << uint(lvl+1)
	}
	if total != s.n {
		t.Fatalf("total weight %d != n %d", total, s.n)
	}
}

func TestNewK(t *testing.T) {
	for _, k := range []int{-1, 0, 1, 3, 100, 65536, 1 << 16, 1 << 20} {
		if _, err := New(k); err == nil {
			t.Errorf("New(%d) accepted", k)
		}
	}
	for k := 2; k <= 32768; k *= 2 {
		s, err := New(k)
		if err != nil || s.K() != k || !s.IsEmpty() || s.N() != 0 {
			t.Fatalf("New(%d): %v %v", k, s, err)
		}
	}
}

func TestEmpty(t *testing.T) {
	s := mustNew(t, DefaultK)
	if !math.IsNaN(s.Min()) || !math.IsNaN(s.Max()) || !math.IsNaN(s.Rank(1)) {
		t.Fatal("empty min/max/rank must be NaN")
	}
	for _, r := range []float64{0, 0.5, 1} {
		q, err := s.Quantile(r)
		if err != nil || !math.IsNaN(q) {
			t.Fatalf("Quantile(%v) = %v, %v", r, q, err)
		}
	}
	qs, err := s.Quantiles([]float64{0, 1})
	if err != nil || len(qs) != 2 || !math.IsNaN(qs[0]) || !math.IsNaN(qs[1]) {
		t.Fatalf("Quantiles = %v %v", qs, err)
	}
	for _, f := range []func([]float64) ([]float64, error){s.CDF, s.PMF} {
		out, err := f([]float64{1, 2})
		if err != nil || len(out) != 3 || !math.IsNaN(out[0]) || !math.IsNaN(out[2]) {
			t.Fatalf("empty CDF/PMF = %v %v", out, err)
		}
	}
	if !strings.Contains(s.String(), "Empty                 : true") {
		t.Fatalf("String: %s", s)
	}
}

func TestBadArguments(t *testing.T) {
	s := mustNew(t, 16)
	for i := range 100 {
		s.Update(float64(i))
	}
	for _, r := range []float64{-0.01, 1.01, math.NaN(), math.Inf(1)} {
		if _, err := s.Quantile(r); err == nil {
			t.Errorf("Quantile(%v) accepted", r)
		}
		if _, err := s.Quantiles([]float64{0.5, r}); err == nil {
			t.Errorf("Quantiles(%v) accepted", r)
		}
	}
	bad := [][]float64{{1, 1}, {2, 1}, {math.NaN()}, {0, math.NaN()}, {math.Inf(-1), 0}, {0, math.Inf(1)}}
	for _, sp := range bad {
		if _, err := s.CDF(sp); err == nil {
			t.Errorf("CDF(%v) accepted", sp)
		}
		if _, err := s.PMF(sp); err == nil {
			t.Errorf("PMF(%v) accepted", sp)
		}
	}
	if !math.IsNaN(s.Rank(math.NaN())) {
		t.Error("Rank(NaN) should be NaN")
	}
}

func TestNaNIgnoredAndInfinities(t *testing.T) {
	s := mustNew(t, 4)
	s.Update(math.NaN())
	if !s.IsEmpty() {
		t.Fatal("NaN counted")
	}
	s.Update(math.Inf(1))
	s.Update(1)
	s.Update(math.NaN())
	s.Update(math.Inf(-1))
	if s.N() != 3 || s.Min() != math.Inf(-1) || s.Max() != math.Inf(1) {
		t.Fatalf("n=%d min=%v max=%v", s.N(), s.Min(), s.Max())
	}
	if q, _ := s.Quantile(0.5); q != 1 {
		t.Fatalf("median %v", q)
	}
}

// While n < 2k nothing has been compacted, so every answer must equal the
// exact one computed by sorting.
func TestExactMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{2, 4, 16, 128} {
		for _, n := range []int{1, 2, 3, 7, k, 2*k - 1} {
			if n >= 2*k {
				continue
			}
			s := mustNew(t, k)
			data := make([]float64, n)
			for i := range data {
				data[i] = float64(rng.IntN(n/2 + 2)) // duplicates on purpose
				s.Update(data[i])
			}
			checkInvariants(t, s)
			sorted := slices.Clone(data)
			slices.Sort(sorted)
			ranks := []float64{0, 1, 0.5, 0.25, 0.75, 0.3, 0.01, 0.99}
			for i := 0; i <= n; i++ {
				ranks = append(ranks, float64(i)/float64(n))
			}
			for _, r := range ranks {
				q, err := s.Quantile(r)
				if err != nil {
					t.Fatal(err)
				}
				if want := exactQuantile(sorted, r); q != want {
					t.Fatalf("k=%d n=%d Quantile(%v) = %v, want %v (data %v)", k, n, r, q, want, sorted)
				}
			}
			split := []float64{-1}
			for x := 0.0; x <= float64(n/2+2); x++ {
				if got, want := s.Rank(x), exactRank(sorted, x); got != want {
					t.Fatalf("k=%d n=%d Rank(%v) = %v, want %v", k, n, x, got, want)
				}
				split = append(split, x+0.5)
			}
			cdf, err := s.CDF(split)
			if err != nil {
				t.Fatal(err)
			}
			pmf, _ := s.PMF(split)
			sum, prev := 0.0, 0.0
			for i, x := range split {
				if want := exactRank(sorted, x); cdf[i] != want {
					t.Fatalf("CDF[%d] = %v, want %v", i, cdf[i], want)
				}
				if math.Abs(pmf[i]-(cdf[i]-prev)) > 1e-12 {
					t.Fatalf("PMF[%d] = %v", i, pmf[i])
				}
				prev = cdf[i]
				sum += pmf[i]
			}
			sum += pmf[len(split)]
			if cdf[len(split)] != 1 || math.Abs(sum-1) > 1e-9 {
				t.Fatalf("CDF last %v, PMF sum %v", cdf[len(split)], sum)
			}
			if s.Min() != sorted[0] || s.Max() != sorted[n-1] {
				t.Fatalf("min/max %v %v", s.Min(), s.Max())
			}
		}
	}
}

func TestStructure(t *testing.T) {
	for _, k := range []int{2, 8, 128} {
		s := mustNew(t, k)
		rng := rand.New(rand.NewPCG(3, uint64(k)))
		for i := range 20000 {
			s.Update(rng.Float64())
			if i%997 == 0 || i < 3*k {
				checkInvariants(t, s)
			}
		}
		checkInvariants(t, s)
		if got, want := s.numRetained(), len(s.base)+bits.OnesCount64(s.bitPattern)*k; got != want {
			t.Fatal(got, want)
		}
	}
}

// Quantile(0) and Quantile(1) are the exact min and max even when those
// items were compacted away (DataSketches 5+ sorted view).
func TestMinMaxEndpoints(t *testing.T) {
	s := mustNew(t, 2)
	for i := range 1000 {
		s.Update(float64(i))
	}
	lo, _ := s.Quantile(0)
	hi, _ := s.Quantile(1)
	if lo != 0 || hi != 999 || s.Min() != 0 || s.Max() != 999 {
		t.Fatalf("lo %v hi %v", lo, hi)
	}
	if r := s.Rank(999); r != 1 {
		t.Fatalf("Rank(max) = %v", r)
	}
	if r := s.Rank(-1); r != 0 {
		t.Fatalf("Rank(below min) = %v", r)
	}
}

// permSketch feeds a shuffled permutation of 0..n-1 (scaled) so true ranks are
// known: the inclusive rank of value i is (i+1)/n.
func feedPerm(rng *rand.Rand, n int, sketches []*Sketch) {
	p := rng.Perm(n)
	for i, v := range p {
		sketches[i%len(sketches)].Update(float64(v))
	}
}

func maxRankError(t *testing.T, s *Sketch, n int) float64 {
	t.Helper()
	worst := 0.0
	for i := 1; i < 200; i++ {
		r := float64(i) / 200
		q, err := s.Quantile(r)
		if err != nil {
			t.Fatal(err)
		}
		trueRank := (q + 1) / float64(n)
		worst = max(worst, math.Abs(trueRank-r))
		x := math.Floor(r * float64(n))
		worst = max(worst, math.Abs(s.Rank(x)-(x+1)/float64(n)))
	}
	return worst
}

// bound128 is DataSketches' documented ~1.7% normalized rank error for k=128
// at 99% confidence (the results here are deterministic, so no flakiness).
const bound128 = 0.01725

func TestAccuracyLargeN(t *testing.T) {
	const n = 1_000_000
	s := mustNew(t, 128)
	feedPerm(rand.New(rand.NewPCG(7, 7)), n, []*Sketch{s})
	checkInvariants(t, s)
	if e := maxRankError(t, s, n); e > bound128 {
		t.Fatalf("max normalized rank error %.4f > %.4f", e, bound128)
	} else {
		t.Logf("k=128 n=1e6 max rank error %.4f%%, retained %d", 100*e, s.numRetained())
	}
	if s.Min() != 0 || s.Max() != n-1 {
		t.Fatalf("min %v max %v", s.Min(), s.Max())
	}
}

func TestMergeAccuracy(t *testing.T) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(9, 9))
	parts := make([]*Sketch, 10)
	for i := range parts {
		parts[i] = mustNew(t, 128)
	}
	feedPerm(rng, n, parts)
	u := mustNew(t, 128)
	for _, p := range parts {
		if err := u.Merge(p); err != nil {
			t.Fatal(err)
		}
	}
	checkInvariants(t, u)
	if u.N() != n || u.Min() != 0 || u.Max() != n-1 {
		t.Fatalf("n %d min %v max %v", u.N(), u.Min(), u.Max())
	}
	if e := maxRankError(t, u, n); e > bound128 {
		t.Fatalf("merged: max rank error %.4f", e)
	} else {
		t.Logf("10-way merge max rank error %.4f%%", 100*e)
	}

	// Mixed k: higher-k parts get downsampled into k=128.
	mixed := []*Sketch{mustNew(t, 1024), mustNew(t, 256), mustNew(t, 128), mustNew(t, 512)}
	feedPerm(rng, n, mixed)
	m := mixed[0].Copy()
	for _, p := range mixed[1:] {
		if err := m.Merge(p); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, m)
	}
	if m.K() != 128 || m.N() != n {
		t.Fatalf("mixed merge k=%d n=%d", m.K(), m.N())
	}
	if e := maxRankError(t, m, n); e > bound128 {
		t.Fatalf("mixed-k merge: max rank error %.4f", e)
	} else {
		t.Logf("mixed-k merge max rank error %.4f%%", 100*e)
	}
}

func TestMergeKRules(t *testing.T) {
	filled := func(k, n int) *Sketch {
		s := mustNew(t, k)
		for i := range n {
			s.Update(float64(i))
		}
		return s
	}
	cases := []struct {
		name            string
		s, o            *Sketch
		wantK           int
		wantN           int64
		wantMin, wantMx float64
	}{
		{"empty larger-k target takes smaller k", mustNew(t, 256), filled(128, 1000), 128, 1000, 0, 999},
		{"empty smaller-k target keeps k", mustNew(t, 64), filled(128, 1000), 64, 1000, 0, 999},
		{"non-empty larger-k target downsampled", filled(256, 5000), filled(128, 1000), 128, 6000, 0, 4999},
		{"smaller-k target downsamples other", filled(32, 100), filled(256, 5000), 32, 5100, 0, 4999},
		{"exact-mode other never lowers k", filled(256, 5000), filled(64, 100), 256, 5100, 0, 4999},
		{"exact-mode other into empty keeps k", mustNew(t, 256), filled(64, 100), 256, 100, 0, 99},
		{"equal k", filled(128, 300), filled(128, 700), 128, 1000, 0, 699},
	}
	for _, c := range cases {
		before, _ := c.o.MarshalBinary()
		if err := c.s.Merge(c.o); err != nil {
			t.Fatal(err)
		}
		after, _ := c.o.MarshalBinary()
		if string(before) != string(after) {
			t.Fatalf("%s: other modified", c.name)
		}
		checkInvariants(t, c.s)
		if c.s.K() != c.wantK || c.s.N() != c.wantN || c.s.Min() != c.wantMin || c.s.Max() != c.wantMx {
			t.Fatalf("%s: k=%d n=%d min=%v max=%v", c.name, c.s.K(), c.s.N(), c.s.Min(), c.s.Max())
		}
	}
}

func TestMergeExactStaysExact(t *testing.T) {
	a, b := mustNew(t, 64), mustNew(t, 64)
	var all []float64
	for i := range 50 {
		a.Update(float64(i * 3 % 17))
		b.Update(float64(i*7%23) + 0.5)
		all = append(all, float64(i*3%17), float64(i*7%23)+0.5)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	for i := 0; i <= 100; i++ {
		r := float64(i) / 100
		if q, _ := a.Quantile(r); q != exactQuantile(all, r) {
			t.Fatalf("Quantile(%v) = %v want %v", r, q, exactQuantile(all, r))
		}
	}
}

func TestMergeNilEmptySelf(t *testing.T) {
	s := mustNew(t, 16)
	for i := range 100 {
		s.Update(float64(i))
	}
	before, _ := s.MarshalBinary()
	if err := s.Merge(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Merge(mustNew(t, 2)); err != nil {
		t.Fatal(err)
	}
	after, _ := s.MarshalBinary()
	if string(before) != string(after) || s.K() != 16 {
		t.Fatal("nil/empty merge changed the sketch")
	}
	if err := s.Merge(s); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if s.N() != 200 {
		t.Fatalf("self merge n=%d", s.N())
	}
}

func TestDeterministicAndCopy(t *testing.T) {
	build := func() *Sketch {
		s := mustNew(t, 32)
		rng := rand.New(rand.NewPCG(5, 5))
		for range 50000 {
			s.Update(rng.NormFloat64())
		}
		return s
	}
	a, b := build(), build()
	ab, _ := a.MarshalBinary()
	bb, _ := b.MarshalBinary()
	if string(ab) != string(bb) {
		t.Fatal("same input gave different sketches")
	}
	c := a.Copy()
	q0, _ := a.Quantile(0.5)
	c.Update(1e9)
	for range 10000 {
		c.Update(-1e9)
	}
	a2, _ := a.MarshalBinary()
	if string(a2) != string(ab) {
		t.Fatal("Copy shares state")
	}
	if q1, _ := a.Quantile(0.5); q1 != q0 {
		t.Fatal("query cache leaked between copies")
	}
	if q2, _ := c.Quantile(0.5); q2 == q0 {
		t.Fatal("copy's cached view not invalidated")
	}
}

func TestUpdateDoesNotAllocate(t *testing.T) {
	s := mustNew(t, 128)
	for i := range 100000 {
		s.Update(float64(i))
	}
	x := 0.0
	allocs := testing.AllocsPerRun(10000, func() {
		s.Update(x)
		x += 1.5
	})
	if allocs != 0 {
		t.Fatalf("Update allocates %v per call", allocs)
	}
}

func TestConcurrentReaders(t *testing.T) {
	s := mustNew(t, 64)
	for i := range 10000 {
		s.Update(float64(i))
	}
	done := make(chan float64)
	for range 4 {
		go func() {
			q, _ := s.Quantile(0.5)
			done <- q + s.Rank(5000)
		}()
	}
	first := <-done
	for range 3 {
		if v := <-done; v != first {
			t.Fatal("concurrent readers disagree")
		}
	}
}

func TestString(t *testing.T) {
	s := mustNew(t, 128)
	for i := range 1000 {
		s.Update(float64(i))
	}
	str := s.String()
	for _, want := range []string{"K                     : 128", "N                     : 1000", "Retained Items        : 488", "Min Item              : 0", "Max Item              : 999"} {
		if !strings.Contains(str, want) {
			t.Fatalf("String() missing %q:\n%s", want, str)
		}
	}
}

func TestSortFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64,
		-math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1, -1}
	for n := range 600 {
		a := make([]float64, n)
		for i := range a {
			if rng.IntN(4) == 0 {
				a[i] = special[rng.IntN(len(special))]
			} else {
				a[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		sortFloats(a, nil)
		if !slices.Equal(a, want) {
			t.Fatalf("n=%d: %v\nwant %v", n, a, want)
		}
		for i := 1; i < n; i++ {
			if a[i] == 0 && a[i-1] == 0 && math.Signbit(a[i]) && !math.Signbit(a[i-1]) {
				t.Fatal("+0 sorted before -0")
			}
		}
	}
}
