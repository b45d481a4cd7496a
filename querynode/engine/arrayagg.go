package engine

import (
	"bytes"
	"encoding/json"
	"errors"

	"strata/aggregate"
	"strata/expr"
	"strata/querynode/query"
)

// arrayAgg feeds an array state (the "expression" aggregator's
// ARRAY_AGG/STRING_AGG forms) with the value of its input column, row by
// row: nulls included, numbers as numbers, strings as strings.
type arrayAgg struct {
	rc    *columns
	st    *AggState
	field string
}

func (rc *columns) newArrayAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	return &arrayAgg{rc: rc, st: st, field: a.Base().Array.Field}, nil
}

func (a *arrayAgg) state() *AggState { return a.st }
func (a *arrayAgg) grow(n int)       { a.st.Grow(n) }
func (a *arrayAgg) finish() error    { return nil }

func (a *arrayAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}
	bind := &rowBindings{cols: a.rc, b: b}
	return rows.Each(func(k, i int) error {
		bind.i = i
		v := bind.Get(a.field)
		if bind.err != nil {
			return bind.err
		}
		return arrayErr(a.st.AddValue(rows.Group(k), exprAny(v)))
	})
}

// exprAny is an input value as the array state takes it; a multi-value
// row is its string form.
func exprAny(v expr.Value) any {
	if v.IsNull() {
		return nil
	}
	switch v.Type() {
	case expr.TypeLong:
		return v.Long()
	case expr.TypeDouble:
		return v.Double()
	case expr.TypeString:
		return v.Str()
	}
	s, _ := v.AsString()
	return s
}

// arrayErr reports an array grown past its maxSizeBytes as a resource
// limit, as Druid fails such a query.
func arrayErr(err error) error {
	var se *aggregate.SizeError
	if errors.As(err, &se) {
		return query.Errorf(query.ResourceLimit, "%s", se.Error())
	}
	return err
}

// arrayValue is an array result as a value (its JSON text).
func arrayValue(arr []any) Value {
	return Value{K: KArray, S: string(aggregate.AppendArrayJSON(nil, arr))}
}

// arrayToExpr reads an array value's JSON text back as an expression
// array, for post-aggregators and filters over it: integers make a long
// array, other numbers a double array, anything else a string array.
func arrayToExpr(s string) expr.Value {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var elems []any
	if err := dec.Decode(&elems); err != nil {
		return expr.Null
	}
	typ := expr.TypeUnknown
	for _, e := range elems {
		t := expr.TypeString
		if n, ok := e.(json.Number); ok {
			t = expr.TypeDouble
			if _, err := n.Int64(); err == nil {
				t = expr.TypeLong
			}
		} else if e == nil {
			continue
		}
		switch {
		case typ == expr.TypeUnknown, typ == expr.TypeLong && t == expr.TypeDouble:
			typ = t
		case typ != t && !(typ == expr.TypeDouble && t == expr.TypeLong):
			typ = expr.TypeString
		}
	}
	if typ == expr.TypeUnknown {
		typ = expr.TypeString
	}
	out := make([]expr.Value, len(elems))
	for k, e := range elems {
		switch x := e.(type) {
		case nil:
			out[k] = expr.NullOf(typ)
		case json.Number:
			switch typ {
			case expr.TypeLong:
				n, _ := x.Int64()
				out[k] = expr.Long(n)
			case expr.TypeDouble:
				f, _ := x.Float64()
				out[k] = expr.Double(f)
			default:
				out[k] = expr.String(x.String())
			}
		case string:
			out[k] = expr.String(x)
		default:
			b, _ := json.Marshal(x)
			out[k] = expr.String(string(b))
		}
	}
	return expr.Array(typ.ArrayOf(), out)
}

// exprArrayValue is an expression array as a value.
func exprArrayValue(v expr.Value) Value {
	elems := v.Elems()
	arr := make([]any, len(elems))
	for k, e := range elems {
		arr[k] = exprAny(e)
	}
	return arrayValue(arr)
}
