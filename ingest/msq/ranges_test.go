package msq

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"strata/expr"
	"strata/ingest/input"
)

// rangesFile writes an NDJSON file over three days with nulls, missing
// keys, multi-value strings, broken lines and, near the end, objects that
// span lines (a range then starts inside a record).
func rangesFile(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := range 2500 {
		switch {
		case i%97 == 13:
			b.WriteString("{\"ts\": broken\n")
			continue
		case i > 2200 && i%3 == 0:
			fmt.Fprintf(&b, "{\"ts\":\"2024-01-0%dT10:00:%02dZ\",\n \"dim\": \"multi\",\n \"n\": %d,\n \"s\": \"m\"\n}\n", 1+i%3, i%60, i)
			continue
		}
		dim := fmt.Sprintf("%q", fmt.Sprintf("d%d", i%17))
		switch i % 11 {
		case 3:
			dim = "null"
		case 5:
			dim = fmt.Sprintf(`["a%d","b"]`, i%4)
		}
		fmt.Fprintf(&b, `{"ts":"2024-01-0%dT%02d:%02d:%02dZ","dim":%s,"n":%d,"x":%d.%d,"s":"row %d"}`+"\n",
			1+i%3, i%24, i%60, (i*7)%60, dim, i-1200, i%100, i%10, i)
	}
	p := filepath.Join(t.TempDir(), "rows.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// withRanges runs fn with files read in byte ranges of size bytes (0: whole)
// on two cores.
func withRanges(size int64, fn func()) {
	saved := rangeBytes
	procs := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	defer func() { rangeBytes = saved; runtime.GOMAXPROCS(procs) }()
	rangeBytes = size
	if size == 0 {
		rangeBytes = 1 << 40
	}
	fn()
}

// TestRangesMatchSequential checks that reading a file in parallel ranges
// changes nothing: stored rows and their order, results, counters, warnings
// and faults are those of a single reader.
func TestRangesMatchSequential(t *testing.T) {
	file := rangesFile(t)
	src, _ := json.Marshal(map[string]any{"type": "local", "files": []string{file}})
	ext := `TABLE(EXTERN(` + sqlString(string(src)) + `, '{"type":"json"}', ` +
		sqlString(`[{"name":"ts","type":"string"},{"name":"dim","type":"string"},{"name":"n","type":"long"},{"name":"x","type":"double"},{"name":"s","type":"string"}]`) + `))`
	lenient := map[string]any{"maxParseExceptions": -1}
	type outcome struct {
		Stored   []storedRow
		Results  any
		Counters any
		Warnings []string
		Fault    string
	}
	runAll := func() map[string]outcome {
		out := map[string]outcome{}
		env := newEnv(t)
		r := run(t, env, `INSERT INTO t SELECT TIME_PARSE(ts) AS __time, dim, n, x, s FROM `+ext+` PARTITIONED BY DAY`, lenient)
		out["insert"] = outcome{Stored: storedRows(t, env, "t"), Counters: r.MultiStageQuery.Payload.Counters, Warnings: warnings(r)}
		r = run(t, env, `SELECT dim, n, s FROM `+ext+` WHERE n > 100`, lenient)
		out["select"] = outcome{Results: r.MultiStageQuery.Payload.Results, Counters: r.MultiStageQuery.Payload.Counters, Warnings: warnings(r)}
		r = run(t, env, `SELECT dim, COUNT(*) AS c, SUM(n) AS sn, MIN(s) AS ms FROM `+ext+` GROUP BY dim`, lenient)
		out["group"] = outcome{Results: r.MultiStageQuery.Payload.Results, Counters: r.MultiStageQuery.Payload.Counters, Warnings: warnings(r)}
		_, f := faultCode(t, env, `INSERT INTO u SELECT TIME_PARSE(ts) AS __time, dim FROM `+ext+` PARTITIONED BY DAY`,
			map[string]any{"maxParseExceptions": 3})
		out["fault"] = outcome{Fault: f.Error()}
		return out
	}
	var want map[string]outcome
	withRanges(0, func() { want = runAll() })
	if len(want["insert"].Stored) < 2000 || len(want["insert"].Warnings) == 0 {
		t.Fatalf("sequential insert stored %d rows with %d warnings", len(want["insert"].Stored), len(want["insert"].Warnings))
	}
	inside := false
	for _, size := range []int64{301, 700, 4096} {
		var got map[string]outcome
		withRanges(size, func() { got = runAll() })
		for name := range want {
			if !reflect.DeepEqual(got[name], want[name]) {
				g, _ := json.Marshal(got[name])
				w, _ := json.Marshal(want[name])
				t.Fatalf("%s differs in ranges of %d:\n got %.3000s\nwant %.3000s", name, size, g, w)
			}
		}
		inside = inside || startsInsideRecord(t, file, size)
	}
	if !inside {
		t.Fatal("no range started inside a record: the restart is not tested")
	}
}

// startsInsideRecord reports whether a range of the file starts on a
// continuation line of a multi-line object (they begin with a space).
func startsInsideRecord(t *testing.T, file string, size int64) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := input.ParseSource([]byte(`{"type":"local","files":[` + strconv.Quote(file) + `]}`))
	splits, _ := src.Splits(context.Background())
	f, _ := input.ParseFormat([]byte(`{"type":"json"}`))
	ranges, err := input.Ranges(context.Background(), splits[0], f, size)
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range ranges {
		if data[rg.Start] == ' ' {
			return true
		}
	}
	return false
}

func warnings(r Report) []string {
	var out []string
	for _, w := range r.MultiStageQuery.Payload.Status.Warnings {
		out = append(out, fmt.Sprint(w.Error["errorMessage"]))
	}
	return out
}

// TestWriteEncodedMatchesWrite checks that rows encoded by range and
// appended with writeEncoded make the frames and counts write makes.
func TestWriteEncodedMatchesWrite(t *testing.T) {
	sig := Signature{{Name: "k", Type: typeLong}, {Name: "s", Type: typeString}, {Name: "m", Type: Type{Kind: KindStringArray}}}
	rows := make([][]expr.Value, 9000)
	for i := range rows {
		m := expr.NullOf(expr.TypeStringArray)
		if i%7 == 3 {
			m = expr.StringArray("a", fmt.Sprint(i))
		}
		rows[i] = []expr.Value{expr.Long(int64(i % 3)), expr.String(strings.Repeat("x", i%2000)), m}
	}
	frames := func(set *partitionSet) map[int64][]string {
		out := map[int64][]string{}
		for _, p := range set.sorted() {
			for _, f := range p.frames {
				out[p.key] = append(out[p.key], fmt.Sprintf("%d rows %x", f.rows, sha256.Sum256(f.data)))
			}
			out[p.key] = append(out[p.key], fmt.Sprint(p.arrays, p.rows, p.bytes, p.nframes))
		}
		return out
	}
	sp := &spiller{budget: 1 << 40}
	want := newPartitionSet(sp, sig)
	ww := newPartWriter(want)
	for _, r := range rows {
		if err := ww.write(r[0].Long(), r); err != nil {
			t.Fatal(err)
		}
	}
	ww.flush()
	got := newPartitionSet(sp, sig)
	gw := newPartWriter(got)
	enc := encodedRows{byKey: map[int64]*encodedPart{}}
	for start := 0; start < len(rows); {
		end := min(len(rows), start+1+start%701)
		enc.reset()
		for _, r := range rows[start:end] {
			enc.write(r[0].Long(), r)
		}
		for _, p := range enc.order {
			if err := gw.writeEncoded(p); err != nil {
				t.Fatal(err)
			}
		}
		start = end
	}
	gw.flush()
	if g, w := frames(got), frames(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("frames differ:\n got %v\nwant %v", g, w)
	}
	for k, s := range ww.stats {
		if *gw.stats[k] != *s {
			t.Fatalf("partition %d counts %+v, want %+v", k, *gw.stats[k], *s)
		}
	}
}
