package main

// Expected results of the druid-sql corpus are MySQL-style boxed tables
// (outputformat mysql); actual results come back from /svc/v2/sql as JSON
// and are rendered the way Druid's JDBC driver prints them (getString), so
// both sides compare as trimmed cell text.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// boxTable is a result as text cells.
type boxTable struct {
	Columns []string
	Rows    [][]string
}

var rowCount = regexp.MustCompile(`^\((\d+) rows?\)$`)

// parseBoxTable reads a boxed table: border, header, border, rows, border,
// "(N rows)". Cells are cut at the border's '+' positions, not split on '|',
// because values may contain '|'.
func parseBoxTable(lines []string) (*boxTable, error) {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) < 5 {
		return nil, fmt.Errorf("%d lines, want at least 5", len(lines))
	}
	border := []rune(lines[0])
	if len(border) < 2 || border[0] != '+' || border[len(border)-1] != '+' {
		return nil, fmt.Errorf("first line %q is not a border", lines[0])
	}
	var cuts []int
	for i, r := range border {
		if r == '+' {
			cuts = append(cuts, i)
		}
	}
	m := rowCount.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		return nil, fmt.Errorf("last line %q is not a row count", lines[len(lines)-1])
	}
	want, _ := strconv.Atoi(m[1])
	if lines[2] != lines[0] || lines[len(lines)-2] != lines[0] {
		return nil, fmt.Errorf("borders do not match the first line")
	}
	t := &boxTable{}
	var err error
	if t.Columns, err = cutCells(lines[1], cuts); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	body := lines[3 : len(lines)-2]
	if len(lines) == 5 { // empty result: header, then the closing border only
		body = nil
	}
	for i, l := range body {
		cells, err := cutCells(l, cuts)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		t.Rows = append(t.Rows, cells)
	}
	if len(t.Rows) != want {
		return nil, fmt.Errorf("%d rows, the table says %d", len(t.Rows), want)
	}
	return t, nil
}

// cutCells cuts a "| a | b |" line at the border's positions (widths count
// characters). A line whose length differs from the border's (wide text the
// writer measured differently) is split on " | " when that gives the right
// number of cells.
func cutCells(line string, cuts []int) ([]string, error) {
	r := []rune(line)
	n := len(cuts) - 1
	if len(r) == cuts[n]+1 && r[0] == '|' && r[len(r)-1] == '|' {
		cells := make([]string, n)
		for i := 0; i < n; i++ {
			cells[i] = strings.TrimSpace(string(r[cuts[i]+1 : cuts[i+1]]))
		}
		return cells, nil
	}
	inner, ok := strings.CutPrefix(line, "|")
	inner, ok2 := strings.CutSuffix(inner, "|")
	if !ok || !ok2 {
		return nil, fmt.Errorf("%q is not a table row", line)
	}
	parts := strings.Split(inner, " | ")
	if len(parts) != n {
		return nil, fmt.Errorf("%q: %d cells, want %d", line, len(parts), n)
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts, nil
}

// sqlResult is an answer of /svc/v2/sql in resultFormat array with all three
// header rows.
type sqlResult struct {
	Columns  []string
	Types    []string // Druid native types (LONG, ARRAY<DOUBLE>, COMPLEX<json>...)
	SQLTypes []string // SQL types (BIGINT, TIMESTAMP, BOOLEAN...)
	Rows     [][]json.RawMessage
}

// parseSQLResult reads the array result: names, native types, SQL types,
// then one array per row.
func parseSQLResult(body []byte) (*sqlResult, error) {
	var rows [][]json.RawMessage
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("result is not an array of arrays: %w", err)
	}
	if len(rows) < 3 {
		return nil, fmt.Errorf("result has %d rows; the three header rows are missing", len(rows))
	}
	res := &sqlResult{Rows: rows[3:]}
	for i, dst := range []*[]string{&res.Columns, &res.Types, &res.SQLTypes} {
		for _, c := range rows[i] {
			var s string
			if err := json.Unmarshal(c, &s); err != nil {
				return nil, fmt.Errorf("header row %d: %s is not a string", i+1, c)
			}
			*dst = append(*dst, s)
		}
	}
	if len(res.Types) != len(res.Columns) || len(res.SQLTypes) != len(res.Columns) {
		return nil, fmt.Errorf("header rows have %d names, %d types, %d SQL types", len(res.Columns), len(res.Types), len(res.SQLTypes))
	}
	for i, r := range res.Rows {
		if len(r) != len(res.Columns) {
			return nil, fmt.Errorf("row %d has %d values for %d columns", i, len(r), len(res.Columns))
		}
	}
	return res, nil
}

