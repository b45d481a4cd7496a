package sql

import (
	"errors"
	"strings"
	"testing"
)

func TestSelectBasics(t *testing.T) {
	s := mustSelect(t, `select DISTINCT page, "User" AS u, added a, t.*, "t"."x" FROM druid.wikipedia AS t`)
	if !s.Distinct || len(s.Columns) != 5 {
		t.Fatalf("distinct=%v columns=%d", s.Distinct, len(s.Columns))
	}
	if col(s.Columns[0].Expr) != "page" || s.Columns[0].Alias != nil {
		t.Errorf("item 0: %s", s.Columns[0])
	}
	if c := s.Columns[1]; col(c.Expr) != `"User"` || c.Alias == nil || c.Alias.Name != "u" {
		t.Errorf("item 1: %s", c)
	}
	if c := s.Columns[2]; c.Alias == nil || c.Alias.Name != "a" {
		t.Errorf("implicit alias: %s", c)
	}
	if st, ok := s.Columns[3].Expr.(*StarExpr); !ok || len(st.Qualifier) != 1 || st.Qualifier[0].Name != "t" {
		t.Errorf("qualified star: %#v", s.Columns[3].Expr)
	}
	if c := s.Columns[4].Expr.(*ColumnRef); len(c.Parts) != 2 || !c.Parts[0].Quoted || c.Column().Name != "x" {
		t.Errorf("qualified column: %#v", c)
	}
	tr := s.From.(*TableRef)
	if len(tr.Name) != 2 || tr.Name[0].Name != "druid" || tr.Name[1].Name != "wikipedia" || tr.Alias.Name != "t" {
		t.Errorf("table: %s", tr)
	}
	if star := mustSelect(t, "SELECT * FROM t").Columns[0].Expr.(*StarExpr); len(star.Qualifier) != 0 {
		t.Errorf("bare star has qualifier")
	}
	if s := mustSelect(t, "SELECT 1 + 1"); s.From != nil {
		t.Errorf("SELECT without FROM has a FROM")
	}
}

func TestIdentifiersKeepCase(t *testing.T) {
	s := mustSelect(t, `SELECT PageName, "camelCase", __time FROM MyTable`)
	want := []Ident{{"PageName", false}, {"camelCase", true}, {"__time", false}}
	for i, w := range want {
		if got := s.Columns[i].Expr.(*ColumnRef).Parts[0]; got != w {
			t.Errorf("column %d: %+v, want %+v", i, got, w)
		}
	}
	if s.From.(*TableRef).Name[0].Name != "MyTable" {
		t.Errorf("table name case lost")
	}
	// Quoted identifiers may contain anything, including doubled quotes and reserved words.
	s = mustSelect(t, `SELECT "a""b", "select", "triple-added" FROM "rollup-tutorial"`)
	if got := s.Columns[0].Expr.(*ColumnRef).Parts[0].Name; got != `a"b` {
		t.Errorf(`escaped quote: %q`, got)
	}
	if got := Format(s); got != `SELECT "a""b", "select", "triple-added" FROM "rollup-tutorial"` {
		t.Errorf("format: %s", got)
	}
}

func TestKeywordsCaseInsensitive(t *testing.T) {
	a := mustParse(t, "select a from t where a is not null group by a order by a desc limit 1")
	b := mustParse(t, "SeLeCt a FrOm t WhErE a Is NoT nUlL gRoUp By a OrDeR bY a DeSc LiMiT 1")
	if d := treeDiff(a, b); d != "" {
		t.Fatal(d)
	}
}

func TestClauses(t *testing.T) {
	q := mustQuery(t, `SELECT page, SUM(added) AS s FROM wiki WHERE continent = 'Asia'
		GROUP BY 1, page HAVING SUM(added) > 10 ORDER BY 2 DESC, page ASC NULLS LAST LIMIT 10 OFFSET 5;`)
	s := q.Body.(*Select)
	if s.Where == nil || s.Having == nil || len(s.GroupBy) != 2 {
		t.Fatalf("clauses missing: %s", s)
	}
	if n, ok := s.GroupBy[0].(*NumberLit); !ok || n.Text != "1" {
		t.Errorf("ordinal: %#v", s.GroupBy[0])
	}
	if len(q.OrderBy) != 2 || !q.OrderBy[0].Desc || q.OrderBy[1].Desc || q.OrderBy[1].Nulls != NullsLast {
		t.Errorf("order by: %+v %+v", q.OrderBy[0], q.OrderBy[1])
	}
	if q.Limit.(*NumberLit).Text != "10" || q.Offset.(*NumberLit).Text != "5" {
		t.Errorf("limit/offset: %s %s", q.Limit, q.Offset)
	}
	q = mustQuery(t, "SELECT a FROM t LIMIT ? OFFSET ?")
	if q.Limit.(*Param).Index != 0 || q.Offset.(*Param).Index != 1 {
		t.Errorf("parameter limit/offset")
	}
	if _, err := Parse("SELECT a FROM t OFFSET 1 LIMIT 2"); err == nil {
		t.Errorf("OFFSET before LIMIT accepted")
	}
}

