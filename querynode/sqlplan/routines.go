package sqlplan

import (
	"maps"
	"slices"

	"strata/sqlexpr"
)

// Function is one SQL function the planner plans, as
// INFORMATION_SCHEMA.ROUTINES lists it.
type Function struct {
	Name       string
	Aggregator bool
}

// callForms are the functions translator.call plans itself, before its
// tables (scalarFns, arrayFns, postFns).
var callForms = []string{"MOD", "NULLIF", "SUBSTRING", "SUBSTR", "STRPOS", "POSITION", "FLOOR", "CEIL",
	"TIME_EXTRACT", "LOOKUP", "DATE_TRUNC"}

// keywordForms are functions SQL writes with keywords inside the
// parentheses, which the parser reads as their own expressions.
var keywordForms = []string{"CAST", "EXTRACT", "TIMESTAMPADD", "TIMESTAMPDIFF"}

// plannedAggregates are the aggregates addAggregate plans itself, before
// its tables (arrayAggNames, aggBuilders).
var plannedAggregates = []string{"COUNT", "SUM", "MIN", "MAX", "AVG", "APPROX_COUNT_DISTINCT",
	"APPROX_COUNT_DISTINCT_BUILTIN", "APPROX_COUNT_DISTINCT_DS_HLL", "APPROX_COUNT_DISTINCT_DS_THETA",
	"EARLIEST", "LATEST", "EARLIEST_BY", "LATEST_BY", "ANY_VALUE"}

// Functions lists the functions the planner plans, by name: the scalar
// functions and the aggregates (names Druid knows but the planner refuses
// are not listed).
func Functions() []Function {
	fns := map[string]bool{} // name → aggregator
	for _, n := range callForms {
		fns[n] = false
	}
	for _, n := range keywordForms {
		fns[n] = false
	}
	for _, n := range sqlexpr.FunctionNames() {
		fns[n] = false
	}
	for n := range arrayFns {
		fns[n] = false
	}
	for n := range postFns {
		fns[n] = false
	}
	for _, n := range plannedAggregates {
		fns[n] = true
	}
	for n := range aggBuilders {
		fns[n] = true
	}
	for n := range arrayAggNames {
		fns[n] = true
	}
	out := make([]Function, 0, len(fns))
	for _, n := range slices.Sorted(maps.Keys(fns)) {
		out = append(out, Function{Name: n, Aggregator: fns[n]})
	}
	return out
}