// render turns the result into text cells as Druid's JDBC driver prints them.
func (r *sqlResult) render() (*boxTable, error) {
	t := &boxTable{Columns: r.Columns}
	for _, row := range r.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			s, err := renderCell(v, r.Types[i], r.SQLTypes[i])
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", r.Columns[i], err)
			}
			cells[i] = s
		}
		t.Rows = append(t.Rows, cells)
	}
	return t, nil
}

// renderCell prints one value: NULL as an empty cell, TIMESTAMP as
// yyyy-MM-dd HH:mm:ss.SSS (UTC), floating types as Java's Double.toString,
// SQL arrays as [a, b, null], JSON values (COMPLEX<json>, multi-value
// strings) as compact JSON.
func renderCell(v json.RawMessage, typ, sqlType string) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return "", nil
	}
	switch strings.ToUpper(sqlType) {
	case "TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
		return renderTime(v, "2006-01-02 15:04:05.000")
	case "DATE":
		return renderTime(v, "2006-01-02")
	case "BOOLEAN":
		switch string(v) {
		case "true", "1":
			return "true", nil
		case "false", "0":
			return "false", nil
		}
		return "", fmt.Errorf("BOOLEAN value %s", v)
	case "DOUBLE", "FLOAT", "REAL", "DECIMAL":
		return renderScalar(v, typ)
	}
	if strings.HasPrefix(typ, "ARRAY<") || strings.HasSuffix(strings.ToUpper(sqlType), "ARRAY") {
		var s string
		if json.Unmarshal(v, &s) == nil { // sqlStringifyArrays: the array as JSON text
			v = json.RawMessage(s)
		}
		elem := strings.TrimSuffix(strings.TrimPrefix(typ, "ARRAY<"), ">")
		if strings.HasPrefix(strings.ToUpper(sqlType), "TIMESTAMP") {
			// JDBC prints a TIMESTAMP ARRAY's elements as timestamps
			// without milliseconds (Avatica's unixTimestampToString).
			elem = "TIMESTAMP"
		}
		return renderArray(v, elem)
	}
	switch v[0] {
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	return renderScalar(v, typ)
}

// renderScalar prints a JSON scalar by its native type.
func renderScalar(v json.RawMessage, typ string) (string, error) {
	switch v[0] {
	case '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case 't', 'f':
		return string(v), nil
	}
	switch typ {
	case "DOUBLE", "FLOAT":
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return "", err
		}
		bits := 64
		if typ == "FLOAT" {
			bits = 32
		}
		return javaDouble(f, bits), nil
	}
	// LONG or unknown: integers stay as written; a fraction prints like a double.
	if bytes.ContainsAny(v, ".eE") {
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return "", err
		}
		return javaDouble(f, 64), nil
	}
	return string(v), nil
}

// renderArray prints an SQL array as the driver does: [a, b, null], strings
// unquoted, nested arrays the same way.
func renderArray(v json.RawMessage, elemType string) (string, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil {
		return "", fmt.Errorf("array value %s: %w", v, err)
	}
	parts := make([]string, len(elems))
	for i, e := range elems {
		e = bytes.TrimSpace(e)
		switch {
		case string(e) == "null":
			parts[i] = "null"
		case e[0] == '[':
			s, err := renderArray(e, strings.TrimSuffix(strings.TrimPrefix(elemType, "ARRAY<"), ">"))
			if err != nil {
				return "", err
			}
			parts[i] = s
		case e[0] == '{':
			var b bytes.Buffer
			json.Compact(&b, e)
			parts[i] = b.String()
		case elemType == "TIMESTAMP":
			s, err := renderTime(e, "2006-01-02 15:04:05")
			if err != nil {
				return "", err
			}
			parts[i] = s
		default:
			s, err := renderScalar(e, elemType)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
	}
	return "[" + strings.Join(parts, ", ") + "]", nil
}

func renderTime(v json.RawMessage, layout string) (string, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return "", fmt.Errorf("time value %q: %w", s, err)
		}
		return t.UTC().Format(layout), nil
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return "", fmt.Errorf("time value %s", v)
	}
	return time.UnixMilli(ms).UTC().Format(layout), nil
}

