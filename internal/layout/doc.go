// Package layout has no code: its test, deps_test.go, holds the import rules
// between Strata's planes (as CockroachDB's dep_test.go files do), so that a
// change that makes, say, the query engine import the Raft state machine fails
// in `make test` instead of growing unnoticed.
package layout
