package segment

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"strata/storage/encoding"
)

// dimAcc accumulates one dimension column while a segment is built.
type dimAcc interface {
	// stage converts the input value of the row being added and appends its
	// rollup key bytes; commit then appends it as a new row. A rolled-up
	// row is staged but not committed.
	stage(v Value, key []byte) ([]byte, error)
	commit()
	reset()
	// finish prepares for writing (sorts dictionaries, remaps ids).
	finish()
	compare(a, b int32) int
	// sortKey reports the bits an order-preserving key of this dimension
	// needs (ok=false when none fits, e.g. multi-value or float).
	sortKeyWidth() (int, bool)
	sortKey(row int32) uint64
}

// nullID marks null in the insertion-ordered ids of a string dimension.
const nullID = -1

// stringDim accumulates a string dimension. Values get insertion-order ids
// while rows arrive; finish sorts the dictionary (null first) and remaps.
type stringDim struct {
	multi   bool
	values  *internTable
	hasNull bool // some row holds null
	// single-value rows
	ids []int32
	// Without rollup (batched), rows are committed to pend and reach ids
	// a batch at a time, so that the dictionary lookups of values of at
	// most 16 bytes are done together (see internTable.internShort). An
	// entry is such a value's key, or, with length skipKey, a row whose id
	// is known (in k0): null or a longer value, interned at once. pend has
	// capacity pendBatch: stage writes the row's entry at pend[len(pend)],
	// and commit extends pend over it. With rollup, the rollup key needs
	// the id at once, and rows go to ids directly.
	batched bool
	pend    []ikey
	// multi-value rows: row i holds mv[offs[i]:offs[i+1]]
	offs []int32
	mv   []int32
	// staged row
	sid int32
	smv []int32
	// after finish
	sorted []string // dictionary in sorted order, without null
}

// pendBatch is the number of lookups batched: their slots (one cache line
// each) stay in the first-level cache between the two passes.
const pendBatch = 256

// newStringDim returns an empty dimension; rollup tells whether rows are
// staged with a rollup key.
func newStringDim(multi, rollup bool) *stringDim {
	d := &stringDim{multi: multi, values: newInternTable()}
	switch {
	case multi:
		d.offs = []int32{0}
	case !rollup:
		d.batched = true
		d.pend = make([]ikey, 0, pendBatch)
	}
	return d
}

// room checks that n more bytes of distinct values and a full batch of
// waiting lookups (at most 16 bytes each) keep the arena within 4 GiB: a
// batch then needs no check per row.
func (d *stringDim) room(n int) error {
	if len(d.values.arena)+16*pendBatch+n > math.MaxUint32 {
		return fmt.Errorf("segment: more than 4 GiB of distinct values in one column")
	}
	return nil
}

func (d *stringDim) intern(s string) (int32, error) {
	if err := d.room(len(s)); err != nil {
		return 0, err
	}
	return d.values.intern(s), nil
}

// singleString is the value of a single-value string dimension: ok=false
// means null.
func singleString(v Value) (s string, ok bool, err error) {
	switch v.kind {
	case vString:
		return v.str(), true, nil
	case vNull:
		return "", false, nil
	case vStrings, vStringsNull:
		switch v.n {
		case 0:
			return "", false, nil
		case 1:
			s, ok := v.only()
			return s, ok, nil
		}
		return "", false, fmt.Errorf("segment: %d values for a single-value dimension", v.n)
	}
	s, ok = v.AsString()
	return s, ok, nil
}