func TestSetOperations(t *testing.T) {
	q := mustQuery(t, "SELECT a FROM x UNION ALL SELECT a FROM y UNION ALL SELECT a FROM z ORDER BY 1 LIMIT 3")
	top, ok := q.Body.(*SetOp)
	if !ok || !top.All || top.Op != Union {
		t.Fatalf("body: %T", q.Body)
	}
	if _, ok := top.Left.(*SetOp); !ok { // left-associative
		t.Errorf("UNION ALL should associate to the left")
	}
	if len(q.OrderBy) != 1 || q.Limit == nil {
		t.Errorf("ORDER BY / LIMIT should apply to the whole union")
	}
	q = mustQuery(t, "(SELECT a FROM x ORDER BY a LIMIT 1) UNION ALL (SELECT b FROM y)")
	if l, ok := q.Body.(*SetOp).Left.(*Query); !ok || l.Limit == nil {
		t.Errorf("parenthesized branch should keep its own LIMIT")
	}
	q = mustQuery(t, "SELECT 1 UNION SELECT 2 INTERSECT SELECT 3")
	if r, ok := q.Body.(*SetOp).Right.(*SetOp); !ok || r.Op != Intersect {
		t.Errorf("INTERSECT should bind tighter than UNION")
	}
}

func TestWith(t *testing.T) {
	q := mustQuery(t, `WITH a (x, y) AS (SELECT 1, 2), "b" AS (SELECT * FROM a) SELECT * FROM b`)
	if len(q.With) != 2 || q.With[0].Name.Name != "a" || len(q.With[0].Columns) != 2 || !q.With[1].Name.Quoted {
		t.Fatalf("ctes: %+v", q.With)
	}
	ins := mustParse(t, "INSERT INTO t WITH s AS (SELECT * FROM x) SELECT * FROM s PARTITIONED BY DAY").(*Insert)
	if len(ins.Source.With) != 1 {
		t.Errorf("INSERT ... WITH lost its CTE")
	}
}

func TestJoins(t *testing.T) {
	s := mustSelect(t, `SELECT * FROM a INNER JOIN b ON a.k = b.k LEFT OUTER JOIN c ON b.k = c.k
		CROSS JOIN d JOIN e USING (k, j), f`)
	comma := s.From.(*Join)
	if comma.Kind != JoinComma || comma.Right.(*TableRef).Name[0].Name != "f" {
		t.Fatalf("comma join: %s", comma)
	}
	inner := comma.Left.(*Join)
	if inner.Kind != JoinInner || len(inner.Using) != 2 {
		t.Errorf("JOIN ... USING: %s", inner)
	}
	cross := inner.Left.(*Join)
	if cross.Kind != JoinCross || cross.On != nil {
		t.Errorf("CROSS JOIN: %s", cross)
	}
	left := cross.Left.(*Join)
	if left.Kind != JoinLeft || left.On == nil {
		t.Errorf("LEFT JOIN: %s", left)
	}
	first := left.Left.(*Join)
	if first.Kind != JoinInner || first.Left.(*TableRef).Name[0].Name != "a" {
		t.Errorf("INNER JOIN: %s", first)
	}
	d := mustSelect(t, "SELECT * FROM (SELECT a FROM t) AS s (x) NATURAL JOIN u").From.(*Join)
	if !d.Natural || d.Left.(*DerivedTable).Alias.Name != "s" || d.Left.(*DerivedTable).ColumnAliases[0].Name != "x" {
		t.Errorf("derived table / natural join: %s", d)
	}
	u := mustSelect(t, "SELECT v FROM t, UNNEST(MV_TO_ARRAY(tags)) AS x (v)").From.(*Join).Right.(*Unnest)
	if u.Alias.Name != "x" || u.ColumnAliases[0].Name != "v" {
		t.Errorf("unnest: %s", u)
	}
}

