package input

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"strata/expr"
	"strata/javacompat"
)

// jsonFormat is Druid's "json" input format. Each record is one JSON object;
// objects may span lines and several may share a line.
type jsonFormat struct {
	discovery bool // flattenSpec.useFieldDiscovery (default true)
	fields    []flattenField
	spec      map[string]any
}

// flattenField is one flattenSpec field: root (a top-level key), path
// (JSONPath), jq (a simple jq path, translated to JSONPath) or tree (a list
// of keys to walk).
type flattenField struct {
	name string
	key  string    // root: the top-level key
	path *jsonPath // path, jq and tree
}

func parseJSONFormat(raw []byte) (Format, error) {
	var s struct {
		FlattenSpec *struct {
			UseFieldDiscovery *bool `json:"useFieldDiscovery"`
			Fields            []struct {
				Type  string   `json:"type"`
				Name  string   `json:"name"`
				Expr  string   `json:"expr"`
				Nodes []string `json:"nodes"`
			} `json:"fields"`
		} `json:"flattenSpec"`
		FeatureSpec            map[string]any `json:"featureSpec"`
		KeepNullColumns        bool           `json:"keepNullColumns"`
		AssumeNewlineDelimited bool           `json:"assumeNewlineDelimited"`
		UseJSONNodeReader      bool           `json:"useJsonNodeReader"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errorf("invalid json inputFormat: %v", err)
	}
	f := &jsonFormat{discovery: true}
	spec := map[string]any{"type": "json", "keepNullColumns": s.KeepNullColumns,
		"assumeNewlineDelimited": s.AssumeNewlineDelimited, "useJsonNodeReader": s.UseJSONNodeReader}
	if s.FeatureSpec != nil {
		spec["featureSpec"] = s.FeatureSpec
	}
	if fs := s.FlattenSpec; fs != nil {
		if fs.UseFieldDiscovery != nil {
			f.discovery = *fs.UseFieldDiscovery
		}
		var fields []any
		seen := map[string]bool{}
		for _, fd := range fs.Fields {
			if fd.Name == "" {
				return nil, errorf("flattenSpec field without a name")
			}
			if seen[fd.Name] {
				return nil, errorf("flattenSpec field %q defined twice", fd.Name)
			}
			seen[fd.Name] = true
			ff := flattenField{name: fd.Name}
			entry := map[string]any{"type": fd.Type, "name": fd.Name}
			switch fd.Type {
			case "root":
				ff.key = fd.Expr
				if ff.key == "" {
					ff.key = fd.Name
				}
			case "path":
				p, err := compileJSONPath(fd.Expr)
				if err != nil {
					return nil, errorf("flattenSpec field %q: %v", fd.Name, err)
				}
				ff.path = p
				entry["expr"] = fd.Expr
			case "jq":
				p, err := jqToPath(fd.Expr)
				if err != nil {
					return nil, errorf("flattenSpec field %q: %v", fd.Name, err)
				}
				ff.path = p
				entry["expr"] = fd.Expr
			case "tree":
				if len(fd.Nodes) == 0 {
					return nil, errorf("flattenSpec field %q: tree needs nodes", fd.Name)
				}
				p := &jsonPath{src: "tree"}
				for _, n := range fd.Nodes {
					p.steps = append(p.steps, pathStep{kind: stepField, name: n})
				}
				ff.path = p
				entry["nodes"] = fd.Nodes
			default:
				return nil, errorf("flattenSpec field %q: unsupported type %q (root, path, jq, tree)", fd.Name, fd.Type)
			}
			f.fields = append(f.fields, ff)
			fields = append(fields, entry)
		}
		spec["flattenSpec"] = map[string]any{"useFieldDiscovery": f.discovery, "fields": fields}
	}
	f.spec = spec
	return f, nil
}

// jqToPath accepts the jq paths flattenSpec users write (.a.b, .a[0],
// .["a"]) by rewriting them as JSONPath.
func jqToPath(src string) (*jsonPath, error) {
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, ".") {
		return nil, fmt.Errorf("jq expression %q must start with '.'", src)
	}
	if strings.ContainsAny(s, "|() ") {
		return nil, fmt.Errorf("jq expression %q: only plain paths are supported", src)
	}
	if s == "." {
		return compileJSONPath("$")
	}
	s = strings.ReplaceAll(s, ".[", "[")
	return compileJSONPath("$" + s)
}

func (f *jsonFormat) Type() string         { return "json" }
func (f *jsonFormat) Spec() map[string]any { return f.spec }

func (f *jsonFormat) NewReader(r io.Reader, cols []Column, source string) (Reader, error) {
	return f.newReader(r, cols, source, -1), nil
}

// newRangeReader returns a reader that stops before the first record that
// starts at or after offset limit of r (reading on past limit to finish
// the record that straddles it).
func (f *jsonFormat) newRangeReader(r io.Reader, cols []Column, source string, limit int64) Reader {
	return f.newReader(r, cols, source, limit)
}

func (f *jsonFormat) newReader(r io.Reader, cols []Column, source string, limit int64) *jsonReader {
	jr := &jsonReader{src: r, cols: cols, source: source, limit: limit, first: -1, stop: -1}
	// Decide per column where its value comes from.
	byName := map[string]*flattenField{}
	for i := range f.fields {
		byName[f.fields[i].name] = &f.fields[i]
	}
	jr.keys = map[string]int{}
	jr.keyOf = make([]string, len(cols))
	jr.colPath = make([]*jsonPath, len(cols))
	for i, c := range cols {
		key := ""
		if ff, ok := byName[c.Name]; ok {
			if ff.path != nil {
				jr.colPath[i] = ff.path
				jr.slow = true
				continue
			}
			key = ff.key
		} else if f.discovery {
			key = c.Name
		}
		if key == "" {
			continue
		}
		jr.keyOf[i] = key
		if _, dup := jr.keys[key]; dup {
			jr.slow = true // the scanner fills one column per key
		}
		jr.keys[key] = i
	}
	return jr
}

// jsonReader reads JSON objects. Without path fields it scans each object
// once, converting only the wanted top-level keys; with path fields it
// decodes the whole object and evaluates the paths.
//
// Input is read in blocks straight into buf; objects are parsed from
// buf[pos:], and an object cut by the end of a block is parsed again once
// the next block is in.
type jsonReader struct {
	src      io.Reader
	cols     []Column
	source   string
	keys     map[string]int // top-level key → column
	keyOf    []string       // column → its top-level key ("" when none)
	colPath  []*jsonPath    // column → path (slow mode)
	slow     bool
	byPos    []int    // column of the key seen at each position of earlier records
	posKey   []string // that key
	posPlain []bool   // the key is written without escapes
	record   int64
	buf      []byte // input from stream offset base; objects are parsed from buf[pos:]
	pos      int
	base     int64
	limit    int64 // records starting at or after this offset are not read; -1: none
	first    int64 // offset of the first record (or of the end), -1 until known
	stop     int64 // offset of the first record not read (or of the end), -1 until known
	eof      bool
	keep     bool     // never overwrite input that values may point at
	setGen   []uint32 // per column: the record (gen) that last set it
	gen      uint32
}

// Buffer sizes. Without keepValues one array of readBlock bytes is reused;
// with it a record goes into the free end of the current array, or into a
// fresh one when little is left.
const (
	readBlock   = 256 << 10
	keepBufSize = 256 << 10
	keepMinFree = 16 << 10
	// minRead is the least read once past a range's limit, where only the
	// record that straddles the limit is still wanted.
	minRead = 4 << 10
)

func (r *jsonReader) keepValues() { r.keep = true }

// useBuffer has the reader read into buf while it fits (before the first Next).
func (r *jsonReader) useBuffer(buf []byte) {
	if r.buf == nil && r.base == 0 {
		r.buf = buf[:0]
	}
}

// span reports the offsets of the first record and of where reading stopped.
func (r *jsonReader) span() (first, stop int64) { return r.first, r.stop }

// records is the number of records read (parse errors included).
func (r *jsonReader) records() int64 { return r.record }

const maxRecordBytes = 64 << 20

var errIncomplete = errors.New("incomplete JSON")

// fill drops buf[:from], which the caller no longer needs, and reads more
// input after the rest. It returns how far the kept bytes moved towards the
// start of buf (callers subtract it from their indexes) and false at EOF.
func (r *jsonReader) fill(from int) (int, bool, error) {
	if r.eof {
		return 0, false, nil
	}
	tail := len(r.buf) - from
	if tail > maxRecordBytes {
		return 0, false, fmt.Errorf("JSON record exceeds %d bytes", maxRecordBytes)
	}
	switch {
	case !r.keep:
		if r.buf == nil {
			r.buf = make([]byte, 0, readBlock)
		}
		n := copy(r.buf[:cap(r.buf)], r.buf[from:])
		r.buf = r.buf[:n]
		if cap(r.buf)-n < minRead {
			nb := make([]byte, n, 2*cap(r.buf))
			copy(nb, r.buf)
			r.buf = nb
		}
	case cap(r.buf)-len(r.buf) < keepMinFree:
		// Values of earlier records point into the old array: leave it be.
		nb := make([]byte, tail, max(keepBufSize, 2*tail))
		copy(nb, r.buf[from:])
		r.buf = nb
	default:
		r.buf = r.buf[from:]
	}
	r.base += int64(from)
	want := cap(r.buf) - len(r.buf)
	if r.limit >= 0 {
		// Near the limit read only what the range still needs.
		rem := r.limit - r.base - int64(len(r.buf))
		want = int(min(int64(want), max(rem, minRead)))
	}
	for {
		n, err := r.src.Read(r.buf[len(r.buf) : len(r.buf)+want])
		r.buf = r.buf[:len(r.buf)+n]
		if err == io.EOF {
			r.eof = true
			return from, n > 0, nil
		}
		if err != nil {
			return from, false, err
		}
		if n > 0 {
			return from, true, nil
		}
	}
}

// atEnd records where reading stopped.
func (r *jsonReader) atEnd(off int64) error {
	r.stop = off
	if r.first < 0 {
		r.first = off
	}
	return io.EOF
}

func (r *jsonReader) Next(row []expr.Value) error {
	for {
		r.pos = skipWS(r.buf, r.pos)
		if r.pos >= len(r.buf) {
			// Values of the previous record may alias buf, which the Reader
			// contract allows to end here (fill keeps them with keepValues).
			shift, ok, err := r.fill(len(r.buf))
			r.pos -= shift
			if err != nil {
				return err
			}
			if !ok {
				return r.atEnd(r.base + int64(len(r.buf)))
			}
			continue
		}
		at := r.base + int64(r.pos)
		if r.first < 0 {
			r.first = at
		}
		if r.limit >= 0 && at >= r.limit {
			return r.atEnd(at)
		}
		start := r.pos
		var end int
		var err error
		for {
			end, err = r.record1(row, start)
			if err != errIncomplete {
				break
			}
			shift, ok, ferr := r.fill(start)
			start -= shift
			if ferr != nil {
				return ferr
			}
			if !ok {
				break
			}
		}
		r.record++
		if err != nil {
			if err == errIncomplete {
				err = errors.New("unexpected end of input inside a JSON object")
			}
			if ferr := r.resync(start); ferr != nil {
				return ferr
			}
			return &ParseError{Source: r.source, Record: r.record, Msg: err.Error()}
		}
		r.pos = end
		return nil
	}
}

// resync moves past the line on which the broken record at buf[start:] begins.
func (r *jsonReader) resync(start int) error {
	seen := start
	for {
		if nl := bytes.IndexByte(r.buf[seen:], '\n'); nl >= 0 {
			r.pos = seen + nl + 1
			return nil
		}
		seen = len(r.buf)
		shift, ok, err := r.fill(start)
		start -= shift
		seen -= shift
		if err != nil {
			return err
		}
		if !ok {
			r.pos = len(r.buf)
			return nil
		}
	}
}

// record1 parses the object at buf[start:] into row and returns where it ends.
func (r *jsonReader) record1(row []expr.Value, start int) (int, error) {
	b := r.buf
	if b[start] != '{' {
		return 0, fmt.Errorf("expected a JSON object, found %q", b[start])
	}
	if r.slow {
		end, err := skipValue(b, start)
		if err != nil {
			return 0, err
		}
		return end, r.decodeSlow(row, b[start:end])
	}
	// Columns are set as their keys come; the others become null at the end.
	r.gen++
	if r.gen == 0 || len(r.setGen) != len(row) {
		r.setGen = make([]uint32, len(row))
		r.gen = 1
	}
	set := 0
	i := skipWS(b, start+1)
	if i >= len(b) {
		return 0, errIncomplete
	}
	if b[i] == '}' {
		r.nullRest(row, set)
		return i + 1, nil
	}
	for pos := 0; ; pos++ {
		if i >= len(b) {
			return 0, errIncomplete
		}
		if b[i] != '"' {
			return 0, fmt.Errorf("expected a field name at offset %d", i-start)
		}
		col, next := r.sameKey(pos, b, i)
		if next < 0 {
			key, n, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			col, next = r.lookup(pos, key), n
		}
		i = skipWS(b, next)
		if i >= len(b) {
			return 0, errIncomplete
		}
		if b[i] != ':' {
			return 0, fmt.Errorf("expected ':' at offset %d", i-start)
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return 0, errIncomplete
		}
		if col >= 0 { // a repeated key overrides, as when Jackson builds a map
			next, err := r.parseInto(&row[col], b, i, col)
			if err != nil {
				return 0, err
			}
			if r.setGen[col] != r.gen {
				r.setGen[col] = r.gen
				set++
			}
			i = next
		} else {
			next, err := skipValue(b, i)
			if err != nil {
				return 0, err
			}
			i = next
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, errIncomplete
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			r.nullRest(row, set)
			return i + 1, nil
		default:
			return 0, fmt.Errorf("expected ',' or '}' at offset %d", i-start)
		}
	}
}

// nullRest sets the columns the record did not have to null.
func (r *jsonReader) nullRest(row []expr.Value, set int) {
	if set == len(row) {
		return
	}
	for i := range row {
		if r.setGen[i] != r.gen {
			row[i] = nullValue(r.cols[i].Kind)
		}
	}
}

// sameKey checks whether the key token at b[i] (a '"') is, byte for byte,
// the plain key seen at the same position in the record before: records of
// one file usually list their keys in the same order. It returns the key's
// column and the offset after the token, or next < 0 when the key must be
// scanned and looked up.
func (r *jsonReader) sameKey(pos int, b []byte, i int) (col, next int) {
	if pos >= len(r.posKey) || !r.posPlain[pos] {
		return 0, -1
	}
	k := r.posKey[pos]
	end := i + 1 + len(k)
	if end >= len(b) || b[end] != '"' || string(b[i+1:end]) != k {
		return 0, -1
	}
	return r.byPos[pos], end + 1
}

// lookup finds the column of a key and remembers it for its position.
func (r *jsonReader) lookup(pos int, key string) int {
	if pos < len(r.byPos) && r.posKey[pos] == key {
		return r.byPos[pos]
	}
	c, ok := r.keys[key]
	if !ok {
		c = -1
	}
	for len(r.byPos) <= pos {
		r.byPos = append(r.byPos, -1)
		r.posKey = append(r.posKey, "")
		r.posPlain = append(r.posPlain, false)
	}
	r.byPos[pos] = c
	r.posKey[pos] = strings.Clone(key) // key may alias the input buffer
	// A key holding no quote, backslash or control character matches its
	// token byte for byte (sameKey).
	r.posPlain[pos] = !strings.ContainsFunc(key, func(c rune) bool { return c == '"' || c == '\\' || c < 0x20 })
	return c
}

// decodeSlow decodes the whole object and evaluates flattenSpec paths.
func (r *jsonReader) decodeSlow(row []expr.Value, obj []byte) error {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	var raw map[string]json.RawMessage // the fields as written, read on demand
	for i, c := range r.cols {
		var v any
		if p := r.colPath[i]; p != nil {
			v = p.eval(doc)
		} else if k := r.keyOf[i]; k != "" {
			v = doc[k]
			if _, isMap := v.(map[string]any); isMap && c.Kind == KindString || hasContainer(v) && c.Kind == KindString {
				// The document's key order survives only in its bytes.
				if raw == nil {
					if err := json.Unmarshal(obj, &raw); err != nil {
						return err
					}
				}
				if rb := bytes.TrimSpace(raw[k]); len(rb) > 0 {
					x, _, err := parseValue(rb, 0, c.Name, c.Kind)
					if err != nil {
						return err
					}
					row[i] = x
					continue
				}
			}
		}
		x, err := anyValue(v, c.Name, c.Kind)
		if err != nil {
			return err
		}
		row[i] = x
	}
	return nil
}

// anyValue converts a decoded JSON value to kind k.
func anyValue(v any, col string, k Kind) (expr.Value, error) {
	switch t := v.(type) {
	case nil:
		return nullValue(k), nil
	case string:
		return stringValue(t, col, k)
	case json.Number:
		return numberValue(string(t), col, k)
	case float64:
		if k == KindString || k == KindStringArray {
			return stringValue(javacompat.FormatDouble(t), col, k)
		}
		return numberValue(javacompat.FormatDouble(t), col, k)
	case bool:
		return boolValue(t, col, k)
	case []any:
		ek := elemKind(k)
		elems := make([]expr.Value, 0, len(t))
		for _, e := range t {
			switch e.(type) {
			case []any, map[string]any:
				e = containerText(e, ek)
			}
			x, err := anyValue(e, col, ek)
			if err != nil {
				return expr.Value{}, err
			}
			elems = append(elems, x)
		}
		return listValue(elems, col, k)
	case map[string]any:
		if k == KindString {
			return expr.String(containerText(t, k)), nil
		}
		return expr.Value{}, &convError{msg: fmt.Sprintf("Unable to parse an object for field[%s] as %s", col, kindName(k))}
	}
	return expr.Value{}, &convError{msg: fmt.Sprintf("unexpected value for field[%s]", col)}
}

// containerText is the text a decoded object or list becomes in a column
// of kind k: its JSON, or in a string dimension the Java text Druid's stores
// (javaString). A decoded object has lost its key order, so here its keys
// come sorted; decodeSlow reads a top-level field from the record's own
// bytes instead, keeping the document's order.
func containerText(v any, k Kind) string {
	b, _ := json.Marshal(v)
	if k != KindString {
		return string(b)
	}
	s, err := javaString(b)
	if err != nil {
		return string(b)
	}
	return s
}

// --- scanning helpers ------------------------------------------------------

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// scanString reads the string literal at b[i] (which is '"'). Strings
// without escapes alias b.
func scanString(b []byte, i int) (string, int, error) {
	j := i + 1
	// Eight bytes at a time while none is a quote, a backslash or a control
	// character; the byte-wise loop below handles the one found.
	for j+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[j:])
		if m := specialBytes(x); m != 0 {
			j += bits.TrailingZeros64(m) / 8
			break
		}
		j += 8
	}
	for j < len(b) {
		c := b[j]
		if c == '"' {
			if j == i+1 {
				return "", j + 1, nil
			}
			return unsafe.String(&b[i+1], j-i-1), j + 1, nil
		}
		if c == '\\' {
			return unescape(b, i)
		}
		if c < 0x20 {
			return "", 0, fmt.Errorf("control character in string")
		}
		j++
	}
	return "", 0, errIncomplete
}

// specialBytes marks (high bit) the bytes of x that are '"', '\\' or below
// 0x20. Bytes above a marked one may be marked wrongly (borrows), but the
// lowest mark is always right.
func specialBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	s := x ^ (lo * '\\')
	return ((q-lo)&^q | (s-lo)&^s | (x-lo*0x20)&^x) & hi
}

func unescape(b []byte, i int) (string, int, error) {
	out := make([]byte, 0, 32)
	j := i + 1
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			return string(out), j + 1, nil
		case c < 0x20:
			return "", 0, fmt.Errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(b) {
			return "", 0, errIncomplete
		}
		e := b[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n, err := hex4(b, j)
			if err != nil {
				return "", 0, err
			}
			j = n
			if utf16.IsSurrogate(r) {
				if j+6 <= len(b) && b[j] == '\\' && b[j+1] == 'u' {
					if r2, n2, err := hex4(b, j+2); err == nil {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r, j = d, n2
						}
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", 0, fmt.Errorf("invalid escape \\%c", e)
		}
	}
	return "", 0, errIncomplete
}

func hex4(b []byte, i int) (rune, int, error) {
	if i+4 > len(b) {
		return 0, 0, errIncomplete
	}
	var r rune
	for _, c := range b[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, 0, fmt.Errorf("bad \\u escape")
		}
	}
	return r, i + 4, nil
}

// scanNumber returns the end of the JSON number at b[i].
func scanNumber(b []byte, i int) (int, error) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == digits {
		if j >= len(b) {
			return 0, errIncomplete
		}
		return 0, fmt.Errorf("invalid number")
	}
	if j < len(b) && b[j] == '.' {
		j++
		d := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == d {
			return 0, numberCut(b, j)
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		d := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == d {
			return 0, numberCut(b, j)
		}
	}
	return j, nil
}

// numberCut is the error of a number missing digits at b[j]: incomplete when
// the input read so far ends there.
func numberCut(b []byte, j int) error {
	if j >= len(b) {
		return errIncomplete
	}
	return fmt.Errorf("invalid number")
}

func scanLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) {
		if string(b[i:]) == lit[:len(b)-i] {
			return 0, errIncomplete
		}
		return 0, fmt.Errorf("invalid literal")
	}
	if string(b[i:i+len(lit)]) != lit {
		return 0, fmt.Errorf("invalid literal")
	}
	return i + len(lit), nil
}

// skipValue returns the end of the JSON value at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errIncomplete
	}
	switch c := b[i]; {
	case c == '"':
		_, n, err := scanString(b, i)
		return n, err
	case c == '{' || c == '[':
		depth := 0
		j := i
		for j < len(b) {
			switch b[j] {
			case '{', '[':
				depth++
				j++
			case '}', ']':
				depth--
				j++
				if depth == 0 {
					return j, nil
				}
			case '"':
				_, n, err := scanString(b, j)
				if err != nil {
					return 0, err
				}
				j = n
			default:
				j++
			}
		}
		return 0, errIncomplete
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return 0, fmt.Errorf("unexpected character %q", b[i])
}

// parseInto converts the JSON value at b[i] for column col into *dst. The
// common cases (strings into string columns, plain numbers) are done here;
// parseValue does the rest.
func (r *jsonReader) parseInto(dst *expr.Value, b []byte, i, col int) (int, error) {
	k := r.cols[col].Kind
	switch c := b[i]; {
	case c == '"' && k == KindString:
		s, n, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		*dst = expr.String(s)
		return n, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if n := scanFastNumber(dst, b, i, k); n > 0 {
			return n, nil
		}
	}
	v, n, err := parseValue(b, i, r.cols[col].Name, k)
	if err != nil {
		return 0, err
	}
	*dst = v
	return n, nil
}

// parseValue converts the JSON value at b[i] to kind k.
func parseValue(b []byte, i int, col string, k Kind) (expr.Value, int, error) {
	switch c := b[i]; {
	case c == '"':
		s, n, err := scanString(b, i)
		if err != nil {
			return expr.Value{}, 0, err
		}
		v, err := stringValue(s, col, k)
		return v, n, err
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := scanNumber(b, i)
		if err != nil {
			return expr.Value{}, 0, err
		}
		if n == len(b) {
			return expr.Value{}, 0, errIncomplete // the number may go on in the next block
		}
		v, err := numberValue(unsafe.String(&b[i], n-i), col, k)
		return v, n, err
	case c == 't' || c == 'f':
		lit := "true"
		if c == 'f' {
			lit = "false"
		}
		n, err := scanLiteral(b, i, lit)
		if err != nil {
			return expr.Value{}, 0, err
		}
		v, err := boolValue(c == 't', col, k)
		return v, n, err
	case c == 'n':
		n, err := scanLiteral(b, i, "null")
		return nullValue(k), n, err
	case c == '[':
		return parseList(b, i, col, k)
	case c == '{':
		n, err := skipValue(b, i)
		if err != nil {
			return expr.Value{}, 0, err
		}
		if k == KindString {
			s, err := javaString(b[i:n])
			return expr.String(s), n, err
		}
		return expr.Value{}, 0, &convError{msg: fmt.Sprintf("Unable to parse an object for field[%s] as %s", col, kindName(k))}
	}
	return expr.Value{}, 0, fmt.Errorf("unexpected character %q", b[i])
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// scanFastNumber converts the common numbers at b[i] in one pass, without
// strconv: integers of up to 18 digits to LONG, and decimals of up to 15
// digits without exponent to DOUBLE or FLOAT. A decimal's digits and its
// power of ten are then exact doubles and one division rounds correctly, so
// the result equals strconv.ParseFloat's. The value goes to *dst and the
// end of the number is returned; for anything else, including a number the
// input read so far may cut, it returns -1 and leaves the number to
// parseValue.
func scanFastNumber(dst *expr.Value, b []byte, i int, k Kind) int {
	if k != KindLong && k != KindDouble && k != KindFloat {
		return -1
	}
	j := i
	neg := b[j] == '-'
	if neg {
		j++
	}
	var m uint64
	digits, frac := 0, -1 // frac: digits after the point, -1 without one
	for ; j < len(b); j++ {
		c := b[j]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
			continue
		case c == '.' && frac < 0 && k != KindLong:
			frac = 0
			continue
		}
		break
	}
	if j == len(b) || digits == 0 || frac == 0 {
		return -1
	}
	if c := b[j]; c == '.' || c == 'e' || c == 'E' {
		return -1
	}
	if k == KindLong {
		if digits > 18 {
			return -1
		}
		n := int64(m)
		if neg {
			n = -n
		}
		*dst = expr.Long(n)
		return j
	}
	if digits > 15 {
		return -1
	}
	f := float64(m)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	if k == KindFloat {
		f = float64(float32(f))
	}
	*dst = expr.Double(f)
	return j
}

func parseList(b []byte, i int, col string, k Kind) (expr.Value, int, error) {
	ek := elemKind(k)
	var elems []expr.Value
	j := skipWS(b, i+1)
	if j >= len(b) {
		return expr.Value{}, 0, errIncomplete
	}
	if b[j] == ']' {
		v, err := listValue(elems, col, k)
		return v, j + 1, err
	}
	for {
		if j >= len(b) {
			return expr.Value{}, 0, errIncomplete
		}
		var v expr.Value
		var err error
		var n int
		if b[j] == '[' || b[j] == '{' {
			// nested containers become their JSON text, or in a string
			// dimension the Java text Druid's stores (javaString)
			n, err = skipValue(b, j)
			if err == nil {
				text := string(b[j:n])
				if ek == KindString {
					text, err = javaString(b[j:n])
				}
				if err == nil {
					v, err = stringValue(text, col, ek)
				}
			}
		} else {
			v, n, err = parseValue(b, j, col, ek)
		}
		if err != nil {
			return expr.Value{}, 0, err
		}
		if v.Type() == expr.TypeString && !v.IsNull() {
			s, _ := v.AsString()
			v = expr.String(strings.Clone(s)) // elements outlive the record in some callers
		}
		elems = append(elems, v)
		j = skipWS(b, n)
		if j >= len(b) {
			return expr.Value{}, 0, errIncomplete
		}
		switch b[j] {
		case ',':
			j = skipWS(b, j+1)
		case ']':
			v, err := listValue(elems, col, k)
			return v, j + 1, err
		default:
			return expr.Value{}, 0, fmt.Errorf("expected ',' or ']' in list")
		}
	}
}
