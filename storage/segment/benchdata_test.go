package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"
)

// This file reproduces the benchmark data set of /work/shared/bench/gen
// (same generator, same draw order, same values) in process, so that the
// build benchmark does not need the 2.5 GB NDJSON file.

type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *splitmix) float() float64 { return float64(r.next()>>11) / (1 << 53) }

type zipfTable struct{ cdf []float64 }

func newZipfTable(n int, s float64) *zipfTable {
	cdf := make([]float64, n)
	sum := 0.0
	for k := 0; k < n; k++ {
		sum += 1 / math.Pow(float64(k+1), s)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	return &zipfTable{cdf}
}

func (z *zipfTable) draw(r *splitmix) int {
	u := r.float()
	lo, hi := 0, len(z.cdf)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if z.cdf[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// benchTables holds the Zipf tables and, built on first use by strs,
// every possible string value. BenchmarkBuild does not use the string
// tables (it renders values with a rowFiller): their 1.1 million string
// headers would be a live heap of pointers that every garbage collection
// during the timed build scans, for the harness's sake.
type benchTables struct {
	channels, pages, users, countries, cities    *zipfTable
	strsOnce                                     sync.Once
	channelS, pageS, userS, countryS, cityS, nsS []string
}

var (
	benchOnce sync.Once
	benchTbl  *benchTables
)

func tables() *benchTables {
	benchOnce.Do(func() {
		benchTbl = &benchTables{
			channels: newZipfTable(50, 1.2), pages: newZipfTable(100_000, 1.1), users: newZipfTable(1_000_000, 1.05),
			countries: newZipfTable(200, 1.3), cities: newZipfTable(5_000, 1.1),
		}
	})
	return benchTbl
}

// strs builds the string tables once and returns t.
func (t *benchTables) strs() *benchTables {
	t.strsOnce.Do(func() {
		// gen formats prefix + zero-padded i for every i < n (what
		// fmt.Sprintf("prefix%0*d", digits, i) gives, without its cost: the
		// user table has a million entries).
		gen := func(n int, prefix string, digits int) []string {
			out := make([]string, n)
			buf := make([]byte, 0, n*(len(prefix)+digits))
			for i := range out {
				start := len(buf)
				buf = append(buf, prefix...)
				num := strconv.Itoa(i)
				for k := len(num); k < digits; k++ {
					buf = append(buf, '0')
				}
				buf = append(buf, num...)
				out[i] = unsafeString(buf[start:len(buf):len(buf)])
			}
			return out
		}
		t.channelS, t.pageS, t.userS = gen(50, "#ch", 2), gen(100_000, "Page_", 6), gen(1_000_000, "user", 7)
		t.countryS, t.cityS, t.nsS = gen(200, "C", 3), gen(5_000, "City", 4), gen(10, "ns", 1)
	})
	return t
}

// benchRow is one generated row, as indexes into the string tables.
type benchRow struct {
	ms                                     int64
	channel, page, user, country, city, ns int32
	robot, isNew                           bool
	added, deleted, commentLength          int64
	price                                  float64
}

// benchGen generates the rows of a data set of `total` rows over `days`
// days from 2024-01-01, in order.
type benchGen struct {
	t     *benchTables
	r     splitmix
	i     int
	total int
	span  int64
	t0    int64
}

var benchStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

func newBenchGen(total, days int) *benchGen {
	return &benchGen{t: tables(), r: splitmix{s: 1}, total: total, span: int64(days) * 86400, t0: benchStart}
}

func (g *benchGen) next(row *benchRow) bool {
	if g.i >= g.total {
		return false
	}
	r, t := &g.r, g.t
	sec := int64(float64(g.i)/float64(g.total)*float64(g.span)) + int64(r.next()%60) - 30
	sec = max(0, min(sec, g.span-1))
	row.ms = g.t0 + sec*1000
	added := int64(-math.Log(1-r.float()) * 300)
	deleted := int64(-math.Log(1-r.float()) * 80)
	row.price = math.Round(math.Exp(r.float()*6)*100) / 100
	row.channel = int32(t.channels.draw(r))
	row.page = int32(t.pages.draw(r))
	row.user = int32(t.users.draw(r))
	row.country = int32(t.countries.draw(r))
	row.city = int32(t.cities.draw(r))
	row.ns = int32(r.next() % 10)
	row.robot = r.next()%5 == 0
	row.isNew = r.next()%10 == 0
	row.added, row.deleted = added, deleted
	row.commentLength = int64(r.next() % 500)
	g.i++
	return true
}

// wikiSpec is the bench data source: nine string dimensions, the numbers as
// long/double metrics, no rollup, one DAY chunk.
func wikiSpec(dayStart int64) Spec {
	fields := []Field{
		{Name: "channel", Kind: KindString}, {Name: "page", Kind: KindString}, {Name: "user", Kind: KindString},
		{Name: "country", Kind: KindString}, {Name: "city", Kind: KindString}, {Name: "namespace", Kind: KindString},
		{Name: "isRobot", Kind: KindString}, {Name: "isNew", Kind: KindString},
		{Name: "added", Kind: KindLong}, {Name: "deleted", Kind: KindLong}, {Name: "delta", Kind: KindLong},
		{Name: "commentLength", Kind: KindLong}, {Name: "price", Kind: KindDouble},
	}
	spec := Spec{Fields: fields, Interval: Interval{Start: dayStart, End: dayStart + day}}
	for _, f := range fields[:8] {
		spec.Dimensions = append(spec.Dimensions, Dimension{Name: f.Name})
	}
	for _, f := range fields[8:12] {
		spec.Metrics = append(spec.Metrics, Metric{Type: "longSum", Name: f.Name, FieldName: f.Name})
	}
	spec.Metrics = append(spec.Metrics, Metric{Type: "doubleSum", Name: "price", FieldName: "price"})
	return spec
}

var boolS = [2]string{"false", "true"}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fill sets row to the values of br (no allocation: strings come from the
// tables).
func (t *benchTables) fill(row *Row, br *benchRow) {
	t.strs()
	v := row.Values
	v[0] = String(t.channelS[br.channel])
	v[1] = String(t.pageS[br.page])
	v[2] = String(t.userS[br.user])
	v[3] = String(t.countryS[br.country])
	v[4] = String(t.cityS[br.city])
	v[5] = String(t.nsS[br.ns])
	v[6] = String(boolS[b2i(br.robot)])
	v[7] = String(boolS[b2i(br.isNew)])
	v[8] = Long(br.added)
	v[9] = Long(br.deleted)
	v[10] = Long(br.added - br.deleted)
	v[11] = Long(br.commentLength)
	v[12] = Double(br.price)
	row.Time = br.ms
}

// rowFiller builds bench rows as a parser would hand them over: the
// string values are rendered into one small buffer reused for every row
// (hot in cache, like a parser's line buffer; the writer copies what it
// keeps). Picking them from the tables of all values instead, as fill does,
// costs two cache misses per high-cardinality value (a 16 MB table of
// string headers and 11 MB of bytes for the users), which are the
// harness's, not the writer's.
type rowFiller struct{ buf [64]byte }

// fill sets row to the values of br, equal to benchTables.fill's. The
// strings are valid until the next call.
func (f *rowFiller) fill(row *Row, br *benchRow) {
	b := f.buf[:0]
	v := row.Values
	var s string
	b, s = appendPadded(b, "#ch", br.channel, 2)
	v[0] = String(s)
	b, s = appendPadded(b, "Page_", br.page, 6)
	v[1] = String(s)
	b, s = appendPadded(b, "user", br.user, 7)
	v[2] = String(s)
	b, s = appendPadded(b, "C", br.country, 3)
	v[3] = String(s)
	b, s = appendPadded(b, "City", br.city, 4)
	v[4] = String(s)
	_, s = appendPadded(b, "ns", br.ns, 1)
	v[5] = String(s)
	v[6] = String(boolS[b2i(br.robot)])
	v[7] = String(boolS[b2i(br.isNew)])
	v[8] = Long(br.added)
	v[9] = Long(br.deleted)
	v[10] = Long(br.added - br.deleted)
	v[11] = Long(br.commentLength)
	v[12] = Double(br.price)
	row.Time = br.ms
}

// appendPadded appends prefix and n zero-padded to digits digits (n has
// at most that many), and returns the appended text as a string aliasing b.
// It renders four digits at a time from a table.
func appendPadded(b []byte, prefix string, n int32, digits int) ([]byte, string) {
	start := len(b)
	b = append(b, prefix...)
	end := len(b) + digits
	b = b[:end]
	i := end
	for ; i-4 >= end-digits; i -= 4 {
		q := n / 10000
		binary.LittleEndian.PutUint32(b[i-4:], digitQuads[n-10000*q])
		n = q
	}
	for ; i > end-digits; i-- {
		b[i-1] = byte('0' + n%10)
		n /= 10
	}
	return b, unsafeString(b[start:end])
}

// digitQuads[n] is n as four ASCII digits, little-endian.
var digitQuads = func() (t [10000]uint32) {
	for n := range t {
		t[n] = uint32('0'+n/1000) | uint32('0'+n/100%10)<<8 | uint32('0'+n/10%10)<<16 | uint32('0'+n%10)<<24
	}
	return t
}()

// ndjsonReader parses the bench NDJSON format (one flat object per line,
// keys in the generator's order) into rows, reusing its buffers.
type ndjsonReader struct {
	sc   *bufio.Scanner
	strs [8][]byte
}

func newNDJSONReader(r io.Reader) *ndjsonReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &ndjsonReader{sc: sc}
}

var benchKeys = []string{"timestamp", "channel", "page", "user", "country", "city", "namespace", "isRobot", "isNew",
	"added", "deleted", "delta", "commentLength", "price"}

// next parses one line into row. The row's strings point into the
// reader's buffer and are valid until the next call; the writer copies
// what it keeps.
func (p *ndjsonReader) next(row *Row) (bool, error) {
	if !p.sc.Scan() {
		return false, p.sc.Err()
	}
	line := p.sc.Bytes()
	for k, key := range benchKeys {
		i := bytes.Index(line, []byte(`"`+key+`":`))
		if i < 0 {
			return false, fmt.Errorf("bench: key %s missing", key)
		}
		line = line[i+len(key)+3:]
		var val []byte
		if line[0] == '"' {
			end := bytes.IndexByte(line[1:], '"')
			val, line = line[1:1+end], line[end+2:]
		} else {
			end := bytes.IndexAny(line, ",}")
			val, line = line[:end], line[end:]
		}
		switch {
		case k == 0:
			ts, err := time.Parse("2006-01-02T15:04:05Z", string(val))
			if err != nil {
				return false, err
			}
			row.Time = ts.UnixMilli()
		case k <= 8:
			row.Values[k-1] = String(unsafeString(val))
		case k <= 12:
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				return false, err
			}
			row.Values[k-1] = Long(n)
		default:
			f, err := strconv.ParseFloat(string(val), 64)
			if err != nil {
				return false, err
			}
			row.Values[k-1] = Double(f)
		}
	}
	return true, nil
}
