package query

import (
	"slices"
	"sync/atomic"

	"strata/expr"
)

// LookupSource gives the lookups loaded on this process: those of its lookup
// tier, which it keeps refreshed from the coordinator.
type LookupSource interface {
	// Lookup returns the key→value map of the lookup name and its
	// isOneToOne flag; ok is false when no lookup of that name is loaded.
	// The map is never modified afterwards: callers keep it without a lock.
	Lookup(name string) (m map[string]string, oneToOne bool, ok bool)
}

// lookupSource is the process's lookups. Registered lookups are a
// per-process resource in Druid too (its LookupReferencesManager), and query
// parsing, which resolves them, is reached from many places that carry no
// node: one source per process, installed at start, keeps their signatures.
var lookupSource atomic.Pointer[LookupSource]

// SetLookups installs the process's lookups (nil: none). Queries parsed
// afterwards resolve registered lookups, the lookup() expression function
// and lookup data sources through it.
func SetLookups(src LookupSource) {
	if src == nil {
		lookupSource.Store(nil)
		return
	}
	lookupSource.Store(&src)
}

// findLookup resolves a registered lookup by name.
func findLookup(name string) (map[string]string, bool, error) {
	if p := lookupSource.Load(); p != nil {
		if m, oneToOne, ok := (*p).Lookup(name); ok {
			return m, oneToOne, nil
		}
	}
	return nil, false, Invalidf("Lookup [%s] not found", name)
}

// LookupTable returns the lookup name loaded on this process as a table of
// two STRING columns, k and v, one row per key, sorted by key: what a lookup
// data source reads (and a join's lookup right side). Unknown name: an
// invalid-input error.
func LookupTable(name string) (*InlineTable, error) {
	m, _, err := findLookup(name)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k, m[k]}
	}
	return &InlineTable{ColumnNames: []string{"k", "v"}, ColumnTypes: []string{"STRING", "STRING"}, Rows: rows}, nil
}

// exprOptions are the options native expressions compile with: lookup()
// resolves through the process's lookups.
var exprOptions = expr.Options{Lookup: func(name string) (func(string) (string, bool), error) {
	m, _, err := findLookup(name)
	if err != nil {
		return nil, err
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}, nil
}}

// parseLookupDataSource reads {"type":"lookup","lookup":name}: the lookup's
// rows as an inline table with columns k and v.
func (q *Query) parseLookupDataSource(o obj) error {
	if err := q.checkOverSubquery("lookup"); err != nil {
		return err
	}
	name, err := o.reqStr("lookup")
	if err != nil {
		return err
	}
	t, err := LookupTable(name)
	if err != nil {
		return err
	}
	q.Inline = t
	return nil
}

// parseRegisteredLookupFn reads a registeredLookup extraction function (or a
// lookup dimension spec's "name"): a lookup loaded on this process, with the
// same missing-value options as an inline map lookup. injective defaults to
// the lookup's isOneToOne, as in Druid.
func parseRegisteredLookupFn(o obj, nameKey string) (*ExtractionFn, error) {
	name, err := o.reqStr(nameKey)
	if err != nil {
		return nil, err
	}
	m, oneToOne, err := findLookup(name)
	if err != nil {
		return nil, err
	}
	f := &ExtractionFn{Type: "lookup", lookup: m}
	if err := f.parseLookupOptions(o, oneToOne); err != nil {
		return nil, err
	}
	return f, nil
}