func TestExtern(t *testing.T) {
	// Older form: the signature is EXTERN's third argument.
	s := mustSelect(t, `SELECT * FROM TABLE(EXTERN('{"type":"inline","data":"a,1"}', '{"type":"csv"}',
		'[{"name":"a","type":"string"}]'))`)
	tf := s.From.(*TableFunc)
	if !tf.IsExtern() || len(tf.Call.Args) != 3 || tf.Extend != nil {
		t.Fatalf("extern: %s", tf)
	}
	if got := tf.Call.Args[0].(*StringLit).Value; got != `{"type":"inline","data":"a,1"}` {
		t.Errorf("input source: %s", got)
	}
	// Named arguments with an EXTEND list; the EXTEND keyword is optional.
	for _, kw := range []string{"EXTEND", ""} {
		s = mustSelect(t, `SELECT * FROM TABLE(EXTERN(inputSource => '{}', inputFormat => '{"type":"json"}')) `+kw+
			` ("timestamp" VARCHAR, n BIGINT, d DOUBLE PRECISION, tags VARCHAR ARRAY, j TYPE('COMPLEX<json>'), ts TIMESTAMP(3)) AS e`)
		tf = s.From.(*TableFunc)
		if tf.Alias.Name != "e" || len(tf.Extend) != 6 {
			t.Fatalf("extend (%q): %s", kw, tf)
		}
		if na := tf.Call.Args[1].(*NamedArg); na.Name.Name != "inputFormat" {
			t.Errorf("named arg: %s", na)
		}
		types := []string{"VARCHAR", "BIGINT", "DOUBLE", "VARCHAR ARRAY", "TYPE('COMPLEX<json>')", "TIMESTAMP(3)"}
		for i, c := range tf.Extend {
			if got := c.Type.String(); got != types[i] {
				t.Errorf("column %s type %s, want %s", c.Name.Name, got, types[i])
			}
		}
		if tf.Extend[0].Name != (Ident{"timestamp", true}) {
			t.Errorf("column name: %+v", tf.Extend[0].Name)
		}
	}
	// Input-source table functions with array and parameter arguments.
	s = mustSelect(t, `SELECT * FROM TABLE(http(userName => 'bob', uris => ARRAY['http://a/b.csv', ?], format => 'csv'))
		(x VARCHAR, y BIGINT)`)
	tf = s.From.(*TableFunc)
	arr := tf.Call.Args[1].(*NamedArg).Value.(*ArrayLit)
	if tf.IsExtern() || len(arr.Elems) != 2 || arr.Elems[1].(*Param).Index != 0 {
		t.Errorf("http table function: %s", tf)
	}
}

func TestInsert(t *testing.T) {
	ins := mustParse(t, `INSERT INTO "wiki-x"
		SELECT TIME_PARSE("timestamp") AS __time, page, COUNT(*) AS cnt
		FROM TABLE(EXTERN('{}', '{}', '[]'))
		GROUP BY 1, 2
		PARTITIONED BY DAY
		CLUSTERED BY page, LOWER(page) ASC`).(*Insert)
	if len(ins.Table) != 1 || ins.Table[0].Name != "wiki-x" || ins.Export != nil {
		t.Fatalf("target: %+v", ins.Table)
	}
	if ins.PartitionedBy.Form != GranKeyword || ins.PartitionedBy.Period != "P1D" {
		t.Errorf("partitioned by: %+v", ins.PartitionedBy)
	}
	if len(ins.ClusteredBy) != 2 || col(ins.ClusteredBy[0]) != "page" {
		t.Errorf("clustered by: %v", ins.ClusteredBy)
	}
	if len(ins.Source.Body.(*Select).Columns) != 3 {
		t.Errorf("source select")
	}
	exp := mustParse(t, `INSERT INTO EXTERN(local(exportPath => '/tmp/out')) AS CSV SELECT a FROM t`).(*Insert)
	if exp.Export == nil || exp.Export.Destination.Name != "local" || exp.Export.Format.Name != "CSV" ||
		exp.Export.Properties[0] != (ExportProperty{Ident{"exportPath", false}, "/tmp/out"}) || exp.PartitionedBy != nil {
		t.Errorf("export: %+v", exp.Export)
	}
	mustParse(t, "INSERT INTO druid.t (SELECT 1 AS x) PARTITIONED BY ALL")
}

