package segment

import (
	"fmt"
)

// Kind is the storage type of a column.
type Kind uint8

// Column kinds. The numeric values are part of the file format.
const (
	KindLong    Kind = 1
	KindFloat   Kind = 2
	KindDouble  Kind = 3
	KindString  Kind = 4
	KindComplex Kind = 5
)

func (k Kind) String() string {
	switch k {
	case KindLong:
		return "LONG"
	case KindFloat:
		return "FLOAT"
	case KindDouble:
		return "DOUBLE"
	case KindString:
		return "STRING"
	case KindComplex:
		return "COMPLEX"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Numeric reports whether k is long, float or double.
func (k Kind) Numeric() bool { return k == KindLong || k == KindFloat || k == KindDouble }

// Role tells what a column is for.
type Role uint8

// Column roles. The numeric values are part of the file format.
const (
	RoleTime      Role = 0
	RoleDimension Role = 1
	RoleMetric    Role = 2
)

func (r Role) String() string {
	switch r {
	case RoleTime:
		return "time"
	case RoleDimension:
		return "dimension"
	case RoleMetric:
		return "metric"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// TimeColumn is the name of the time column every segment has.
const TimeColumn = "__time"

// Interval is a half-open time range [Start, End) in epoch milliseconds.
type Interval struct {
	Start, End int64
}

// Contains reports whether t lies in the interval.
func (iv Interval) Contains(t int64) bool { return t >= iv.Start && t < iv.End }

// ColumnInfo describes one column of a segment: its schema and the
// statistics recorded in the footer.
type ColumnInfo struct {
	Name           string
	Kind           Kind
	Role           Role
	MultiValue     bool   // string columns with more than one value per row
	HasNulls       bool   // some row is null (or, multi-value, holds null or nothing)
	NullCount      int    // rows that are null (multi-value: rows that hold null or no value)
	ComplexType    string // complex columns: type name (see package blob)
	ComplexVersion int    // complex columns: format version of the blobs
	Aggregator     string // metrics: JSON of the Metric that produced the column
	Codec          string // block compression: none, lz4 or zstd
	Size           int64  // bytes the column occupies in the file

	MinLong, MaxLong     int64   // long columns: range of non-null values
	MinDouble, MaxDouble float64 // float and double columns: range of non-null values
	Cardinality          int     // string columns: dictionary size, counting null
	TotalValues          int     // string columns: number of values over all rows
	MinString, MaxString string  // string columns: least and greatest non-null value
}

// Compression selects the block codec of a column.
type Compression uint8

// Compression choices. Auto tries LZ4 and zstd on the column's first block
// and keeps the better trade-off (see encoding.ChooseCodec).
const (
	CompressAuto Compression = iota
	CompressNone
	CompressLZ4
	CompressZstd
)
