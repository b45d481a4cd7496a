// Package sqlexpr translates Druid SQL scalar expressions into Druid native
// expressions (package expr): the text of a native expression and the SQL
// type of its value. It is the one translator interactive SQL
// (querynode/sqlplan) and SQL ingestion (ingest/msq) share, so the same
// expression gives the same answer in a SELECT and in an INSERT ... SELECT:
// one set of literal and quoting rules, casts, CASE, time arithmetic in the
// query's time zone, and one scalar function table.
//
// What differs between the callers is where values come from: each caller
// implements Scope to resolve column references (a native column name, or a
// position in an ingestion row), and may implement the optional hooks
// (Interceptor, Functions, Others, Subqueries) for what only it plans:
// aggregates, array functions, lookups, subqueries.
package sqlexpr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"strata/expr"
	"strata/interval"
	"strata/javacompat"
	"strata/sql"
)

// SQL types. An array's type is its element type followed by " ARRAY"
// (Calcite's spelling); a complex column's is COMPLEX<name>.
const (
	Varchar   = "VARCHAR"
	Bigint    = "BIGINT"
	Double    = "DOUBLE"
	Float     = "FLOAT"
	Timestamp = "TIMESTAMP"
	Boolean   = "BOOLEAN"
	Other     = "OTHER"

	ArraySuffix = " ARRAY"
)

// Numeric reports whether values of SQL type t are numbers.
func Numeric(t string) bool { return t == Bigint || t == Double || t == Float || t == Boolean }

// IsArray reports whether t is an array type.
func IsArray(t string) bool { return strings.HasSuffix(t, ArraySuffix) }

// ArrayOf is the type of an array of elem values: expressions compute
// floats as doubles and booleans as longs.
func ArrayOf(elem string) string {
	switch elem {
	case Float:
		elem = Double
	case Boolean:
		elem = Bigint
	}
	return elem + ArraySuffix
}

// Elem is the element type of array type t.
func Elem(t string) string { return strings.TrimSuffix(t, ArraySuffix) }

// Merge is the type of a value that may come from a value of type a or of
// type b (CASE branches, COALESCE arguments, array elements): numbers widen
// to DOUBLE unless both are integral, a TIMESTAMP stays one only when both
// are, anything else mixed is VARCHAR.
func Merge(a, b string) string {
	switch {
	case a == b:
		return a
	case a == "":
		return b
	case b == "":
		return a
	}
	integral := func(t string) bool { return t == Bigint || t == Boolean || t == Timestamp }
	if integral(a) && integral(b) {
		return Bigint
	}
	if (Numeric(a) || a == Timestamp) && (Numeric(b) || b == Timestamp) {
		return Double
	}
	if IsArray(a) && IsArray(b) {
		return Merge(Elem(a), Elem(b)) + ArraySuffix
	}
	return Varchar
}

// ExprType is the native expression type values of SQL type t have.
func ExprType(t string) expr.Type {
	switch t {
	case Bigint, Timestamp, Boolean:
		return expr.TypeLong
	case Double, Float:
		return expr.TypeDouble
	case Varchar + ArraySuffix:
		return expr.TypeStringArray
	case Bigint + ArraySuffix, Boolean + ArraySuffix, Timestamp + ArraySuffix:
		return expr.TypeLongArray
	case Double + ArraySuffix, Float + ArraySuffix:
		return expr.TypeDoubleArray
	}
	return expr.TypeString
}

// FromExprType is the SQL type of a native expression type.
func FromExprType(t expr.Type) string {
	switch t {
	case expr.TypeLong:
		return Bigint
	case expr.TypeDouble:
		return Double
	case expr.TypeStringArray:
		return Varchar + ArraySuffix
	case expr.TypeLongArray:
		return Bigint + ArraySuffix
	case expr.TypeDoubleArray:
		return Double + ArraySuffix
	}
	return Varchar
}

// Error categories, as Druid's error JSON names them.
const (
	CategoryInvalidInput = "INVALID_INPUT"
	CategoryUnsupported  = "UNSUPPORTED"
)

// Error is a translation failure the statement caused: it is invalid
// (INVALID_INPUT) or uses what is not supported (UNSUPPORTED). Msg carries
// "(line [l], column [c])" where known.
type Error struct {
	Category string
	Msg      string
}

func (e *Error) Error() string { return e.Msg }

// Invalid is an INVALID_INPUT error.
func Invalid(format string, a ...any) *Error {
	return &Error{Category: CategoryInvalidInput, Msg: fmt.Sprintf(format, a...)}
}

// Unsupported is an UNSUPPORTED error.
func Unsupported(format string, a ...any) *Error {
	return &Error{Category: CategoryUnsupported, Msg: fmt.Sprintf(format, a...)}
}

func invalidAt(n sql.Node, format string, a ...any) *Error {
	return Invalid("%s", sql.AtPos(n, fmt.Sprintf(format, a...)))
}

func unsupportedAt(n sql.Node, format string, a ...any) *Error {
	return Unsupported("%s", sql.AtPos(n, fmt.Sprintf(format, a...)))
}

// QuoteString is s as a native string literal.
func QuoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// QuoteIdent is name as a native identifier.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// LongLit is n as a native long literal (negative ones parenthesized, so
// they read as one operand; the minimum long has no positive counterpart).
func LongLit(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "(-9223372036854775807 - 1)"
		}
		return "(" + strconv.FormatInt(n, 10) + ")"
	}
	return strconv.FormatInt(n, 10)
}

// DoubleLit is f as a native double literal, printed as Java prints it so a
// whole number stays a double.
func DoubleLit(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "(-Infinity)"
	}
	s := javacompat.FormatDouble(math.Abs(f))
	if f < 0 || (f == 0 && math.Signbit(f)) {
		return "(-" + s + ")"
	}
	return s
}

// ParseTimestamp reads a SQL timestamp or date literal ("2000-01-01
// 00:00:00", "2000-01-01", ISO forms with or without an offset) in loc.
func ParseTimestamp(s string, loc *time.Location) (int64, error) {
	return interval.ParseTimeLenient(strings.TrimSpace(s), loc)
}

// UnitPeriods are the ISO periods of DATE_TRUNC's units. Druid truncates
// to MILLISECONDS and MICROSECONDS by one millisecond, which leaves a
// timestamp as it is.
var UnitPeriods = map[string]string{
	"MICROSECONDS": "PT0.001S", "MILLISECONDS": "PT0.001S",
	"SECOND": "PT1S", "MINUTE": "PT1M", "HOUR": "PT1H", "DAY": "P1D", "WEEK": "P1W",
	"MONTH": "P1M", "QUARTER": "P3M", "YEAR": "P1Y", "DECADE": "P10Y", "CENTURY": "P100Y",
	"MILLENNIUM": "P1000Y",
}

// monthUnits are the TIMESTAMPDIFF units counted in whole calendar months.
var monthUnits = map[sql.TimeUnit]int64{sql.UnitMonth: 1, sql.UnitQuarter: 3, sql.UnitYear: 12}

// fixedUnitMillis are the units TIMESTAMPDIFF counts by division.
var fixedUnitMillis = map[sql.TimeUnit]int64{
	sql.UnitMillisecond: 1, sql.UnitSecond: 1000, sql.UnitMinute: 60_000, sql.UnitHour: 3_600_000,
	sql.UnitDay: 86_400_000, sql.UnitWeek: 7 * 86_400_000,
}
