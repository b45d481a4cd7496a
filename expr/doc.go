// Package expr implements Druid's native expression language, the language
// of expression virtual columns, expression filters, post-aggregators and
// ingestion transforms (Druid's docs/querying/math-expr.md).
//
// An expression is compiled once and evaluated per row:
//
//	e, err := expr.Compile(`concat(page, '-', added - deleted)`)
//	cols := e.RequiredColumns()   // ["page", "added", "deleted"]
//	v, err := e.Eval(bindings)    // bindings.Get(name) supplies each column
//
// Values are typed (LONG, DOUBLE, STRING, ARRAY<LONG|DOUBLE|STRING>) and may
// be null. The rules follow Druid in SQL-compatible null mode:
//
//   - long op long is a long (wrapping on overflow; / truncates; / and % by
//     zero fail with "/ by zero"), any double makes the result a double;
//   - string + string concatenates; a string meeting a number is read as a
//     number (unparsable strings give null); other operators on two strings
//     fail;
//   - any null operand gives null, except && and || which use three-valued
//     logic (false && null = 0, true || null = 1);
//   - booleans are LONG 1/0; numbers are true when > 0, strings when they
//     equal "true" ignoring case;
//   - doubles convert to strings like Java's Double.toString (1.0E7).
//
// Operator precedence, highest first: unary - and !, ^ (right associative),
// * / %, + -, comparisons, then && and || (same level, left associative).
//
// Expressions over numeric columns can also run vectorized: Vectorize builds
// a VectorProgram evaluating batches of []int64/[]float64 columns with null
// bitmaps without allocating, with results identical to Eval.
//
// Not supported: COMPLEX<json> values and the json_* functions,
// bloom_filter_test, nested arrays, and the implicit mapping of scalar
// functions over multi-value string columns (use map() explicitly).
package expr
