package sqlplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// nativeRows reads the broker's answer to a native query of type queryType
// as rows holding, for each of names, that native column's value ("" is the
// row's timestamp, "result.x" a timeBoundary's x), each value as
// encoding/json decodes it into an any with UseNumber.
//
// It scans the answer once and decodes only the members a column asks for.
// Decoding the whole answer into a map per row cost more than running the
// query itself on answers of a few hundred rows (bench Q10: 1.2 ms of
// decoding beside an 11 ms query), which made SQL slower than native.
func nativeRows(queryType string, result []byte, names []string) ([][]any, error) {
	r := &rowReader{s: jscan{b: result}, queryType: queryType, width: len(names), pos: make(map[string][]int, len(names))}
	for i, n := range names {
		r.pos[n] = append(r.pos[n], i)
	}
	if err := r.read(); err != nil {
		return nil, fmt.Errorf("reading the native result: %w", err)
	}
	if r.rows == nil {
		r.rows = [][]any{}
	}
	return r.rows, nil
}

type rowReader struct {
	s         jscan
	queryType string
	width     int
	pos       map[string][]int // native name → positions in a row
	rows      [][]any

	// The last timestamp read: rows of one time bucket share it.
	tsRaw []byte
	ts    any
}

// timestamp reads an entry's timestamp, reusing the last one's value when
// it is the same string.
func (r *rowReader) timestamp(s *jscan) (any, error) {
	if s.peek() != '"' {
		return s.value()
	}
	raw, err := s.str()
	if err != nil {
		return nil, err
	}
	if r.tsRaw != nil && bytes.Equal(raw, r.tsRaw) {
		return r.ts, nil
	}
	str, err := unquote(raw)
	if err != nil {
		return nil, err
	}
	r.tsRaw, r.ts = raw, string(str)
	return r.ts, nil
}

func (r *rowReader) newRow() []any { return make([]any, r.width) }

// set stores v at every position of the native name key.
func (r *rowReader) set(row []any, key string, v any) {
	for _, p := range r.pos[key] {
		row[p] = v
	}
}

// wanted reports whether a column reads the native name key; the byte
// slice conversion in the map index does not allocate.
func (r *rowReader) wanted(key []byte) bool {
	_, ok := r.pos[string(key)]
	return ok
}

func (r *rowReader) read() error {
	s := &r.s
	if s.peek() == 'n' { // null: no rows
		return s.literal("null")
	}
	err := s.array(func() error {
		if s.peek() == 'n' { // a null entry reads as an empty object
			if err := s.literal("null"); err != nil {
				return err
			}
			return r.entry(nil)
		}
		return r.entry(s)
	})
	if err != nil {
		return err
	}
	if r.queryType == "timeBoundary" && len(r.rows) == 0 {
		// An empty table: MIN/MAX over no rows is one row of NULLs.
		r.rows = append(r.rows, r.newRow())
	}
	return nil
}

