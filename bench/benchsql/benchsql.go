// Package benchsql holds the ten benchmark queries of ../shared/bench in
// Druid SQL, beside their native form there: make bench-query runs both,
// and sqlplan's planning benchmark plans these.
package benchsql

// Query is one benchmark query in Druid SQL.
type Query struct {
	ID, SQL string
}

// week is the bench data set's seven days.
const week = `__time >= TIMESTAMP '2024-01-01 00:00:00' AND __time < TIMESTAMP '2024-01-08 00:00:00'`

// Queries are Q1..Q10, each answering what queries.json's native query does.
var Queries = []Query{
	{"Q1", `SELECT COUNT(*) AS c, SUM(added) AS s FROM wiki WHERE ` + week},
	{"Q2", `SELECT FLOOR(__time TO HOUR) AS h, COUNT(*) AS c, SUM(added) AS s FROM wiki WHERE ` + week + ` GROUP BY 1 ORDER BY 1`},
	{"Q3", `SELECT channel, SUM(added) AS s FROM wiki WHERE ` + week + ` GROUP BY channel ORDER BY s DESC LIMIT 10`},
	{"Q4", `SELECT page, COUNT(*) AS c FROM wiki WHERE ` + week + ` GROUP BY page ORDER BY c DESC LIMIT 10`},
	{"Q5", `SELECT country, isRobot, COUNT(*) AS c, SUM(delta) AS d FROM wiki WHERE ` + week + ` GROUP BY country, isRobot ORDER BY c DESC, country, isRobot LIMIT 20`},
	{"Q6", `SELECT COUNT(*) AS c, SUM(added) AS s FROM wiki WHERE ` + week + ` AND channel = '#ch07' AND isRobot = 'false'`},
	{"Q7", `SELECT "user", SUM(added) AS s FROM wiki WHERE ` + week + ` GROUP BY "user" ORDER BY s DESC, "user" LIMIT 10`},
	{"Q8", `SELECT APPROX_COUNT_DISTINCT("user") AS u FROM wiki WHERE ` + week},
	{"Q9", `SELECT COUNT(*) AS c FROM wiki WHERE ` + week + ` AND "user" = 'user0004242'`},
	{"Q10", `SELECT FLOOR(__time TO DAY) AS d, channel, COUNT(*) AS c FROM wiki WHERE ` + week + ` AND country IN ('C001', 'C002', 'C003') AND added > 100 GROUP BY 1, 2 ORDER BY 1, 2`},
}
