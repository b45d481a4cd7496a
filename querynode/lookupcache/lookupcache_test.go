package lookupcache

import (
	"encoding/json"
	"testing"
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
