package engine

import (
	"context"
	"math"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/expr"
	"strata/javacompat"
	"strata/querynode/query"
	"strata/storage/segment"
)

// columns resolves the columns one query reads on one segment (physical,
// virtual, or missing) into block readers (numSource, keySource), each
// decoding a block once and caching it. It is used by one goroutine.
type columns struct {
	seg   *Segment
	data  *segment.Segment
	vcols map[string]*query.VirtualColumn
	nums  map[string]numSource
	keys  map[string]keySource
	rpb   int // rows per block
	// evaluating guards against virtual columns referring to themselves.
	evaluating map[string]bool
}

func newColumns(s *Segment, vcols []*query.VirtualColumn) *columns {
	c := &columns{seg: s, data: s.Data, vcols: map[string]*query.VirtualColumn{},
		nums: map[string]numSource{}, keys: map[string]keySource{}, rpb: s.Data.RowsPerBlock(), evaluating: map[string]bool{}}
	for _, v := range vcols {
		c.vcols[v.Name] = v
	}
	return c
}

func (c *columns) blockLen(b int) int {
	s, e := c.data.BlockRows(b)
	return e - s
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		if err == context.DeadlineExceeded {
			return query.Errorf(query.Timeout, "Query timeout")
		}
		return query.Errorf(query.Cancelled, "Query cancelled")
	}
	return nil
}

// colKind reports the storage kind of a physical or virtual column;
// ok is false when the column does not exist.
func (c *columns) colKind(name string) (segment.Kind, bool) {
	if v, ok := c.vcols[name]; ok {
		switch v.OutputType {
		case "LONG":
			return segment.KindLong, true
		case "DOUBLE":
			return segment.KindDouble, true
		case "FLOAT":
			return segment.KindFloat, true
		case "STRING":
			return segment.KindString, true
		}
		if t, ok := c.exprType(v.Expression.Expr); ok {
			switch t {
			case expr.TypeLong:
				return segment.KindLong, true
			case expr.TypeDouble:
				return segment.KindDouble, true
			}
		}
		return segment.KindString, true
	}
	ci, ok := c.data.Column(name)
	if !ok {
		return 0, false
	}
	return ci.Kind, true
}

// exprType is the output type of a vectorizable expression.
func (c *columns) exprType(e *expr.Expr) (expr.Type, bool) {
	p, ok := e.Vectorize(c.vecType, 1)
	if !ok {
		return 0, false
	}
	return p.OutputType(), true
}

func (c *columns) vecType(name string) (expr.Type, bool) {
	if c.evaluating[name] {
		return 0, false
	}
	k, ok := c.colKind(name)
	if !ok {
		return expr.TypeLong, true // missing columns read as null longs
	}
	switch k {
	case segment.KindLong:
		return expr.TypeLong, true
	case segment.KindFloat, segment.KindDouble:
		return expr.TypeDouble, true
	}
	return 0, false
}

// numSource reads a column as numbers, block by block.
type numSource interface {
	kind() segment.Kind // KindLong, KindFloat or KindDouble
	longs(b int) ([]int64, error)
	doubles(b int) ([]float64, error)
	// nulls returns a bitset of the null rows of block b, nil when none.
	nulls(b int) ([]uint64, error)
	// stats returns block statistics when known (for skipping blocks).
	stats(b int) (segment.BlockStats, bool)
}

// num returns the numeric reading of a column (physical, virtual, string
// parsed as numbers, or all-null when missing).
func (c *columns) num(name string) (numSource, error) {
	if s, ok := c.nums[name]; ok {
		return s, nil
	}
	var src numSource
	if v, ok := c.vcols[name]; ok {
		es, err := c.newExprNum(v)
		if err != nil {
			return nil, err
		}
		src = es
	} else if ci, ok := c.data.Column(name); !ok {
		src = &missingNum{cols: c}
	} else {
		switch ci.Kind {
		case segment.KindLong, segment.KindFloat, segment.KindDouble:
			var col *segment.NumericColumn
			if name == segment.TimeColumn {
				col = c.data.Time()
			} else {
				var err error
				if col, err = c.data.Numeric(name); err != nil {
					return nil, err
				}
			}
			p := &physNum{cols: c, col: col, k: ci.Kind, lb: -1, db: -1, nb: -1}
			if col.HasNulls() {
				bm, err := col.Nulls()
				if err != nil {
					return nil, err
				}
				p.nullBM = bm
			}
			src = p
		case segment.KindString:
			ks, err := c.key(name)
			if err != nil {
				return nil, err
			}
			src = &keyNum{cols: c, ks: ks, b: -1}
		default:
			src = &missingNum{cols: c}
		}
	}
	c.nums[name] = src
	return src, nil
}

