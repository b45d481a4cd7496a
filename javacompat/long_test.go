package javacompat

import (
	"math"
	"testing"
)

func TestDoubleToLong(t *testing.T) {
	// Expected values are what Java's (long) cast gives.
	cases := []struct {
		name string
		in   float64
		want int64
	}{
		{"zero", 0, 0},
		{"negative zero", math.Copysign(0, -1), 0},
		{"truncates toward zero", 1.9, 1},
		{"truncates negative toward zero", -1.9, -1},
		{"half", 0.5, 0},
		{"smallest subnormal", math.SmallestNonzeroFloat64, 0},
		{"NaN", math.NaN(), 0},
		{"+Inf", math.Inf(1), math.MaxInt64},
		{"-Inf", math.Inf(-1), math.MinInt64},
		{"2^63 saturates", 0x1p63, math.MaxInt64},
		{"-2^63 is exact", -0x1p63, math.MinInt64},
		{"largest double below 2^63", math.Nextafter(0x1p63, 0), 0x1p63 - 1024},
		{"just above -2^63", math.Nextafter(-0x1p63, 0), -0x1p63 + 1024},
		{"beyond -2^63", -0x1p64, math.MinInt64},
		{"huge", 1e300, math.MaxInt64},
		{"huge negative", -1e300, math.MinInt64},
		{"max float", math.MaxFloat64, math.MaxInt64},
		{"exact integer", 9007199254740993, 9007199254740992}, // 2^53+1 is not a double
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DoubleToLong(c.in); got != c.want {
				t.Errorf("DoubleToLong(%v) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}
