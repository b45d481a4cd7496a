package fsm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"strata/commands"
	"strata/rules"
	"strata/segmeta"
)

// AuditRules is the audit type of retention rule changes; the key is the
// datasource (or "_default"), as Druid records them.
const AuditRules = "rules"

// DefaultRulesKey names the cluster default rules.
const DefaultRulesKey = "_default"

// rulesTable holds the retention rules set per datasource. Entries are replaced,
// never changed in place, so readers may keep them.
type rulesTable struct {
	byDS map[string]rulesEntry
	gen  uint64 // bumped by every change (not snapshotted: placement caching only)
}

type rulesEntry struct {
	rules     []rules.Rule
	canonical string // rules.AppendJSON of rules: what GET, the audit and snapshots show
}

func applySetRules(s *State, m Meta, c commands.SetRules) (any, error) {
	if err := validateRulesKey(c.DataSource); err != nil {
		return nil, err
	}
	parsed, err := rules.Parse(c.Rules)
	if err != nil {
		return nil, Invalid("%s", err.Error())
	}
	e := rulesEntry{rules: parsed, canonical: string(rules.AppendJSON(nil, parsed))}
	if s.rules.byDS == nil {
		s.rules.byDS = map[string]rulesEntry{}
	}
	s.rules.byDS[c.DataSource] = e
	s.rules.gen++
	s.audit.add(m, c.DataSource, AuditRules, e.canonical)
	return nil, nil
}

// validateRulesKey checks a datasource name used as a rules key.
func validateRulesKey(ds string) error {
	switch {
	case ds == "":
		return Invalid("dataSource must not be empty")
	case len(ds) > commands.MaxTaskIDLength:
		return Invalid("dataSource name is %d bytes long; the limit is %d", len(ds), commands.MaxTaskIDLength)
	case strings.ContainsAny(ds, "/\x00"):
		return Invalid("dataSource %q cannot contain '/'", ds)
	}
	return nil
}

// Rules returns the rules set for ds (nil, false if never set). "_default"
// returns the cluster defaults only if they were set; see DefaultRules.
func (s *State) Rules(ds string) ([]rules.Rule, bool) {
	e, ok := s.rules.byDS[ds]
	return e.rules, ok
}

// DefaultRules returns the cluster default rules: as set, or Druid's default
// (load forever, 2 replicas in _default_tier).
func (s *State) DefaultRules() []rules.Rule {
	if e, ok := s.rules.byDS[DefaultRulesKey]; ok {
		return e.rules
	}
	return rules.Default()
}

// RulesJSON returns the canonical JSON of the rules set for ds ("[]" if none;
// the defaults for "_default" if never set).
func (s *State) RulesJSON(ds string) string {
	if e, ok := s.rules.byDS[ds]; ok {
		return e.canonical
	}
	if ds == DefaultRulesKey {
		return string(rules.AppendJSON(nil, rules.Default()))
	}
	return "[]"
}

// RulesKeys lists the datasources with rules set, and "_default" always, sorted.
func (s *State) RulesKeys() []string {
	out := []string{DefaultRulesKey}
	for ds := range s.rules.byDS {
		if ds != DefaultRulesKey {
			out = append(out, ds)
		}
	}
	slices.Sort(out)
	return out
}

// ---- snapshot ----

type rulesSnapshot struct {
	DataSource string          `json:"dataSource"`
	Rules      json.RawMessage `json:"rules"`
}

var rulesSnapshotTable = table{
	name: "rules",
	freeze: func(s *State) (int, func(*recordWriter) error) {
		recs := make([]rulesSnapshot, 0, len(s.rules.byDS))
		for ds, e := range s.rules.byDS {
			recs = append(recs, rulesSnapshot{DataSource: ds, Rules: json.RawMessage(e.canonical)})
		}
		return len(recs), func(w *recordWriter) error {
			slices.SortFunc(recs, func(a, b rulesSnapshot) int { return strings.Compare(a.DataSource, b.DataSource) })
			for i := range recs {
				if err := w.write(&recs[i]); err != nil {
					return err
				}
			}
			return nil
		}
	},
	restore: func(s *State, r *recordReader, n int) error {
		s.rules.byDS = make(map[string]rulesEntry, n)
		for i := 0; i < n; i++ {
			var rec rulesSnapshot
			if err := r.read(&rec); err != nil {
				return err
			}
			parsed, err := rules.Parse(rec.Rules)
			if err != nil {
				return fmt.Errorf("rules of %q: %w", rec.DataSource, err)
			}
			if _, dup := s.rules.byDS[rec.DataSource]; dup {
				return fmt.Errorf("rules of %q are duplicated", rec.DataSource)
			}
			s.rules.byDS[rec.DataSource] = rulesEntry{rules: parsed, canonical: string(rules.AppendJSON(nil, parsed))}
		}
		return nil
	},
}

func init() {
	on(applySetRules)
	tables = append(tables, rulesSnapshotTable)
}

// PlacementVersion identifies the state segment placement is derived from:
// the used segments, the rules and the coordinator config. Equal versions
// mean the same inputs (a restored state never equals an earlier one: its
// index is a new one).
type PlacementVersion struct {
	index    *segmeta.Index
	indexGen uint64
	rulesGen uint64
	config   *commands.CoordinatorDynamicConfig
}

// PlacementVersion returns the current PlacementVersion.
func (s *State) PlacementVersion() PlacementVersion {
	v := PlacementVersion{index: s.segments.used, rulesGen: s.rules.gen, config: s.coordinatorConfig}
	if v.index != nil {
		v.indexGen = v.index.Generation()
	}
	return v
}
