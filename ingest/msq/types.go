package msq

import (
	"strings"

	"strata/expr"
	"strata/ingest/input"
	"strata/sqlexpr"
	"strata/storage/segment"
)

// Kind is the storage kind of a column.
type Kind uint8

// Column kinds.
const (
	KindString Kind = iota
	KindLong
	KindFloat
	KindDouble
	KindStringArray
	KindLongArray
	KindDoubleArray
	KindComplex
)

// Type is the type of a column: its kind, the name of a complex type, and
// whether SQL sees a long as a TIMESTAMP.
type Type struct {
	Kind      Kind
	Complex   string // complex type name (HLLSketch, thetaSketch, serializablePairLongString, ...)
	Timestamp bool
}

var (
	typeString    = Type{Kind: KindString}
	typeLong      = Type{Kind: KindLong}
	typeDouble    = Type{Kind: KindDouble}
	typeTimestamp = Type{Kind: KindLong, Timestamp: true}
)

// Native is the type as Druid's row signatures write it.
func (t Type) Native() string {
	switch t.Kind {
	case KindLong:
		return "LONG"
	case KindFloat:
		return "FLOAT"
	case KindDouble:
		return "DOUBLE"
	case KindStringArray:
		return "ARRAY<STRING>"
	case KindLongArray:
		return "ARRAY<LONG>"
	case KindDoubleArray:
		return "ARRAY<DOUBLE>"
	case KindComplex:
		return "COMPLEX<" + t.Complex + ">"
	}
	return "STRING"
}

// SQL is the SQL type name (the report's sqlTypeNames).
func (t Type) SQL() string {
	switch t.Kind {
	case KindLong:
		if t.Timestamp {
			return "TIMESTAMP"
		}
		return "BIGINT"
	case KindFloat:
		return "FLOAT"
	case KindDouble:
		return "DOUBLE"
	case KindStringArray, KindLongArray, KindDoubleArray:
		return "ARRAY"
	case KindComplex:
		return "OTHER"
	}
	return "VARCHAR"
}

func (t Type) numeric() bool {
	return t.Kind == KindLong || t.Kind == KindFloat || t.Kind == KindDouble
}

// exprType is the native expression type values of t have.
func (t Type) exprType() expr.Type {
	switch t.Kind {
	case KindLong:
		return expr.TypeLong
	case KindFloat, KindDouble:
		return expr.TypeDouble
	case KindStringArray:
		return expr.TypeStringArray
	case KindLongArray:
		return expr.TypeLongArray
	case KindDoubleArray:
		return expr.TypeDoubleArray
	}
	return expr.TypeString // complex values travel as byte strings
}

// parseSignatureType reads a type of an EXTERN signature ("string", "long",
// "double", "float", "ARRAY<STRING>", ...).
func parseSignatureType(s string) (Type, bool) {
	k, ok := input.ParseKind(s)
	if !ok {
		return Type{}, false
	}
	return fromInputKind(k), true
}

func fromInputKind(k input.Kind) Type {
	switch k {
	case input.KindLong:
		return typeLong
	case input.KindDouble:
		return typeDouble
	case input.KindFloat:
		return Type{Kind: KindFloat}
	case input.KindStringArray:
		return Type{Kind: KindStringArray}
	case input.KindLongArray:
		return Type{Kind: KindLongArray}
	case input.KindDoubleArray:
		return Type{Kind: KindDoubleArray}
	}
	return typeString
}

func (t Type) inputKind() input.Kind {
	switch t.Kind {
	case KindLong:
		return input.KindLong
	case KindFloat:
		return input.KindFloat
	case KindDouble:
		return input.KindDouble
	case KindStringArray:
		return input.KindStringArray
	case KindLongArray:
		return input.KindLongArray
	case KindDoubleArray:
		return input.KindDoubleArray
	}
	return input.KindString
}

// fromSegmentColumn maps a stored column to its SQL-visible type.
func fromSegmentColumn(c segment.ColumnInfo) Type {
	switch c.Kind {
	case segment.KindLong:
		if c.Role == segment.RoleTime {
			return typeTimestamp
		}
		return typeLong
	case segment.KindFloat:
		return Type{Kind: KindFloat}
	case segment.KindDouble:
		return typeDouble
	case segment.KindComplex:
		return Type{Kind: KindComplex, Complex: c.ComplexType}
	}
	return typeString
}

// Column is a named, typed column of a row signature.
type Column struct {
	Name string
	Type Type
}

// Signature is the ordered columns of rows.
type Signature []Column

func (s Signature) index(name string) int {
	for i, c := range s {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// reportJSON renders the signature as Druid does in reports.
func (s Signature) reportJSON() []map[string]any {
	out := make([]map[string]any, len(s))
	for i, c := range s {
		out[i] = map[string]any{"name": c.Name, "type": c.Type.Native()}
	}
	return out
}

// mergeTypes is the type of a column fed from two branches of a UNION ALL.
func mergeTypes(a, b Type) Type {
	if a == b {
		return a
	}
	if a.numeric() && b.numeric() {
		if a.Kind == KindLong && b.Kind == KindLong {
			return typeLong
		}
		return typeDouble
	}
	if a.Kind == b.Kind && a.Kind != KindComplex {
		return Type{Kind: a.Kind}
	}
	return typeString
}

var typeFloat = Type{Kind: KindFloat}

// sqlType is t as the shared SQL translator (package sqlexpr) types values.
func (t Type) sqlType() string {
	switch t.Kind {
	case KindLong:
		if t.Timestamp {
			return sqlexpr.Timestamp
		}
		return sqlexpr.Bigint
	case KindFloat:
		return sqlexpr.Float
	case KindDouble:
		return sqlexpr.Double
	case KindStringArray:
		return sqlexpr.Varchar + sqlexpr.ArraySuffix
	case KindLongArray:
		return sqlexpr.Bigint + sqlexpr.ArraySuffix
	case KindDoubleArray:
		return sqlexpr.Double + sqlexpr.ArraySuffix
	case KindComplex:
		return "COMPLEX<" + t.Complex + ">"
	}
	return sqlexpr.Varchar
}

// typeOfSQL is the column type values of a SQL type are stored as: a
// BOOLEAN is a long, as in Druid's segments.
func typeOfSQL(s string) Type {
	switch s {
	case sqlexpr.Timestamp:
		return typeTimestamp
	case sqlexpr.Bigint, sqlexpr.Boolean:
		return typeLong
	case sqlexpr.Float:
		return typeFloat
	case sqlexpr.Double:
		return typeDouble
	case sqlexpr.Varchar + sqlexpr.ArraySuffix:
		return Type{Kind: KindStringArray}
	case sqlexpr.Bigint + sqlexpr.ArraySuffix, sqlexpr.Boolean + sqlexpr.ArraySuffix, sqlexpr.Timestamp + sqlexpr.ArraySuffix:
		return Type{Kind: KindLongArray}
	case sqlexpr.Double + sqlexpr.ArraySuffix, sqlexpr.Float + sqlexpr.ArraySuffix:
		return Type{Kind: KindDoubleArray}
	}
	if c, ok := strings.CutPrefix(s, "COMPLEX<"); ok {
		return Type{Kind: KindComplex, Complex: strings.TrimSuffix(c, ">")}
	}
	return typeString
}