func TestReplace(t *testing.T) {
	r := mustParse(t, "REPLACE INTO t OVERWRITE ALL SELECT * FROM s PARTITIONED BY MONTH").(*Replace)
	if r.OverwriteWhere != nil || r.PartitionedBy.Unit != UnitMonth {
		t.Errorf("overwrite all: %s", r)
	}
	r = mustParse(t, `REPLACE INTO t OVERWRITE WHERE __time >= TIMESTAMP '2019-08-25 02:00:00'
		AND __time < TIMESTAMP '2019-08-25 03:00:00' SELECT * FROM s PARTITIONED BY HOUR CLUSTERED BY a`).(*Replace)
	and, ok := r.OverwriteWhere.(*BinaryExpr)
	if !ok || and.Op != OpAnd {
		t.Fatalf("overwrite where: %s", r.OverwriteWhere)
	}
	lo := and.Left.(*BinaryExpr)
	if lo.Op != OpGe || col(lo.Left) != "__time" || lo.Right.(*TypedLit).Value != "2019-08-25 02:00:00" {
		t.Errorf("lower bound: %s", lo)
	}
	if len(r.ClusteredBy) != 1 {
		t.Errorf("clustered by")
	}
}

func TestPartitionedBy(t *testing.T) {
	cases := []struct {
		g      string
		form   GranularityForm
		period string
		print  string
	}{
		{"HOUR", GranKeyword, "PT1H", "HOUR"},
		{"day", GranKeyword, "P1D", "DAY"},
		{"MONTH", GranKeyword, "P1M", "MONTH"},
		{"YEAR", GranKeyword, "P1Y", "YEAR"},
		{"ALL", GranAll, "", "ALL"},
		{"ALL TIME", GranAll, "", "ALL"},
		{"'P1D'", GranString, "P1D", "'P1D'"},
		{"'PT15M'", GranString, "PT15M", "'PT15M'"},
		{"'day'", GranString, "P1D", "'day'"},
		{"'all'", GranString, "", "'all'"},
		{"TIME_FLOOR(__time, 'PT1H')", GranTimeFloor, "PT1H", "TIME_FLOOR(__time, 'PT1H')"},
		{`time_floor("__time", 'P3M')`, GranTimeFloor, "P3M", "TIME_FLOOR(__time, 'P3M')"},
		{"FLOOR(__time TO DAY)", GranFloor, "P1D", "FLOOR(__time TO DAY)"},
		{"FLOOR(__time TO WEEK)", GranFloor, "P1W", "FLOOR(__time TO WEEK)"},
		{"FLOOR(__time TO QUARTER)", GranFloor, "P3M", "FLOOR(__time TO QUARTER)"},
	}
	for _, c := range cases {
		ins := mustParse(t, "INSERT INTO t SELECT * FROM s PARTITIONED BY "+c.g).(*Insert)
		g := ins.PartitionedBy
		if g.Form != c.form || g.Period != c.period || g.IsAll() != (c.period == "") {
			t.Errorf("%s: form %d period %q", c.g, g.Form, g.Period)
		}
		if got := g.String(); got != c.print {
			t.Errorf("%s: printed %s", c.g, got)
		}
	}
	bad := map[string]string{
		"'PT2H'":                          "Unsupported PARTITIONED BY granularity 'PT2H'",
		"WEEK":                            "Invalid PARTITIONED BY granularity",
		"TIME_FLOOR(ts, 'PT1H')":          "first argument of TIME_FLOOR",
		"TIME_FLOOR(__time, 'DAY')":       "Unsupported PARTITIONED BY granularity 'DAY'",
		"FLOOR(__time TO DECADE)":         "Unsupported PARTITIONED BY granularity FLOOR",
		"FLOOR(x TO DAY)":                 "first argument of FLOOR",
		"CEIL(__time TO DAY)":             "Invalid PARTITIONED BY granularity",
		"TIME_FLOOR(__time, 'PT1H', 'x')": "Invalid PARTITIONED BY granularity",
	}
	for g, want := range bad {
		_, err := Parse("INSERT INTO t SELECT * FROM s PARTITIONED BY " + g)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", g, err, want)
		}
	}
}

func TestIngestErrors(t *testing.T) {
	cases := map[string]string{
		"INSERT INTO t SELECT 1":                                               "INSERT statements must specify a PARTITIONED BY clause at line 1, column 23",
		"REPLACE INTO t OVERWRITE ALL SELECT 1;":                               "REPLACE statements must specify a PARTITIONED BY clause at line 1, column 38",
		"INSERT INTO t (a, b) SELECT 1, 2 PARTITIONED BY DAY":                  "INSERT with a target column list is not supported; columns are matched by name at line 1, column 15",
		"REPLACE INTO t SELECT 1 PARTITIONED BY DAY":                           "REPLACE requires OVERWRITE ALL or OVERWRITE WHERE",
		"REPLACE INTO t OVERWRITE SELECT 1 PARTITIONED BY DAY":                 "REPLACE requires OVERWRITE ALL or OVERWRITE WHERE",
		"INSERT INTO t SELECT a FROM s CLUSTERED BY a PARTITIONED BY DAY":      "CLUSTERED BY must come after PARTITIONED BY at line 1, column 31",
		"INSERT INTO t SELECT a FROM s PARTITIONED BY DAY CLUSTERED BY a DESC": "CLUSTERED BY does not support DESC ordering at line 1, column 65",
		"INSERT INTO t SELECT a FROM s PARTITIONED BY DAY x":                   `Encountered "x" at line 1, column 50`,
		"INSERT INTO EXTERN(local(exportPath => '/x')) SELECT 1":               `Encountered "SELECT" at line 1, column 47. Was expecting "AS".`,
	}
	for src, want := range cases {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got  %v\n want %q", src, err, want)
		}
	}
}

