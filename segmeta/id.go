package segmeta

import (
	"cmp"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"strata/interval"
)

// ID identifies a segment: datasource, interval, version and partition number.
// Its string form is <ds>_<start>_<end>_<version>[_<partitionNum>], the
// partition suffix written only when partitionNum is not 0.
type ID struct {
	DataSource   string
	Interval     interval.Interval
	Version      string
	PartitionNum int32
}

// String returns the id's canonical string form.
func (id ID) String() string {
	b := make([]byte, 0, len(id.DataSource)+len(id.Version)+60)
	return string(id.AppendTo(b))
}

// AppendTo appends the id's string form to dst.
func (id ID) AppendTo(dst []byte) []byte {
	dst = append(dst, id.DataSource...)
	dst = append(dst, '_')
	dst = interval.AppendMillis(dst, id.Interval.Start, nil)
	dst = append(dst, '_')
	dst = interval.AppendMillis(dst, id.Interval.End, nil)
	dst = append(dst, '_')
	dst = append(dst, id.Version...)
	if id.PartitionNum != 0 {
		dst = append(dst, '_')
		dst = strconv.AppendInt(dst, int64(id.PartitionNum), 10)
	}
	return dst
}

// Compare orders ids by datasource, interval start, interval end, version and
// partition number (Druid's SegmentId order).
func (id ID) Compare(o ID) int {
	if c := strings.Compare(id.DataSource, o.DataSource); c != 0 {
		return c
	}
	if c := cmp.Compare(id.Interval.Start, o.Interval.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(id.Interval.End, o.Interval.End); c != 0 {
		return c
	}
	if c := strings.Compare(id.Version, o.Version); c != 0 {
		return c
	}
	return cmp.Compare(id.PartitionNum, o.PartitionNum)
}

var errBadID = errors.New("segment: id does not parse for the datasource")

// ParseID parses id as a segment id of dataSource. When the id ends in
// "_<positive number>" both readings are valid; like Druid's tryParse the
// partition-number reading wins. Use PossibleIDsWithDataSource for both.
func ParseID(dataSource, id string) (ID, error) {
	var buf [2]ID
	ps := appendParsesWithDataSource(buf[:0], dataSource, id)
	if len(ps) == 0 {
		return ID{}, errBadID
	}
	return ps[0], nil
}

// PossibleIDsWithDataSource returns the 0, 1 or 2 valid readings of id as a
// segment id of dataSource: with a trailing "_<n>" (n > 0) first the reading
// with partition n, then the one where "_<n>" ends the version.
func PossibleIDsWithDataSource(dataSource, id string) []ID {
	return appendParsesWithDataSource(nil, dataSource, id)
}

func appendParsesWithDataSource(dst []ID, dataSource, id string) []ID {
	if dataSource == "" || len(id) <= len(dataSource) || !strings.HasPrefix(id, dataSource) || id[len(dataSource)] != '_' {
		return dst
	}
	rest := id[len(dataSource)+1:]
	i := strings.IndexByte(rest, '_')
	if i < 0 {
		return dst
	}
	j := strings.IndexByte(rest[i+1:], '_')
	if j < 0 {
		return dst
	}
	j += i + 1
	start, err := parseIDTime(rest[:i])
	if err != nil {
		return dst
	}
	end, err := parseIDTime(rest[i+1 : j])
	if err != nil || start >= end {
		return dst
	}
	iv := interval.Interval{Start: start, End: end}
	version := rest[j+1:] // version, possibly followed by _<partitionNum>
	if k := strings.LastIndexByte(version, '_'); k >= 0 {
		if n, ok := parseGuavaInt(version[k+1:]); ok && n > 0 {
			dst = append(dst, ID{DataSource: dataSource, Interval: iv, Version: version[:k], PartitionNum: n})
		}
	}
	return append(dst, ID{DataSource: dataSource, Interval: iv, Version: version})
}

// parseGuavaInt parses like Guava's Ints.tryParse: optional '-', decimal
// digits, int32 range.
func parseGuavaInt(s string) (int32, bool) {
	if s == "" || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// parseIDTime parses an id timestamp as Joda's ISODateTimeFormat.dateTime()
// does: a full date, 'T', time with fraction, and an offset.
func parseIDTime(s string) (int64, error) {
	t := strings.IndexByte(s, 'T')
	if t < 10 || !strings.Contains(s[t:], ".") {
		return 0, errBadID
	}
	last := s[len(s)-1]
	if last != 'Z' && !strings.ContainsAny(s[t:], "+-") {
		return 0, errBadID
	}
	return interval.ParseTime(s)
}

// commonDateTime matches timestamps as DateTime.toString() writes them; it is
// the heuristic Druid uses to guess where the datasource name ends.
var commonDateTime = regexp.MustCompile(`[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9]{3}(Z|[+\-][0-9]{2}(:[0-9]{2}))`)

// mostProbableDataSource returns the text before the first timestamp that
// follows a '_', or "".
func mostProbableDataSource(id string) string {
	for _, m := range commonDateTime.FindAllStringIndex(id, -1) {
		if m[0] > 0 && id[m[0]-1] == '_' {
			return id[:m[0]-1]
		}
	}
	return ""
}

// PossibleIDs returns every valid reading of id when its datasource is not
// known (Druid's iterateAllPossibleParsings): the readings with the most
// probable datasource (the text before the first '_'-preceded timestamp)
// first, then those of every other '_'-delimited prefix, shortest first.
func PossibleIDs(id string) []ID {
	probable := mostProbableDataSource(id)
	var out []ID
	if probable != "" {
		out = appendParsesWithDataSource(out, probable, id)
	}
	for p := 1; p < len(id); p++ {
		if id[p] == '_' && p != len(probable) {
			out = appendParsesWithDataSource(out, id[:p], id)
		}
	}
	return out
}
