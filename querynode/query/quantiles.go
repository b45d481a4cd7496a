package query

import (
	"errors"
	"math"
	"strconv"
)

// parseQuantilesPostAgg reads the quantilesDoublesSketchTo* post-aggregators
// (Druid's druid-datasketches extension): each takes a field post-aggregator
// that yields a quantiles sketch, plus what it asks of the sketch.
func parseQuantilesPostAgg(o obj, p *PostAggregator) error {
	fr := o.raw("field")
	if fr == nil {
		return o.missing("field")
	}
	f, err := ParsePostAggregator(fr, false)
	if err != nil {
		return err
	}
	p.Fields = []*PostAggregator{f}
	floats := func(k string, req bool) ([]float64, error) {
		raw, ok, err := o.array(k)
		if err != nil || (!ok && !req) {
			return nil, err
		}
		if !ok {
			return nil, o.missing(k)
		}
		out := make([]float64, len(raw))
		for i, r := range raw {
			s, ok := scalarString(r)
			if !ok {
				return nil, Invalidf("%s: [%s] must hold numbers, got %s", o.what, k, snippet(r))
			}
			if out[i], err = parseFinite(s); err != nil {
				return nil, Invalidf("%s: [%s] must hold finite numbers, got %s", o.what, k, snippet(r))
			}
		}
		return out, nil
	}
	checkFractions := func() error {
		for _, f := range p.Fractions {
			if f < 0 || f > 1 {
				return Invalidf("%s [%s]: a fraction must be in [0, 1], got %v", o.what, p.Name, f)
			}
		}
		return nil
	}
	checkSplits := func() error {
		for i := 1; i < len(p.SplitPoints); i++ {
			if !(p.SplitPoints[i] > p.SplitPoints[i-1]) {
				return Invalidf("%s [%s]: splitPoints must be unique and increasing", o.what, p.Name)
			}
		}
		return nil
	}
	switch p.Type {
	case "quantilesDoublesSketchToQuantile":
		v, ok, err := o.number("fraction")
		if err != nil {
			return err
		}
		if !ok {
			return o.missing("fraction")
		}
		p.Fractions = []float64{v}
		return checkFractions()
	case "quantilesDoublesSketchToQuantiles":
		if p.Fractions, err = floats("fractions", true); err != nil {
			return err
		}
		return checkFractions()
	case "quantilesDoublesSketchToRank":
		v, ok, err := o.number("value")
		if err != nil {
			return err
		}
		if !ok {
			return o.missing("value")
		}
		p.Value = v
	case "quantilesDoublesSketchToCDF":
		if p.SplitPoints, err = floats("splitPoints", true); err != nil {
			return err
		}
		return checkSplits()
	case "quantilesDoublesSketchToHistogram":
		if p.SplitPoints, err = floats("splitPoints", false); err != nil {
			return err
		}
		n, err := o.integer("numBins", 10)
		if err != nil {
			return err
		}
		if n < 2 || n > 1<<20 {
			return Invalidf("%s [%s]: numBins must be in [2, 1048576], got %d", o.what, p.Name, n)
		}
		p.NumBins = int(n)
		return checkSplits()
	}
	return nil
}

func parseFinite(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		err = errors.New("not finite")
	}
	return f, err
}
