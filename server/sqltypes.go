package server

import "strings"

// sqlTypeName is a column's type as Druid's sqlTypesHeader names it:
// Calcite's SqlTypeName alone, so every array is ARRAY (its element type
// is in typesHeader's ARRAY<...>) and a complex value such as a sketch is
// OTHER (Druid's complex SQL type is Calcite's OTHER; typesHeader gives
// its COMPLEX<...> name).
func sqlTypeName(sqlType string) string {
	switch {
	case strings.HasSuffix(sqlType, " ARRAY"):
		return "ARRAY"
	case strings.HasPrefix(sqlType, "COMPLEX"):
		return "OTHER"
	}
	return sqlType
}
