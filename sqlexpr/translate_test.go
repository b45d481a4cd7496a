package sqlexpr

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"strata/expr"
	"strata/sql"
)

// rowScope resolves the columns of one test row: x BIGINT 7, neg BIGINT -2,
// d DOUBLE 2.5, s VARCHAR 'abc', n BIGINT NULL, __time TIMESTAMP
// 2000-01-02T03:04:05Z.
type rowScope struct{}

var rowTypes = map[string]string{"x": Bigint, "neg": Bigint, "d": Double, "s": Varchar, "n": Bigint, "__time": Timestamp}

var row = expr.MapBindings{"x": int64(7), "neg": int64(-2), "d": 2.5, "s": "abc", "n": nil, "__time": int64(946782245000)}

func (rowScope) Column(ref *sql.ColumnRef) (Expr, error) {
	name := ref.Column().Name
	typ, ok := rowTypes[name]
	if !ok {
		return Expr{}, invalidAt(ref, "Column '%s' not found in any table", name)
	}
	return Expr{Src: QuoteIdent(name), Type: typ, Col: name}, nil
}

func eval(t *testing.T, env *Env, src string) (any, string) {
	t.Helper()
	e, err := sql.ParseExpr(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	v, err := Translate(rowScope{}, env, e)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	c, err := expr.Compile(v.Src)
	if err != nil {
		t.Fatalf("%s -> %s: %v", src, v.Src, err)
	}
	out, err := c.Eval(row)
	if err != nil {
		t.Fatalf("%s -> %s: %v", src, v.Src, err)
	}
	return out.Any(), v.Type
}

// TestTranslateEvaluates translates expressions and evaluates the native
// text over one row: the answers and SQL types are Druid SQL's.
func TestTranslateEvaluates(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want any
		typ  string
	}{
		{"x + 1", int64(8), Bigint},
		{"x / 2", int64(3), Bigint},
		{"x / 2.0", 3.5, Double},
		{"-x", int64(-7), Bigint},
		{"-9223372036854775808", int64(-9223372036854775808), Bigint},
		{"MOD(x, 4) + d", 5.5, Double},
		{"s || 'd'", "abcd", Varchar},
		{"'it''s' || s", "it'sabc", Varchar},
		{"CASE WHEN x > 5 THEN 1 ELSE 2.5 END", 1.0, Double},
		{"CASE s WHEN 'abc' THEN 'yes' END", "yes", Varchar},
		{"COALESCE(n, x)", int64(7), Bigint},
		{"NULLIF(x, 7)", nil, Bigint},
		{"n IS NULL", int64(1), Boolean},
		{"neg IS TRUE", int64(0), Boolean},
		{"neg IS FALSE", int64(1), Boolean},
		{"n IS NOT FALSE", int64(1), Boolean},
		{"n IS NOT TRUE", int64(1), Boolean},
		{"x BETWEEN SYMMETRIC 9 AND 1", int64(1), Boolean},
		{"x IN (1, 7)", int64(1), Boolean},
		{"__time >= '2000-01-02 03:04:05'", int64(1), Boolean},
		{"__time IN ('2000-01-02T03:04:05Z')", int64(1), Boolean},
		{"CAST(__time AS VARCHAR)", "2000-01-02 03:04:05", Varchar},
		{"CAST(__time AS DATE)", int64(946771200000), Timestamp},
		{"CAST('2000-01-02' AS TIMESTAMP)", int64(946771200000), Timestamp},
		{"FLOOR(__time TO HOUR)", int64(946782000000), Timestamp},
		{"__time + INTERVAL '1' DAY", int64(946868645000), Timestamp},
		{"TIMESTAMPDIFF(HOUR, TIMESTAMP '2000-01-01 00:00:00', __time)", int64(27), Bigint},
		{"TIMESTAMPADD(MONTH, 1, TIMESTAMP '2000-01-31 00:00:00')", int64(951782400000), Timestamp},
		{"EXTRACT(DOW FROM __time)", int64(7), Bigint},
		{"TIME_FLOOR(__time, 'P1D')", int64(946771200000), Timestamp},
		{"SUBSTRING(s FROM 2)", "bc", Varchar},
		{"POSITION('c' IN s)", int64(3), Bigint},
		{"ROUND(d)", 3.0, Double},
		{"GREATEST(x, d)", 7.0, Double},
		{"TRUNCATE(-2.57, 1)", -2.5, Double},
		{"DATE_TRUNC('month', __time)", int64(946684800000), Timestamp},
		{"ARRAY[x, NULL]", "[7 <nil>]", Bigint + ArraySuffix},
		{"ARRAY[NULL, d, x]", "[<nil> 2.5 7]", Double + ArraySuffix},
		{"ARRAY[x, d]", "[7 2.5]", Double + ArraySuffix},
		{"ARRAY[s, x]", "[abc 7]", Varchar + ArraySuffix},
	} {
		got, typ := eval(t, &Env{}, c.sql)
		if fmt.Sprint(got) != fmt.Sprint(c.want) || typ != c.typ {
			t.Errorf("%s = %v (%s), want %v (%s)", c.sql, got, typ, c.want, c.typ)
		}
	}
}

// TestTranslateTimeZone reads literals and floors in the query's time zone.
func TestTranslateTimeZone(t *testing.T) {
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err) // the zone database is embedded (time/tzdata), so this cannot skip
	}
	env := &Env{TZ: loc, TZName: "America/Los_Angeles"}
	// 2000-01-02T03:04:05Z is 2000-01-01T19:04:05-08:00.
	if got, _ := eval(t, env, "TIME_FLOOR(__time, 'P1D')"); got != int64(946713600000) {
		t.Errorf("TIME_FLOOR in Los Angeles = %v", got)
	}
	if got, _ := eval(t, env, "TIMESTAMP '2000-01-01 00:00:00'"); got != int64(946713600000) {
		t.Errorf("TIMESTAMP literal in Los Angeles = %v", got)
	}
}

// TestTranslateErrors: what cannot be translated is a client error.
func TestTranslateErrors(t *testing.T) {
	for _, c := range []struct{ sql, category string }{
		{"nope + 1", CategoryInvalidInput},
		{"UPPER(s, s)", CategoryInvalidInput},
		{"NO_SUCH_FUNCTION(s)", CategoryUnsupported},
		{"s LIKE s", CategoryUnsupported},
		{"__time > 'not a time'", CategoryInvalidInput},
		{"?", CategoryInvalidInput},
		{"x IN (SELECT 1)", CategoryUnsupported},
	} {
		e, err := sql.ParseExpr(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		_, err = Translate(rowScope{}, &Env{}, e)
		var se *Error
		if !errors.As(err, &se) || se.Category != c.category {
			t.Errorf("%s: %v, want a %s error", c.sql, err, c.category)
		}
	}
}
