package sql

import (
	"errors"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"SELECT a, b AS c FROM t WHERE a = 1 GROUP BY 1 ORDER BY 2 DESC LIMIT 5 OFFSET 1",
	"INSERT INTO t SELECT TIME_PARSE(\"ts\") AS __time, * FROM TABLE(EXTERN('{}', '{}', '[]')) PARTITIONED BY DAY CLUSTERED BY a",
	"REPLACE INTO t OVERWRITE WHERE __time >= TIMESTAMP '2000-01-01' SELECT * FROM s PARTITIONED BY 'PT1H'",
	"REPLACE INTO t OVERWRITE ALL SELECT * FROM TABLE(EXTERN(inputSource => ?, inputFormat => '{}')) EXTEND (a VARCHAR ARRAY) PARTITIONED BY FLOOR(__time TO DAY)",
	"EXPLAIN PLAN FOR WITH x AS (SELECT 1) SELECT * FROM x UNION ALL (SELECT 2)",
	"SELECT COUNT(*) FILTER (WHERE a), COUNT(DISTINCT b), SUM(c) OVER (PARTITION BY d ORDER BY e ROWS 1 PRECEDING) FROM t",
	"SELECT CASE WHEN a IS NULL THEN -1 ELSE a END, CAST(b AS DOUBLE), x NOT BETWEEN 1 AND 2, y NOT IN (1, 2), z LIKE 'a%' ESCAPE '!'",
	"SELECT TRIM(LEADING 'x' FROM a), POSITION('a' IN b), SUBSTRING(c FROM 1 FOR 2), EXTRACT(DAY FROM d), TIMESTAMPDIFF(HOUR, e, f)",
	"SELECT INTERVAL '1' DAY, ARRAY[1, 2], a[1], 'it''s', \"q\"\"x\", -- comment\n /* block */ 1e-3",
	"SELECT * FROM a LEFT JOIN b ON a.x = b.x CROSS JOIN c, UNNEST(d) AS u (v)",
	"SET x = 1; SELECT 1;",
	"INSERT INTO EXTERN(s3(bucket => 'b', prefix => 'p')) AS CSV SELECT 1",
}

// FuzzParse checks that no input makes the parser panic or hang, that errors carry a sane
// position, and that whatever parses survives format → parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkErr := func(err error) {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Column < 1 || pe.Offset < 0 || pe.Offset > len(src) {
				t.Fatalf("bad error for %q: %#v", src, err)
			}
		}
		// Formatting may add parentheses (for instance "a = NOT b" prints as "a = (NOT b)"), so
		// input right at the nesting limit can format to text that is just over it.
		tooDeep := func(err error) bool {
			var pe *Error
			return errors.As(err, &pe) && pe.Msg == "Statement is nested too deeply"
		}
		if st, err := Parse(src); err != nil {
			checkErr(err)
		} else {
			Walk(st, func(Node) bool { return true })
			BaseTables(st, func(r *TableRef) bool {
				if len(r.Name) == 0 || r.Position().Line < 1 {
					t.Fatalf("bad table reference in %q: %#v", src, r)
				}
				return true
			})
			if _, err := Parse(Format(st)); !tooDeep(err) {
				checkRoundTrip(t, st)
			}
		}
		if sc, err := ParseScript(src); err != nil {
			checkErr(err)
		} else if sc2, err := ParseScript(Format(sc)); !tooDeep(err) && (err != nil || treeDiff(sc, sc2) != "") {
			t.Fatalf("script round trip of %q: %v", Format(sc), err)
		}
		if e, err := ParseExpr(src); err != nil {
			checkErr(err)
		} else if e2, err := ParseExpr(Format(e)); !tooDeep(err) && (err != nil || treeDiff(e, e2) != "") {
			t.Fatalf("expression round trip of %q via %q: %v", src, Format(e), err)
		}
	})
}

