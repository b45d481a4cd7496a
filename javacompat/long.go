package javacompat

import "math"

// DoubleToLong is Java's (long) cast of a double (JLS 5.1.3): truncation
// toward zero, NaN to 0, values beyond the int64 range saturated to
// Long.MAX_VALUE or Long.MIN_VALUE. Go's int64(f) is implementation-defined
// for those last cases (amd64 gives MinInt64 for all of them), so every place
// Druid semantics cast a double to a long goes through here.
func DoubleToLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64: // float64(MaxInt64) is 2^63, the first value out of range
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
