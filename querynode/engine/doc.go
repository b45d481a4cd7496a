// Package engine executes native queries (package querynode/query) over
// segments (package storage/segment): per segment, vectorized over
// column blocks, filters answered from bitmap indexes where possible and
// grouping done on dictionary ids; partial results are merged by a pure
// function (so a broker can merge data servers' partials) and rendered as
// Druid renders them.
//
// # The operator pipeline
//
// A query type is a queryType (plan.go): how it runs on one segment, how
// its partials merge, how the merged partial renders. Run calls the first
// on every segment in parallel, then Merge, then Finalize.
//
// On one segment, a query is a segQuery: its columns (columns: physical,
// virtual and missing columns resolved into block readers, numSource and
// keySource, each decoding a block once), its filters (filterEval) and the
// rows of its intervals. Most query types run it as a pipeline of
// operators, pulled a batch at a time as in CockroachDB's colexec:
//
//	blockSource → filterOp → sink
//
// The stages:
//
//   - Batch: the rows of one column block, a dense range [From, To) or a
//     selection vector Sel. Values are read by block index through the
//     columns, so a batch carries no copies.
//   - Operator{Init, Next() Batch}: blockSource is the cursor, yielding the
//     rows of a selection (row ranges of the query intervals, or a bitmap)
//     a block at a time and checking for cancellation between blocks;
//     filterOp refines its input's batches with rowFilters.
//   - Filters split at the top (filterEval.split): those answered from
//     bitmap indexes, and and/or/not of them, are evaluated into the
//     bitmap the source walks; row filters (numeric ranges, decided per
//     block from statistics where possible; expressions; column
//     comparisons) refine each batch in order. Under or and not, and for
//     filtered aggregators, row filters are collected into bitmaps.
//   - sink: the last stage consumes batches. The aggregate stage
//     (aggregates) folds a batch's rows into the grouped partial state of
//     the query's aggregators through segAgg (grow, add, finish, state;
//     the aggregator implementations live in package aggregate). The
//     timeseries sink sends each time bucket's rows to one group; the
//     grouper (groupBy, topN) assigns each row its group from dictionary
//     ids; the search sink counts values; scan collects row numbers.
//
// A query on a join data source (query.Join) runs one more stage first,
// the join stage (join.go): a segment of the left side is read within the
// query intervals, its rows hash-joined with each clause's right side (rows
// the broker shipped with the query; each right side's hash table is built
// once per query), and the joined rows materialized as an in-memory segment
// with the left segment's id and interval, over which the pipeline above
// runs unchanged. Left columns keep their names, right columns carry the
// clause's prefix. The stage materializes rather than streams because a
// join changes the rows a batch addresses: a batch is positions in one
// segment's blocks, which joined rows do not have. Most joins never get
// there: when each clause's right keys are unique strings (a dimension
// table, a lookup), the query is rewritten over the left side alone
// (joinlookup.go), its right columns virtual columns looking their values
// up by the key (evaluated once per key value where the key is a
// dictionary column, exprdict.go) and an INNER join a filter on the key's
// presence.
//
// Interfaces are called once per block; every per-row loop is a tight
// loop over a block's arrays. A new query type composes these stages in
// its segment plan and adds a merge and a finalize to queryTypeOf.
package engine
