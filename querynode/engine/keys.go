package engine

import (
	"fmt"
	"math"

	"strata/querynode/query"
	"strata/storage/segment"
)

// keySource reads a column as dictionary ids: per block, each row's id
// (or ids, for multi-value sources) into a dictionary whose values are
// materialised only at the end. Dictionary columns use their own ids;
// other columns get a dictionary built while reading (it may grow, so
// card() can increase between blocks).
type keySource interface {
	// ids returns the ids of block b's rows. offs is nil for single-value
	// sources (ids[i] belongs to row i); otherwise row i holds
	// ids[offs[i]:offs[i+1]], and a row with no ids reads as null.
	ids(b int) (offs, ids []int32, err error)
	card() int
	value(id int32) Value
}

// key returns the id reading of a column (no extraction).
func (c *columns) key(name string) (keySource, error) {
	if k, ok := c.keys[name]; ok {
		return k, nil
	}
	var ks keySource
	kind, ok := c.colKind(name)
	_, virtual := c.vcols[name]
	switch {
	case !ok:
		ks = &missingKey{cols: c}
	case virtual && kind == segment.KindString:
		var err error
		if ks, err = newExprKey(c, c.vcols[name]); err != nil { // exprdict.go
			return nil, err
		}
	case kind == segment.KindString:
		col, err := c.data.Strings(name)
		if err != nil {
			return nil, err
		}
		d, err := col.Dictionary()
		if err != nil {
			return nil, err
		}
		ks = &physKey{cols: c, name: name, col: col, hasNull: d.HasNull(), n: d.Len(), multi: col.MultiValue(), b: -1}
	case kind == segment.KindComplex:
		ks = &missingKey{cols: c}
	default:
		src, err := c.num(name)
		if err != nil {
			return nil, err
		}
		ks = newNumKey(c, src, nil)
	}
	c.keys[name] = ks
	return ks, nil
}

// keyFor returns the id reading of a dimension spec: the column with the
// spec's extraction function and value filter applied.
func (c *columns) keyFor(d *query.DimensionSpec) (keySource, error) {
	if d.Extraction == nil && d.ValueFilter == nil {
		return c.key(d.Dimension)
	}
	cacheKey := fmt.Sprintf("%s\x00%p", d.Dimension, d)
	if k, ok := c.keys[cacheKey]; ok {
		return k, nil
	}
	var ks keySource
	kind, ok := c.colKind(d.Dimension)
	if ok && d.Extraction != nil && (kind == segment.KindLong || kind == segment.KindFloat || kind == segment.KindDouble) {
		// Numbers (notably __time) go to the extraction function as numbers.
		src, err := c.num(d.Dimension)
		if err != nil {
			return nil, err
		}
		ks = newNumKey(c, src, d.Extraction)
		if d.ValueFilter != nil {
			ks = newMappedKey(ks, nil, d.ValueFilter)
		}
	} else {
		base, err := c.key(d.Dimension)
		if err != nil {
			return nil, err
		}
		ks = newMappedKey(base, d.Extraction, d.ValueFilter)
	}
	c.keys[cacheKey] = ks
	return ks, nil
}

// physKey is a dictionary-encoded string column.
type physKey struct {
	cols    *columns
	name    string
	col     *segment.StringColumn
	hasNull bool
	n       int
	multi   bool
	vals    []string
	verr    error
	b       int
	offs    []int32
	idbuf   []int32
}

func (p *physKey) card() int { return p.n }

func (p *physKey) ids(b int) ([]int32, []int32, error) {
	if p.b == b {
		if p.multi {
			return p.offs, p.idbuf, nil
		}
		return nil, p.idbuf, nil
	}
	var err error
	if p.multi {
		p.offs, p.idbuf, err = p.col.BlockMultiIDs(b, p.offs, p.idbuf)
	} else {
		p.idbuf, err = p.col.BlockIDs(b, p.idbuf)
	}
	if err != nil {
		p.b = -1
		return nil, nil, err
	}
	p.b = b
	if p.multi {
		return p.offs, p.idbuf, nil
	}
	return nil, p.idbuf, nil
}

