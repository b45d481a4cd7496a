package sql

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// conformanceDir locates Druid's conformance corpus: $STRATA_CONFORMANCE_DIR, or
// ../shared/conformance/druid relative to the repository root.
func conformanceDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STRATA_CONFORMANCE_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		root := wd
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(root)
			if parent == root {
				t.Skip("repository root (go.mod) not found; cannot locate the conformance corpus")
			}
			root = parent
		}
		dir = filepath.Join(root, "..", "shared", "conformance", "druid")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("conformance corpus not found at %s (set STRATA_CONFORMANCE_DIR)", dir)
	}
	return dir
}

var placeholder = regexp.MustCompile(`%%([A-Z_]+)%%`)

// conformanceSQL collects every SQL statement in the corpus's JSON files, keyed by
// "file:json-path". SQL sits in string values under the keys "sqlTask", "sql" and "query" (a
// native query is an object there, so it is not picked up). Placeholders such as %%DATASOURCE%%
// are replaced by plain names first, as Druid's harness does before running a case.
func conformanceSQL(t *testing.T, dir string) map[string]string {
	found := map[string]string{}
	var collect func(file, path string, v any)
	collect = func(file, path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				if s, ok := child.(string); ok && (k == "sqlTask" || k == "sql" || k == "query") {
					found[file+":"+path+"/"+k] = s
					continue
				}
				collect(file, path+"/"+k, child)
			}
		case []any:
			for i, child := range x {
				collect(file, path+"/"+strconv.Itoa(i), child)
			}
		}
	}
	for _, sub := range []string{"specs", "queries", "derived"} {
		files, err := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := placeholder.ReplaceAllStringFunc(string(raw), func(m string) string {
				return "ph_" + strings.ToLower(strings.Trim(m, "%"))
			})
			var v any
			if json.Unmarshal([]byte(text), &v) != nil {
				continue // data files (NDJSON) and templates whose placeholders are not strings hold no SQL
			}
			collect(sub+"/"+filepath.Base(f), "", v)
		}
	}
	return found
}

func TestConformanceStatements(t *testing.T) {
	dir := conformanceDir(t)
	stmts := conformanceSQL(t, dir)
	if len(stmts) < 15 {
		t.Fatalf("found only %d SQL statements in %s", len(stmts), dir)
	}
	keys := make([]string, 0, len(stmts))
	for k := range stmts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parsed := map[string]Statement{}
	for _, k := range keys {
		st, err := Parse(stmts[k])
		if err != nil {
			t.Errorf("%s: %v\n%s", k, err, stmts[k])
			continue
		}
		checkRoundTrip(t, st)
		parsed[k] = st
	}

	// Spot checks on the ingestion statements.
	if st, ok := parsed["specs/wikipedia_index_msq.json:/sqlTask"].(*Replace); !ok {
		t.Errorf("P1 statement: %T", parsed["specs/wikipedia_index_msq.json:/sqlTask"])
	} else {
		if st.Table[0].Name != "ph_datasource" || st.OverwriteWhere != nil || st.PartitionedBy.Period != "P1D" {
			t.Errorf("P1 target/overwrite/partition: %s", st)
		}
		if len(st.Source.With) != 1 || st.Source.With[0].Name.Name != "source" {
			t.Fatalf("P1 CTE: %+v", st.Source.With)
		}
		tf := st.Source.With[0].Query.Body.(*Select).From.(*TableFunc)
		if !tf.IsExtern() || len(tf.Call.Args) != 3 || tf.Extend != nil ||
			!strings.Contains(tf.Call.Args[2].(*StringLit).Value, `{"name":"delta","type":"double"}`) {
			t.Errorf("P1 EXTERN: %s", tf)
		}
		sel := st.Source.Body.(*Select)
		if len(sel.Columns) != 20 || len(sel.GroupBy) != 13 || sel.GroupBy[12].(*NumberLit).Text != "13" {
			t.Errorf("P1 select: %d columns, %d group keys", len(sel.Columns), len(sel.GroupBy))
		}
		tf0 := sel.Columns[0].Expr.(*FuncCall)
		if tf0.Name.Name != "TIME_FLOOR" || sel.Columns[0].Alias.Name != "__time" {
			t.Errorf("P1 __time: %s", sel.Columns[0])
		} else if _, ok := tf0.Args[0].(*CaseExpr); !ok {
			t.Errorf("P1 __time argument: %s", tf0.Args[0])
		}
		if a := sel.Columns[19].Alias; a == nil || a.Name != "HLLSketchBuild" || !a.Quoted {
			t.Errorf("P1 last column: %s", sel.Columns[19])
		}
	}
	if st, ok := parsed["derived/tutorial_transform.json:/steps/0/sql"].(*Insert); ok {
		tf := st.Source.With[0].Query.Body.(*Select).From.(*TableFunc)
		if len(tf.Extend) != 4 || tf.Extend[3].Type.Name != "BIGINT" || len(tf.Call.Args) != 2 {
			t.Errorf("transform EXTEND: %s", tf)
		}
		if or, ok := st.Source.Body.(*Select).Where.(*BinaryExpr); !ok || or.Op != OpOr {
			t.Errorf("transform WHERE: %s", st.Source.Body.(*Select).Where)
		}
	} else {
		t.Errorf("transform statement missing or not an INSERT")
	}
	if st, ok := parsed["derived/tutorial_update_data.json:/steps/6/sql"].(*Replace); ok {
		if st.PartitionedBy.Form != GranFloor || st.PartitionedBy.Period != "PT1H" || st.OverwriteWhere == nil {
			t.Errorf("update step 6: %s", st)
		}
		if c := st.Source.Body.(*Select).Columns[2].Expr.(*CastExpr); c.Type.Name != "BIGINT" {
			t.Errorf("update CAST: %s", c)
		}
	} else {
		t.Errorf("update step 6 missing or not a REPLACE")
	}
	if q, ok := parsed["queries/broadcast_join_queries.json:/1/query/query"].(*Query); ok {
		j := q.Body.(*Select).From.(*Join)
		if j.Kind != JoinInner || len(j.Left.(*TableRef).Name) != 2 || j.On == nil || !q.OrderBy[0].Desc {
			t.Errorf("broadcast join: %s", q)
		}
	} else {
		t.Errorf("broadcast join query missing")
	}
}
