package sqlplan

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rows turns the broker's answer to Native into SQL rows, one value per
// column of Columns, typed as the SQL API renders them: TIMESTAMP as ISO
// strings in the query's time zone, BIGINT as int64, DOUBLE/FLOAT as
// float64, VARCHAR as string, BOOLEAN as bool, NULL as nil.
func (p *Planned) Rows(result []byte) ([][]any, error) { return p.RowsOf(0, result) }

// RowsOf is Rows for the answer to Natives[i]; the rows of a UNION ALL are
// those of every part in order, typed as the first part's columns.
func (p *Planned) RowsOf(i int, result []byte) ([][]any, error) {
	b := p.parts[i]
	names := make([]string, len(b.out))
	for j, c := range b.out {
		names[j] = c.native
	}
	if b.sort != nil {
		names = append(names, b.sort.columns()...)
	}
	rows, err := nativeRows(b.queryType, result, names)
	if err != nil {
		return nil, err
	}
	if b.sort != nil {
		if rows, err = b.sort.apply(rows, len(b.out)); err != nil {
			return nil, err
		}
	}
	if b.offset > 0 {
		rows = rows[min(int64(len(rows)), b.offset):]
	}
	if b.limit >= 0 && int64(len(rows)) > b.limit {
		rows = rows[:b.limit]
	}
	for _, row := range rows {
		for j, c := range b.out {
			v, err := p.value(row[j], p.b.out[j].typ)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.name, err)
			}
			row[j] = v
		}
	}
	return rows, nil
}

func (p *Planned) value(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if isArrayType(typ) {
		return p.arrayValue(v)
	}
	switch typ {
	case tTimestamp:
		var ms int64
		switch x := v.(type) {
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return nil, err
			}
			ms = int64(f)
		case string:
			if p.tz == time.UTC && isUTCMillis(x) {
				return v, nil // already as it would be printed
			}
			t, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				return x, nil
			}
			ms = t.UnixMilli()
		default:
			return v, nil
		}
		t := time.UnixMilli(ms).In(p.tz)
		if p.tz == time.UTC {
			return t.Format("2006-01-02T15:04:05.000Z"), nil
		}
		return t.Format("2006-01-02T15:04:05.000-07:00"), nil
	case tBigint:
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
			f, err := n.Float64()
			if err != nil {
				return nil, err
			}
			return int64(f), nil
		}
		if s, ok := v.(string); ok {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
	case tDouble, tFloat:
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				return nil, err
			}
			return f, nil
		}
		if s, ok := v.(string); ok {
			switch s {
			case "NaN":
				return math.NaN(), nil
			case "Infinity":
				return math.Inf(1), nil
			case "-Infinity":
				return math.Inf(-1), nil
			}
		}
	case tBoolean:
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			return f != 0, nil
		}
	case tVarchar:
		if n, ok := v.(json.Number); ok {
			return n.String(), nil
		}
		if s, ok := v.(string); ok {
			return s, nil
		}
		if arr, ok := v.([]any); ok && p.stringifyArrays() {
			bs, err := json.Marshal(arr)
			return string(bs), err
		}
	}
	return v, nil
}

func (p *Planned) stringifyArrays() bool {
	switch v := p.Context["sqlStringifyArrays"].(type) {
	case bool:
		return v
	case string:
		return !strings.EqualFold(v, "false")
	}
	return true
}

// ExplainRow is EXPLAIN PLAN FOR's one row: PLAN (the native queries with
// their signatures, as Druid's JSON), RESOURCES and ATTRIBUTES.
func (p *Planned) ExplainRow() ([]any, error) {
	var entries []any
	for i, raw := range p.Natives {
		var q any
		if err := json.Unmarshal(raw, &q); err != nil {
			return nil, err
		}
		b := p.parts[i]
		if b.sort != nil {
			b.sort.explain(q, b)
		}
		sig := make([]map[string]string, len(b.out))
		for j, c := range b.out {
			name := c.native
			if name == "" { // a timeseries' time: the row's timestamp
				name = "__time"
			}
			sig[j] = map[string]string{"name": name, "type": nativeType(c.typ)}
		}
		entries = append(entries, map[string]any{"query": q, "signature": sig, "columnMappings": columnMappings(b)})
	}
	plan, err := json.Marshal(entries)
	if err != nil {
		return nil, err
	}
	res := make([]map[string]string, 0, len(p.Resources))
	for _, r := range p.Resources {
		res = append(res, map[string]string{"name": r, "type": "DATASOURCE"})
	}
	resources, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	attrs, err := json.Marshal(map[string]any{"statementType": "SELECT"})
	if err != nil {
		return nil, err
	}
	return []any{string(plan), string(resources), string(attrs)}, nil
}

func columnMappings(b *built) []map[string]string {
	out := make([]map[string]string, len(b.out))
	for i, c := range b.out {
		q := c.native
		if q == "" {
			q = "__time"
		}
		out[i] = map[string]string{"queryColumn": q, "outputColumn": c.name}
	}
	return out
}
