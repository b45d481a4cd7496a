package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A table is what the people-facing commands (query, datasources, segments,
// tasks, supervisors) print: named columns and rows of JSON values, in the
// order the cluster answered them.
type table struct {
	cols []string
	rows [][]any
}

// ordered is a JSON object with its keys in the order they were written
// (Go maps forget it, and a table's columns should not be shuffled).
type ordered struct {
	keys []string
	vals map[string]any
}

// decodeOrdered decodes one JSON value: objects as *ordered, numbers as
// json.Number (a long stays exact).
func decodeOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		if d == '[' {
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		obj := &ordered{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := obj.vals[k]; !dup {
				obj.keys = append(obj.keys, k)
			}
			obj.vals[k] = v
		}
		_, err := dec.Token()
		return obj, err
	}
	return tok, nil
}

// MarshalJSON writes the object back with its keys in order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// tableOfObjects makes a table of a list of objects: nested objects are
// flattened into dotted columns (properties.segments.count), and columns
// appear in the order first seen. With want, only those columns that some
// row has are shown, in want's order (all of them when none is present).
func tableOfObjects(list []any, want ...string) table {
	var t table
	seen := map[string]bool{}
	flat := make([]map[string]any, 0, len(list))
	for _, item := range list {
		m := map[string]any{}
		if o, ok := item.(*ordered); ok {
			flatten("", o, m, func(k string) {
				if !seen[k] {
					seen[k] = true
					t.cols = append(t.cols, k)
				}
			})
		} else {
			if !seen["value"] {
				seen["value"] = true
				t.cols = append(t.cols, "value")
			}
			m["value"] = item
		}
		flat = append(flat, m)
	}
	var picked []string
	for _, c := range want {
		if seen[c] {
			picked = append(picked, c)
		}
	}
	if len(picked) > 0 || len(list) == 0 {
		// Chosen columns read by their last name (count, not
		// properties.segments.count); an empty list still shows them.
		t.cols = shortNames(picked)
		if len(list) == 0 {
			t.cols = shortNames(want)
		}
	} else {
		picked = t.cols
	}
	for _, m := range flat {
		row := make([]any, len(picked))
		for i, c := range picked {
			row[i] = m[c]
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// shortNames are dotted names by their last part where that is unique.
func shortNames(names []string) []string {
	last := func(n string) string { return n[strings.LastIndexByte(n, '.')+1:] }
	count := map[string]int{}
	for _, n := range names {
		count[last(n)]++
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if count[last(n)] == 1 {
			out[i] = last(n)
		}
	}
	return out
}

func flatten(prefix string, o *ordered, into map[string]any, col func(string)) {
	for _, k := range o.keys {
		name := prefix + k
		if sub, ok := o.vals[k].(*ordered); ok && len(sub.keys) > 0 {
			flatten(name+".", sub, into, col)
			continue
		}
		col(name)
		into[name] = o.vals[k]
	}
}

// cell is how a value reads in a table or CSV: strings bare, null as null,
// lists and objects as compact JSON.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func isNumber(v any) bool {
	_, ok := v.(json.Number)
	return ok
}

// write prints t in format: "table" (aligned columns, numbers to the right),
// "csv" (a header line, then RFC 4180 rows) or "json" (a list of objects,
// columns in order).
func (t table) write(w io.Writer, format string) error {
	// Every row has one cell per column (the builders make them so); a
	// row of another length would index past its end below.
	for i, r := range t.rows {
		if len(r) != len(t.cols) {
			fixed := make([]any, len(t.cols))
			copy(fixed, r)
			t.rows[i] = fixed
		}
	}
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(t.cols)
		for _, r := range t.rows {
			rec := make([]string, len(r))
			for i, v := range r {
				rec[i] = cell(v)
				if v == nil {
					rec[i] = ""
				}
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	case "json":
		list := make([]*ordered, len(t.rows))
		for i, r := range t.rows {
			o := &ordered{keys: t.cols, vals: map[string]any{}}
			for j, c := range t.cols {
				o.vals[c] = r[j]
			}
			list[i] = o
		}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	width := make([]int, len(t.cols))
	for i, c := range t.cols {
		width[i] = utf8.RuneCountInString(c)
	}
	cells := make([][]string, len(t.rows))
	for r, row := range t.rows {
		cells[r] = make([]string, len(row))
		for i, v := range row {
			// One line per row: a newline inside a value would break the columns.
			s := strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(cell(v))
			cells[r][i] = s
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	line := func(vals []string, right func(int) bool) {
		var b strings.Builder
		for i, s := range vals {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			if right(i) {
				b.WriteString(pad + s)
			} else if i < len(vals)-1 {
				b.WriteString(s + pad)
			} else {
				b.WriteString(s)
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(t.cols, func(int) bool { return false })
	rule := make([]string, len(t.cols))
	for i := range rule {
		rule[i] = strings.Repeat("-", width[i])
	}
	line(rule, func(int) bool { return false })
	for r, row := range t.rows {
		line(cells[r], func(i int) bool { return isNumber(row[i]) })
	}
	return nil
}

// checkFormat checks --format.
func checkFormat(f string) error {
	switch f {
	case "table", "json", "csv":
		return nil
	}
	return usagef("--format %q: want table, json or csv", f)
}
