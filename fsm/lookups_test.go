package fsm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
)

func lookupsState(f *FSM) (snap string) {
	f.Read(func(s *State) {
		var b []byte
		for _, tier := range s.LookupTiers() {
			b = append(b, tier...)
			b = s.AppendLookupTierJSON(b, tier)
		}
		snap = string(b)
	})
	return snap
}

func TestLookupCommands(t *testing.T) {
	f := New(nil)
	ix := uint64(0)
	apply := func(cmd commands.Command) error {
		ix++
		res := f.Apply(entry(t, ix, int64(ix)*1000, cmd, "ops")).(Result)
		return res.Err
	}
	country := func(version, m string) commands.UpdateLookups {
		return commands.UpdateLookups{Tiers: lookupTiers("__default", "country", `{"version":`+version+`,"lookupExtractorFactory":{"type":"map","map":`+m+`}}`)}
	}
	if err := apply(country(`"v1"`, `{"US":"United States"}`)); KindOf(err) != KindInvalid || !strings.Contains(err.Error(), "Not initialized") {
		t.Fatalf("update before initialising: %v", err)
	}
	if err := apply(commands.UpdateLookups{}); err != nil {
		t.Fatal(err)
	}
	if err := apply(country(`"v1"`, `{"US":"United States","FR":"France"}`)); err != nil {
		t.Fatal(err)
	}
	before := lookupsState(f)
	want := `__default{"country":{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"FR":"France","US":"United States"},"isOneToOne":false}}}`
	if before != want {
		t.Fatalf("state %s\nwant  %s", before, want)
	}
	// Every refusal leaves the state as it was.
	for _, bad := range []struct {
		cmd  commands.Command
		kind Kind
		msg  string
	}{
		{country(`"v1"`, `{"US":"USA"}`), KindInvalid, "not higher"},
		{country(`"v0"`, `{"US":"USA"}`), KindInvalid, "not higher"},
		{country(`null`, `{"US":"USA"}`), KindInvalid, "not higher"},
		{country(`"v2"`, `{"US":1}`), KindInvalid, "strings to strings"},
		{country(`"v2"`, `null`), KindInvalid, "needs a [map]"},
		{commands.UpdateLookups{Tiers: lookupTiers("__default", "site", `{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"jdbc"}}}`)}, KindInvalid, "only [uri] is"},
		{commands.UpdateLookups{Tiers: lookupTiers("__default", "site", `{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri"}}}`)}, KindInvalid, "[uri] is required"},
		{commands.UpdateLookups{Tiers: lookupTiers("__default", "site", `{"version":"v1","lookupExtractorFactory":{"type":"registeredLookup"}}`)}, KindInvalid, "not supported"},
		{commands.UpdateLookups{Tiers: lookupTiers("__default", "site", `{"version":"v1"}`)}, KindInvalid, "lookupExtractorFactory"},
		{commands.UpdateLookups{Tiers: lookupTiers("__default", "site", `[]`)}, KindInvalid, "object"},
		{commands.UpdateLookups{Tiers: lookupTiers("a/b", "site", `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{}}}`)}, KindInvalid, "cannot contain"},
		{commands.UpdateLookups{Tiers: lookupTiers("__default", "", `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{}}}`)}, KindInvalid, "empty"},
		// One good and one bad lookup: neither is stored.
		{commands.UpdateLookups{Tiers: map[string]map[string]json.RawMessage{"__default": {
			"a": json.RawMessage(`{"version":"v1","lookupExtractorFactory":{"type":"map","map":{}}}`),
			"b": json.RawMessage(`{"version":"v1","lookupExtractorFactory":{"type":"jdbc"}}`),
		}}}, KindInvalid, "[b]"},
		{commands.DeleteLookup{Tier: "__default", Lookup: "nope"}, KindNotFound, "not found"},
		{commands.DeleteLookup{Tier: "nope", Lookup: "country"}, KindNotFound, "not found"},
		{commands.DeleteLookupTier{Tier: "nope"}, KindNotFound, "not found"},
	} {
		err := apply(bad.cmd)
		if KindOf(err) != bad.kind || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s %+v: error %v, want kind %v with %q", bad.cmd.CommandType(), bad.cmd, err, bad.kind, bad.msg)
		}
		if got := lookupsState(f); got != before {
			t.Fatalf("a refused %s changed the state:\n%s", bad.cmd.CommandType(), got)
		}
	}
	if err := apply(country(`"v2"`, `{"US":"USA"}`)); err != nil {
		t.Fatal(err)
	}
	var changed uint64
	f.Read(func(s *State) {
		changed = s.LookupsChanged()
		if c := s.Lookup("__default", "country"); c == nil || c.Version != "v2" || c.Map["US"] != "USA" || len(c.Map) != 1 {
			t.Fatalf("after v2: %+v", c)
		}
		audits := s.Audit(AuditQuery{Type: AuditLookups, Limit: 10})
		if len(audits) != 3 || audits[0].Audit.Author != "ops" || !strings.Contains(audits[0].Payload, `"USA"`) {
			t.Fatalf("audit: %+v", audits)
		}
	})
	if changed != ix {
		t.Fatalf("changed %d, want the index of the last update %d", changed, ix)
	}
	if err := apply(commands.DeleteLookup{Tier: "__default", Lookup: "country"}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		if names, ok := s.LookupNames("__default"); !ok || len(names) != 0 {
			t.Fatalf("after deleting its only lookup the tier stays, empty: %v %v", names, ok)
		}
	})
	if err := apply(commands.DeleteLookupTier{Tier: "__default"}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		if tiers := s.LookupTiers(); len(tiers) != 0 || !s.LookupsInitialized() {
			t.Fatalf("tiers %v initialised %v", tiers, s.LookupsInitialized())
		}
	})
}

