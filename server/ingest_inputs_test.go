package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/auth"
	"strata/ingest/input"
	"strata/ingest/middlemanager"
)

// TestIngestionInputsRefusedAtSubmission: SQL and native batch tasks whose
// input sources escape the input policy (a file outside the allowed
// directories, by path, .. or symlink; an http fetch to loopback, by IP or
// by a name resolving to it) are refused with a 400 naming the rule before
// any task exists; tasks reading inside are accepted.
func TestIngestionInputsRefusedAtSubmission(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "shadow.json")
	os.WriteFile(secret, []byte(`{"ts":"2024-01-01","page":"root"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(allowed, "ok.json"), []byte(`{"ts":"2024-01-01","page":"a"}`+"\n"), 0o644)
	os.Symlink(secret, filepath.Join(allowed, "link.json"))
	input.SetPolicy(&input.Policy{LocalBaseDirs: []string{allowed}, HTTPProtocols: []string{"http", "https"}})
	t.Cleanup(func() { input.SetPolicy(nil) })
	ts, _ := single(t, nil)

	sqlFor := func(src string) string {
		return fmt.Sprintf(`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time, page FROM TABLE(EXTERN(%s, '{"type":"json"}'))
EXTEND (ts VARCHAR, page VARCHAR) PARTITIONED BY DAY`, sqlQuote(src))
	}
	nativeFor := func(src string) string {
		return `{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"wiki","timestampSpec":{"column":"ts","format":"auto"},
"dimensionsSpec":{"dimensions":["page"]},"granularitySpec":{"segmentGranularity":"day","queryGranularity":"none","rollup":false}},
"ioConfig":{"type":"index_parallel","inputSource":` + src + `,"inputFormat":{"type":"json"}}}}`
	}
	refused := map[string]string{
		"absolute path":        fmt.Sprintf(`{"type":"local","files":[%q]}`, secret),
		"etc/passwd":           `{"type":"local","files":["/etc/passwd"]}`,
		"dot-dot":              fmt.Sprintf(`{"type":"local","files":[%q]}`, allowed+"/../"+filepath.Base(outside)+"/shadow.json"),
		"symlink pointing out": fmt.Sprintf(`{"type":"local","files":[%q]}`, filepath.Join(allowed, "link.json")),
		"baseDir outside":      fmt.Sprintf(`{"type":"local","baseDir":%q,"filter":"*.json"}`, outside),
		"http loopback":        `{"type":"http","uris":["http://127.0.0.1:9999/x.json"]}`,
		"http IPv6 loopback":   `{"type":"http","uris":["http://[::1]:9999/x.json"]}`,
		"http localhost":       `{"type":"http","uris":["http://localhost:9999/x.json"]}`,
		"http metadata":        `{"type":"http","uris":["http://169.254.169.254/latest/meta-data/"]}`,
	}
	for name, src := range refused {
		t.Run("sql "+name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"query": sqlFor(src)})
			code, got, _ := call(t, "POST", ts.URL+"/svc/v2/sql/task", "application/json", string(body))
			var e structuredError
			if code != 400 || json.Unmarshal([]byte(got), &e) != nil || e.ErrorCode != "invalidInput" ||
				!strings.Contains(e.ErrorMessage, "svc.ingestion.") {
				t.Fatalf("%d %s", code, got)
			}
		})
		t.Run("native "+name, func(t *testing.T) {
			code, got, _ := call(t, "POST", ts.URL+"/svc/indexer/v1/task", "application/json", nativeFor(src))
			if code != 400 || !strings.Contains(got, "svc.ingestion.") {
				t.Fatalf("%d %s", code, got)
			}
		})
	}
	if ids := sqlTaskIDs(t, ts.URL); len(ids) != 0 {
		t.Fatalf("refused submissions created tasks %v", ids)
	}
	ok := fmt.Sprintf(`{"type":"local","files":[%q]}`, filepath.Join(allowed, "ok.json"))
	body, _ := json.Marshal(map[string]string{"query": sqlFor(ok)})
	if code, got, _ := call(t, "POST", ts.URL+"/svc/v2/sql/task", "application/json", string(body)); code != 200 {
		t.Fatalf("an allowed file: %d %s", code, got)
	}
	if code, got, _ := call(t, "POST", ts.URL+"/svc/indexer/v1/task", "application/json", nativeFor(ok)); code != 200 {
		t.Fatalf("an allowed file (native): %d %s", code, got)
	}
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// inputGrants is an authorizer allowing exactly the listed resource actions.
type inputGrants map[string]bool

func (g inputGrants) Authorize(_ *auth.Identity, r auth.Resource, a auth.Action) bool {
	return g[r.String()+"/"+string(a)]
}

// TestIngestionNeedsExternalRead: Druid's model, READ on EXTERNAL named by
// each input source's type a task reads (SQL EXTERN and native batch
// alike), checked per type.
func TestIngestionNeedsExternalRead(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.json"), []byte("{}\n"), 0o644)
	sqlTask := func(q string) middlemanager.Task {
		payload, _ := json.Marshal(map[string]any{"type": "query_controller", "id": "query-x", "sqlQuery": q})
		task, _, err := middlemanager.ParseTask(payload, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	q := fmt.Sprintf(`INSERT INTO wiki SELECT * FROM TABLE(EXTERN('{"type":"local","files":[%q]}', '{"type":"json"}')) EXTEND (a VARCHAR)