func (d *stringDim) stage(v Value, key []byte) ([]byte, error) {
	var err error
	if d.batched {
		e := &d.pend[:len(d.pend)+1][len(d.pend)]
		if v.kind == vString && v.n <= 16 && len(d.pend) > 0 {
			// The common case, in short (room for a whole batch was
			// checked when it started).
			e.k0, e.k1 = words(v.str())
			e.n = uint32(v.n)
			return nil, nil
		}
		s, ok, err := singleString(v)
		if err != nil {
			return nil, err
		}
		id := int32(nullID)
		switch {
		case !ok:
		case len(s) <= 16:
			if len(d.pend) == 0 {
				if err := d.room(0); err != nil {
					return nil, err
				}
			}
			e.k0, e.k1 = words(s)
			e.n = uint32(len(s))
			return nil, nil
		default:
			if id, err = d.intern(s); err != nil {
				return nil, err
			}
		}
		e.k0, e.n = uint64(uint32(id)), skipKey
		return nil, nil
	}
	if !d.multi {
		d.sid = nullID
		s, ok, err := singleString(v)
		if err != nil {
			return key, err
		}
		if ok {
			if d.sid, err = d.intern(s); err != nil {
				return key, err
			}
		}
		if key == nil {
			return nil, nil
		}
		return binary.LittleEndian.AppendUint32(key, uint32(d.sid)), nil
	}
	d.smv = d.smv[:0]
	switch v.kind {
	case vStrings, vStringsNull:
		err = v.elems(func(s string, ok bool) error {
			id := int32(nullID)
			if ok {
				var err error
				if id, err = d.intern(s); err != nil {
					return err
				}
			}
			d.smv = append(d.smv, id)
			return nil
		})
		if err != nil {
			return key, err
		}
	case vNull:
		d.smv = append(d.smv, nullID)
	default:
		id := int32(nullID)
		if s, ok := v.AsString(); ok {
			if id, err = d.intern(s); err != nil {
				return key, err
			}
		}
		d.smv = append(d.smv, id)
	}
	if key == nil {
		return nil, nil
	}
	key = binary.AppendUvarint(key, uint64(len(d.smv)))
	for _, id := range d.smv {
		key = binary.LittleEndian.AppendUint32(key, uint32(id))
	}
	return key, nil
}

func (d *stringDim) commit() {
	switch {
	case d.batched:
		d.pend = d.pend[:len(d.pend)+1]
		if len(d.pend) == pendBatch {
			d.flush()
		}
		return
	case !d.multi:
		d.ids = push(d.ids, d.sid)
		if d.sid == nullID {
			d.hasNull = true
		}
		return
	}
	for _, id := range d.smv {
		if id == nullID {
			d.hasNull = true
		}
	}
	for _, id := range d.smv {
		d.mv = push(d.mv, id)
	}
	d.offs = push(d.offs, int32(len(d.mv)))
}

// flush moves the batch of rows in pend to ids, looking up their values.
func (d *stringDim) flush() {
	if len(d.pend) == 0 {
		return
	}
	n := len(d.ids)
	d.ids = extend(d.ids, len(d.pend))
	ids := d.ids[n:]
	d.values.internShort(d.pend, ids)
	for i, e := range d.pend {
		if e.n == skipKey {
			ids[i] = int32(uint32(e.k0))
			if ids[i] == nullID {
				d.hasNull = true
			}
		}
	}
	d.pend = d.pend[:0]
}

func (d *stringDim) reset() {
	d.values.reset()
	d.hasNull = false
	d.ids = d.ids[:0]
	d.pend = d.pend[:0]
	d.mv = d.mv[:0]
	if d.multi {
		d.offs = append(d.offs[:0], 0)
	}
	d.sorted = nil
}

// finish sorts the dictionary and rewrites all ids to sorted ids, with null
// as id 0 when some row holds null.
func (d *stringDim) finish() {
	d.flush()
	order := d.values.sortedIDs()
	remap := make([]int32, len(order))
	base := int32(0)
	if d.hasNull {
		base = 1
	}
	d.sorted = make([]string, len(order))
	for newID, old := range order {
		remap[old] = int32(newID) + base
		d.sorted[newID] = d.values.value(old) // aliases the arena until reset
	}
	fix := func(ids []int32) {
		for i, id := range ids {
			if id == nullID {
				ids[i] = 0
			} else {
				ids[i] = remap[id]
			}
		}
	}
	fix(d.ids)
	fix(d.mv)
}

