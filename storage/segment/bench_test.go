package segment

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// dayRows generates the rows of day d (0-based) of a bench data set of
// total rows over 7 days. Jitter moves a few rows across midnight, exactly
// as in the generated file.
func dayRows(g *benchGen, d int, carry []benchRow) (rows, next []benchRow) {
	return dayRowsInto(g, d, carry, nil, nil)
}

// dayRowsInto is dayRows appending to rows[:0] and next[:0], so that the
// benchmark reuses its buffers instead of growing fresh ones every day: a
// day's rows are about 100 MB, and growing them by doubling (memmove and
// clearing of large new spans, garbage collection triggered by the garbage)
// spilled into the timed region. carry must not share storage with next.
func dayRowsInto(g *benchGen, d int, carry, rows, next []benchRow) ([]benchRow, []benchRow) {
	rows, next = rows[:0], next[:0]
	start, end := benchStart+int64(d)*day, benchStart+int64(d+1)*day
	for _, r := range carry {
		if r.ms >= start && r.ms < end {
			rows = append(rows, r)
		} else if r.ms >= end {
			next = append(next, r)
		}
	}
	var br benchRow
	for g.next(&br) {
		switch {
		case br.ms < start:
			// jittered into an earlier day already built: dropped
		case br.ms < end:
			rows = append(rows, br)
		default:
			next = append(next, br)
			// Rows are in time order up to ±30 s: a row a minute past
			// midnight means the day is complete.
			if br.ms >= end+60_000 {
				return rows, next
			}
		}
	}
	return rows, next
}

// BenchmarkBuild builds DAY segments of the bench data set without rollup
// and reports build throughput and bytes on disk.
//
// A day's rows are generated before its timer starts (into buffers reused
// from day to day); the timed part hands them to a Writer one Row at a time,
// rendered by a rowFiller as a parser would hand them over, and writes the
// file. Garbage collection running meanwhile is counted.
//
// By default it builds the first day of the 10M-row data set (1.43M rows)
// per iteration. STRATA_BENCH_DAYS=7 builds all seven days (the whole 10M
// rows, one segment per day, streaming); STRATA_BENCH_ROWS changes the data
// set size. STRATA_BENCH_FILE=path streams the NDJSON file written by
// /work/shared/bench/gen instead (then parsing is included in the time).
func BenchmarkBuild(b *testing.B) {
	if path := os.Getenv("STRATA_BENCH_FILE"); path != "" {
		benchBuildFile(b, path)
		return
	}
	total := envInt("STRATA_BENCH_ROWS", 10_000_000)
	days := min(envInt("STRATA_BENCH_DAYS", 1), 7)
	tables()
	dir := b.TempDir()
	row := Row{Values: make([]Value, 13)}
	var fill rowFiller
	var rowsBuilt, bytes int64
	var buildTime, cpu time.Duration
	// One day's rows, with room for the jitter; the carry buffers swap.
	rows := make([]benchRow, 0, total/7+total/700+1024)
	carry, spare := make([]benchRow, 0, 4096), make([]benchRow, 0, 4096)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		g := newBenchGen(total, 7)
		carry = carry[:0]
		for d := range days {
			rows, spare = dayRowsInto(g, d, carry, rows, spare)
			carry, spare = spare, carry
			w, err := NewWriter(wikiSpec(benchStart + int64(d)*day))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			t0, c0 := time.Now(), cpuTime()
			for i := range rows {
				fill.fill(&row, &rows[i])
				if err := w.Add(row); err != nil {
					b.Fatal(err)
				}
			}
			info, err := w.WriteFile(filepath.Join(dir, fmt.Sprintf("day%d.seg", d)))
			if err != nil {
				b.Fatal(err)
			}
			buildTime += time.Since(t0)
			cpu += cpuTime() - c0
			b.StopTimer()
			rowsBuilt += int64(info.Rows)
			bytes += info.Bytes
		}
	}
	b.StopTimer()
	report(b, rowsBuilt, bytes, buildTime, cpu)
}