// entry reads one element of the answer's top-level array (s nil: a null
// element, read as an empty object).
func (r *rowReader) entry(s *jscan) error {
	members := func(fn func(key []byte) error) error {
		if s == nil {
			return nil
		}
		return s.object(fn)
	}
	switch r.queryType {
	case "scan":
		// {"columns":[...],"events":[[...],...]}: the columns may come
		// after the events, so both are read once the object is.
		var cols, events []byte
		err := members(func(key []byte) error {
			start := s.i
			if err := s.skip(); err != nil {
				return err
			}
			switch string(key) {
			case "columns":
				cols = s.b[start:s.i]
			case "events":
				events = s.b[start:s.i]
			}
			return nil
		})
		if err != nil || events == nil {
			return err
		}
		var names []string
		if cols != nil {
			cs := jscan{b: cols}
			if cs.peek() == '[' {
				if err := cs.array(func() error {
					v, err := cs.value()
					names = append(names, fmt.Sprint(v))
					return err
				}); err != nil {
					return err
				}
			}
		}
		es := jscan{b: events}
		if es.peek() != '[' {
			return nil
		}
		return es.array(func() error {
			row := r.newRow()
			r.rows = append(r.rows, row)
			if es.peek() != '[' { // not a row of values: its columns are null
				return es.skip()
			}
			i := 0
			return es.array(func() error {
				if i >= len(names) || len(r.pos[names[i]]) == 0 {
					i++
					return es.skip()
				}
				v, err := es.value()
				r.set(row, names[i], v)
				i++
				return err
			})
		})
	case "timeseries":
		// {"timestamp":t,"result":{...}}
		row := r.newRow()
		var ts any
		err := members(func(key []byte) error {
			switch {
			case string(key) == "timestamp":
				v, err := r.timestamp(s)
				ts = v
				return err
			case string(key) == "result":
				clear(row) // a repeated member: the last one counts
				if s.peek() == '{' {
					return r.members(s, row)
				}
			}
			return s.skip()
		})
		if err != nil {
			return err
		}
		r.set(row, "", ts)
		r.rows = append(r.rows, row)
		return nil
	case "topN":
		// {"timestamp":t,"result":[{...},...]}
		mark := len(r.rows)
		return members(func(key []byte) error {
			if string(key) != "result" {
				return s.skip()
			}
			r.rows = r.rows[:mark] // a repeated member: the last one counts
			if s.peek() != '[' {
				return s.skip()
			}
			return s.array(func() error {
				row := r.newRow()
				r.rows = append(r.rows, row)
				if s.peek() != '{' { // not an object: a row of nulls
					return s.skip()
				}
				return r.members(s, row)
			})
		})
	case "groupBy":
		// {"version":"v1","timestamp":t,"event":{...}}; an entry without
		// an event object is a row itself.
		var top, event []any // top made only if a column reads it
		var ts any
		err := members(func(key []byte) error {
			if string(key) == "event" {
				event = nil // a repeated member: the last one counts
				if s.peek() == '{' {
					event = r.newRow()
					return r.members(s, event)
				}
			}
			if string(key) == "timestamp" {
				v, err := r.timestamp(s)
				ts = v
				if top == nil && r.wanted(key) {
					top = r.newRow()
				}
				r.set(top, "timestamp", v)
				return err
			}
			if !r.wanted(key) {
				return s.skip()
			}
			v, err := s.value()
			if top == nil {
				top = r.newRow()
			}
			r.set(top, string(key), v)
			return err
		})
		if err != nil {
			return err
		}
		switch {
		case event != nil:
			r.set(event, "", ts)
			top = event
		case top == nil:
			top = r.newRow()
		}
		r.rows = append(r.rows, top)
		return nil
	case "timeBoundary":
		// {"timestamp":t,"result":{"minTime":...,"maxTime":...}}
		row := r.newRow()
		err := members(func(key []byte) error {
			if string(key) != "result" {
				return s.skip()
			}
			clear(row) // a repeated member: the last one counts
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(k []byte) error {
				name := "result." + string(k)
				if len(r.pos[name]) == 0 {
					return s.skip()
				}
				v, err := s.value()
				r.set(row, name, v)
				return err
			})
		})
		if err != nil {
			return err
		}
		r.rows = append(r.rows, row)
		return nil
	}
	if s == nil {
		return nil
	}
	return s.skip()
}

// members reads an object's members into row by native name.
func (r *rowReader) members(s *jscan, row []any) error {
	return s.object(func(key []byte) error {
		if !r.wanted(key) {
			return s.skip()
		}
		v, err := s.value()
		r.set(row, string(key), v)
		return err
	})
}

// jscan is a forward scanner over one JSON text.
type jscan struct {
	b []byte
	i int
}

var errJSONEnd = errors.New("unexpected end of JSON input")

func (s *jscan) errAt(what string) error {
	if s.i >= len(s.b) {
		return errJSONEnd
	}
	return fmt.Errorf("invalid character %q %s at offset %d", s.b[s.i], what, s.i)
}

