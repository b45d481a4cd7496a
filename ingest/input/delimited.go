package input

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"strata/expr"
)

// delimitedFormat is Druid's "csv" (quoted, comma-separated) or "tsv"
// (split on a delimiter, no quoting) format.
type delimitedFormat struct {
	typ        string
	columns    []string
	fromHeader bool
	skipRows   int
	listDelim  string
	delimiter  string
	spec       map[string]any
}

func parseDelimitedFormat(raw []byte, typ string) (Format, error) {
	var s struct {
		Columns               []string `json:"columns"`
		FindColumnsFromHeader *bool    `json:"findColumnsFromHeader"`
		HasHeaderRow          *bool    `json:"hasHeaderRow"`
		SkipHeaderRows        int      `json:"skipHeaderRows"`
		ListDelimiter         *string  `json:"listDelimiter"`
		Delimiter             *string  `json:"delimiter"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errorf("invalid %s inputFormat: %v", typ, err)
	}
	f := &delimitedFormat{typ: typ, columns: s.Columns, skipRows: s.SkipHeaderRows, listDelim: "\x01", delimiter: ","}
	if typ == "tsv" {
		f.delimiter = "\t"
	}
	if s.FindColumnsFromHeader != nil {
		f.fromHeader = *s.FindColumnsFromHeader
	} else if s.HasHeaderRow != nil {
		f.fromHeader = *s.HasHeaderRow
	}
	if s.ListDelimiter != nil && *s.ListDelimiter != "" {
		f.listDelim = *s.ListDelimiter
	}
	if s.Delimiter != nil {
		if typ != "tsv" {
			return nil, errorf("csv inputFormat does not take 'delimiter' (use tsv)")
		}
		if *s.Delimiter == "" {
			return nil, errorf("tsv inputFormat: empty delimiter")
		}
		f.delimiter = *s.Delimiter
	}
	if s.SkipHeaderRows < 0 {
		return nil, errorf("%s inputFormat: skipHeaderRows must not be negative", typ)
	}
	if !f.fromHeader && len(f.columns) == 0 {
		return nil, errorf("%s inputFormat requires 'columns' or findColumnsFromHeader=true", typ)
	}
	if f.fromHeader && len(f.columns) > 0 {
		return nil, errorf("%s inputFormat: 'columns' and findColumnsFromHeader=true are exclusive", typ)
	}
	seen := map[string]bool{}
	for _, c := range f.columns {
		if seen[c] {
			return nil, errorf("%s inputFormat: column %q listed twice", typ, c)
		}
		seen[c] = true
	}
	f.spec = map[string]any{"type": typ, "findColumnsFromHeader": f.fromHeader, "skipHeaderRows": f.skipRows,
		"listDelimiter": nil}
	if f.columns != nil {
		f.spec["columns"] = f.columns
	}
	if s.ListDelimiter != nil {
		f.spec["listDelimiter"] = *s.ListDelimiter
	}
	if typ == "tsv" {
		f.spec["delimiter"] = f.delimiter
	}
	return f, nil
}

func (f *delimitedFormat) Type() string         { return f.typ }
func (f *delimitedFormat) Spec() map[string]any { return f.spec }

func (f *delimitedFormat) NewReader(r io.Reader, cols []Column, source string) (Reader, error) {
	dr := &delimitedReader{f: f, cols: cols, source: source}
	if f.typ == "csv" {
		cr := csv.NewReader(r)
		cr.FieldsPerRecord = -1
		cr.LazyQuotes = true
		cr.ReuseRecord = true
		dr.csv = cr
	} else {
		dr.lines = bufio.NewReaderSize(r, 256<<10)
	}
	if !f.fromHeader {
		dr.setHeader(f.columns)
	}
	return dr, nil
}

type delimitedReader struct {
	f       *delimitedFormat
	cols    []Column
	source  string
	csv     *csv.Reader
	lines   *bufio.Reader
	fields  []string
	fieldOf []int // column → field index, -1 when absent
	header  bool
	skipped int
	record  int64
}

func (r *delimitedReader) setHeader(names []string) {
	idx := map[string]int{}
	for i, n := range names {
		if _, dup := idx[n]; !dup {
			idx[n] = i
		}
	}
	r.fieldOf = make([]int, len(r.cols))
	for i, c := range r.cols {
		r.fieldOf[i] = -1
		if j, ok := idx[c.Name]; ok {
			r.fieldOf[i] = j
		}
	}
	r.header = true
}

// read returns the fields of the next record.
func (r *delimitedReader) read() ([]string, error) {
	if r.csv != nil {
		return r.csv.Read()
	}
	line, err := r.lines.ReadString('\n')
	if err == io.EOF && line == "" {
		return nil, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	r.fields = append(r.fields[:0], strings.Split(line, r.f.delimiter)...)
	return r.fields, nil
}

func (r *delimitedReader) Next(row []expr.Value) error {
	for {
		fields, err := r.read()
		if err == io.EOF {
			return io.EOF
		}
		r.record++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &ParseError{Source: r.source, Record: r.record, Msg: pe.Err.Error()}
			}
			return err
		}
		if r.skipped < r.f.skipRows {
			r.skipped++
			continue
		}
		if !r.header {
			names := make([]string, len(fields))
			copy(names, fields)
			r.setHeader(names)
			continue
		}
		if len(fields) == 1 && fields[0] == "" {
			continue // blank line
		}
		for i, c := range r.cols {
			j := r.fieldOf[i]
			if j < 0 || j >= len(fields) || fields[j] == "" {
				row[i] = nullValue(c.Kind)
				continue
			}
			v, err := r.value(fields[j], c)
			if err != nil {
				return &ParseError{Source: r.source, Record: r.record, Msg: err.Error()}
			}
			row[i] = v
		}
		return nil
	}
}

// value converts one field, splitting multi-values on the list delimiter.
func (r *delimitedReader) value(s string, c Column) (expr.Value, error) {
	if (c.Kind == KindString || isArrayKind(c.Kind)) && strings.Contains(s, r.f.listDelim) {
		parts := strings.Split(s, r.f.listDelim)
		elems := make([]expr.Value, len(parts))
		for i, p := range parts {
			v, err := stringValue(p, c.Name, elemKind(c.Kind))
			if err != nil {
				return expr.Value{}, err
			}
			elems[i] = v
		}
		return listValue(elems, c.Name, c.Kind)
	}
	return stringValue(s, c.Name, c.Kind)
}