func TestExplainAndScript(t *testing.T) {
	ex := mustParse(t, "EXPLAIN PLAN FOR INSERT INTO t SELECT * FROM s PARTITIONED BY ALL TIME").(*Explain)
	if _, ok := ex.Statement.(*Insert); !ok {
		t.Fatalf("explain wraps %T", ex.Statement)
	}
	if _, err := Parse("EXPLAIN PLAN FOR EXPLAIN PLAN FOR SELECT 1"); err == nil {
		t.Errorf("nested EXPLAIN accepted")
	}
	sc, err := ParseScript("SET finalizeAggregations = false;\nSET maxNumTasks = 5; SET \"sqlTimeZone\" = 'UTC';\nSET x = -1.5;\nSELECT 1;")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Sets) != 4 || sc.Sets[0].Key.Name != "finalizeAggregations" || sc.Sets[0].Value.(*BoolLit).Value {
		t.Fatalf("sets: %s", sc)
	}
	if sc.Sets[1].Value.(*NumberLit).Text != "5" || sc.Sets[2].Value.(*StringLit).Value != "UTC" ||
		sc.Sets[3].Value.String() != "-1.5" {
		t.Errorf("set values: %s", sc)
	}
	if _, ok := sc.Statement.(*Query); !ok {
		t.Errorf("script statement %T", sc.Statement)
	}
	sc2, err := ParseScript(Format(sc))
	if err != nil || treeDiff(sc, sc2) != "" {
		t.Errorf("script round trip: %v %s", err, Format(sc))
	}
	if _, err := Parse("SET a = 1; SELECT 1"); err == nil {
		t.Errorf("Parse accepted SET")
	}
	if _, err := ParseScript("SET a = b; SELECT 1"); err == nil || !strings.Contains(err.Error(), "a literal") {
		t.Errorf("SET with non-literal: %v", err)
	}
	if _, err := ParseScript("SET a = 1 SELECT 1"); err == nil {
		t.Errorf("SET without semicolon accepted")
	}
}

func TestLiterals(t *testing.T) {
	s := mustSelect(t, `SELECT 42, 1.50, .5, 1e3, 2.5E-3, 'it''s', '', TIMESTAMP '2000-01-01 00:00:00',
		DATE '2000-01-02', TIME '12:34:56', INTERVAL '1' DAY, INTERVAL -'1-2' YEAR TO MONTH, TRUE, false, NULL,
		ARRAY[1, 'a', NULL], ARRAY[], ?, ?`)
	get := func(i int) Expr { return s.Columns[i].Expr }
	for i, text := range []string{"42", "1.50", ".5", "1e3", "2.5E-3"} {
		if n := get(i).(*NumberLit); n.Text != text {
			t.Errorf("number %d: %s", i, n.Text)
		}
	}
	if get(5).(*StringLit).Value != "it's" || get(6).(*StringLit).Value != "" {
		t.Errorf("strings")
	}
	if l := get(7).(*TypedLit); l.Kind != TimestampLit || l.Value != "2000-01-01 00:00:00" {
		t.Errorf("timestamp: %s", l)
	}
	if get(8).(*TypedLit).Kind != DateLit || get(9).(*TypedLit).Kind != TimeLit {
		t.Errorf("date/time literals")
	}
	if iv := get(10).(*IntervalLit); iv.Value != "1" || iv.Unit != UnitDay || iv.ToUnit != UnitNone || iv.Negative {
		t.Errorf("interval: %+v", iv)
	}
	if iv := get(11).(*IntervalLit); !iv.Negative || iv.Unit != UnitYear || iv.ToUnit != UnitMonth {
		t.Errorf("interval range: %+v", iv)
	}
	if !get(12).(*BoolLit).Value || get(13).(*BoolLit).Value {
		t.Errorf("booleans")
	}
	if _, ok := get(14).(*NullLit); !ok {
		t.Errorf("null")
	}
	if a := get(15).(*ArrayLit); len(a.Elems) != 3 || len(get(16).(*ArrayLit).Elems) != 0 {
		t.Errorf("arrays")
	}
	if get(17).(*Param).Index != 0 || get(18).(*Param).Index != 1 {
		t.Errorf("parameter indexes")
	}
	n := &NumberLit{Text: "12"}
	if v, err := n.Int64(); err != nil || v != 12 || !n.IsInteger() {
		t.Errorf("Int64: %v %v", v, err)
	}
	if f, err := (&NumberLit{Text: "2.5E-3"}).Float64(); err != nil || f != 0.0025 {
		t.Errorf("Float64: %v %v", f, err)
	}
	// TIMESTAMP/DATE/TIME not followed by a string are ordinary names.
	s = mustSelect(t, "SELECT timestamp, date FROM t")
	if col(s.Columns[0].Expr) != "timestamp" || col(s.Columns[1].Expr) != "date" {
		t.Errorf("timestamp as a column: %s", s)
	}
}

