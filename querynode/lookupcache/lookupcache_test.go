package lookupcache

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRegistryApply(t *testing.T) {
	r := New("")
	if r.Tier() != "__default" {
		t.Fatalf("default tier %q", r.Tier())
	}
	v1 := json.RawMessage(`{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"a":"A"}}}`)
	other := json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"map","map":{"x":"X"},"isOneToOne":true}}`)
	if err := r.apply(SyncResponse{ETag: "3", Lookups: map[string]json.RawMessage{"names": v1, "other": other}}); err != nil {
		t.Fatal(err)
	}
	names, _, ok := r.Lookup("names")
	if !ok || names["a"] != "A" {
		t.Fatalf("names: %v %v", names, ok)
	}
	if _, oneToOne, _ := r.Lookup("other"); !oneToOne {
		t.Fatal("isOneToOne lost")
	}
	if got := string(r.AppendStateJSON(nil)); got != `{"current":{"names":{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"a":"A"},"isOneToOne":false}},`+
		`"other":{"version":"1","lookupExtractorFactory":{"type":"map","map":{"x":"X"},"isOneToOne":true}}},"toLoad":{},"toDrop":[]}` {
		t.Fatalf("state: %s", got)
	}

	// An unchanged lookup keeps its parsed map (the same map, not a copy);
	// one missing from the answer is dropped.
	canonical := r.cur.Load().lookups["names"].canonical
	if err := r.apply(SyncResponse{ETag: "4", Lookups: map[string]json.RawMessage{"names": canonical}}); err != nil {
		t.Fatal(err)
	}
	again, _, _ := r.Lookup("names")
	if len(r.Names()) != 1 {
		t.Fatalf("after a second answer: %v", r.Names())
	}
	again["probe"] = "x" // the same map object: visible through the first reference
	if names["probe"] != "x" {
		t.Fatal("an unchanged lookup was parsed again")
	}
	delete(again, "probe")

	// A lookup the process cannot parse: an error, and nothing changes.
	bad := map[string]json.RawMessage{"names": json.RawMessage(`{"version":"v2","lookupExtractorFactory":{"type":"cachedNamespace"}}`)}
	if err := r.apply(SyncResponse{ETag: "5", Lookups: bad}); err == nil {
		t.Fatal("an unparseable lookup was applied")
	}
	if r.cur.Load().etag != "4" || r.Versions()["names"] != "v1" {
		t.Fatalf("a refused answer changed the registry: %q %v", r.cur.Load().etag, r.Versions())
	}
}

// A URI lookup is loaded once read, read again after its pollPeriod, and a
// failed read keeps the version held.
func TestURILookups(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "codes.csv")
	if err := os.WriteFile(file, []byte("FR,France\nUS,United States\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var body atomic.Value
	body.Store("{\"id\":\"a\",\"name\":\"Apple\"}\n")
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	fileDef := json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"file://` + file +
		`","namespaceParseSpec":{"format":"csv","columns":["code","country"]}}}}`)
	httpDef := json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"` + srv.URL +
		`/names.json","pollPeriod":"PT1M","namespaceParseSpec":{"format":"customJson","keyFieldName":"id","valueFieldName":"name"}}}}`)
	r := New("")
	if err := r.apply(SyncResponse{ETag: "1", Lookups: map[string]json.RawMessage{"codes": fileDef, "names": httpDef}}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.Lookup("codes"); ok || len(r.Versions()) != 0 {
		t.Fatal("a URI lookup counts as loaded before it was read")
	}
	start := time.Unix(1000, 0)
	if err := r.refresh(context.Background(), start); err != nil {
		t.Fatal(err)
	}
	if m, _, ok := r.Lookup("codes"); !ok || m["FR"] != "France" || len(m) != 2 {
		t.Fatalf("codes: %v %v", m, ok)
	}
	if m, _, _ := r.Lookup("names"); m["a"] != "Apple" {
		t.Fatalf("names: %v", m)
	}
	// Before the poll period nothing is read again; after it, names is.
	body.Store("{\"id\":\"a\",\"name\":\"Avocado\"}\n")
	r.refresh(context.Background(), start.Add(30*time.Second))
	if m, _, _ := r.Lookup("names"); m["a"] != "Apple" {
		t.Fatalf("read again before its poll period: %v", m)
	}
	r.refresh(context.Background(), start.Add(time.Minute))
	if m, _, _ := r.Lookup("names"); m["a"] != "Avocado" {
		t.Fatalf("not read again after its poll period: %v", m)
	}
	// A failed read keeps what is held and says why.
	fail.Store(true)
	if err := r.refresh(context.Background(), start.Add(3*time.Minute)); err == nil || !strings.Contains(err.Error(), "lookup [names]") {
		t.Fatalf("a failed read: %v", err)
	}
	if m, _, _ := r.Lookup("names"); m["a"] != "Avocado" {
		t.Fatalf("a failed read dropped the lookup: %v", m)
	}
	// A file lookup without a poll period is read once.
	os.WriteFile(file, []byte("FR,Francia\n"), 0o644)
	r.refresh(context.Background(), start.Add(time.Hour))
	if m, _, _ := r.Lookup("codes"); m["FR"] != "France" {
		t.Fatalf("a lookup without a poll period was read again: %v", m)
	}
	// A new definition replaces the held one once read.
	fail.Store(false)
	def2 := json.RawMessage(strings.Replace(string(fileDef), `"version":"1"`, `"version":"2"`, 1))
	if err := r.apply(SyncResponse{ETag: "2", Lookups: map[string]json.RawMessage{"codes": def2}}); err != nil {
		t.Fatal(err)
	}
	if v := r.Versions(); v["codes"] != "1" || len(v) != 1 {
		t.Fatalf("before reading the new version: %v", v)
	}
	r.refresh(context.Background(), start.Add(2*time.Hour))
	if m, _, _ := r.Lookup("codes"); m["FR"] != "Francia" || r.Versions()["codes"] != "2" {
		t.Fatalf("after reading the new version: %v %v", m, r.Versions())
	}
}
