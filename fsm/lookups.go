package fsm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"strata/commands"
	"strata/javacompat"
	"strata/lookups"
)

// AuditLookups is the audit type and key of lookup changes, as Druid's
// config manager records them ("lookupsConfig"). The payload is the change
// (the lookups updated, or the tier and lookup deleted), not the whole
// configuration, so a small edit of a large lookup set stays small.
const AuditLookups = "lookupsConfig"

// lookupsTable holds the lookup definitions per tier. Entries and tier maps
// are replaced, never changed in place, so readers may keep them.
type lookupsTable struct {
	// initialized: the configuration was initialised (Druid needs an empty
	// bulk update before the first lookup).
	initialized bool
	// changed is the Raft index of the last change: querying processes poll
	// with it as their ETag.
	changed uint64
	tiers   map[string]map[string]*lookupEntry
}

type lookupEntry struct {
	c         *lookups.Container
	canonical []byte // c.AppendJSON: what GET, the audit and snapshots show
}

func newLookupEntry(raw []byte) (*lookupEntry, error) {
	c, err := lookups.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &lookupEntry{c: c, canonical: c.AppendJSON(nil)}, nil
}

func applyUpdateLookups(s *State, m Meta, c commands.UpdateLookups) (any, error) {
	t := &s.lookups
	if len(c.Tiers) == 0 {
		if t.initialized {
			return nil, nil // Druid: initialising twice changes nothing
		}
		t.initialized, t.changed = true, m.Index
		s.audit.add(m, AuditLookups, AuditLookups, "{}")
		return nil, nil
	}
	if !t.initialized {
		return nil, Invalid("Not initialized. If this is the first lookup, post an empty map to initialize")
	}
	// Validate everything, in a fixed order so the first error is the same on
	// every node, before changing anything.
	next := maps.Clone(t.tiers)
	if next == nil {
		next = map[string]map[string]*lookupEntry{}
	}
	payload := []byte{'{'}
	for i, tier := range slices.Sorted(maps.Keys(c.Tiers)) {
		if err := lookups.ValidateName("tier", tier); err != nil {
			return nil, Invalid("%s", err.Error())
		}
		tierMap := maps.Clone(next[tier])
		if tierMap == nil {
			tierMap = map[string]*lookupEntry{}
		}
		if i > 0 {
			payload = append(payload, ',')
		}
		payload = javacompat.AppendJSONString(payload, tier)
		payload = append(payload, ":{"...)
		for j, name := range slices.Sorted(maps.Keys(c.Tiers[tier])) {
			if err := lookups.ValidateName("lookup", name); err != nil {
				return nil, Invalid("%s", err.Error())
			}
			e, err := newLookupEntry(c.Tiers[tier][name])
			if err != nil {
				return nil, Invalid("lookup [%s] in tier [%s]: %s", name, tier, err.Error())
			}
			if prior := tierMap[name]; prior != nil && !e.c.Replaces(prior.c) {
				return nil, Invalid("Cannot update lookup [%s] in tier [%s]: version [%s] is not higher than the current version [%s]", name, tier, e.c.Version, prior.c.Version)
			}
			tierMap[name] = e
			if j > 0 {
				payload = append(payload, ',')
			}
			payload = javacompat.AppendJSONString(payload, name)
			payload = append(payload, ':')
			payload = append(payload, e.canonical...)
		}
		payload = append(payload, '}')
		next[tier] = tierMap
	}
	t.tiers, t.changed = next, m.Index
	s.audit.add(m, AuditLookups, AuditLookups, string(append(payload, '}')))
	return nil, nil
}

func applyDeleteLookup(s *State, m Meta, c commands.DeleteLookup) (any, error) {
	t := &s.lookups
	tierMap, ok := t.tiers[c.Tier]
	if !ok || tierMap[c.Lookup] == nil {
		return nil, NotFound("lookup [%s] in tier [%s] not found", c.Lookup, c.Tier)
	}
	// The tier stays, possibly empty, as in Druid.
	next := maps.Clone(tierMap)
	delete(next, c.Lookup)
	tiers := maps.Clone(t.tiers)
	tiers[c.Tier] = next
	t.tiers, t.changed = tiers, m.Index
	s.audit.add(m, AuditLookups, AuditLookups, deletionPayload(c.Tier, c.Lookup))
	return nil, nil
}

func applyDeleteLookupTier(s *State, m Meta, c commands.DeleteLookupTier) (any, error) {
	t := &s.lookups
	if _, ok := t.tiers[c.Tier]; !ok {
		return nil, NotFound("tier [%s] not found", c.Tier)
	}
	tiers := maps.Clone(t.tiers)
	delete(tiers, c.Tier)
	t.tiers, t.changed = tiers, m.Index
	s.audit.add(m, AuditLookups, AuditLookups, deletionPayload(c.Tier, ""))
	return nil, nil
}

// deletionPayload is the audit payload of a deletion: {"deleted":{"tier":..,"lookup":..}}.
func deletionPayload(tier, lookup string) string {
	b := append([]byte(`{"deleted":{"tier":`), javacompat.AppendJSONString(nil, tier)...)
	if lookup != "" {
		b = append(b, `,"lookup":`...)
		b = javacompat.AppendJSONString(b, lookup)
	}
	return string(append(b, "}}"...))
}

