package nativebatch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata/aggregate/blob"
	"strata/ingest"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// conformanceDir is the Druid corpus, or "" (and the test skipped) when absent.
func conformanceDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STRATA_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "conformance", "druid")
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.md")); err != nil {
		t.Skipf("conformance corpus not found at %s (set STRATA_CONFORMANCE_DIR): %v", dir, err)
	}
	return dir
}

// wikiDir lays out the WIKI10 files under <tmp>/json as Druid's tests name them.
func wikiDir(t *testing.T, corpus string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "json"), 0o755); err != nil {
		t.Fatal(err)
	}
	for dst, src := range map[string]string{"tiny_wiki_1.json": "tiny_wiki_1.json", "tiny_wiki_2.json": "wikipedia_2.json", "tiny_wiki_3.json": "tiny_wiki_3.json"} {
		b, err := os.ReadFile(filepath.Join(corpus, "data", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "json", dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadSpec reads a corpus spec and substitutes its placeholders.
func loadSpec(t *testing.T, corpus, name string, subst map[string]string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus, "specs", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range subst {
		s = strings.ReplaceAll(s, k, v)
	}
	if strings.Contains(s, "%%") {
		t.Fatalf("%s: unsubstituted placeholder left", name)
	}
	return []byte(s)
}

type built struct {
	segs  []*segmeta.DataSegment
	stats RowStats
	store deep.DeepStorage
}

// build parses payload and runs Build into a temp-dir deep storage.
func build(t *testing.T, payload []byte) built {
	t.Helper()
	s, err := ParseSpec(payload)
	if err != nil {
		t.Fatalf("ParseSpec: %v", err)
	}
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	segs, stats, err := Build(context.Background(), s, BuildOptions{
		Version: "2024-01-01T00:00:00.000Z", TempDir: filepath.Join(t.TempDir(), "b"),
		Uploader: ingest.DeepUploader{Storage: store}, Logf: t.Logf,
	})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return built{segs: segs, stats: stats, store: store}
}

// rows reads every stored row back: __time as int64, strings as string,
// []string or nil, numbers as int64/float64, first/last pairs as blob.Pair.
func (b built) rows(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, seg := range b.segs {
		out = append(out, readSegment(t, b.store, seg)...)
	}
	return out
}

func readSegment(t *testing.T, store deep.DeepStorage, seg *segmeta.DataSegment) []map[string]any {
	t.Helper()
	var ls deep.LoadSpec
	if err := json.Unmarshal([]byte(seg.LoadSpec), &ls); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seg")
	if err := store.Get(context.Background(), ls, path); err != nil {
		t.Fatal(err)
	}
	s, err := segment.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := s.NumRows()
	rows := make([]map[string]any, n)
	times, err := s.Times(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i] = map[string]any{"__time": times[i]}
	}
	for _, c := range s.Columns() {
		if c.Name == segment.TimeColumn {
			continue
		}
		switch c.Kind {
		case segment.KindString:
			sc, err := s.Strings(c.Name)
			if err != nil {
				t.Fatal(err)
			}
			offs, ids, err := sc.MultiIDs(0, n, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				var vals []string
				null := false
				for _, id := range ids[offs[i]:offs[i+1]] {
					v, isNull, err := sc.Lookup(int(id))
					if err != nil {
						t.Fatal(err)
					}
					if isNull {
						null = true
						continue
					}
					vals = append(vals, v)
				}
				switch {
				case len(vals) == 1:
					rows[i][c.Name] = vals[0]
				case len(vals) > 1:
					rows[i][c.Name] = vals
				default:
					_ = null
					rows[i][c.Name] = nil
				}
			}
		case segment.KindLong, segment.KindDouble, segment.KindFloat:
			nc, err := s.Numeric(c.Name)
			if err != nil {
				t.Fatal(err)
			}
			nulls, err := nc.Nulls()
			if err != nil {
				t.Fatal(err)
			}
			row := 0
			for blk := 0; blk < nc.NumBlocks(); blk++ {
				if c.Kind == segment.KindLong {
					vs, err := nc.Longs(blk, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range vs {
						rows[row][c.Name] = v
						row++
					}
				} else {
					vs, err := nc.Doubles(blk, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range vs {
						rows[row][c.Name] = v
						row++
					}
				}
			}
			if nulls != nil {
				for _, r := range nulls.ToArray() {
					rows[r][c.Name] = nil
				}
			}
		case segment.KindComplex:
			cc, err := s.Complex(c.Name)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				blobBytes, err := cc.Blob(i)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(c.ComplexType, "serializablePair") && blobBytes != nil {
					p, err := blob.DecodePair(c.ComplexType, blobBytes)
					if err != nil {
						t.Fatal(err)
					}
					rows[i][c.Name] = p
				} else {
					rows[i][c.Name] = blobBytes
				}
			}
		}
	}
	return rows
}

// sumOf adds a numeric column over rows.
func sumOf(rows []map[string]any, col string) float64 {
	total := 0.0
	for _, r := range rows {
		switch v := r[col].(type) {
		case int64:
			total += float64(v)
		case float64:
			total += v
		}
	}
	return total
}

// readNDJSON decodes the records of a data file for independent checks.
func readNDJSON(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	var out []map[string]any
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
