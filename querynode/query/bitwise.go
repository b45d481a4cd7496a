package query

import (
	"fmt"
	"strconv"
	"strings"

	"strata/expr"
)

// bitwiseFolds maps the expression functions of a bitwise fold to the
// aggregate operation (aggregate.OpBit*).
var bitwiseFolds = map[string]string{"bitwiseAnd": "bitAnd", "bitwiseOr": "bitOr", "bitwiseXor": "bitXor"}

// parseBitwiseAgg reads an "expression" aggregator in the form Druid SQL
// plans BIT_AND, BIT_OR and BIT_XOR onto: one long field folded with
// fold = bitwiseAnd|Or|Xor("__acc", field) from a long initialValue,
// partials combined by the same function. ok is false when the fold is not
// of that form (the aggregator is then read as an array one).
func parseBitwiseAgg(o obj, a *Aggregator) (ok bool, err error) {
	fold, _, err := o.str("fold")
	if err != nil {
		return false, err
	}
	fn, _, _ := strings.Cut(strings.TrimSpace(fold), "(")
	op := bitwiseFolds[strings.TrimSpace(fn)]
	if op == "" {
		return false, nil
	}
	fields, _, err := o.strings("fields")
	if err != nil {
		return true, err
	}
	if len(fields) != 1 {
		return true, Errorf(Unsupported, "%s [%s]: a bitwise fold of one field is supported by this engine, got %d fields", o.what, a.Name, len(fields))
	}
	acc, err := o.strDefault("accumulatorIdentifier", "__acc")
	if err != nil {
		return true, err
	}
	same := func(src, x, y string) bool {
		e, err := expr.Compile(src)
		if err != nil {
			return false
		}
		want, err := expr.Compile(fmt.Sprintf("%s(%s, %s)", fn, quoteIdent(x), quoteIdent(y)))
		return err == nil && e.String() == want.String()
	}
	if !same(fold, acc, fields[0]) {
		return true, Errorf(Unsupported, "%s [%s]: fold [%s] is not supported by this engine (only %s(%s, %s))", o.what, a.Name, fold, fn, quoteIdent(acc), quoteIdent(fields[0]))
	}
	if combine, ok, err := o.str("combine"); err != nil {
		return true, err
	} else if ok && combine != "" && !same(combine, acc, a.Name) {
		return true, Errorf(Unsupported, "%s [%s]: combine [%s] is not supported by this engine (only %s(%s, %s))", o.what, a.Name, combine, fn, quoteIdent(acc), quoteIdent(a.Name))
	}
	init, err := o.strDefault("initialValue", "0")
	if err != nil {
		return true, err
	}
	if a.BitInit, err = strconv.ParseInt(strings.TrimSpace(init), 10, 64); err != nil {
		return true, Errorf(Unsupported, "%s [%s]: initialValue [%s] of a bitwise fold must be a long", o.what, a.Name, init)
	}
	for _, key := range []string{"isNullUnlessAggregated", "shouldAggregateNullInputs", "shouldCombineAggregateNullInputs"} {
		if _, err := o.boolean(key, true); err != nil {
			return true, err
		}
	}
	for _, key := range []string{"initialCombineValue", "compare", "finalize"} {
		if _, _, err := o.str(key); err != nil {
			return true, err
		}
	}
	if _, err := o.integer("maxSizeBytes", 1024); err != nil {
		return true, err
	}
	a.FieldName, a.Bitwise = fields[0], op
	return true, nil
}
