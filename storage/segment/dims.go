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
	// multi-value rows: row i holds mv[offs[i]:offs[i+1]]
	offs []int32
	mv   []int32
	// staged row
	sid  int32
	smv  []int32
	snul bool
	// after finish
	sorted []string // dictionary in sorted order, without null
}

func newStringDim(multi bool) *stringDim {
	d := &stringDim{multi: multi, values: newInternTable()}
	if multi {
		d.offs = []int32{0}
	}
	return d
}

func (d *stringDim) intern(s string) (int32, error) {
	if len(d.values.arena)+len(s) > math.MaxUint32 {
		return 0, fmt.Errorf("segment: more than 4 GiB of distinct values in one column")
	}
	return d.values.intern(s), nil
}

func (d *stringDim) stage(v Value, key []byte) ([]byte, error) {
	var err error
	if !d.multi {
		d.sid = nullID
		switch v.kind {
		case vString:
			d.sid, err = d.intern(v.s)
		case vNull:
		case vStrings:
			switch len(v.ss) {
			case 0:
			case 1:
				d.sid, err = d.intern(v.ss[0])
			default:
				return key, fmt.Errorf("segment: %d values for a single-value dimension", len(v.ss))
			}
		default:
			if s, ok := v.AsString(); ok {
				d.sid, err = d.intern(s)
			}
		}
		if key == nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint32(key, uint32(d.sid)), err
	}
	d.smv = d.smv[:0]
	switch v.kind {
	case vStrings:
		for _, s := range v.ss {
			var id int32
			if id, err = d.intern(s); err != nil {
				return key, err
			}
			d.smv = append(d.smv, id)
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
	if !d.multi {
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

func (d *stringDim) reset() {
	d.values.reset()
	d.hasNull = false
	d.ids = d.ids[:0]
	d.mv = d.mv[:0]
	if d.multi {
		d.offs = append(d.offs[:0], 0)
	}
	d.sorted = nil
}

// finish sorts the dictionary and rewrites all ids to sorted ids, with null
// as id 0 when some row holds null.
func (d *stringDim) finish() {
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