type physNum struct {
	cols   *columns
	col    *segment.NumericColumn
	k      segment.Kind
	nullBM *roaring.Bitmap
	lb, db int
	l      []int64
	d      []float64
	nb     int
	nbits  []uint64
	gl     []int64 // gathered rows (longsAt, doublesAt)
	gd     []float64
}

func (p *physNum) kind() segment.Kind { return p.k }

func (p *physNum) longs(b int) ([]int64, error) {
	if p.lb != b {
		var err error
		if p.l, err = p.col.Longs(b, p.l); err != nil {
			return nil, err
		}
		p.lb = b
	}
	return p.l, nil
}

func (p *physNum) doubles(b int) ([]float64, error) {
	if p.db != b {
		var err error
		if p.d, err = p.col.Doubles(b, p.d); err != nil {
			return nil, err
		}
		p.db = b
	}
	return p.d, nil
}

func (p *physNum) stats(b int) (segment.BlockStats, bool) { return p.col.BlockStats(b), true }

// gatherer is a numSource that can read a few rows of a block without
// decoding the whole block.
type gatherer interface {
	longsAt(b int, sel []int32) ([]int64, error)
	doublesAt(b int, sel []int32) ([]float64, error)
}

// sparse reports whether reading n selected rows of a block of size rows one
// by one beats decoding the block: a random read costs a few times a
// sequential unpack.
func sparse(n, rows int) bool { return n*4 < rows }

// longsAt returns the values of the rows sel of block b, in sel's order; the
// block decoded whole when it already is.
func (p *physNum) longsAt(b int, sel []int32) ([]int64, error) {
	if p.lb == b {
		p.gl = resize(p.gl, len(sel))
		for k, i := range sel {
			p.gl[k] = p.l[i]
		}
		return p.gl, nil
	}
	var err error
	p.gl, err = p.col.LongsAt(b, sel, p.gl)
	return p.gl, err
}

func (p *physNum) doublesAt(b int, sel []int32) ([]float64, error) {
	if p.db == b {
		p.gd = resize(p.gd, len(sel))
		for k, i := range sel {
			p.gd[k] = p.d[i]
		}
		return p.gd, nil
	}
	var err error
	p.gd, err = p.col.DoublesAt(b, sel, p.gd)
	return p.gd, err
}

func (p *physNum) nulls(b int) ([]uint64, error) {
	if p.nullBM == nil {
		return nil, nil
	}
	if p.nb != b {
		p.nbits = p.cols.blockBits(p.nullBM, b, p.nbits)
		p.nb = b
	}
	if p.col.BlockStats(b).NullCount == 0 {
		return nil, nil
	}
	return p.nbits, nil
}

// blockBits extracts the rows of block b present in bm as a bitset over
// the block's rows.
func (c *columns) blockBits(bm *roaring.Bitmap, b int, dst []uint64) []uint64 {
	start, end := c.data.BlockRows(b)
	words := (end - start + 63) / 64
	if cap(dst) < words {
		dst = make([]uint64, words)
	}
	dst = dst[:words]
	clear(dst)
	it := bm.Iterator()
	it.AdvanceIfNeeded(uint32(start))
	for it.HasNext() {
		r := int(it.Next())
		if r >= end {
			break
		}
		r -= start
		dst[r>>6] |= 1 << (uint(r) & 63)
	}
	return dst
}

func bitSet(bits []uint64, i int) bool { return bits != nil && bits[i>>6]&(1<<(uint(i)&63)) != 0 }

// missingNum is a column the segment lacks: every row is null.
type missingNum struct {
	cols  *columns
	l     []int64
	d     []float64
	nbits []uint64
}

func (m *missingNum) kind() segment.Kind { return segment.KindLong }
func (m *missingNum) longs(b int) ([]int64, error) {
	n := m.cols.blockLen(b)
	if cap(m.l) < n {
		m.l = make([]int64, n)
	}
	return m.l[:n], nil
}
func (m *missingNum) doubles(b int) ([]float64, error) {
	n := m.cols.blockLen(b)
	if cap(m.d) < n {
		m.d = make([]float64, n)
	}
	return m.d[:n], nil
}
func (m *missingNum) nulls(b int) ([]uint64, error) {
	n := m.cols.blockLen(b)
	words := (n + 63) / 64
	if len(m.nbits) < words {
		m.nbits = make([]uint64, words)
		for i := range m.nbits {
			m.nbits[i] = math.MaxUint64
		}
	}
	return m.nbits[:words], nil
}
func (m *missingNum) stats(b int) (segment.BlockStats, bool) {
	n := m.cols.blockLen(b)
	return segment.BlockStats{Rows: n, NullCount: n}, true
}

