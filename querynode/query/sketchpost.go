package query

// The post-aggregators over HLL and theta sketches (Druid's
// druid-datasketches): each reads sketches from its field(s), a field
// access to a sketch aggregator or another sketch post-aggregator.

// IsSketchPostAgg reports whether a post-aggregator type yields a sketch.
func IsSketchPostAgg(t string) bool { return t == "HLLSketchUnion" || t == "thetaSketchSetOp" }

func parseSketchPostAgg(o obj, p *PostAggregator) error {
	field := func() error {
		fr := o.raw("field")
		if fr == nil {
			return o.missing("field")
		}
		f, err := ParsePostAggregator(fr, false)
		if err != nil {
			return err
		}
		p.Fields = []*PostAggregator{f}
		return nil
	}
	fields := func() error {
		arr, ok, err := o.array("fields")
		if err != nil {
			return err
		}
		if !ok || len(arr) == 0 {
			return Invalidf("%s [%s]: fields must not be empty", o.what, p.Name)
		}
		for _, e := range arr {
			f, err := ParsePostAggregator(e, false)
			if err != nil {
				return err
			}
			p.Fields = append(p.Fields, f)
		}
		return nil
	}
	stdDev := func(k string, def int64) (int, error) {
		n, err := o.integer(k, def)
		if err == nil && (n < 1 || n > 3) {
			err = Invalidf("%s [%s]: %s must be 1, 2 or 3, got %d", o.what, p.Name, k, n)
		}
		return int(n), err
	}
	var err error
	switch p.Type {
	case "HLLSketchEstimateWithBounds":
		if err := field(); err != nil {
			return err
		}
		p.NumStdDev, err = stdDev("numStdDev", 1)
		return err
	case "HLLSketchToString":
		return field()
	case "HLLSketchUnion":
		if err := fields(); err != nil {
			return err
		}
		lgk, err := o.integer("lgK", 12)
		if err != nil {
			return err
		}
		if lgk < 4 || lgk > 21 {
			return Invalidf("%s [%s]: lgK must be in [4, 21], got %d", o.what, p.Name, lgk)
		}
		p.LgK = int(lgk)
		if p.TgtHllType, err = o.strDefault("tgtHllType", "HLL_4"); err != nil {
			return err
		}
		switch p.TgtHllType {
		case "HLL_4", "HLL_6", "HLL_8":
			return nil
		}
		return Invalidf("%s [%s]: unknown tgtHllType [%s]", o.what, p.Name, p.TgtHllType)
	case "thetaSketchSetOp":
		if err := fields(); err != nil {
			return err
		}
		if p.Func, err = o.reqStr("func"); err != nil {
			return err
		}
		switch p.Func {
		case "UNION", "INTERSECT", "NOT":
		default:
			return Invalidf("%s [%s]: func must be UNION, INTERSECT or NOT, got [%s]", o.what, p.Name, p.Func)
		}
		size, err := o.integer("size", 16384)
		if err != nil {
			return err
		}
		if size < 16 || size > 1<<26 || size&(size-1) != 0 {
			return Invalidf("%s [%s]: size must be a power of 2 in [16, 67108864], got %d", o.what, p.Name, size)
		}
		p.Size = int(size)
	case "thetaSketchEstimate":
		// errorBoundsStdDev asks for the estimate with its bounds.
		if o.raw("errorBoundsStdDev") != nil {
			p.NumStdDev, err = stdDev("errorBoundsStdDev", 1)
		}
		return err
	}
	return nil
}
