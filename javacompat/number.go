// Number printing exactly the way Java's Double.toString and Float.toString
// do (and therefore the way Jackson, and so Druid, writes them in JSON).
//
// The digits are the shortest decimal that reads back to the same value, as
// specified for Double.toString since JDK 19 (Raffaello Giulietti's
// specification, also used by Jackson's fast double writer). The layout follows
// Java: plain notation with at least one fraction digit when
// 1e-3 <= |x| < 1e7 ("100.0", "0.001"), computerized scientific notation
// otherwise ("1.0E7", "1.234E-5"), and the special spellings "NaN",
// "Infinity", "-Infinity", "0.0" and "-0.0".

package javacompat

import (
	"math"
	"strconv"
)

// FormatDouble returns the Java Double.toString form of f.
func FormatDouble(f float64) string {
	var buf [32]byte
	return string(AppendDouble(buf[:0], f))
}

// FormatFloat returns the Java Float.toString form of f.
func FormatFloat(f float32) string {
	var buf [32]byte
	return string(AppendFloat(buf[:0], f))
}

// AppendDouble appends the Java Double.toString form of f to dst. It does not
// allocate when dst has room for the result (at most 25 bytes).
func AppendDouble(dst []byte, f float64) []byte {
	return appendJava(dst, f, 64)
}

// AppendFloat appends the Java Float.toString form of f to dst.
func AppendFloat(dst []byte, f float32) []byte {
	return appendJava(dst, float64(f), 32)
}

// smallest normal magnitudes; below them a value has too few significant bits
// for a one-digit shortest decimal to also be the closest two-digit one.
const (
	minNormal64 = 0x1p-1022
	minNormal32 = 0x1p-126
)

func appendJava(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}

	// Shortest round-tripping digits in the form d.ddde±xx.
	var sci [32]byte
	s := strconv.AppendFloat(sci[:0], f, 'e', -1, bitSize)
	var digits [20]byte
	nd, exp := splitSci(s, digits[:])

	// Java's rule: when one digit suffices, the closest decimal of length two
	// is chosen instead if it also reads back to f (only happens for
	// subnormals, e.g. Double.MIN_VALUE prints as 4.9E-324, not 5.0E-324).
	minNormal := minNormal64
	if bitSize == 32 {
		minNormal = minNormal32
	}
	if nd == 1 && f < minNormal {
		var two [32]byte
		t := strconv.AppendFloat(two[:0], f, 'e', 1, bitSize)
		var d2 [20]byte
		n2, e2 := splitSci(t, d2[:])
		if n2 == 2 && (d2[0] != digits[0] || d2[1] != '0' || e2 != exp) {
			if v, err := strconv.ParseFloat(string(t), bitSize); err == nil && v == f {
				copy(digits[:], d2[:2])
				nd, exp = 2, e2
			}
		}
	}
	return appendLayout(dst, digits[:nd], exp)
}

// splitSci extracts the significant digits (without the point, trailing zeros
// removed) and the decimal exponent from strconv's 'e' output.
func splitSci(s []byte, digits []byte) (n, exp int) {
	i := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if s[i] != '.' {
			digits[n] = s[i]
			n++
		}
	}
	for n > 1 && digits[n-1] == '0' {
		n--
	}
	i++ // 'e'
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	for ; i < len(s); i++ {
		exp = exp*10 + int(s[i]-'0')
	}
	if neg {
		exp = -exp
	}
	return n, exp
}

// appendLayout writes digits d1 d2 ... dn with value d1.d2...dn × 10^exp in
// Java's layout.
func appendLayout(dst []byte, digits []byte, exp int) []byte {
	n := len(digits)
	if exp >= -3 && exp < 7 {
		if exp < 0 {
			dst = append(dst, '0', '.')
			for i := 0; i < -exp-1; i++ {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		intLen := exp + 1
		if n <= intLen {
			dst = append(dst, digits...)
			for i := n; i < intLen; i++ {
				dst = append(dst, '0')
			}
			return append(dst, '.', '0')
		}
		dst = append(dst, digits[:intLen]...)
		dst = append(dst, '.')
		return append(dst, digits[intLen:]...)
	}
	dst = append(dst, digits[0], '.')
	if n == 1 {
		dst = append(dst, '0')
	} else {
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}