// keyNum reads a string column as numbers: each dictionary value is parsed
// once; unparsable values and multi-value rows are null.
type keyNum struct {
	cols    *columns
	ks      keySource
	parsedL []int64
	parsedD []float64
	ok      []bool
	b       int
	l       []int64
	d       []float64
	nbits   []uint64
	hasNull bool
}

func (k *keyNum) kind() segment.Kind { return segment.KindDouble }

func (k *keyNum) load(b int) error {
	if k.b == b {
		return nil
	}
	offs, ids, err := k.ks.ids(b)
	if err != nil {
		return err
	}
	for c := len(k.ok); c < k.ks.card(); c++ {
		v := k.ks.value(int32(c))
		s, _ := v.String()
		var l int64
		var d float64
		ok := false
		if !v.IsNull() {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				l, d, ok = n, float64(n), true
			} else if f, err := strconv.ParseFloat(s, 64); err == nil {
				l, d, ok = int64(f), f, true
			}
		}
		k.parsedL, k.parsedD, k.ok = append(k.parsedL, l), append(k.parsedD, d), append(k.ok, ok)
	}
	n := k.cols.blockLen(b)
	k.l, k.d = resize(k.l, n), resize(k.d, n)
	k.nbits = resize(k.nbits, (n+63)/64)
	clear(k.nbits)
	k.hasNull = false
	for i := range n {
		id := int32(-1)
		if offs == nil {
			id = ids[i]
		} else if offs[i+1]-offs[i] == 1 {
			id = ids[offs[i]]
		}
		if id < 0 || !k.ok[id] {
			k.l[i], k.d[i] = 0, 0
			k.nbits[i>>6] |= 1 << (uint(i) & 63)
			k.hasNull = true
			continue
		}
		k.l[i], k.d[i] = k.parsedL[id], k.parsedD[id]
	}
	k.b = b
	return nil
}

func (k *keyNum) longs(b int) ([]int64, error)     { return k.l, k.load(b) }
func (k *keyNum) doubles(b int) ([]float64, error) { return k.d, k.load(b) }
func (k *keyNum) nulls(b int) ([]uint64, error) {
	if err := k.load(b); err != nil || !k.hasNull {
		return nil, err
	}
	return k.nbits, nil
}
func (k *keyNum) stats(int) (segment.BlockStats, bool) { return segment.BlockStats{}, false }

func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// exprNum evaluates an expression virtual column block by block, with the
// vectorized program when the expression allows it.
type exprNum struct {
	cols *columns
	v    *query.VirtualColumn
	prog *expr.VectorProgram
	out  segment.Kind
	b    int
	l    []int64
	d    []float64
	nbit []uint64
	null bool
}

func (c *columns) newExprNum(v *query.VirtualColumn) (*exprNum, error) {
	e := &exprNum{cols: c, v: v, b: -1, out: segment.KindDouble}
	c.evaluating[v.Name] = true
	prog, ok := v.Expression.Expr.Vectorize(c.vecType, c.rpb)
	delete(c.evaluating, v.Name)
	if ok {
		e.prog = prog
		if prog.OutputType() == expr.TypeLong {
			e.out = segment.KindLong
		}
	}
	switch v.OutputType {
	case "LONG":
		e.out = segment.KindLong
	case "FLOAT":
		e.out = segment.KindFloat
	case "DOUBLE":
		e.out = segment.KindDouble
	}
	return e, nil
}

func (e *exprNum) kind() segment.Kind { return e.out }

// Vector implements expr.VectorBindings for the block being evaluated.
func (e *exprNum) Vector(name string) *expr.Vector {
	src, err := e.cols.num(name)
	if err != nil {
		return nil
	}
	v := &expr.Vector{}
	if src.kind() == segment.KindLong {
		v.Type = expr.TypeLong
		v.Longs, err = src.longs(e.b)
	} else {
		v.Type = expr.TypeDouble
		v.Doubles, err = src.doubles(e.b)
	}
	if err != nil {
		return nil
	}
	v.Nulls, _ = src.nulls(e.b)
	return v
}

