// Package msq is the execution engine of SQL-based ingestion (Druid's
// multi-stage query): INSERT, REPLACE ... OVERWRITE ALL | WHERE, and SELECT
// run as a task, with Druid's "multiStageQuery" report.
//
// Run parses a statement (package sql), plans it into stages and runs them
// in process, each stage on up to maxNumTasks-1 goroutine workers:
//
//   - scan stages read splits (files of an EXTERN input source, visible
//     segments of a datasource, or partitions of an earlier stage) and apply
//     row operators: WHERE filters and projections, which stay inside the
//     stage across sub-queries and UNION ALL branches. A large local file
//     is decoded in newline-aligned byte ranges by one goroutine per core,
//     which also apply the operators and encode the rows; the worker takes
//     the ranges in file order, so results are those of a single reader;
//   - GROUP BY is a pre-shuffle stage (partial aggregation per worker,
//     hash-partitioned by the group key) and a post-shuffle stage (merge,
//     HAVING, projection);
//   - ORDER BY ... LIMIT / OFFSET is a single-worker sort stage;
//   - INSERT and REPLACE end with a segment generator: rows are partitioned
//     by time chunk (PARTITIONED BY), sorted by CLUSTERED BY, cut into
//     segments of rowsPerSegment rows, written with the storage writer,
//     uploaded, and published atomically with tombstones for emptied chunks.
//
// SQL expressions are translated to Druid native expressions and evaluated
// by package expr, the way Druid plans virtual columns, so functions behave
// like Druid's. Aggregators (COUNT, SUM, MIN, MAX, AVG, EARLIEST/LATEST[_BY],
// ANY_VALUE, APPROX_COUNT_DISTINCT[_DS_HLL|_DS_THETA], DS_HLL, DS_THETA) keep
// their state in arrays per group; with finalizeAggregations=false the
// outermost GROUP BY of an ingestion stores intermediate values (sketches,
// first/last pairs) as rollup metrics.
//
// Rows travel between stages as frames of encoded values, kept in memory up
// to a budget and spilled to a temporary file beyond it. The cluster is
// reached through Env (segments, deep storage, publishing), so the engine
// runs the same in a server and in tests (see package msqtest).
package msq
