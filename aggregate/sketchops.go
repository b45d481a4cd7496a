package aggregate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/blob"
)

// Operations on serialized HLL and theta sketches, for the post-aggregators
// that combine or describe sketches (Druid's HLLSketchUnion,
// HLLSketchEstimateWithBounds, HLLSketchToString, thetaSketchSetOp and
// thetaSketchEstimate with error bounds). An empty input (nil) is the
// empty sketch.

// HLLUnion returns the union of HLL sketches as a sketch of lgK and target
// type tgt ("HLL_4", "HLL_6", "HLL_8").
func HLLUnion(sketches [][]byte, lgK int, tgt string) ([]byte, error) {
	u, err := hll.NewUnion(lgK)
	if err != nil {
		return nil, err
	}
	for _, b := range sketches {
		if b == nil {
			continue
		}
		sk, err := blob.DecodeHLL(b)
		if err != nil {
			return nil, err
		}
		if err := u.UpdateSketch(sk); err != nil {
			return nil, err
		}
	}
	sk, err := u.GetResult((&Spec{TgtHllType: tgt}).tgt())
	if err != nil {
		return nil, err
	}
	return sk.ToCompactSlice()
}

func hllSketch(b []byte) (hll.HllSketch, error) {
	if b == nil {
		return hll.NewHllSketch(12, hll.TgtHllTypeHll4)
	}
	return blob.DecodeHLL(b)
}

// HLLBounds is an HLL sketch's estimate and its bounds at numStdDev (1, 2
// or 3) standard deviations.
func HLLBounds(b []byte, numStdDev int) (est, lo, hi float64, err error) {
	if numStdDev < 1 || numStdDev > 3 {
		return 0, 0, 0, fmt.Errorf("numStdDev must be 1, 2 or 3, got %d", numStdDev)
	}
	sk, err := hllSketch(b)
	if err != nil {
		return 0, 0, 0, err
	}
	if est, err = sk.GetEstimate(); err != nil {
		return 0, 0, 0, err
	}
	if lo, err = sk.GetLowerBound(numStdDev); err != nil {
		return 0, 0, 0, err
	}
	hi, err = sk.GetUpperBound(numStdDev)
	return est, lo, hi, err
}

// HLLEstimate is an HLL sketch's estimate.
func HLLEstimate(b []byte) (float64, error) {
	est, _, _, err := HLLBounds(b, 1)
	return est, err
}

// HLLSummary describes an HLL sketch as DataSketches' summary does.
func HLLSummary(b []byte) (string, error) {
	sk, err := hllSketch(b)
	if err != nil {
		return "", err
	}
	est, lo, hi, err := HLLBounds(b, 1)
	if err != nil {
		return "", err
	}
	tgt := map[hll.TgtHllType]string{hll.TgtHllTypeHll4: "HLL_4", hll.TgtHllTypeHll6: "HLL_6", hll.TgtHllTypeHll8: "HLL_8"}[sk.GetTgtHllType()]
	var s strings.Builder
	s.WriteString("### HLL SKETCH SUMMARY: \n")
	fmt.Fprintf(&s, "  Log Config K   : %d\n", sk.GetLgConfigK())
	fmt.Fprintf(&s, "  Hll Target     : %s\n", tgt)
	fmt.Fprintf(&s, "  Empty          : %t\n", sk.IsEmpty())
	fmt.Fprintf(&s, "  LB             : %s\n", strconv.FormatFloat(lo, 'g', -1, 64))
	fmt.Fprintf(&s, "  Estimate       : %s\n", strconv.FormatFloat(est, 'g', -1, 64))
	fmt.Fprintf(&s, "  UB             : %s\n", strconv.FormatFloat(hi, 'g', -1, 64))
	return s.String(), nil
}

// Theta set operations.
const (
	ThetaUnion     = "UNION"
	ThetaIntersect = "INTERSECT"
	ThetaNot       = "NOT" // the first sketch less the others
)

func thetaSketch(b []byte) (*theta.CompactSketch, error) {
	if b == nil {
		u, err := theta.NewUnion()
		if err != nil {
			return nil, err
		}
		return u.Result(true)
	}
	return blob.DecodeTheta(b)
}

// ThetaSetOp applies a set operation to theta sketches (at least one),
// keeping at most size entries in a union, and returns the result sketch.
func ThetaSetOp(op string, size int, sketches [][]byte) ([]byte, error) {
	if len(sketches) == 0 {
		return nil, fmt.Errorf("theta %s needs a sketch", op)
	}
	sks := make([]*theta.CompactSketch, len(sketches))
	for i, b := range sketches {
		sk, err := thetaSketch(b)
		if err != nil {
			return nil, err
		}
		sks[i] = sk
	}
	var out *theta.CompactSketch
	var err error
	switch op {
	case ThetaUnion:
		var u *theta.Union
		if u, err = theta.NewUnion(theta.WithUnionLgK((&Spec{Size: size}).thetaLgK())); err != nil {
			return nil, err
		}
		for _, sk := range sks {
			if err := u.Update(sk); err != nil {
				return nil, err
			}
		}
		out, err = u.Result(true)
	case ThetaIntersect:
		in := theta.NewIntersection()
		for _, sk := range sks {
			if err := in.Update(sk); err != nil {
				return nil, err
			}
		}
		out, err = in.Result(true)
	case ThetaNot:
		out = sks[0]
		for _, sk := range sks[1:] {
			if out, err = theta.ANotB(out, sk, theta.DefaultSeed, true); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("unknown theta set operation %q", op)
	}
	if err != nil {
		return nil, err
	}
	return out.MarshalBinary()
}

// ThetaBounds is a theta sketch's estimate and its bounds at numStdDev (1,
// 2 or 3) standard deviations.
func ThetaBounds(b []byte, numStdDev int) (est, lo, hi float64, err error) {
	if numStdDev < 1 || numStdDev > 3 {
		return 0, 0, 0, fmt.Errorf("numStdDev must be 1, 2 or 3, got %d", numStdDev)
	}
	sk, err := thetaSketch(b)
	if err != nil {
		return 0, 0, 0, err
	}
	if lo, err = sk.LowerBound(uint8(numStdDev)); err != nil {
		return 0, 0, 0, err
	}
	hi, err = sk.UpperBound(uint8(numStdDev))
	return sk.Estimate(), lo, hi, err
}
