package engine

import (
	"encoding/base64"
	"strconv"

	"strata/aggregate"
	"strata/querynode/query"
)

// Post-aggregators over HLL and theta sketches. Their fields give
// sketches: a field access to a sketch aggregator reads the row's state
// (not its finalized estimate); a union or set operation computes one. A
// sketch result is rendered as the base64 sketch, as an unfinalized
// aggregator is.

// isSketchEstimateOfSketch reports whether an HLLSketchEstimate or
// thetaSketchEstimate must read a sketch rather than the finalized
// estimate of an aggregator: bounds are asked, or its field computes a
// sketch.
func isSketchEstimateOfSketch(p *query.PostAggregator, env *rowEnv) bool {
	if p.NumStdDev > 0 || query.IsSketchPostAgg(p.Fields[0].Type) {
		return true
	}
	f := p.Fields[0]
	if sl, ok := env.schema.index[f.FieldName]; ok && sl.kind == 2 && (f.Type == "fieldAccess" || f.Type == "finalizingFieldAccess") {
		return query.IsSketchPostAgg(env.schema.posts[sl.i].Type)
	}
	return false
}

// sketchOf evaluates a post-aggregator that gives a sketch of the kind
// (aggregate.KindHLL or KindTheta): its serialized bytes, nil for an
// empty one.
func sketchOf(p *query.PostAggregator, env *rowEnv, kind string) ([]byte, error) {
	switch p.Type {
	case "fieldAccess", "finalizingFieldAccess":
		sl, ok := env.schema.index[p.FieldName]
		switch {
		case ok && sl.kind == 1 && env.row.states != nil && env.row.states[sl.i].Kind == kind:
			r, err := env.row.states[sl.i].Result(env.row.at, false)
			return r.Sketch, err
		case ok && sl.kind == 2 && sl.i < len(env.row.post) && env.row.post[sl.i].K == KObject:
			return base64.StdEncoding.DecodeString(env.row.post[sl.i].S)
		}
		return nil, query.Invalidf("[%s] is not a %s sketch", p.FieldName, sketchName(kind))
	case "HLLSketchUnion", "thetaSketchSetOp":
		v, err := evalSketchPostAgg(p, env)
		if err != nil || v.K != KObject {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(v.S)
	}
	return nil, query.Invalidf("post-aggregator [%s] of type [%s] does not give a %s sketch", p.Name, p.Type, sketchName(kind))
}

func sketchName(kind string) string {
	if kind == aggregate.KindHLL {
		return "HLL"
	}
	return "theta"
}

// evalSketchPostAgg computes the sketch post-aggregators.
func evalSketchPostAgg(p *query.PostAggregator, env *rowEnv) (Value, error) {
	bad := func(err error) (Value, error) {
		return Null, query.Invalidf("post-aggregator [%s]: %v", p.Name, err)
	}
	kind := aggregate.KindHLL
	if p.Type == "thetaSketchSetOp" || p.Type == "thetaSketchEstimate" {
		kind = aggregate.KindTheta
	}
	var sketches [][]byte
	for _, f := range p.Fields {
		b, err := sketchOf(f, env, kind)
		if err != nil {
			return bad(err)
		}
		sketches = append(sketches, b)
	}
	switch p.Type {
	case "HLLSketchUnion":
		b, err := aggregate.HLLUnion(sketches, p.LgK, p.TgtHllType)
		if err != nil {
			return bad(err)
		}
		return Value{K: KObject, S: b64(b)}, nil
	case "thetaSketchSetOp":
		b, err := aggregate.ThetaSetOp(p.Func, p.Size, sketches)
		if err != nil {
			return bad(err)
		}
		return Value{K: KObject, S: b64(b)}, nil
	case "HLLSketchToString":
		s, err := aggregate.HLLSummary(sketches[0])
		if err != nil {
			return bad(err)
		}
		return Str(s), nil
	case "HLLSketchEstimateWithBounds":
		est, lo, hi, err := aggregate.HLLBounds(sketches[0], p.NumStdDev)
		if err != nil {
			return bad(err)
		}
		return doubles([]float64{est, lo, hi}), nil
	case "HLLSketchEstimate":
		est, err := aggregate.HLLEstimate(sketches[0])
		if err != nil {
			return bad(err)
		}
		if p.Round {
			return Long(int64(est + 0.5)), nil
		}
		return Double(est), nil
	case "thetaSketchEstimate":
		if p.NumStdDev == 0 {
			est, _, _, err := aggregate.ThetaBounds(sketches[0], 1)
			if err != nil {
				return bad(err)
			}
			return Double(est), nil
		}
		est, lo, hi, err := aggregate.ThetaBounds(sketches[0], p.NumStdDev)
		if err != nil {
			return bad(err)
		}
		// Druid's SketchEstimateWithErrorBounds, as a JSON object.
		b := []byte(`{"estimate":`)
		b = Double(est).AppendJSON(b)
		b = append(b, `,"highBound":`...)
		b = Double(hi).AppendJSON(b)
		b = append(b, `,"lowBound":`...)
		b = Double(lo).AppendJSON(b)
		b = append(b, `,"numStdDev":`...)
		b = strconv.AppendInt(b, int64(p.NumStdDev), 10)
		return Value{K: KArray, S: string(append(b, '}'))}, nil
	}
	return Null, query.Errorf(query.Unsupported, "post-aggregator type [%s] is not supported", p.Type)
}
