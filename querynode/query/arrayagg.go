package query

import (
	"fmt"
	"strings"

	"strata/expr"
)

// KindArray is the value kind of an "expression" aggregator that builds an
// array (aggregate.KindArray).
const KindArray = "ARRAY"

// ArrayAgg is an "expression" aggregator in the forms Druid SQL plans
// ARRAY_AGG and STRING_AGG onto: one input column folded into an array with
// array_append (every value) or array_set_add (distinct values), partial
// arrays combined with array_concat or array_set_add_all, and an optional
// finalize expression over the array (bound to "o"). Other folds are
// general expression aggregation, which this engine does not run.
type ArrayAgg struct {
	Field    string
	Distinct bool
	// Elem is the element type from initialValue ("" for "[]": the first
	// value's type).
	Elem         string
	MaxSizeBytes int
	Finalize     *Expression
}

// finalizeIdentifier is the name the finalize expression reads the
// accumulated value by, as Druid binds it.
const finalizeIdentifier = "o"

func parseArrayAgg(o obj, a *Aggregator) error {
	fields, _, err := o.strings("fields")
	if err != nil {
		return err
	}
	if len(fields) != 1 {
		return Errorf(Unsupported, "%s [%s]: only one input field is supported by this engine, got %d", o.what, a.Name, len(fields))
	}
	acc, err := o.strDefault("accumulatorIdentifier", "__acc")
	if err != nil {
		return err
	}
	ag := &ArrayAgg{Field: fields[0]}
	fold, err := o.reqStr("fold")
	if err != nil {
		return err
	}
	combine, err := o.strDefault("combine", "")
	if err != nil {
		return err
	}
	same := func(src, fn, x, y string) bool {
		e, err := expr.Compile(src)
		if err != nil {
			return false
		}
		want, err := expr.Compile(fmt.Sprintf("%s(%s, %s)", fn, quoteIdent(x), quoteIdent(y)))
		return err == nil && e.String() == want.String()
	}
	switch {
	case same(fold, "array_append", acc, ag.Field):
		if combine != "" && !same(combine, "array_concat", acc, a.Name) {
			return unsupportedFold(o, a)
		}
	case same(fold, "array_set_add", acc, ag.Field):
		ag.Distinct = true
		if combine != "" && !same(combine, "array_set_add_all", acc, a.Name) {
			return unsupportedFold(o, a)
		}
	default:
		return unsupportedFold(o, a)
	}
	for _, key := range []string{"initialValue", "initialCombineValue"} {
		init, err := o.strDefault(key, "[]")
		if err != nil {
			return err
		}
		elem, ok := emptyArrayElem(init)
		if !ok {
			return Errorf(Unsupported, "%s [%s]: %s [%s] is not supported by this engine (only an empty array)", o.what, a.Name, key, init)
		}
		if elem != "" {
			ag.Elem = elem
		}
	}
	n, err := o.integer("maxSizeBytes", 1024)
	if err != nil {
		return err
	}
	if n < 1 || n > 1<<30 {
		return Invalidf("%s [%s]: maxSizeBytes out of range", o.what, a.Name)
	}
	ag.MaxSizeBytes = int(n)
	if f, ok, err := o.str("finalize"); err != nil {
		return err
	} else if ok && f != "" {
		if ag.Finalize, err = CompileExpression(f); err != nil {
			return err
		}
	}
	// Read to be checked: they decide how nulls reach the fold, which the
	// two supported folds define (nulls are appended; a group without
	// input is null).
	for _, key := range []string{"isNullUnlessAggregated", "shouldAggregateNullInputs", "shouldCombineAggregateNullInputs"} {
		if _, err := o.boolean(key, true); err != nil {
			return err
		}
	}
	if _, _, err := o.str("compare"); err != nil {
		return err
	}
	a.Array = ag
	return nil
}

func unsupportedFold(o obj, a *Aggregator) error {
	return Errorf(Unsupported, "%s [%s]: only the array_append and array_set_add folds (with array_concat and array_set_add_all combines) are supported by this engine", o.what, a.Name)
}

// emptyArrayElem reads an initial value that is an empty array: "[]" or
// "ARRAY<T>[]"; elem is T's aggregate element type ("" for "[]").
func emptyArrayElem(src string) (string, bool) {
	s := strings.ReplaceAll(strings.TrimSpace(src), " ", "")
	if s == "[]" {
		return "", true
	}
	// Druid SQL writes "<LONG>[]"; "ARRAY<LONG>[]" is the same literal.
	switch strings.TrimPrefix(strings.ToUpper(s), "ARRAY") {
	case "<LONG>[]":
		return "LONG", true
	case "<DOUBLE>[]", "<FLOAT>[]":
		return "DOUBLE", true
	case "<STRING>[]":
		return "STRING", true
	}
	return "", false
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// FinalizeIdentifier is the name a finalize expression reads the array by.
func (ag *ArrayAgg) FinalizeIdentifier() string { return finalizeIdentifier }
