package engine

import (
	"encoding/base64"

	"strata/aggregate"
	"strata/querynode/query"
)

// stringSketchAgg merges sketches held as base64 strings, as a query data
// source's rows hold the sketches of its query (DS_HLL, DS_THETA or
// DS_QUANTILES_SKETCH over a subquery's sketch column): an
// HLLSketchMerge, an isInputThetaSketch thetaSketch or a
// quantilesDoublesSketch over a string column. A string that is no sketch
// of the kind is the query's error.
type stringSketchAgg struct {
	st      *AggState
	ks      keySource
	typ     string // blob type of the sketches
	name    string
	field   string
	decoded map[int32][]byte
}

func (rc *columns) newStringSketchAgg(a *query.Aggregator, st *AggState, typ string) (segAgg, error) {
	ks, err := rc.key(a.FieldName)
	if err != nil {
		return nil, err
	}
	return &stringSketchAgg{st: st, ks: ks, typ: typ, name: a.Name, field: a.FieldName, decoded: map[int32][]byte{}}, nil
}

func (s *stringSketchAgg) state() *AggState { return s.st }
func (s *stringSketchAgg) grow(n int)       { s.st.Grow(n) }
func (s *stringSketchAgg) finish() error    { return nil }

func (s *stringSketchAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	offs, ids, err := s.ks.ids(b)
	if err != nil {
		return err
	}
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}
	merge := func(g int32, id int32) error {
		bs, ok := s.decoded[id]
		if !ok {
			v := s.ks.value(id)
			if v.K == KNull {
				s.decoded[id] = nil
				return nil
			}
			if bs, err = base64.StdEncoding.DecodeString(v.S); err != nil || v.K != KString {
				return query.Invalidf("aggregator [%s]: column [%s] holds %q, not a %s sketch", s.name, s.field, v.S, s.typ)
			}
			s.decoded[id] = bs
		}
		if bs == nil {
			return nil
		}
		if err := s.st.MergeIntermediate(g, s.typ, bs); err != nil {
			return query.Invalidf("aggregator [%s]: column [%s] holds a value that is not a %s sketch: %v", s.name, s.field, s.typ, err)
		}
		return nil
	}
	return rows.Each(func(k, i int) error {
		if offs == nil {
			return merge(rows.Group(k), ids[i])
		}
		for _, id := range ids[offs[i]:offs[i+1]] {
			if err := merge(rows.Group(k), id); err != nil {
				return err
			}
		}
		return nil
	})
}