func (e *exprNum) load(b int) error {
	if e.b == b {
		return nil
	}
	e.b = b
	n := e.cols.blockLen(b)
	e.l, e.d = resize(e.l, n), resize(e.d, n)
	e.nbit = resize(e.nbit, (n+63)/64)
	clear(e.nbit)
	e.null = false
	if e.prog != nil {
		vec, err := e.prog.Eval(e, n)
		if err != nil {
			return query.Invalidf("expression [%s]: %v", e.v.Expression.Source, err)
		}
		for i := range n {
			if vec.IsNull(i) {
				e.l[i], e.d[i] = 0, 0
				e.nbit[i>>6] |= 1 << (uint(i) & 63)
				e.null = true
			} else if vec.Type == expr.TypeLong {
				e.l[i], e.d[i] = vec.Longs[i], float64(vec.Longs[i])
			} else {
				e.d[i], e.l[i] = vec.Doubles[i], javacompat.DoubleToLong(vec.Doubles[i])
			}
		}
		return nil
	}
	rb := &rowBindings{cols: e.cols, b: b}
	for i := range n {
		rb.i = i
		val, err := e.v.Expression.Expr.Eval(rb)
		if err != nil {
			return query.Invalidf("expression [%s]: %v", e.v.Expression.Source, err)
		}
		if err := rb.err; err != nil {
			return err
		}
		if d, ok := val.AsDouble(); ok && !val.IsNull() {
			l, _ := val.AsLong()
			e.l[i], e.d[i] = l, d
		} else {
			e.l[i], e.d[i] = 0, 0
			e.nbit[i>>6] |= 1 << (uint(i) & 63)
			e.null = true
		}
	}
	return nil
}

func (e *exprNum) longs(b int) ([]int64, error)     { return e.l, e.load(b) }
func (e *exprNum) doubles(b int) ([]float64, error) { return e.d, e.load(b) }
func (e *exprNum) nulls(b int) ([]uint64, error) {
	if err := e.load(b); err != nil || !e.null {
		return nil, err
	}
	return e.nbit, nil
}
func (e *exprNum) stats(int) (segment.BlockStats, bool) { return segment.BlockStats{}, false }

// rowBindings reads one row of the segment for the row-path expression
// evaluator. Column errors are kept in err (Bindings cannot fail).
type rowBindings struct {
	cols *columns
	b    int
	i    int
	err  error
}

// Get implements expr.Bindings.
func (r *rowBindings) Get(name string) expr.Value {
	k, ok := r.cols.colKind(name)
	if !ok {
		return expr.Null
	}
	if _, virtual := r.cols.vcols[name]; virtual && k == segment.KindString {
		ks, err := r.cols.key(name)
		if err != nil {
			r.err = err
			return expr.Null
		}
		return keyExprValue(ks, r.b, r.i, &r.err)
	}
	switch k {
	case segment.KindLong, segment.KindFloat, segment.KindDouble:
		src, err := r.cols.num(name)
		if err != nil {
			r.err = err
			return expr.Null
		}
		nulls, err := src.nulls(r.b)
		if err != nil {
			r.err = err
			return expr.Null
		}
		if bitSet(nulls, r.i) {
			if src.kind() == segment.KindLong {
				return expr.NullOf(expr.TypeLong)
			}
			return expr.NullOf(expr.TypeDouble)
		}
		if src.kind() == segment.KindLong {
			l, err := src.longs(r.b)
			if err != nil {
				r.err = err
				return expr.Null
			}
			return expr.Long(l[r.i])
		}
		d, err := src.doubles(r.b)
		if err != nil {
			r.err = err
			return expr.Null
		}
		return expr.Double(d[r.i])
	case segment.KindString:
		ks, err := r.cols.key(name)
		if err != nil {
			r.err = err
			return expr.Null
		}
		return keyExprValue(ks, r.b, r.i, &r.err)
	}
	return expr.Null
}

func keyExprValue(ks keySource, b, i int, errp *error) expr.Value {
	offs, ids, err := ks.ids(b)
	if err != nil {
		*errp = err
		return expr.Null
	}
	if offs == nil {
		return valueToExpr(ks.value(ids[i]))
	}
	lo, hi := offs[i], offs[i+1]
	switch hi - lo {
	case 0:
		return expr.Null
	case 1:
		return valueToExpr(ks.value(ids[lo]))
	}
	elems := make([]expr.Value, 0, hi-lo)
	for _, id := range ids[lo:hi] {
		elems = append(elems, valueToExpr(ks.value(id)))
	}
	return expr.Array(expr.TypeStringArray, elems)
}

func valueToExpr(v Value) expr.Value {
	switch v.K {
	case KLong:
		return expr.Long(v.L)
	case KDouble, KFloat:
		return expr.Double(v.D)
	case KString:
		return expr.String(v.S)
	case KArray:
		return arrayToExpr(v.S)
	}
	return expr.Null
}

func exprToValue(v expr.Value) Value {
	if v.IsNull() {
		return Null
	}
	switch v.Type() {
	case expr.TypeLong:
		return Long(v.Long())
	case expr.TypeDouble:
		return Double(v.Double())
	case expr.TypeString:
		return Str(v.Str())
	}
	if v.Type().IsArray() {
		return exprArrayValue(v)
	}
	s, ok := v.AsString()
	if !ok {
		return Null
	}
	return Str(s)
}