// LookupsInitialized reports whether the lookup configuration was initialised.
func (s *State) LookupsInitialized() bool { return s.lookups.initialized }

// LookupsChanged is the Raft index of the last lookup change (0: none).
func (s *State) LookupsChanged() uint64 { return s.lookups.changed }

// LookupTiers lists the tiers, sorted (never nil).
func (s *State) LookupTiers() []string {
	return append([]string{}, slices.Sorted(maps.Keys(s.lookups.tiers))...)
}

// LookupNames lists the lookups of tier, sorted, never nil (ok false: no
// such tier).
func (s *State) LookupNames(tier string) ([]string, bool) {
	m, ok := s.lookups.tiers[tier]
	return append([]string{}, slices.Sorted(maps.Keys(m))...), ok
}

// LookupJSON returns the canonical JSON of a lookup container (nil: none).
// The bytes are shared: callers must not modify them.
func (s *State) LookupJSON(tier, name string) []byte {
	if e := s.lookups.tiers[tier][name]; e != nil {
		return e.canonical
	}
	return nil
}

// Lookup returns a lookup's parsed container (nil: none). It is immutable.
func (s *State) Lookup(tier, name string) *lookups.Container {
	if e := s.lookups.tiers[tier][name]; e != nil {
		return e.c
	}
	return nil
}

// AppendLookupTierJSON appends {"name": container, ...} for tier, sorted by
// name; an unknown tier appends {}.
func (s *State) AppendLookupTierJSON(b []byte, tier string) []byte {
	m := s.lookups.tiers[tier]
	b = append(b, '{')
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, name)
		b = append(b, ':')
		b = append(b, m[name].canonical...)
	}
	return append(b, '}')
}

// ---- snapshot ----

// The lookups table is a header record {"initialized", "changed"} followed,
// tier by tier in name order, by a record naming the tier and one record per
// lookup of it in name order. A record per lookup keeps frames small
// however many lookups a tier holds.
type lookupsHeader struct {
	Initialized bool   `json:"initialized"`
	Changed     uint64 `json:"changed"`
}

type lookupRecord struct {
	Tier      string          `json:"tier"`
	Lookup    string          `json:"lookup,omitempty"`    // "": the record declares the tier
	Container json.RawMessage `json:"container,omitempty"` // canonical JSON
}

var lookupsSnapshotTable = table{
	name: "lookups",
	freeze: func(s *State) (int, func(*recordWriter) error) {
		t := s.lookups
		if !t.initialized {
			return 0, func(*recordWriter) error { return nil }
		}
		n := 1 + len(t.tiers)
		for _, m := range t.tiers {
			n += len(m)
		}
		tiers := t.tiers // replaced, never modified in place: safe to read after the lock
		return n, func(w *recordWriter) error {
			if err := w.write(lookupsHeader{Initialized: t.initialized, Changed: t.changed}); err != nil {
				return err
			}
			for _, tier := range slices.Sorted(maps.Keys(tiers)) {
				if err := w.write(lookupRecord{Tier: tier}); err != nil {
					return err
				}
				for _, name := range slices.Sorted(maps.Keys(tiers[tier])) {
					if err := w.write(lookupRecord{Tier: tier, Lookup: name, Container: tiers[tier][name].canonical}); err != nil {
						return err
					}
				}
			}
			return nil
		}
	},
	restore: func(s *State, r *recordReader, n int) error {
		s.lookups = lookupsTable{}
		if n == 0 {
			return nil
		}
		var h lookupsHeader
		if err := r.read(&h); err != nil {
			return err
		}
		if !h.Initialized {
			return fmt.Errorf("lookups: records stored but the configuration is not initialised")
		}
		t := lookupsTable{initialized: true, changed: h.Changed, tiers: map[string]map[string]*lookupEntry{}}
		for i := 1; i < n; i++ {
			var rec lookupRecord
			if err := r.read(&rec); err != nil {
				return err
			}
			if err := lookups.ValidateName("tier", rec.Tier); err != nil {
				return fmt.Errorf("lookups: %w", err)
			}
			m, declared := t.tiers[rec.Tier]
			if rec.Lookup == "" {
				if declared {
					return fmt.Errorf("lookups: tier %q is duplicated", rec.Tier)
				}
				t.tiers[rec.Tier] = map[string]*lookupEntry{}
				continue
			}
			if !declared {
				return fmt.Errorf("lookups: lookup %q of tier %q precedes its tier", rec.Lookup, rec.Tier)
			}
			if err := lookups.ValidateName("lookup", rec.Lookup); err != nil {
				return fmt.Errorf("lookups: tier %q: %w", rec.Tier, err)
			}
			if m[rec.Lookup] != nil {
				return fmt.Errorf("lookups: %q in tier %q is duplicated", rec.Lookup, rec.Tier)
			}
			e, err := newLookupEntry(rec.Container)
			if err != nil {
				return fmt.Errorf("lookups: %q in tier %q: %w", rec.Lookup, rec.Tier, err)
			}
			m[rec.Lookup] = e
		}
		s.lookups = t
		return nil
	},
}

func init() {
	on(applyUpdateLookups)
	on(applyDeleteLookup)
	on(applyDeleteLookupTier)
	tables = append(tables, lookupsSnapshotTable)
}