// report prints throughput per wall second and per CPU second (all
// goroutines, garbage collection included: the per-core figure), and the
// size on disk.
func report(b *testing.B, rows, bytes int64, d, cpu time.Duration) {
	b.ReportMetric(float64(rows)/d.Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
	}
	b.ReportMetric(float64(bytes)/float64(rows), "bytes/row")
	b.ReportMetric(float64(bytes)/float64(rows)*10e6/1e6, "MB/10Mrows")
	b.ReportMetric(0, "ns/op") // per-op time is meaningless here: see rows/s
}

func benchBuildFile(b *testing.B, path string) {
	dir := b.TempDir()
	var rowsBuilt, bytes int64
	var buildTime, cpu time.Duration
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		p := newNDJSONReader(f)
		row := Row{Values: make([]Value, 13)}
		t0, c0 := time.Now(), cpuTime()
		// Rows arrive in time order ±30 s: keep the builders of the days
		// still receiving rows, close a day once rows are a minute past it.
		open := map[int64]*Builder{}
		closeDay := func(d int64) {
			parts, err := open[d].Close()
			if err != nil {
				b.Fatal(err)
			}
			for _, in := range parts {
				rowsBuilt += int64(in.Rows)
				bytes += in.Bytes
			}
			delete(open, d)
		}
		for {
			ok, err := p.next(&row)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			d := (row.Time - benchStart) / day
			bl := open[d]
			if bl == nil {
				if bl, err = NewBuilder(wikiSpec(benchStart+d*day), 0, DirPaths(dir, fmt.Sprintf("day%d", d))); err != nil {
					b.Fatal(err)
				}
				open[d] = bl
			}
			if err := bl.Add(row); err != nil {
				b.Fatal(err)
			}
			for od := range open {
				if row.Time >= benchStart+(od+1)*day+60_000 {
					closeDay(od)
				}
			}
		}
		for od := range open {
			closeDay(od)
		}
		buildTime += time.Since(t0)
		cpu += cpuTime() - c0
		f.Close()
	}
	report(b, rowsBuilt, bytes, buildTime, cpu)
}

// TestBenchDataSmall is the test-sized BenchmarkBuild: a day of a small
// bench data set round-trips through the writer and reader.
func TestBenchDataSmall(t *testing.T) {
	g := newBenchGen(20_000, 7)
	rows, _ := dayRows(g, 0, nil)
	spec := wikiSpec(benchStart)
	spec.RowsPerBlock = 512
	var in []Row
	var f rowFiller
	check := Row{Values: make([]Value, 13)}
	for i := range rows {
		r := Row{Values: make([]Value, 13)}
		g.t.fill(&r, &rows[i])
		in = append(in, r)
		f.fill(&check, &rows[i])
		for k := range 8 {
			if a, b := check.Values[k].str(), r.Values[k].str(); a != b {
				t.Fatalf("row %d value %d: rowFiller %q, tables %q", i, k, a, b)
			}
		}
		if check.Time != r.Time || check.Values[10] != r.Values[10] || check.Values[12] != r.Values[12] {
			t.Fatalf("row %d: rowFiller %v, tables %v", i, check, r)
		}
	}
	path, info := writeSegment(t, spec, in)
	seg := mustOpen(t, path)
	got, err := readAll(seg)
	if err != nil {
		t.Fatal(err)
	}
	// Compare row multisets.
	names := []string{TimeColumn, "channel", "page", "user", "country", "city", "namespace", "isRobot", "isNew",
		"added", "deleted", "delta", "commentLength", "price"}
	want := map[string]*colData{}
	for _, n := range names {
		want[n] = &colData{nulls: make([]bool, len(in))}
	}
	for _, r := range in {
		want[TimeColumn].kind = KindLong
		want[TimeColumn].longs = append(want[TimeColumn].longs, r.Time)
		for k := 0; k < 8; k++ {
			c := want[names[k+1]]
			c.kind = KindString
			s := r.Values[k].str()
			c.strs = append(c.strs, []*string{&s})
		}
		for k := 8; k < 12; k++ {
			c := want[names[k+1]]
			c.kind = KindLong
			c.longs = append(c.longs, int64(r.Values[k].n))
		}
		c := want["price"]
		c.kind = KindDouble
		v, _ := r.Values[12].AsDouble()
		c.doubles = append(c.doubles, v)
	}
	var a, b []string
	for r := range in {
		a = append(a, fingerprint(got, names, r))
		b = append(b, fingerprint(want, names, r))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Fatal("bench rows do not round-trip")
	}
	ci, _ := seg.Column("price")
	if ci.MinDouble < 1 || ci.MaxDouble > 404 {
		t.Fatalf("price range %g..%g", ci.MinDouble, ci.MaxDouble)
	}
	t.Logf("%d rows, %d bytes (%.1f bytes/row)", info.Rows, info.Bytes, float64(info.Bytes)/float64(info.Rows))
}

