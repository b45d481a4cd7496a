package expr

// OutputType infers the type of the expression's result from the types of
// its columns (types may be nil; unknown columns are TypeUnknown). It
// returns TypeUnknown when the type can only be known from the data, e.g.
// when a column type is unknown or cast() has a non-literal type.
func (x *Expr) OutputType(types func(name string) (Type, bool)) Type {
	return inferType(x.root, types)
}

func inferType(n node, types func(string) (Type, bool)) Type {
	switch t := n.(type) {
	case *constNode:
		if t.v.IsNull() && t.v.typ == TypeString {
			return TypeUnknown // an untyped null takes the type of its context
		}
		return t.v.Type()
	case *identNode:
		if t.slot >= 0 || types == nil {
			return TypeUnknown
		}
		if ty, ok := types(t.name); ok {
			return ty
		}
		return TypeUnknown
	case *unaryNode:
		if t.not {
			return TypeLong
		}
		return inferType(t.x, types)
	case *binaryNode:
		if t.op.isArith() {
			return operatorType(inferType(t.l, types), inferType(t.r, types))
		}
		return TypeLong
	case *applyNode:
		switch t.name {
		case "any", "all":
			return TypeLong
		case "filter":
			return inferType(t.args[0], types)
		case "fold", "cartesian_fold":
			return inferType(t.args[len(t.args)-1], types)
		}
		return TypeUnknown
	case *callNode:
		if t.def == nil || t.def.outType == nil {
			return TypeUnknown
		}
		in := make([]Type, len(t.args))
		for i, a := range t.args {
			in[i] = inferType(a, types)
		}
		return t.def.outType(t.args, in)
	}
	return TypeUnknown
}