func (d *stringDim) compare(a, b int32) int {
	if !d.multi {
		return cmp.Compare(d.ids[a], d.ids[b])
	}
	return slices.Compare(d.mv[d.offs[a]:d.offs[a+1]], d.mv[d.offs[b]:d.offs[b+1]])
}

func (d *stringDim) cardinality() int {
	if d.hasNull {
		return len(d.sorted) + 1
	}
	return len(d.sorted)
}

func (d *stringDim) sortKeyWidth() (int, bool) {
	if d.multi {
		return 0, false
	}
	return encoding.BitsFor(uint64(max(d.cardinality()-1, 0))), true
}

func (d *stringDim) sortKey(row int32) uint64 { return uint64(d.ids[row]) }

// longDim is a long dimension; nulls sort first.
type longDim struct {
	longSource
	sv   int64
	snul bool
}

func (d *longDim) stage(v Value, key []byte) ([]byte, error) {
	d.sv, d.snul = v.AsLong()
	d.snul = !d.snul
	if key == nil {
		return nil, nil
	}
	if d.snul {
		d.sv = 0
		return append(key, 0), nil
	}
	key = append(key, 1)
	return binary.LittleEndian.AppendUint64(key, uint64(d.sv)), nil
}

func (d *longDim) commit() {
	d.vals = push(d.vals, d.sv)
	if d.snul {
		d.nulls.set(int32(len(d.vals) - 1))
	}
}

func (d *longDim) reset()  { d.vals = d.vals[:0]; d.nulls.reset() }
func (d *longDim) finish() {}

func (d *longDim) compare(a, b int32) int {
	na, nb := d.nulls.has(a), d.nulls.has(b)
	if na || nb {
		return cmpNulls(na, nb)
	}
	return cmp.Compare(d.vals[a], d.vals[b])
}

func (d *longDim) sortKeyWidth() (int, bool) { return 0, false }
func (d *longDim) sortKey(int32) uint64      { return 0 }

// cmpNulls orders null before non-null (at least one argument is null).
func cmpNulls(na, nb bool) int {
	switch {
	case na && nb:
		return 0
	case na:
		return -1
	}
	return 1
}

// doubleDim is a double or float dimension (float values are kept rounded
// to float32).
type doubleDim struct {
	doubleSource
	float bool
	sv    float64
	snul  bool
}

func (d *doubleDim) stage(v Value, key []byte) ([]byte, error) {
	var ok bool
	d.sv, ok = v.AsDouble()
	d.snul = !ok
	if d.snul {
		d.sv = 0
	} else if d.float {
		d.sv = float64(float32(d.sv))
	}
	if d.sv == 0 {
		d.sv = 0 // fold -0 into +0 so that equal values roll up together
	}
	switch {
	case key == nil:
		return nil, nil
	case d.snul:
		return append(key, 0), nil
	}
	key = append(key, 1)
	return binary.LittleEndian.AppendUint64(key, math.Float64bits(d.sv)), nil
}

func (d *doubleDim) commit() {
	d.vals = push(d.vals, d.sv)
	if d.snul {
		d.nulls.set(int32(len(d.vals) - 1))
	}
}

func (d *doubleDim) reset()  { d.vals = d.vals[:0]; d.nulls.reset() }
func (d *doubleDim) finish() {}

func (d *doubleDim) compare(a, b int32) int {
	na, nb := d.nulls.has(a), d.nulls.has(b)
	if na || nb {
		return cmpNulls(na, nb)
	}
	return cmp.Compare(d.vals[a], d.vals[b])
}

func (d *doubleDim) sortKeyWidth() (int, bool) { return 0, false }
func (d *doubleDim) sortKey(int32) uint64      { return 0 }