func (p *physKey) dict() ([]string, error) {
	if p.vals == nil && p.verr == nil {
		p.vals, p.verr = p.cols.seg.dictValues(p.name, p.col)
	}
	return p.vals, p.verr
}

func (p *physKey) value(id int32) Value {
	if p.hasNull && id == 0 {
		return Null
	}
	vals, err := p.dict()
	if err != nil || int(id) >= len(vals) || id < 0 {
		return Null
	}
	return Str(vals[id])
}

// missingKey is a column the segment lacks: one id, null.
type missingKey struct {
	cols *columns
	buf  []int32
}

func (m *missingKey) card() int         { return 1 }
func (m *missingKey) value(int32) Value { return Null }
func (m *missingKey) ids(b int) ([]int32, []int32, error) {
	n := m.cols.blockLen(b)
	if cap(m.buf) < n {
		m.buf = make([]int32, n)
	}
	return nil, m.buf[:n], nil
}

// numKey builds a dictionary over the distinct values of a numeric source
// (optionally through an extraction function). Id 0 is null.
type numKey struct {
	cols  *columns
	src   numSource
	fn    *query.ExtractionFn
	byL   map[int64]int32
	byStr map[string]int32
	vals  []Value
	b     int
	buf   []int32
}

func newNumKey(c *columns, src numSource, fn *query.ExtractionFn) *numKey {
	k := &numKey{cols: c, src: src, fn: fn, byL: map[int64]int32{}, vals: []Value{Null}, b: -1}
	if fn != nil {
		k.byStr = map[string]int32{}
	}
	return k
}

func (k *numKey) card() int            { return len(k.vals) }
func (k *numKey) value(id int32) Value { return k.vals[id] }

func (k *numKey) ids(b int) ([]int32, []int32, error) {
	if k.b == b {
		return nil, k.buf, nil
	}
	nulls, err := k.src.nulls(b)
	if err != nil {
		return nil, nil, err
	}
	n := k.cols.blockLen(b)
	k.buf = resize(k.buf, n)
	isLong := k.src.kind() == segment.KindLong
	var ls []int64
	var ds []float64
	if isLong {
		ls, err = k.src.longs(b)
	} else {
		ds, err = k.src.doubles(b)
	}
	if err != nil {
		return nil, nil, err
	}
	for i := range n {
		if bitSet(nulls, i) {
			if k.fn != nil {
				k.buf[i] = k.strID(k.fn.Apply("", true))
			} else {
				k.buf[i] = 0
			}
			continue
		}
		var key int64
		if isLong {
			key = ls[i]
		} else {
			key = int64(math.Float64bits(ds[i]))
		}
		id, ok := k.byL[key]
		if !ok {
			id = k.newID(isLong, key)
			k.byL[key] = id
		}
		k.buf[i] = id
	}
	k.b = b
	return nil, k.buf, nil
}

func (k *numKey) newID(isLong bool, key int64) int32 {
	var v Value
	switch {
	case isLong:
		v = Long(key)
	case k.src.kind() == segment.KindFloat:
		v = Float(float32(math.Float64frombits(uint64(key))))
	default:
		v = Double(math.Float64frombits(uint64(key)))
	}
	if k.fn == nil {
		k.vals = append(k.vals, v)
		return int32(len(k.vals) - 1)
	}
	if isLong {
		return k.strID(k.fn.ApplyLong(key))
	}
	s, _ := v.String()
	return k.strID(k.fn.Apply(s, false))
}

func (k *numKey) strID(s string, null bool) int32 {
	if null {
		return 0
	}
	id, ok := k.byStr[s]
	if !ok {
		k.vals = append(k.vals, Str(s))
		id = int32(len(k.vals) - 1)
		k.byStr[s] = id
	}
	return id
}

// mappedKey applies an extraction function and/or value filter to another
// key source through an id remapping table filled as inner ids appear.
// Id 0 is null; values dropped by the filter map to -1.
type mappedKey struct {
	inner  keySource
	fn     *query.ExtractionFn
	filter func(string, bool) bool
	remap  []int32
	byStr  map[string]int32
	vals   []Value
	b      int
	offs   []int32
	buf    []int32
	multi  bool
}

