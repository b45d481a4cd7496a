package sqlexpr

import (
	"errors"
	"strings"
	"testing"

	"strata/expr"
	"strata/sql"
)

// FuzzTranslate: any expression the parser accepts translates without a
// panic into native text that parses, or fails with a client error.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		"x + 1", "x / 2.0", "-9223372036854775808", "MOD(x, 4) + d", "s || 'it''s'",
		"CASE WHEN x > 5 THEN 1 ELSE 2.5 END", "CASE s WHEN 'abc' THEN 'yes' END", "COALESCE(n, x, NULL)",
		"NULLIF(x, 7)", "n IS NOT FALSE", "x BETWEEN SYMMETRIC 9 AND 1", "__time IN ('2000-01-02T03:04:05Z')",
		"CAST(__time AS DATE)", "CAST(s AS BIGINT ARRAY)", "FLOOR(__time TO HOUR)", "__time - INTERVAL '1' DAY",
		"TIMESTAMPDIFF(HOUR, TIMESTAMP '2000-01-01 00:00:00', __time)", "EXTRACT(DOW FROM __time)",
		"TIME_FLOOR(__time, 'P1D', NULL, 'UTC')", "SUBSTRING(s FROM 2 FOR 1)", "POSITION('c' IN s FROM 2)",
		"TRIM(LEADING 'a' FROM s)", "ROUND(d, 1)", "TRUNCATE(-2.57, 1)", "DATE_TRUNC('month', __time)",
		"TIME_IN_INTERVAL(__time, '2000-01-01/2000-02-01')", "s LIKE 'a%' ESCAPE '\\'", "1e400", "CURRENT_DATE",
		"? + 1", "x IS DISTINCT FROM n", "NOT (x > 1 AND d < 2 OR s = 'a')", "'2000-01-01' < __time",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := sql.ParseExpr(src)
		if err != nil {
			return
		}
		v, err := Translate(rowScope{}, &Env{Params: []Param{{Type: "BIGINT", Value: float64(3)}}}, e)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("%q: %v is not a client error", src, err)
			}
			return
		}
		// A native function may refuse a literal argument (a period, a
		// pattern): both callers report that as invalid input. Any other
		// failure to compile is a translation that wrote bad native text.
		if _, err := expr.Compile(v.Src); err != nil && !strings.Contains(err.Error(), "function '") {
			t.Fatalf("%q -> %q does not compile: %v", src, v.Src, err)
		}
	})
}
