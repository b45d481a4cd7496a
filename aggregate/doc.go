// Package aggregate is Strata's one family of aggregators: the native query
// engine, SQL ingestion's GROUP BY and the segment writer's rollup all keep
// their per-group state in a State and fold rows into it through the
// functions here.
//
// A State is columnar: group g's state is element g of the slices its kind
// uses. Its life is
//
//   - New (init): the state of n groups, each at the aggregator's identity;
//   - Grow: more groups;
//   - the vectorized adds over one column block (AddCount, AddLongs,
//     AddDoubles, the first/last and sketch adds), which take the block's
//     rows as a Rows (a dense range or a selection vector, going to one
//     group or to a group per row); the caller reads the columns and
//     evaluates filters and expressions, this package only folds arrays;
//   - Finish, once the rows of a source are added;
//   - Combine (merge of partial states, across segments, workers and
//     servers);
//   - Result (finalize to Druid's values, or the intermediate sketch);
//   - the serialized intermediate form: MarshalJSON/UnmarshalJSON for the
//     broker↔historical wire (docs/subquery-wire-format.md), and
//     AppendIntermediate/MergeIntermediate for the stored complex values
//     (the blob formats of aggregate/blob, byte-compatible with Druid's;
//     the quantiles sketch itself is aggregate/quantiles).
//
// Java/Druid semantics are kept here: nulls (SQL-compatible: an aggregate
// of no non-null input is null), NaN winning min and max, -0 below +0,
// float aggregators widened to double, strings cut to maxStringBytes
// without splitting a character.
//
// The package (with its blob and quantiles subpackages) is a leaf below
// storage: it imports no storage, query or ingestion code
// (internal/layout checks it), so the segment writer can use it.
package aggregate
