package lookups

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"strata/interval"
	"strata/javacompat"
)

// parseCachedNamespace reads a cachedNamespace factory:
// {"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri",
// "namespaceParseSpec":{...},"pollPeriod"},"firstCacheTimeout","injective"}.
func (c *Container) parseCachedNamespace(raw []byte) error {
	var f struct {
		Namespace json.RawMessage `json:"extractionNamespace"`
		Injective *bool           `json:"injective"`
	}
	if err := strictObject(raw, &f, "lookupExtractorFactory"); err != nil {
		return err
	}
	if len(f.Namespace) == 0 || string(f.Namespace) == "null" {
		return fmt.Errorf("cachedNamespace lookup needs an [extractionNamespace]")
	}
	var ns struct {
		Type       *string          `json:"type"`
		URI        *string          `json:"uri"`
		URIPrefix  *string          `json:"uriPrefix"`
		ParseSpec  json.RawMessage  `json:"namespaceParseSpec"`
		PollPeriod *json.RawMessage `json:"pollPeriod"`
	}
	if err := strictObject(f.Namespace, &ns, "extractionNamespace"); err != nil {
		return err
	}
	switch {
	case ns.Type == nil:
		return fmt.Errorf("extractionNamespace: missing [type]")
	case *ns.Type != "uri":
		return fmt.Errorf("extractionNamespace type [%s] is not supported: only [uri] is (jdbc is not)", *ns.Type)
	case ns.URIPrefix != nil:
		return fmt.Errorf("extractionNamespace: [uriPrefix] is not supported; name one file with [uri]")
	case ns.URI == nil || *ns.URI == "":
		return fmt.Errorf("extractionNamespace: [uri] is required")
	}
	u, err := url.Parse(*ns.URI)
	if err != nil || (u.Scheme != "file" && u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("extractionNamespace: [uri] %q must be a file:, http: or https: URI", *ns.URI)
	}
	src := &URISource{URI: *ns.URI}
	if ns.PollPeriod != nil && string(*ns.PollPeriod) != "null" {
		if src.PollPeriodMs, err = parsePollPeriod(*ns.PollPeriod); err != nil {
			return err
		}
	}
	if err := src.parseSpec(ns.ParseSpec); err != nil {
		return err
	}
	if f.Injective != nil {
		c.OneToOne = *f.Injective
	}
	c.URI = src
	return nil
}

// parsePollPeriod reads a period as an ISO string ("PT5M") or milliseconds.
func parsePollPeriod(raw []byte) (int64, error) {
	var ms int64
	if err := json.Unmarshal(raw, &ms); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("extractionNamespace: [pollPeriod] must not be negative")
		}
		return ms, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("extractionNamespace: [pollPeriod] must be an ISO period or milliseconds")
	}
	p, err := interval.ParsePeriod(s)
	if err != nil || !p.IsFixed() || p.FixedMillis() < 0 {
		return 0, fmt.Errorf("extractionNamespace: [pollPeriod] %q must be a fixed ISO period such as PT5M", s)
	}
	return p.FixedMillis(), nil
}

func (src *URISource) parseSpec(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return fmt.Errorf("extractionNamespace: [namespaceParseSpec] is required")
	}
	var ps struct {
		Format         *string  `json:"format"`
		Columns        []string `json:"columns"`
		KeyColumn      string   `json:"keyColumn"`
		ValueColumn    string   `json:"valueColumn"`
		HasHeaderRow   bool     `json:"hasHeaderRow"`
		SkipHeaderRows int      `json:"skipHeaderRows"`
		Delimiter      string   `json:"delimiter"`
		KeyFieldName   string   `json:"keyFieldName"`
		ValueFieldName string   `json:"valueFieldName"`
	}
	if err := strictObject(raw, &ps, "namespaceParseSpec"); err != nil {
		return err
	}
	if ps.Format == nil {
		return fmt.Errorf("namespaceParseSpec: missing [format]")
	}
	if ps.SkipHeaderRows < 0 {
		return fmt.Errorf("namespaceParseSpec: [skipHeaderRows] must not be negative")
	}
	src.Format = *ps.Format
	switch src.Format {
	case "csv", "tsv":
		if len(ps.Columns) == 0 && !ps.HasHeaderRow {
			return fmt.Errorf("namespaceParseSpec: %s needs [columns] or [hasHeaderRow]", src.Format)
		}
		if len(ps.Columns) == 1 {
			return fmt.Errorf("namespaceParseSpec: [columns] needs at least a key and a value column")
		}
		src.Columns, src.HasHeaderRow, src.SkipHeaderRows = ps.Columns, ps.HasHeaderRow, ps.SkipHeaderRows
		src.KeyColumn, src.ValueColumn = ps.KeyColumn, ps.ValueColumn
		for _, col := range []string{ps.KeyColumn, ps.ValueColumn} {
			if col != "" && len(ps.Columns) > 0 && !slices.Contains(ps.Columns, col) {
				return fmt.Errorf("namespaceParseSpec: column [%s] is not in [columns]", col)
			}
		}
		if src.Format == "tsv" {
			src.Delimiter = ps.Delimiter
		}
	case "customJson":
		if ps.KeyFieldName == "" || ps.ValueFieldName == "" {
			return fmt.Errorf("namespaceParseSpec: customJson needs [keyFieldName] and [valueFieldName]")
		}
		src.KeyFieldName, src.ValueFieldName = ps.KeyFieldName, ps.ValueFieldName
	case "simpleJson":
	default:
		return fmt.Errorf("namespaceParseSpec: format [%s] is not supported (csv, tsv, simpleJson, customJson are)", src.Format)
	}
	return nil
}

