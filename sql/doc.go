// Package sql parses the SQL dialect Druid accepts for queries and SQL-based ingestion
// (multi-stage query): SELECT with WITH, joins, UNION ALL, window functions and Druid's
// TABLE(EXTERN(...)) EXTEND (...) sources; INSERT INTO ... PARTITIONED BY ... CLUSTERED BY ...;
// REPLACE INTO ... OVERWRITE ALL | OVERWRITE WHERE ...; EXPLAIN PLAN FOR; and leading
// SET key = value; statements (ParseScript).
//
// The parser is hand-written recursive descent over a token slice, with Calcite's operator
// precedence. It builds a typed syntax tree (see Statement, QueryBody, TableExpr, Expr) and
// evaluates nothing: name resolution, typing and planning belong to later stages. Identifiers
// keep the case they were written in. Errors are *Error values that carry the line and column of
// the offending token and, for syntax errors, what would have been accepted there.
//
// Format prints any node as canonical one-line SQL that parses back to the same tree; Walk
// visits a tree depth-first.
package sql