func TestLookupsSnapshotAndDeterminism(t *testing.T) {
	var log []*raft.Log
	for i, cmd := range []commands.Command{
		commands.UpdateLookups{},
		commands.UpdateLookups{Tiers: map[string]map[string]json.RawMessage{
			"hot": {"b": json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"map","map":{"z":"<&>","a":"é"},"isOneToOne":true}}`)},
			"__default": {"a": json.RawMessage(`{"lookupExtractorFactory":{"type":"map","map":{}}}`), "c": json.RawMessage(`{"version":"x","lookupExtractorFactory":{"map":{"k":"v"},"type":"map"}}`),
				"u": json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"cachedNamespace","injective":true,"extractionNamespace":{"type":"uri","uri":"file:/data/c.csv","pollPeriod":"PT5M","namespaceParseSpec":{"format":"csv","columns":["id","name"],"keyColumn":"id","valueColumn":"name"}}}}`)},
		}},
		commands.UpdateLookups{Tiers: lookupTiers("empty", "gone", `{"version":"1","lookupExtractorFactory":{"type":"map","map":{}}}`)},
		commands.DeleteLookup{Tier: "empty", Lookup: "gone"},
	} {
		log = append(log, entry(t, uint64(i+1), int64(i+1)*1000, cmd, "ops"))
	}
	var first []byte
	for i := 0; i < 10; i++ {
		f := New(nil)
		for _, l := range log {
			if res := f.Apply(l).(Result); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
		snap := snapshotBytes(t, f)
		if first == nil {
			first = snap
		} else if !bytes.Equal(first, snap) {
			t.Fatal("snapshot bytes vary between runs")
		}
		if got := snapshotBytes(t, restore(t, snap)); !bytes.Equal(got, snap) {
			t.Fatalf("round trip differs:\n%s\n%s", snap, got)
		}
	}
	orig := New(nil)
	orig.ApplyBatch(log)
	r := restore(t, first)
	if a, b := lookupsState(orig), lookupsState(r); a != b {
		t.Fatalf("restored state answers differently:\n%s\n%s", a, b)
	}
	r.Read(func(s *State) {
		if s.LookupsChanged() != 4 || !s.LookupsInitialized() {
			t.Fatalf("restored changed %d initialised %v", s.LookupsChanged(), s.LookupsInitialized())
		}
		if c := s.Lookup("hot", "b"); c == nil || !c.OneToOne || c.Map["z"] != "<&>" {
			t.Fatalf("restored hot/b: %+v", c)
		}
		if c := s.Lookup("__default", "u"); c == nil || c.URI == nil || c.URI.PollPeriodMs != 300000 || c.URI.KeyColumn != "id" || !c.OneToOne {
			t.Fatalf("restored __default/u: %+v", c)
		}
	})
}

// A snapshot whose lookups table holds a record the apply function would
// refuse is rejected whole.
func TestLookupsSnapshotRejectsBadRecords(t *testing.T) {
	good := json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"map","map":{}}}`)
	for name, recs := range map[string][]any{
		"not initialised":     {lookupsHeader{Changed: 3}, lookupRecord{Tier: "t"}},
		"duplicate tier":      {lookupsHeader{Initialized: true}, lookupRecord{Tier: "t"}, lookupRecord{Tier: "t"}},
		"empty tier name":     {lookupsHeader{Initialized: true}, lookupRecord{Tier: ""}},
		"lookup before tier":  {lookupsHeader{Initialized: true}, lookupRecord{Tier: "t", Lookup: "x", Container: good}},
		"duplicate lookup":    {lookupsHeader{Initialized: true}, lookupRecord{Tier: "t"}, lookupRecord{Tier: "t", Lookup: "x", Container: good}, lookupRecord{Tier: "t", Lookup: "x", Container: good}},
		"unsupported type":    {lookupsHeader{Initialized: true}, lookupRecord{Tier: "t"}, lookupRecord{Tier: "t", Lookup: "x", Container: json.RawMessage(`{"version":"1","lookupExtractorFactory":{"type":"cachedNamespace"}}`)}},
		"bad lookup name":     {lookupsHeader{Initialized: true}, lookupRecord{Tier: "t"}, lookupRecord{Tier: "t", Lookup: "a/b", Container: good}},
		"missing a container": {lookupsHeader{Initialized: true}, lookupRecord{Tier: "t"}, lookupRecord{Tier: "t", Lookup: "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			bw := bufio.NewWriter(&buf)
			w := &recordWriter{bw: bw}
			for _, r := range recs {
				if err := w.write(r); err != nil {
					t.Fatal(err)
				}
			}
			bw.Flush()
			s := newState()
			if err := lookupsSnapshotTable.restore(s, &recordReader{br: bufio.NewReader(&buf)}, len(recs)); err == nil {
				t.Fatal("restore accepted it")
			}
		})
	}
}