// peek skips white space and returns the next byte (0 at the end).
func (s *jscan) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

func (s *jscan) literal(lit string) error {
	s.peek()
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return s.errAt("in literal")
	}
	s.i += len(lit)
	return nil
}

// array calls elem at the start of each element; elem reads it.
func (s *jscan) array(elem func() error) error {
	if s.peek() != '[' {
		return s.errAt("looking for beginning of array")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errAt("after array element")
		}
	}
}

// object calls member with each member's (unescaped) name, positioned at
// its value; member reads the value.
func (s *jscan) object(member func(key []byte) error) error {
	if s.peek() != '{' {
		return s.errAt("looking for beginning of object")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.errAt("looking for beginning of object key string")
		}
		raw, err := s.str()
		if err != nil {
			return err
		}
		key, err := unquote(raw)
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.errAt("after object key")
		}
		s.i++
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errAt("after object key:value pair")
		}
	}
}

// str scans a string token and returns it with its quotes.
func (s *jscan) str() ([]byte, error) {
	start := s.i
	for i := s.i + 1; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '\\':
			i++
		case c == '"':
			s.i = i + 1
			return s.b[start:s.i], nil
		case c < 0x20:
			s.i = i
			return nil, s.errAt("in string literal")
		}
	}
	s.i = len(s.b)
	return nil, errJSONEnd
}

// unquote is a string token's text: the bytes themselves when they need no
// unescaping or UTF-8 repair, else what encoding/json makes of them.
func unquote(raw []byte) ([]byte, error) {
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return in, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil {
		return nil, err
	}
	return []byte(str), nil
}

// skip scans past one value.
func (s *jscan) skip() error {
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(func([]byte) error { return s.skip() })
	case '[':
		return s.array(s.skip)
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, err := s.number()
		return err
	}
}

// number scans a number token, checking its syntax as JSON defines it.
func (s *jscan) number() ([]byte, error) {
	b, i := s.b, s.i
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.i = i
		return nil, s.errAt("looking for beginning of value")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.i = i
			return nil, s.errAt("after decimal point in numeric literal")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.i = i
			return nil, s.errAt("in exponent of numeric literal")
		}
	}
	tok := b[s.i:i]
	s.i = i
	return tok, nil
}

// value reads one value as encoding/json decodes it into an any with
// UseNumber: json.Number, string, bool, nil, []any, map[string]any.
func (s *jscan) value() (any, error) {
	switch c := s.peek(); c {
	case '"':
		raw, err := s.str()
		if err != nil {
			return nil, err
		}
		str, err := unquote(raw)
		return string(str), err
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	case 'n':
		return nil, s.literal("null")
	case '[', '{':
		start := s.i
		if err := s.skip(); err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(s.b[start:s.i]))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	default:
		tok, err := s.number()
		return json.Number(string(tok)), err
	}
}

// isUTCMillis reports whether s is a valid time printed as the SQL API
// prints a UTC TIMESTAMP (2006-01-02T15:04:05.000Z), as native answers
// carry their timestamps: parsing and printing it again gives s itself.
func isUTCMillis(s string) bool {
	const layout = "2006-01-02T15:04:05.000Z"
	if len(s) != len(layout) {
		return false
	}
	for i := range len(layout) {
		switch layout[i] {
		case '-', 'T', ':', '.', 'Z':
			if s[i] != layout[i] {
				return false
			}
		default:
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
	}
	// The fields' ranges (month 13, Feb 30, hour 24) as time.Parse checks
	// them: a date that time.Date would normalise is not valid.
	n := func(i, j int) int {
		v := 0
		for _, c := range s[i:j] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d := n(0, 4), n(5, 7), n(8, 10)
	if mo < 1 || mo > 12 || d < 1 || n(11, 13) > 23 || n(14, 16) > 59 || n(17, 19) > 59 {
		return false
	}
	return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Day() == d
}
