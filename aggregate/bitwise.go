package aggregate

// Bitwise folds of a long (Druid's "expression" aggregator with a
// bitwiseAnd/bitwiseOr/bitwiseXor fold, which BIT_AND, BIT_OR and BIT_XOR
// plan to): the first value of a group folds into Spec.BitInit (the
// expression's initialValue), the others into the group's value; partial
// states fold into each other. A group without values is null.
const (
	OpBitAnd = "bitAnd"
	OpBitOr  = "bitOr"
	OpBitXor = "bitXor"
)

// IsBitOp reports whether op is a bitwise fold.
func IsBitOp(op string) bool { return op == OpBitAnd || op == OpBitOr || op == OpBitXor }

func bitFold(op string, acc, v int64) int64 {
	switch op {
	case OpBitAnd:
		return acc & v
	case OpBitOr:
		return acc | v
	}
	return acc ^ v
}

// foldBits folds v into group g; combining folds another state's value
// (which already holds the initial value).
func (s *State) foldBits(g int32, v int64, combining bool) {
	switch {
	case !s.Null[g]:
		s.Longs[g] = bitFold(s.Op, s.Longs[g], v)
	case combining:
		s.Longs[g] = v
	default:
		var init int64
		if s.spec != nil {
			init = s.spec.BitInit
		}
		s.Longs[g] = bitFold(s.Op, init, v)
	}
	s.Null[g] = false
}
