package msq

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strata/ingest/input"
)

// TestInputSourcesFindsEveryTableFunction: EXTERN and the source functions,
// in CTEs, subqueries and unions, with the source given as a parameter too,
// are all found without planning.
func TestInputSourcesFindsEveryTableFunction(t *testing.T) {
	q := `INSERT INTO dst
WITH a AS (SELECT * FROM TABLE(EXTERN('{"type":"local","files":["/x/a.json"]}', '{"type":"json"}', '[{"name":"t","type":"string"}]')))
SELECT * FROM a
UNION ALL SELECT * FROM (SELECT * FROM TABLE(HTTP(uris => ARRAY['http://example.com/b.json'], format => 'json')) EXTEND (t VARCHAR))
UNION ALL SELECT * FROM TABLE(EXTERN(?, '{"type":"json"}', '[{"name":"t","type":"string"}]'))
UNION ALL SELECT * FROM TABLE(INLINE(data => 'x', format => 'csv')) EXTEND (t VARCHAR)
PARTITIONED BY ALL`
	srcs, err := InputSources(q, []Parameter{{Type: "VARCHAR", Value: `{"type":"local","baseDir":"/y","filter":"*.json"}`}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, s.Type())
	}
	if want := []string{"local", "http", "local", "inline"}; !slices.Equal(got, want) {
		t.Fatalf("types %v, want %v", got, want)
	}
	if _, err := InputSources(`SELECT * FROM TABLE(EXTERN('{"type":"nope"}', '{"type":"json"}', '[]'))`, nil); err == nil {
		t.Fatal("an unknown source type was accepted")
	}
}

// TestRunRefusesFilesOutsideThePolicy: the engine itself (what a middle
// manager runs) refuses a local file outside the allowed directories, and
// through a symlink inside them, while reading one inside.
func TestRunRefusesFilesOutsideThePolicy(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "shadow.json")
	os.WriteFile(secret, []byte(`{"t":"root:$6$secret"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(allowed, "ok.json"), []byte(`{"t":"fine"}`+"\n"), 0o644)
	os.Symlink(secret, filepath.Join(allowed, "link.json"))
	input.SetPolicy(&input.Policy{LocalBaseDirs: []string{allowed}})
	t.Cleanup(func() { input.SetPolicy(nil) })
	env := newEnv(t)
	sel := func(file string) string {
		return fmt.Sprintf(`SELECT t FROM TABLE(EXTERN('{"type":"local","files":[%q]}', '{"type":"json"}', '[{"name":"t","type":"string"}]'))`, file)
	}
	if rows := selectRows(t, env, sel(filepath.Join(allowed, "ok.json"))); len(rows) != 1 || rows[0]["t"] != "fine" {
		t.Fatalf("allowed file: %v", rows)
	}
	for _, f := range []string{secret, filepath.Join(allowed, "link.json"), allowed + "/../" + filepath.Base(outside) + "/shadow.json"} {
		r, err := runQ(t, env, sel(f), nil)
		if err == nil {
			t.Fatalf("%s was read: %+v", f, r)
		}
		if !strings.Contains(err.Error(), "allowed") {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
