package msq

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"strata/aggregate/blob"
	"strata/ingest/msq/msqtest"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/segment"
)

var versionSeq atomic.Int64

// nextVersion returns increasing lock versions, as the overlord would.
func nextVersion() string {
	n := versionSeq.Add(1)
	return fmt.Sprintf("2030-01-01T00:00:%02d.%03dZ", n/1000%60, n%1000)
}

func newEnv(t *testing.T) *msqtest.Env {
	t.Helper()
	return msqtest.New(t.TempDir())
}

// run executes a statement and fails the test on error.
func run(t *testing.T, env Env, q string, qctx map[string]any) Report {
	t.Helper()
	r, err := runQ(t, env, q, qctx)
	if err != nil {
		b, _ := json.MarshalIndent(r, "", " ")
		t.Fatalf("query failed: %v\n%s\nreport: %s", err, q, b)
	}
	return r
}

func runQ(t *testing.T, env Env, q string, qctx map[string]any) (Report, error) {
	t.Helper()
	return Run(context.Background(), Request{SQL: q, Context: qctx, TaskID: "query-test" + nextVersion(), Version: nextVersion(),
		TempDir: t.TempDir()}, env, nil)
}

// faultCode runs a statement that must fail and returns its error code.
func faultCode(t *testing.T, env Env, q string, qctx map[string]any) (string, *Fault) {
	t.Helper()
	r, err := runQ(t, env, q, qctx)
	if err == nil {
		t.Fatalf("query did not fail: %s", q)
	}
	f, ok := err.(*Fault)
	if !ok {
		t.Fatalf("error is %T, not *Fault: %v", err, err)
	}
	if !r.Failed() || r.Fault()["errorCode"] != f.Code {
		t.Fatalf("report does not carry the fault: %+v", r.MultiStageQuery.Payload.Status)
	}
	return f.Code, f
}

// selectRows runs a SELECT and returns its result rows as maps (JSON values).
func selectRows(t *testing.T, env Env, q string) []map[string]any {
	t.Helper()
	r := run(t, env, q, nil)
	res := r.MultiStageQuery.Payload.Results
	if res == nil {
		t.Fatalf("no results in report")
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Signature []struct{ Name string } `json:"signature"`
		Results   [][]json.RawMessage     `json:"results"`
	}
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, row := range decoded.Results {
		m := map[string]any{}
		for i, c := range decoded.Signature {
			m[c.Name] = rawJSON(row[i])
		}
		out = append(out, m)
	}
	return out
}

// rawJSON keeps numbers as json.Number with their text, so that 905 and
// 905.0 differ.
func rawJSON(r json.RawMessage) any {
	s := string(r)
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, `"`):
		var v string
		json.Unmarshal(r, &v)
		return v
	case strings.HasPrefix(s, "["):
		var v []any
		json.Unmarshal(r, &v)
		return v
	}
	return json.Number(s)
}

// storedRow is one row read back from segment files.
type storedRow map[string]any

// storedRows reads the visible rows of a datasource straight from the segment
// files with the storage reader, in timeline order, with each segment's rows
// in stored order. Complex values are decoded: sketches to their estimate
// ("hll:5"), pairs to "time|value".
func storedRows(t *testing.T, env *msqtest.Env, ds string) []storedRow {
	t.Helper()
	var out []storedRow
	for _, h := range env.Visible(ds) {
		for _, s := range h.Segments {
			if s.IsTombstone() {
				continue
			}
			out = append(out, readStored(t, env, s, h.Interval)...)
		}
	}
	return out
}

func readStored(t *testing.T, env *msqtest.Env, s *segmeta.DataSegment, clip interval.Interval) []storedRow {
	t.Helper()
	sg, release, err := env.OpenSegment(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	times, err := sg.Times(nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]storedRow, len(times))
	for i, tm := range times {
		rows[i] = storedRow{"__time": tm}
	}
	for _, ci := range sg.Columns() {
		if ci.Role == segment.RoleTime {
			continue
		}
		switch ci.Kind {
		case segment.KindLong, segment.KindDouble, segment.KindFloat:
			col, err := sg.Numeric(ci.Name)
			if err != nil {
				t.Fatal(err)
			}
			nulls, _ := col.Nulls()
			row := 0
			for b := range sg.NumBlocks() {
				if ci.Kind == segment.KindLong {
					vals, err := col.Longs(b, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range vals {
						if nulls != nil && nulls.Contains(uint32(row)) {
							rows[row][ci.Name] = nil
						} else {
							rows[row][ci.Name] = v
						}
						row++
					}
				} else {
					vals, err := col.Doubles(b, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range vals {
						if nulls != nil && nulls.Contains(uint32(row)) {
							rows[row][ci.Name] = nil
						} else {
							rows[row][ci.Name] = v
						}
						row++
					}
				}
			}
		case segment.KindString:
			col, err := sg.Strings(ci.Name)
			if err != nil {
				t.Fatal(err)
			}
			row := 0
			for b := range sg.NumBlocks() {
				offs, ids, err := col.BlockMultiIDs(b, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				for r := 0; r+1 < len(offs); r++ {
					var vals []any
					for _, id := range ids[offs[r]:offs[r+1]] {
						v, isNull, err := col.Lookup(int(id))
						if err != nil {
							t.Fatal(err)
						}
						if isNull {
							vals = append(vals, nil)
						} else {
							vals = append(vals, v)
						}
					}
					switch len(vals) {
					case 0:
						rows[row][ci.Name] = nil
					case 1:
						rows[row][ci.Name] = vals[0]
					default:
						rows[row][ci.Name] = vals
					}
					row++
				}
			}
		case segment.KindComplex:
			col, err := sg.Complex(ci.Name)
			if err != nil {
				t.Fatal(err)
			}
			for r := range rows {
				b, err := col.Blob(r)
				if err != nil {
					t.Fatal(err)
				}
				rows[r][ci.Name] = describeBlob(t, ci.ComplexType, b)
			}
		}
	}
	var kept []storedRow
	for _, r := range rows {
		if tm := r["__time"].(int64); tm >= clip.Start && tm < clip.End {
			kept = append(kept, r)
		}
	}
	return kept
}

func describeBlob(t *testing.T, typ string, b []byte) any {
	if b == nil {
		return nil
	}
	switch typ {
	case blob.TypeHLL:
		sk, err := blob.DecodeHLL(b)
		if err != nil {
			t.Fatal(err)
		}
		est, _ := sk.GetEstimate()
		return fmt.Sprintf("hll:%.0f", est)
	case blob.TypeTheta:
		sk, err := blob.DecodeTheta(b)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("theta:%.0f", sk.Estimate())
	case blob.TypeQuantiles:
		sk, err := blob.DecodeQuantiles(b)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("quantiles:n=%d,min=%g,max=%g", sk.N(), sk.Min(), sk.Max())
	}
	if strings.HasPrefix(typ, "serializablePair") {
		p, err := blob.DecodePair(typ, b)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case p.Null:
			return fmt.Sprintf("%d|null", p.Time)
		case typ == blob.TypePairLongString:
			return fmt.Sprintf("%d|%s", p.Time, p.String)
		case typ == blob.TypePairLongLong:
			return fmt.Sprintf("%d|%d", p.Time, p.Long)
		}
		return fmt.Sprintf("%d|%g", p.Time, p.Double)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// sortRows orders row maps by their JSON rendering, for order-free comparison.
func sortRows[T ~map[string]any](rows []T) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		b, _ := json.Marshal(r)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

func ms(s string) int64 {
	v, err := interval.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return v
}