const benchInsert = `INSERT INTO "wikipedia_edits"
SELECT
  TIME_FLOOR(TIME_PARSE("timestamp"), 'PT1M') AS __time,
  "channel", "page", "user", "countryName",
  CASE WHEN "isRobot" = 'true' THEN 1 ELSE 0 END AS robot,
  COUNT(*) AS "count",
  SUM("added") AS added, SUM("deleted") AS deleted, SUM(CAST("delta" AS BIGINT)) AS delta,
  APPROX_COUNT_DISTINCT_DS_HLL("user") AS unique_users
FROM TABLE(
  EXTERN(
    '{"type":"http","uris":["https://example.com/wikipedia.json.gz"]}',
    '{"type":"json"}'
  )
) EXTEND ("timestamp" VARCHAR, "channel" VARCHAR, "page" VARCHAR, "user" VARCHAR, "countryName" VARCHAR,
          "isRobot" VARCHAR, "added" BIGINT, "deleted" BIGINT, "delta" DOUBLE)
WHERE "page" IS NOT NULL AND "channel" LIKE '#en%' -- English only
GROUP BY 1, 2, 3, 4, 5, 6
PARTITIONED BY DAY
CLUSTERED BY "channel", "page"`

func BenchmarkParseInsert(b *testing.B) {
	b.SetBytes(int64(len(benchInsert)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchInsert); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormatInsert(b *testing.B) {
	st, err := Parse(benchInsert)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(st)
	}
}

// TestRoundTripTricky covers inputs whose canonical form differs from the source in ways that
// could change the parse if the formatter were careless.
func TestRoundTripTricky(t *testing.T) {
	for _, src := range []string{
		"SELECT TRIM(BOTH both FROM x), TRIM(\"both\" FROM x), TRIM(LEADING FROM x)",
		"SELECT SUM(a) OVER (ORDER BY b ROWS BETWEEN \"unbounded\" PRECEDING AND \"current\" FOLLOWING) FROM t",
		"SELECT a year, b AS \"year\", c \"select\", timestamp, \"timestamp\" FROM t AS \"extend\"",
		"SELECT \"EXTRACT\"(a, b), \"TRIM\"(a, b), \"FLOOR\"(DISTINCT x), floor(x), \"count\"(*) FROM t",
		"SELECT CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(), \"CURRENT_DATE\", left(s, 1), \"left\" FROM t",
		"SELECT a = NOT b, (a IS NULL) IN (TRUE), - - - 1, +-1, -(-(a)), a - -b, a--comment\n+1 FROM t",
		"SELECT POSITION((a = b) IN c), POSITION((a IN (1)) IN c), x NOT LIKE (a || b) ESCAPE (c) FROM t",
		"SELECT * FROM t WHERE a BETWEEN (b BETWEEN 1 AND 2) AND (c OR d) AND NOT (e IS NOT FALSE)",
		"SELECT * FROM ((SELECT 1) UNION ALL ((SELECT 2) ORDER BY 1)) AS u",
		"SELECT 1 UNION ALL (SELECT 2 UNION ALL SELECT 3) EXCEPT (SELECT 4 INTERSECT SELECT 5)",
		"SELECT 'multi\nline', 'tab\there', 'quote''s', '' FROM \"we\"\"ird\".\"na me\"",
		"SELECT CAST(a AS DOUBLE PRECISION), CAST(b AS CHARACTER VARYING(10)), CAST(c AS ARRAY<ARRAY<BIGINT>>), CAST(d AS TIMESTAMP WITH LOCAL TIME ZONE)",
		"SELECT ? FROM t WHERE a IN (?, ?) LIMIT ? OFFSET ?",
		"SELECT INTERVAL +'1' HOUR, INTERVAL '1 2' DAY TO HOUR, DATE '2020-01-01' + INTERVAL '1' MONTH",
		"SELECT CASE (a) WHEN (1) THEN (2) END, ARRAY[ARRAY[1]], x[1][2], (x)[1], (-x)[1], -x[1] FROM t",
		"SELECT * FROM LATERAL (SELECT 1) AS l (one), t1 NATURAL LEFT JOIN t2, t3 RIGHT JOIN t4 ON TRUE FULL OUTER JOIN t5 USING (k)",
		"SELECT " + strings.Repeat("+", 1500) + "1",
	} {
		mustParse(t, src)
	}
}