func newMappedKey(inner keySource, fn *query.ExtractionFn, filter func(string, bool) bool) *mappedKey {
	return &mappedKey{inner: inner, fn: fn, filter: filter, byStr: map[string]int32{}, vals: []Value{Null}, b: -1}
}

func (m *mappedKey) card() int            { return len(m.vals) }
func (m *mappedKey) value(id int32) Value { return m.vals[id] }

func (m *mappedKey) extend() {
	for c := len(m.remap); c < m.inner.card(); c++ {
		v := m.inner.value(int32(c))
		s, ok := v.String()
		null := !ok
		if m.fn != nil {
			s, null = m.fn.Apply(s, null)
		}
		if m.filter != nil && !m.filter(s, null) {
			m.remap = append(m.remap, -1)
			continue
		}
		if null {
			m.remap = append(m.remap, 0)
			continue
		}
		id, ok := m.byStr[s]
		if !ok {
			m.vals = append(m.vals, Str(s))
			id = int32(len(m.vals) - 1)
			m.byStr[s] = id
		}
		m.remap = append(m.remap, id)
	}
}

func (m *mappedKey) ids(b int) ([]int32, []int32, error) {
	if m.b == b {
		if m.multi {
			return m.offs, m.buf, nil
		}
		return nil, m.buf, nil
	}
	offs, ids, err := m.inner.ids(b)
	if err != nil {
		return nil, nil, err
	}
	m.extend()
	m.b = b
	if offs == nil && m.filter == nil {
		m.multi = false
		m.buf = resize(m.buf, len(ids))
		for i, id := range ids {
			m.buf[i] = m.remap[id]
		}
		return nil, m.buf, nil
	}
	// Rebuild rows, dropping filtered values.
	m.multi = true
	n := len(ids)
	if offs != nil {
		n = len(offs) - 1
	}
	m.offs = resize(m.offs, n+1)
	m.buf = m.buf[:0]
	m.offs[0] = 0
	for i := range n {
		lo, hi := int32(i), int32(i+1)
		if offs != nil {
			lo, hi = offs[i], offs[i+1]
		}
		for _, id := range ids[lo:hi] {
			if r := m.remap[id]; r >= 0 {
				m.buf = append(m.buf, r)
			}
		}
		m.offs[i+1] = int32(len(m.buf))
	}
	return m.offs, m.buf, nil
}

// exprKey evaluates a string expression virtual column row by row into a
// dictionary built on the fly. Id 0 is null.
type exprKey struct {
	cols  *columns
	v     *query.VirtualColumn
	b     int
	buf   []int32
	byVal map[string]int32
	vals  []Value
}

func (e *exprKey) card() int            { return len(e.vals) }
func (e *exprKey) value(id int32) Value { return e.vals[id] }

func (e *exprKey) ids(b int) ([]int32, []int32, error) {
	if e.b == b {
		return nil, e.buf, nil
	}
	if e.cols.evaluating[e.v.Name] {
		return nil, nil, query.Invalidf("virtual column [%s] refers to itself", e.v.Name)
	}
	e.cols.evaluating[e.v.Name] = true
	defer delete(e.cols.evaluating, e.v.Name)
	n := e.cols.blockLen(b)
	e.buf = resize(e.buf, n)
	rb := &rowBindings{cols: e.cols, b: b}
	for i := range n {
		rb.i = i
		val, err := e.v.Expression.Expr.Eval(rb)
		if err != nil {
			return nil, nil, query.Invalidf("expression [%s]: %v", e.v.Expression.Source, err)
		}
		if rb.err != nil {
			return nil, nil, rb.err
		}
		s, ok := val.AsString()
		if !ok {
			e.buf[i] = 0
			continue
		}
		id, found := e.byVal[s]
		if !found {
			e.vals = append(e.vals, Str(s))
			id = int32(len(e.vals) - 1)
			e.byVal[s] = id
		}
		e.buf[i] = id
	}
	e.b = b
	return nil, e.buf, nil
}