// appendCachedNamespaceJSON appends the canonical JSON of a cachedNamespace
// factory.
func (c *Container) appendCachedNamespaceJSON(b []byte) []byte {
	src := c.URI
	b = append(b, `{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":`...)
	b = javacompat.AppendJSONString(b, src.URI)
	b = append(b, `,"namespaceParseSpec":{"format":`...)
	b = javacompat.AppendJSONString(b, src.Format)
	str := func(b []byte, k, v string) []byte {
		if v == "" {
			return b
		}
		b = append(b, `,"`+k+`":`...)
		return javacompat.AppendJSONString(b, v)
	}
	if len(src.Columns) > 0 {
		b = append(b, `,"columns":[`...)
		for i, col := range src.Columns {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, col)
		}
		b = append(b, ']')
	}
	b = str(b, "keyColumn", src.KeyColumn)
	b = str(b, "valueColumn", src.ValueColumn)
	if src.HasHeaderRow {
		b = append(b, `,"hasHeaderRow":true`...)
	}
	if src.SkipHeaderRows > 0 {
		b = append(b, `,"skipHeaderRows":`...)
		b = strconv.AppendInt(b, int64(src.SkipHeaderRows), 10)
	}
	b = str(b, "delimiter", src.Delimiter)
	b = str(b, "keyFieldName", src.KeyFieldName)
	b = str(b, "valueFieldName", src.ValueFieldName)
	b = append(b, `},"pollPeriod":`...)
	b = strconv.AppendInt(b, src.PollPeriodMs, 10)
	b = append(b, `},"injective":`...)
	b = strconv.AppendBool(b, c.OneToOne)
	return append(b, '}')
}

// ParseRows reads the resource's bytes as its namespaceParseSpec says into
// a key→value map. A later row for a key replaces an earlier one; a row
// without its key or value column is an error naming its line.
func (src *URISource) ParseRows(data []byte) (map[string]string, error) {
	out := map[string]string{}
	lines := bytes.Split(data, []byte{'\n'})
	if n := len(lines); n > 0 && len(bytes.TrimSpace(lines[n-1])) == 0 {
		lines = lines[:n-1]
	}
	switch src.Format {
	case "simpleJson", "customJson":
		for i, line := range lines {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(line, &obj); err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			if src.Format == "simpleJson" {
				for k, v := range obj {
					out[k] = fmt.Sprint(v)
				}
				continue
			}
			k, kok := obj[src.KeyFieldName]
			v, vok := obj[src.ValueFieldName]
			if !kok || !vok || k == nil || v == nil {
				return nil, fmt.Errorf("line %d: needs [%s] and [%s]", i+1, src.KeyFieldName, src.ValueFieldName)
			}
			out[fmt.Sprint(k)] = fmt.Sprint(v)
		}
		return out, nil
	}
	delim := ","
	if src.Format == "tsv" {
		delim = "\t"
		if src.Delimiter != "" {
			delim = src.Delimiter
		}
	}
	columns := src.Columns
	skip := src.SkipHeaderRows
	if src.HasHeaderRow {
		if skip >= len(lines) {
			return out, nil
		}
		header := splitRow(string(lines[skip]), delim)
		if len(columns) == 0 {
			columns = header
		}
		skip++
	}
	key, value := 0, 1
	if src.KeyColumn != "" {
		key = slices.Index(columns, src.KeyColumn)
	}
	if src.ValueColumn != "" {
		value = slices.Index(columns, src.ValueColumn)
	}
	if key < 0 || value < 0 {
		return nil, fmt.Errorf("the header does not name the key and value columns")
	}
	for i := skip; i < len(lines); i++ {
		line := strings.TrimRight(string(lines[i]), "\r")
		if line == "" {
			continue
		}
		f := splitRow(line, delim)
		if key >= len(f) || value >= len(f) {
			return nil, fmt.Errorf("line %d: %d fields, the key or value column is missing", i+1, len(f))
		}
		out[f[key]] = f[value]
	}
	return out, nil
}

// splitRow splits a delimited row; csv fields may be double-quoted.
func splitRow(line, delim string) []string {
	if delim != "," || !strings.Contains(line, `"`) {
		return strings.Split(line, delim)
	}
	var out []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quoted && ch == '"' && i+1 < len(line) && line[i+1] == '"':
			cur.WriteByte('"')
			i++
		case ch == '"':
			quoted = !quoted
		case ch == ',' && !quoted:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(ch)
		}
	}
	return append(out, cur.String())
}
