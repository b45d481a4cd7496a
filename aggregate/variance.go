package aggregate

import "fmt"

// KindVariance is Druid's variance aggregator (the druid-stats
// extension's "variance"): per group the count (Longs), sum (Doubles) and
// sum of squared differences from the mean (M2, Druid's nvariance) of its
// values. Values fold in one at a time and partial states merge by Chan et
// al.'s formula, as Druid's VarianceAggregatorCollector does, so no
// difference of large sums loses the variance.
const KindVariance = "VARIANCE"

// addVariance folds value v into group g.
func (s *State) addVariance(g int32, v float64) {
	s.Longs[g]++
	s.Doubles[g] += v
	if n := float64(s.Longs[g]); n > 1 {
		t := n*v - s.Doubles[g]
		s.M2[g] += t * t / (n * (n - 1))
	}
	s.Null[g] = false
}

// combineVariance folds group si of src into group di of s.
func (s *State) combineVariance(di int, src *State, si int) {
	n2 := src.Longs[si]
	if n2 == 0 {
		return
	}
	n1 := s.Longs[di]
	if n1 == 0 {
		s.Longs[di], s.Doubles[di], s.M2[di], s.Null[di] = n2, src.Doubles[si], src.M2[si], false
		return
	}
	ratio := float64(n1) / float64(n2)
	t := s.Doubles[di]/ratio - src.Doubles[si]
	s.M2[di] += src.M2[si] + ratio/float64(n1+n2)*t*t
	s.Longs[di] += n2
	s.Doubles[di] += src.Doubles[si]
	s.Null[di] = false
}

// Variance is group i's variance: the population one (M2/n) or the sample
// one (M2/(n-1)); false for a group without values. One value has
// variance 0 either way, as in Druid.
func (s *State) Variance(i int, population bool) (float64, bool) {
	n := s.Longs[i]
	switch {
	case n <= 0:
		return 0, false
	case n == 1:
		return 0, true
	case population:
		return s.M2[i] / float64(n), true
	}
	return s.M2[i] / float64(n-1), true
}

func (s *State) varianceResult(i int) Result {
	v, ok := s.Variance(i, s.spec != nil && s.spec.Population)
	if !ok {
		return Result{}
	}
	return Result{Kind: ResultDouble, Double: v}
}

// checkVariance validates a decoded variance state: a column per group,
// counts not negative.
func (s *State) checkVariance(n int) error {
	if len(s.Longs) != n || len(s.Doubles) != n || len(s.M2) != n {
		return fmt.Errorf("aggregator state: a variance needs counts, sums and m2 per group")
	}
	for i, c := range s.Longs {
		if c < 0 || (c == 0) != s.Null[i] {
			return fmt.Errorf("aggregator state: bad variance count %d", c)
		}
	}
	return nil
}