func TestFunctionForms(t *testing.T) {
	s := mustSelect(t, `SELECT COUNT(*), COUNT(DISTINCT "user"), COUNT(*) FILTER (WHERE added > 0),
		FLOOR(__time TO HOUR), CEIL(x TO MONTH), CEILING(x), FLOOR(x), EXTRACT(YEAR FROM __time),
		TIMESTAMPADD(SQL_TSI_DAY, 1, __time), TIMESTAMPDIFF(HOUR, a, b), POSITION('a' IN s FROM 2),
		TRIM(s), TRIM(BOTH 'x' FROM s), TRIM(LEADING FROM s), TRIM('x' FROM s), SUBSTRING(s FROM 2 FOR 3),
		SUBSTRING(s, 2, 3), CAST(x AS BIGINT), CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END,
		CASE x WHEN 1 THEN 'one' END, CURRENT_TIMESTAMP, LEFT(s, 2), REPLACE(s, 'a', 'b'),
		ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING),
		SUM(x) OVER w, x[1] FROM t WINDOW w AS (ORDER BY c RANGE UNBOUNDED PRECEDING)`)
	get := func(i int) Expr { return s.Columns[i].Expr }
	if c := get(0).(*FuncCall); c.Name.Name != "COUNT" || len(c.Args) != 1 {
		t.Errorf("COUNT(*): %s", c)
	} else if _, ok := c.Args[0].(*StarExpr); !ok {
		t.Errorf("COUNT(*) arg %T", c.Args[0])
	}
	if c := get(1).(*FuncCall); !c.Distinct || col(c.Args[0]) != `"user"` {
		t.Errorf("COUNT(DISTINCT): %s", c)
	}
	if c := get(2).(*FuncCall); c.Filter == nil {
		t.Errorf("FILTER: %s", c)
	}
	if f := get(3).(*FloorCeilExpr); f.Ceil || f.Unit != UnitHour || col(f.X) != "__time" {
		t.Errorf("FLOOR TO: %s", f)
	}
	if f := get(4).(*FloorCeilExpr); !f.Ceil || f.Unit != UnitMonth {
		t.Errorf("CEIL TO: %s", f)
	}
	if c := get(5).(*FuncCall); c.Name.Name != "CEILING" || len(c.Args) != 1 {
		t.Errorf("CEILING(x): %s", c)
	}
	if c := get(6).(*FuncCall); c.Name.Name != "FLOOR" {
		t.Errorf("FLOOR(x): %s", c)
	}
	if e := get(7).(*ExtractExpr); e.Unit != UnitYear {
		t.Errorf("EXTRACT: %s", e)
	}
	if e := get(8).(*TimestampArith); e.Diff || e.Unit != UnitDay || e.String() != "TIMESTAMPADD(DAY, 1, __time)" {
		t.Errorf("TIMESTAMPADD: %s", e)
	}
	if e := get(9).(*TimestampArith); !e.Diff || e.Unit != UnitHour {
		t.Errorf("TIMESTAMPDIFF: %s", e)
	}
	if e := get(10).(*PositionExpr); e.Sub.(*StringLit).Value != "a" || col(e.Str) != "s" || e.From == nil {
		t.Errorf("POSITION: %s", e)
	}
	trims := []struct {
		side  TrimSide
		chars bool
		print string
	}{
		{TrimBoth, false, "TRIM(s)"}, {TrimBoth, true, "TRIM(BOTH 'x' FROM s)"},
		{TrimLeading, false, "TRIM(LEADING FROM s)"}, {TrimBoth, true, "TRIM(BOTH 'x' FROM s)"},
	}
	for i, w := range trims {
		e := get(11 + i).(*TrimExpr)
		if e.Side != w.side || (e.Chars != nil) != w.chars || e.String() != w.print {
			t.Errorf("TRIM %d: %s", i, e)
		}
	}
	if e := get(15).(*SubstringExpr); e.For == nil || e.From.(*NumberLit).Text != "2" {
		t.Errorf("SUBSTRING FROM FOR: %s", e)
	}
	if c := get(16).(*FuncCall); len(c.Args) != 3 {
		t.Errorf("SUBSTRING(,,): %s", c)
	}
	if c := get(17).(*CastExpr); c.Type.Name != "BIGINT" {
		t.Errorf("CAST: %s", c)
	}
	if c := get(18).(*CaseExpr); c.Operand != nil || len(c.Whens) != 2 || c.Else == nil {
		t.Errorf("searched CASE: %s", c)
	}
	if c := get(19).(*CaseExpr); c.Operand == nil || len(c.Whens) != 1 || c.Else != nil {
		t.Errorf("simple CASE: %s", c)
	}
	if c := get(20).(*FuncCall); !c.Niladic || c.String() != "CURRENT_TIMESTAMP" {
		t.Errorf("CURRENT_TIMESTAMP: %s", c)
	}
	if c := get(21).(*FuncCall); c.Name.Name != "LEFT" || len(c.Args) != 2 {
		t.Errorf("LEFT(): %s", c)
	}
	if c := get(22).(*FuncCall); c.Name.Name != "REPLACE" || len(c.Args) != 3 {
		t.Errorf("REPLACE(): %s", c)
	}
	w := get(23).(*FuncCall).Over
	if len(w.PartitionBy) != 1 || len(w.OrderBy) != 1 || !w.OrderBy[0].Desc || w.Frame == nil || w.Frame.Range ||
		w.Frame.Start.Kind != Preceding || w.Frame.End.Kind != UnboundedFollowing {
		t.Errorf("OVER spec: %s", w)
	}
	if w := get(24).(*FuncCall).Over; w.Ref == nil || w.Ref.Name != "w" {
		t.Errorf("OVER w: %s", w)
	}
	if ix := get(25).(*IndexExpr); col(ix.X) != "x" {
		t.Errorf("index: %s", ix)
	}
	if len(s.Windows) != 1 || !s.Windows[0].Spec.Frame.Range || s.Windows[0].Spec.Frame.End != nil {
		t.Errorf("WINDOW clause: %s", s)
	}
}

