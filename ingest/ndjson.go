package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"strata/storage/segment"
)

// Schema is the column layout inferred from (or declared for) JSON input.
type Schema struct {
	Fields     []segment.Field
	Dimensions []segment.Dimension
}

// InferSchema reads up to n JSON lines and returns every field except the
// timestamp column as a dimension: strings (and arrays of strings) as string
// dimensions, whole numbers as long, other numbers as double. Fields appear in
// first-seen order. r is consumed; callers re-open the input to read it fully.
func InferSchema(r io.Reader, n int, timestampColumn string) (Schema, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	kinds := map[string]segment.Kind{}
	multi := map[string]bool{}
	var order []string
	line := 0
	for sc.Scan() && line < n {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		obj, err := decodeLine(b)
		if err != nil {
			return Schema{}, fmt.Errorf("line %d: %v", line, err)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys) // fields new in the same row get a stable order
		for _, k := range keys {
			if k == timestampColumn {
				continue
			}
			kind := kindOf(obj[k], multi, k)
			old, seen := kinds[k]
			if !seen {
				order = append(order, k)
				kinds[k] = kind
				continue
			}
			kinds[k] = widen(old, kind)
		}
	}
	if err := sc.Err(); err != nil {
		return Schema{}, err
	}
	var s Schema
	for _, k := range order {
		kind := kinds[k]
		if kind == 0 {
			kind = segment.KindString // only nulls seen
		}
		s.Fields = append(s.Fields, segment.Field{Name: k, Kind: kind})
		s.Dimensions = append(s.Dimensions, segment.Dimension{Name: k, Kind: kind, MultiValue: multi[k]})
	}
	return s, nil
}

func kindOf(v any, multi map[string]bool, k string) segment.Kind {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return segment.KindLong
		}
		return segment.KindDouble
	case string, bool:
		return segment.KindString
	case []any:
		multi[k] = true
		return segment.KindString
	}
	return 0
}

// widen merges two observed kinds: long+double = double, anything with string = string.
func widen(a, b segment.Kind) segment.Kind {
	switch {
	case a == 0:
		return b
	case b == 0 || a == b:
		return a
	case a.Numeric() && b.Numeric():
		return segment.KindDouble
	}
	return segment.KindString
}

// Reader reads newline-delimited JSON objects into rows laid out by Fields.
type Reader struct {
	TimestampColumn string
	ParseTime       func(v any) (int64, error)
	Fields          []segment.Field
	// MaxParseErrors rows may be skipped for bad JSON or time; one more fails the read.
	MaxParseErrors int64
	Progress       func(rowsRead int64, bytesRead int64)
}

// ReadStats counts what Read saw.
type ReadStats struct {
	Rows, Skipped, Bytes int64
	FirstError           string
}

// Read calls emit for each row of r. The Row passed to emit is reused.
func (rd *Reader) Read(ctx context.Context, r io.Reader, emit func(segment.Row) error) (ReadStats, error) {
	var st ReadStats
	idx := make(map[string]int, len(rd.Fields))
	for i, f := range rd.Fields {
		idx[f.Name] = i
	}
	row := segment.Row{Values: make([]segment.Value, len(rd.Fields))}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := int64(0)
	skip := func(err error) error {
		st.Skipped++
		if st.FirstError == "" {
			st.FirstError = fmt.Sprintf("line %d: %v", line, err)
		}
		if st.Skipped > rd.MaxParseErrors {
			return fmt.Errorf("line %d: %v (more than %d unparseable rows)", line, err, rd.MaxParseErrors)
		}
		return nil
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		st.Bytes += int64(len(b)) + 1
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if line%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if rd.Progress != nil {
				rd.Progress(st.Rows, st.Bytes)
			}
		}
		obj, err := decodeLine(b)
		if err != nil {
			if err := skip(err); err != nil {
				return st, err
			}
			continue
		}
		tv, ok := obj[rd.TimestampColumn]
		if !ok || tv == nil {
			if err := skip(fmt.Errorf("no timestamp in column %q", rd.TimestampColumn)); err != nil {
				return st, err
			}
			continue
		}
		if n, isNum := tv.(json.Number); isNum {
			f, _ := n.Float64()
			tv = f
		}
		t, err := rd.ParseTime(tv)
		if err != nil {
			if err := skip(fmt.Errorf("timestamp %v: %v", tv, err)); err != nil {
				return st, err
			}
			continue
		}
		row.Time = t
		for i := range row.Values {
			row.Values[i] = segment.Null()
		}
		for k, v := range obj {
			if i, ok := idx[k]; ok {
				row.Values[i] = toValue(v, rd.Fields[i].Kind)
			}
		}
		if err := emit(row); err != nil {
			return st, err
		}
		st.Rows++
	}
	if rd.Progress != nil {
		rd.Progress(st.Rows, st.Bytes)
	}
	return st, sc.Err()
}

func toValue(v any, kind segment.Kind) segment.Value {
	switch x := v.(type) {
	case nil:
		return segment.Null()
	case json.Number:
		if kind == segment.KindLong {
			if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return segment.Long(n)
			}
		}
		if kind.Numeric() {
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil || math.IsInf(f, 0) {
				return segment.Null()
			}
			if kind == segment.KindLong {
				return segment.Long(int64(f))
			}
			return segment.Double(f)
		}
		return segment.String(string(x))
	case string:
		return segment.String(x)
	case bool:
		return segment.String(strconv.FormatBool(x))
	case []any:
		ss := make([]string, 0, len(x))
		for _, e := range x {
			switch y := e.(type) {
			case string:
				ss = append(ss, y)
			case json.Number:
				ss = append(ss, string(y))
			case bool:
				ss = append(ss, strconv.FormatBool(y))
			case nil:
			default:
				b, _ := json.Marshal(y)
				ss = append(ss, string(b))
			}
		}
		return segment.Strings(ss)
	default:
		b, _ := json.Marshal(x)
		return segment.String(string(b))
	}
}

// decodeLine parses one line holding exactly one JSON object; anything after
// the object (such as a second object from concatenated files without a final
// newline) is an error rather than silently dropped data.
func decodeLine(b []byte) (map[string]any, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON object (one object per line)")
	}
	return obj, nil
}