// javaDouble prints f as Java's Double.toString (Float.toString for bits
// 32): plain decimal with at least one fraction digit for 1e-3 <= |f| < 1e7,
// otherwise d.dddE<n>.
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.234E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// compareTables compares actual with expected cells: column labels, then
// rows in order when ordered, else as multisets. An empty expected cell
// matches NULL and the empty string alike (the table cannot tell them apart;
// both render empty).
func compareTables(expected, actual *boxTable, ordered bool) error {
	if !slices.Equal(expected.Columns, actual.Columns) {
		return fmt.Errorf("columns %v, want %v", actual.Columns, expected.Columns)
	}
	if len(expected.Rows) != len(actual.Rows) {
		return fmt.Errorf("%d rows, want %d", len(actual.Rows), len(expected.Rows))
	}
	exp, act := expected.Rows, actual.Rows
	if !ordered {
		exp, act = sortedRows(exp), sortedRows(act)
	}
	for i := range exp {
		if !slices.Equal(exp[i], act[i]) {
			return fmt.Errorf("row %d: got %s, want %s", i+1, rowText(act[i]), rowText(exp[i]))
		}
	}
	return nil
}

// withoutEmptyExtraColumns drops from actual the columns expected does not
// list whose every cell is empty (null), returning the rest and the names
// dropped (none when there are no such columns).
func withoutEmptyExtraColumns(expected, actual *boxTable) (*boxTable, []string) {
	var keep []int
	var dropped []string
	for i, c := range actual.Columns {
		empty := !slices.Contains(expected.Columns, c)
		for _, r := range actual.Rows {
			if empty && i < len(r) && r[i] != "" {
				empty = false
			}
		}
		if empty {
			dropped = append(dropped, c)
		} else {
			keep = append(keep, i)
		}
	}
	out := &boxTable{}
	for _, i := range keep {
		out.Columns = append(out.Columns, actual.Columns[i])
	}
	for _, r := range actual.Rows {
		row := make([]string, 0, len(keep))
		for _, i := range keep {
			if i < len(r) {
				row = append(row, r[i])
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out, dropped
}

func sortedRows(rows [][]string) [][]string {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

func rowText(r []string) string { return "| " + strings.Join(r, " | ") + " |" }

// timestampArrayCell is how JDBC prints a TIMESTAMP ARRAY: [yyyy-MM-dd HH:mm:ss, null, ...].
var timestampArrayCell = regexp.MustCompile(`^\[((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|null)(, (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|null))*)?\]$`)

// typeTimestampArrays marks as TIMESTAMP ARRAY each LONG array column whose
// expected cells are all timestamp arrays. Druid's JDBC driver knows an
// array's element type and prints TIMESTAMP elements as times, but the HTTP
// API's sqlTypesHeader, Druid's as Strata's, says only ARRAY, and the values
// are epoch millis; the expected cells are the only place the element type
// shows. The values themselves are still compared exactly (millis rendered as
// times must equal the expected times).
func (r *sqlResult) typeTimestampArrays(expected *boxTable) {
	if expected == nil || !slices.Equal(expected.Columns, r.Columns) {
		return
	}
	for i := range r.Columns {
		if r.Types[i] == "ARRAY<LONG>" && strings.EqualFold(r.SQLTypes[i], "ARRAY") && allTimestampArrays(expected.Rows, i) {
			r.SQLTypes[i] = "TIMESTAMP ARRAY"
		}
	}
}

// allTimestampArrays tells whether column i holds at least one timestamp
// array and otherwise only empty cells.
func allTimestampArrays(rows [][]string, i int) bool {
	seen := false
	for _, row := range rows {
		switch c := row[i]; {
		case c == "":
		case timestampArrayCell.MatchString(c) && strings.Contains(c, ":"):
			seen = true
		default:
			return false
		}
	}
	return seen
}
