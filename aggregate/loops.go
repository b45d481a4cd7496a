package aggregate

// Tight aggregation loops, specialised per value type by the compiler.
// "dense" loops cover vals[from:to], "sel" loops the rows listed in sel;
// "grouped" loops add row k into acc[groups[k]].

type number interface{ ~int64 | ~float64 }

func sumDense[T number](vals []T) T {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(vals); i += 4 {
		s0 += vals[i]
		s1 += vals[i+1]
		s2 += vals[i+2]
		s3 += vals[i+3]
	}
	for ; i < len(vals); i++ {
		s0 += vals[i]
	}
	return s0 + s1 + s2 + s3
}

func sumSel[T number](vals []T, sel []int32) T {
	var s T
	for _, i := range sel {
		s += vals[i]
	}
	return s
}

func minDense[T number](acc T, vals []T) T {
	for _, v := range vals {
		acc = min(acc, v)
	}
	return acc
}

func maxDense[T number](acc T, vals []T) T {
	for _, v := range vals {
		acc = max(acc, v)
	}
	return acc
}

func minSel[T number](acc T, vals []T, sel []int32) T {
	for _, i := range sel {
		acc = min(acc, vals[i])
	}
	return acc
}

func maxSel[T number](acc T, vals []T, sel []int32) T {
	for _, i := range sel {
		acc = max(acc, vals[i])
	}
	return acc
}

func sumGrouped[T number](acc []T, null []bool, vals []T, groups []int32) {
	vals = vals[:len(groups)]
	for k, g := range groups {
		acc[g] += vals[k]
		null[g] = false
	}
}

func sumSelGrouped[T number](acc []T, null []bool, vals []T, sel []int32, groups []int32) {
	groups = groups[:len(sel)]
	for k, i := range sel {
		g := groups[k]
		acc[g] += vals[i]
		null[g] = false
	}
}

func minGrouped[T number](acc []T, null []bool, vals []T, groups []int32) {
	vals = vals[:len(groups)]
	for k, g := range groups {
		acc[g] = min(acc[g], vals[k])
		null[g] = false
	}
}

func maxGrouped[T number](acc []T, null []bool, vals []T, groups []int32) {
	vals = vals[:len(groups)]
	for k, g := range groups {
		acc[g] = max(acc[g], vals[k])
		null[g] = false
	}
}

func minSelGrouped[T number](acc []T, null []bool, vals []T, sel []int32, groups []int32) {
	groups = groups[:len(sel)]
	for k, i := range sel {
		g := groups[k]
		acc[g] = min(acc[g], vals[i])
		null[g] = false
	}
}

func maxSelGrouped[T number](acc []T, null []bool, vals []T, sel []int32, groups []int32) {
	groups = groups[:len(sel)]
	for k, i := range sel {
		g := groups[k]
		acc[g] = max(acc[g], vals[i])
		null[g] = false
	}
}

func countGrouped(acc []int64, groups []int32) {
	for _, g := range groups {
		acc[g]++
	}
}