func TestPredicates(t *testing.T) {
	e := mustExpr(t, "a NOT BETWEEN SYMMETRIC 1 AND 2").(*BetweenExpr)
	if !e.Not || !e.Symmetric {
		t.Errorf("between: %+v", e)
	}
	in := mustExpr(t, "a NOT IN (1, 2, 3)").(*InExpr)
	if !in.Not || len(in.List) != 3 || in.Query != nil {
		t.Errorf("in list: %s", in)
	}
	in = mustExpr(t, "a IN (SELECT b FROM t)").(*InExpr)
	if in.Query == nil || in.List != nil {
		t.Errorf("in subquery: %s", in)
	}
	l := mustExpr(t, `name NOT LIKE 'a\%%' ESCAPE '\'`).(*LikeExpr)
	if !l.Not || l.Escape.(*StringLit).Value != `\` || l.Pattern.(*StringLit).Value != `a\%%` {
		t.Errorf("like: %s", l)
	}
	for src, want := range map[string]IsKind{"a IS NULL": IsNull, "a IS NOT TRUE": IsTrue, "a IS FALSE": IsFalse,
		"a IS NOT UNKNOWN": IsUnknown} {
		is := mustExpr(t, src).(*IsExpr)
		if is.What != want || is.Not != strings.Contains(src, "NOT") {
			t.Errorf("%s: %+v", src, is)
		}
	}
	if b := mustExpr(t, "a IS NOT DISTINCT FROM b").(*BinaryExpr); b.Op != OpIsNotDistinctFrom {
		t.Errorf("is not distinct from: %s", b)
	}
	if b := mustExpr(t, "a != b").(*BinaryExpr); b.Op != OpNe || b.String() != "a <> b" {
		t.Errorf("!=: %s", b)
	}
	if x := mustExpr(t, "EXISTS (SELECT 1)"); x.(*ExistsExpr).Query == nil {
		t.Errorf("exists")
	}
	if x := mustExpr(t, "(SELECT MAX(a) FROM t) + 1").(*BinaryExpr); x.Left.(*SubqueryExpr).Query == nil {
		t.Errorf("scalar subquery")
	}
}

func TestComments(t *testing.T) {
	a := mustParse(t, "-- leading comment\nSELECT /* inline\n comment */ a -- trailing\nFROM t /* end */;\n-- after")
	b := mustParse(t, "SELECT a FROM t")
	if d := treeDiff(a, b); d != "" {
		t.Fatal(d)
	}
	if got := mustSelect(t, "SELECT 'a--b', '/*x*/' FROM t").Columns[1].Expr.(*StringLit).Value; got != "/*x*/" {
		t.Errorf("comment inside string: %q", got)
	}
}

func TestErrorPositions(t *testing.T) {
	cases := []struct {
		src          string
		line, column int
		contains     string
	}{
		{"SELECT a,\n  b\nFROM\nWHERE x = 1", 4, 1, `Encountered "WHERE" at line 4, column 1`},
		{"SELECT a\nFROM t\nWHERE x = 1\nGROUP page", 4, 7, `Encountered "page" at line 4, column 7. Was expecting "BY".`},
		{"SELECT a,\nFROM t", 2, 1, `Was expecting one of: "*", an expression.`},
		{"SELECT\n\t'unterminated\nFROM t", 2, 2, "Unterminated string literal at line 2, column 2"},
		{"SELECT \"ünïcode\" FROM t WHERE é = @", 1, 35, `Unexpected character "@" at line 1, column 35`},
		{"SELECT a\r\nFROM t\r\nWHERE (a = 1", 3, 13, `Encountered <EOF> at line 3, column 13. Was expecting ")".`},
		{"SELECT a /* never\nclosed", 1, 10, "Unterminated comment at line 1, column 10"},
		{"SELECT a FROM t LIMIT 'x'", 1, 23, `Was expecting one of: "ALL", a non-negative integer, "?".`},
		{"SELECT CAST(a AS) FROM t", 1, 17, `Was expecting a type name.`},
		{"SELECT EXTRACT(FORTNIGHT FROM x)", 1, 16, "Was expecting a time unit"},
		{"SELECT 1e+ FROM t", 1, 8, "Malformed number 1e+"},
		{"SELECT a FROM t;\nSELECT b FROM t", 2, 1, `Encountered "SELECT" at line 2, column 1. Was expecting <EOF>.`},
		{"", 1, 1, `Encountered <EOF> at line 1, column 1. Was expecting one of: "EXPLAIN", "INSERT", "REPLACE", "SELECT", "WITH", "(".`},
		{"SELECT \"\" FROM t", 1, 8, "Zero-length quoted identifier"},
		{"SELECT a FROM t WHERE b = 1 '" + strings.Repeat("x", 60) + "'", 1, 29, `Encountered "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..." at line 1, column 29`},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v is not *Error", c.src, err)
			continue
		}
		if pe.Line != c.line || pe.Column != c.column {
			t.Errorf("%q: at %d:%d, want %d:%d (%v)", c.src, pe.Line, pe.Column, c.line, c.column, err)
		}
		if !strings.Contains(err.Error(), c.contains) {
			t.Errorf("%q:\n got  %v\n want %q", c.src, err, c.contains)
		}
	}
}

func TestNodePositions(t *testing.T) {
	src := "SELECT a,\n       SUM(b) AS s\nFROM t\nWHERE c > 1"
	s := mustSelect(t, src)
	check := func(what string, n Node, line, column int) {
		t.Helper()
		if p := n.Position(); p.Line != line || p.Column != column || src[p.Offset:][:1] == " " {
			t.Errorf("%s at %d:%d, want %d:%d", what, p.Line, p.Column, line, column)
		}
	}
	check("select", s, 1, 1)
	check("sum", s.Columns[1].Expr, 2, 8)
	check("from", s.From, 3, 6)
	check("where", s.Where, 4, 7)
	check("where rhs", s.Where.(*BinaryExpr).Right, 4, 11)
}

func TestDepthLimit(t *testing.T) {
	deep := strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000)
	if _, err := Parse("SELECT " + deep); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("deep parentheses: %v", err)
	}
	chain := "SELECT " + strings.Repeat("a + ", 5000) + "a"
	if _, err := Parse(chain); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("long operator chain: %v", err)
	}
	if _, err := Parse("SELECT " + strings.Repeat("NOT ", 5000) + "a"); err == nil {
		t.Errorf("deep NOT accepted")
	}
	// Moderate nesting and long flat lists are fine.
	mustParse(t, "SELECT "+strings.Repeat("(", 200)+"1"+strings.Repeat(")", 200))
	mustParse(t, "SELECT "+strings.Repeat("a OR ", 1000)+"a")
	mustParse(t, "SELECT * FROM t WHERE a IN ("+strings.Repeat("1, ", 20000)+"1)")
}