// TestNDJSONParser checks the file-mode parser on lines in the
// generator's exact format.
func TestNDJSONParser(t *testing.T) {
	line := `{"timestamp":"2024-01-01T00:00:07Z","channel":"#ch03","page":"Page_000012","user":"user0000005","country":"C001","city":"City0007","namespace":"ns4","isRobot":"false","isNew":"true","added":301,"deleted":12,"delta":289,"commentLength":44,"price":12.5}` + "\n"
	p := newNDJSONReader(strings.NewReader(line + line))
	row := Row{Values: make([]Value, 13)}
	for i := 0; i < 2; i++ {
		ok, err := p.next(&row)
		if !ok || err != nil {
			t.Fatalf("line %d: %v %v", i, ok, err)
		}
		if row.Time != benchStart+7000 || row.Values[1].str() != "Page_000012" || row.Values[7].str() != "true" ||
			int64(row.Values[10].n) != 289 {
			t.Fatalf("parsed %+v", row)
		}
		if v, _ := row.Values[12].AsDouble(); v != 12.5 {
			t.Fatalf("price %v", v)
		}
	}
	if ok, _ := p.next(&row); ok {
		t.Fatal("read past the end")
	}
}

// TestBenchGeneratorMatchesReference pins the in-process generator to the
// output of /work/shared/bench/gen (go run . -rows 3000): rows 1, 2, 3 and
// 1500 of that file, re-rendered here in its format.
func TestBenchGeneratorMatchesReference(t *testing.T) {
	want := map[int]string{
		1:    `{"timestamp":"2024-01-01T00:00:00Z","channel":"#ch02","page":"Page_001197","user":"user0088054","country":"C003","city":"City0003","namespace":"ns0","isRobot":"false","isNew":"true","added":410,"deleted":283,"delta":127,"commentLength":284,"price":14.38}`,
		2:    `{"timestamp":"2024-01-01T00:03:13Z","channel":"#ch14","page":"Page_000376","user":"user0100335","country":"C000","city":"City0000","namespace":"ns5","isRobot":"false","isNew":"false","added":171,"deleted":14,"delta":157,"commentLength":159,"price":48.04}`,
		3:    `{"timestamp":"2024-01-01T00:07:02Z","channel":"#ch04","page":"Page_000112","user":"user0000053","country":"C002","city":"City0002","namespace":"ns0","isRobot":"false","isNew":"false","added":375,"deleted":3,"delta":372,"commentLength":188,"price":398.01}`,
		1500: `{"timestamp":"2024-01-04T11:56:08Z","channel":"#ch12","page":"Page_001133","user":"user0000184","country":"C000","city":"City0003","namespace":"ns9","isRobot":"false","isNew":"false","added":122,"deleted":0,"delta":122,"commentLength":100,"price":6.10}`,
	}
	g := newBenchGen(3000, 7)
	tb := tables().strs()
	var br benchRow
	for i := 1; g.next(&br); i++ {
		w, ok := want[i]
		if !ok {
			continue
		}
		ts := time.UnixMilli(br.ms).UTC().Format("2006-01-02T15:04:05Z")
		got := fmt.Sprintf(`{"timestamp":"%s","channel":"%s","page":"%s","user":"%s","country":"%s","city":"%s","namespace":"%s","isRobot":"%t","isNew":"%t","added":%d,"deleted":%d,"delta":%d,"commentLength":%d,"price":%.2f}`,
			ts, tb.channelS[br.channel], tb.pageS[br.page], tb.userS[br.user], tb.countryS[br.country], tb.cityS[br.city],
			tb.nsS[br.ns], br.robot, br.isNew, br.added, br.deleted, br.added-br.deleted, br.commentLength, br.price)
		if got != w {
			t.Fatalf("row %d:\n got %s\nwant %s", i, got, w)
		}
	}
}