UNION ALL SELECT * FROM TABLE(EXTERN('{"type":"http","uris":["https://example.com/a.json"]}', '{"type":"json"}')) EXTEND (a VARCHAR)
PARTITIONED BY ALL`, filepath.Join(dir, "a.json"))
	task := sqlTask(q)
	id := &auth.Identity{Name: "analyst", Authenticator: "basic"}
	ctxWith := func(g inputGrants) context.Context {
		return auth.WithIdentity(auth.WithAuthorizer(context.Background(), g), id)
	}
	for _, c := range []struct {
		g       inputGrants
		missing string
	}{
		{inputGrants{}, "EXTERNAL:local"},
		{inputGrants{"EXTERNAL:local/READ": true}, "EXTERNAL:http"},
		{inputGrants{"EXTERNAL:http/READ": true}, "EXTERNAL:local"},
		{inputGrants{"EXTERNAL:local/WRITE": true, "EXTERNAL:http/WRITE": true}, "EXTERNAL:local"},
		{inputGrants{"EXTERNAL:local/READ": true, "EXTERNAL:http/READ": true}, ""},
	} {
		err := checkTaskInputs(ctxWith(c.g), task)
		var fe *auth.ForbiddenError
		switch {
		case c.missing == "" && err != nil:
			t.Errorf("%v: %v", c.g, err)
		case c.missing != "" && (!errors.As(err, &fe) || fe.Resource.String() != c.missing || fe.Action != auth.Read):
			t.Errorf("%v: want READ on %s refused, got %v", c.g, c.missing, err)
		}
	}
	// No identity with security on: 401, not a pass.
	if err := checkTaskInputs(auth.WithAuthorizer(context.Background(), inputGrants{}), task); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("without an identity: %v", err)
	}
	// Native batch: the same rule for its one input source.
	native := `{"type":"index","spec":{"dataSchema":{"dataSource":"wiki","timestampSpec":{"column":"ts"},"dimensionsSpec":{"dimensions":[]},
"granularitySpec":{"segmentGranularity":"day"}},"ioConfig":{"type":"index","inputSource":{"type":"inline","data":"{}"},"inputFormat":{"type":"json"}}}}`
	nt, _, err := middlemanager.ParseTask([]byte(native), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var fe *auth.ForbiddenError
	if err := checkTaskInputs(ctxWith(inputGrants{}), nt); !errors.As(err, &fe) || fe.Resource.String() != "EXTERNAL:inline" {
		t.Errorf("native inline without EXTERNAL READ: %v", err)
	}
	if err := checkTaskInputs(ctxWith(inputGrants{"EXTERNAL:inline/READ": true}), nt); err != nil {
		t.Errorf("native inline with EXTERNAL READ: %v", err)
	}
}

// TestSQLIngestionPermissionsOverHTTP: through a secured control node, SQL
// ingestion needs WRITE on the target and READ on EXTERNAL for each
// input-source type; native batch READ on EXTERNAL for its source's type;
// each refusal is a 403 naming the missing permission.
func TestSQLIngestionPermissionsOverHTTP(t *testing.T) {
	users := newTestUsers()
	users.perms["loader"] = []auth.Permission{perm(auth.Datasource, "wiki", auth.Write), perm(auth.External, "inline", auth.Read)}
	users.perms["noext"] = []auth.Permission{perm(auth.Datasource, "wiki", auth.Write), perm(auth.External, "http", auth.Read)}
	users.perms["readonly"] = []auth.Permission{perm(auth.Datasource, "wiki", auth.Read), perm(auth.External, ".*", auth.Read)}
	c := startSecureCluster(t, users)
	q, _ := json.Marshal(map[string]string{"query": `INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"{}"}', '{"type":"json"}')) EXTEND (ts VARCHAR, page VARCHAR) PARTITIONED BY DAY`})
	native := `{"type":"index","spec":{"dataSchema":{"dataSource":"wiki","timestampSpec":{"column":"ts"},"dimensionsSpec":{"dimensions":[]},
"granularitySpec":{"segmentGranularity":"day"}},"ioConfig":{"type":"index","inputSource":{"type":"inline","data":"{}"},"inputFormat":{"type":"json"}}}}`
	for _, tc := range []struct {
		user, path, body string
		code             int
		missing          string
	}{
		{"loader", "/svc/v2/sql/task", string(q), 200, ""},
		{"noext", "/svc/v2/sql/task", string(q), 403, `"resource":"EXTERNAL:inline"`},
		{"readonly", "/svc/v2/sql/task", string(q), 403, `"action":"WRITE","resource":"DATASOURCE:wiki"`},
		{"loader", "/svc/indexer/v1/task", native, 200, ""},
		{"noext", "/svc/indexer/v1/task", native, 403, `"resource":"EXTERNAL:inline"`},
	} {
		code, got, _ := callWith(t, "POST", c.control+tc.path, "application/json", tc.body, as(tc.user))
		if code != tc.code || (tc.missing != "" && !strings.Contains(got, tc.missing)) {
			t.Errorf("%s as %s: %d %s, want %d naming %s", tc.path, tc.user, code, got, tc.code, tc.missing)
		}
	}
}
