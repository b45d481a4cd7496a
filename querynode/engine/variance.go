package engine

import (
	"math"

	"strata/aggregate"
	"strata/querynode/query"
)

// foldAgg feeds a state that takes one value at a time (the variance
// aggregator, bitwise folds) the non-null numbers of its column, doubles
// as doubles and longs as longs (a bitwise fold casts doubles to long, as
// Druid's bitwise functions do); a missing column gives no values.
type foldAgg struct {
	st  *AggState
	src numSource
}

func (rc *columns) newFoldAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	v := &foldAgg{st: st}
	if _, ok := rc.colKind(a.FieldName); !ok {
		return v, nil
	}
	src, err := rc.num(a.FieldName)
	if err != nil {
		return nil, err
	}
	v.src = src
	return v, nil
}

func (v *foldAgg) state() *AggState { return v.st }
func (v *foldAgg) grow(n int)       { v.st.Grow(n) }
func (v *foldAgg) finish() error    { return nil }

func (v *foldAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	if v.src == nil {
		return nil
	}
	return eachNumber(v.src, b, aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}, v.st.AddLong, v.st.AddDouble)
}

// evalStddev computes the stddev post-aggregator: the square root of the
// variance of the variance aggregator it names, by the post-aggregator's
// own estimator (so it reads the aggregator's state, not its finalized
// variance); null for a group without values.
func evalStddev(p *query.PostAggregator, env *rowEnv) (Value, error) {
	sl, ok := env.schema.index[p.FieldName]
	if !ok || sl.kind != 1 || env.row.states == nil || env.row.states[sl.i].Kind != aggregate.KindVariance {
		return Null, query.Invalidf("stddev post-aggregator [%s]: [%s] is not a variance aggregator", p.Name, p.FieldName)
	}
	v, ok := env.row.states[sl.i].Variance(env.row.at, p.Population)
	if !ok {
		return Null, nil
	}
	return Double(math.Sqrt(v)), nil
}
