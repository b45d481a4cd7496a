// Package lookups is the lookup model shared by the control plane (which
// stores lookup definitions as Raft commands) and the querying processes
// (which load the lookups of their tier): Druid's lookup container
// {"version", "lookupExtractorFactory"}, its validation and canonical JSON.
//
// Two extractor factories are supported: "map" (the key→value map in the
// definition) and "cachedNamespace" with a "uri" extraction namespace (a file
// or HTTP(S) resource each querying process reads, as ingestion's input
// policy allows, and reads again every pollPeriod). A JDBC namespace, a
// uriPrefix and the other factory types are refused, rather than stored and
// never loaded.
package lookups

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"strata/javacompat"
)

// DefaultTier is the tier a querying process belongs to when
// svc.lookup.lookupTier is not set (Druid's druid.lookup.lookupTier).
const DefaultTier = "__default"

// MaxNameLength bounds tier and lookup names: they appear in paths.
const MaxNameLength = 256

// Container is one lookup definition: Druid's
// LookupExtractorFactoryContainer.
type Container struct {
	// Version is an arbitrary string; an update must carry a higher one
	// (compared as strings), as in Druid. "" means none.
	Version string
	// Map is the key→value mapping of a "map" factory. It is never changed
	// after Parse: readers share it without a lock.
	Map map[string]string
	// OneToOne is the factory's "isOneToOne" ("injective" for a
	// cachedNamespace): distinct keys have distinct values, so grouping on
	// the mapped value equals grouping on the key.
	OneToOne bool
	// URI, for a cachedNamespace lookup, is where its map is read from; Map
	// is then nil (each process reads it).
	URI *URISource
}

// URISource is a cachedNamespace lookup's "uri" extraction namespace.
type URISource struct {
	URI string `json:"uri"`
	// Format is the namespaceParseSpec's format: csv, tsv, simpleJson
	// (one {"key":"value"} object per line) or customJson (one object per
	// line, key and value in KeyFieldName and ValueFieldName).
	Format         string   `json:"format"`
	Columns        []string `json:"columns,omitempty"`
	KeyColumn      string   `json:"keyColumn,omitempty"`
	ValueColumn    string   `json:"valueColumn,omitempty"`
	HasHeaderRow   bool     `json:"hasHeaderRow,omitempty"`
	SkipHeaderRows int      `json:"skipHeaderRows,omitempty"`
	Delimiter      string   `json:"delimiter,omitempty"`
	KeyFieldName   string   `json:"keyFieldName,omitempty"`
	ValueFieldName string   `json:"valueFieldName,omitempty"`
	// PollPeriodMs: how often the resource is read again (0: never).
	PollPeriodMs int64 `json:"pollPeriod,omitempty"`
}

// Parse parses and validates a container from its JSON.
func Parse(raw []byte) (*Container, error) {
	var c struct {
		Version *json.RawMessage `json:"version"`
		Factory json.RawMessage  `json:"lookupExtractorFactory"`
	}
	if err := strictObject(raw, &c, "lookup"); err != nil {
		return nil, err
	}
	out := &Container{}
	if c.Version != nil && string(*c.Version) != "null" {
		if err := json.Unmarshal(*c.Version, &out.Version); err != nil {
			return nil, fmt.Errorf("lookup: [version] must be a string")
		}
	}
	if len(c.Factory) == 0 || string(c.Factory) == "null" {
		return nil, fmt.Errorf("lookup: [lookupExtractorFactory] is required")
	}
	var f struct {
		Type     *string          `json:"type"`
		Map      *json.RawMessage `json:"map"`
		OneToOne *bool            `json:"isOneToOne"`
	}
	if err := strictObject(c.Factory, &f, "lookupExtractorFactory"); err != nil {
		return nil, err
	}
	switch {
	case f.Type == nil:
		return nil, fmt.Errorf("lookupExtractorFactory: missing [type]")
	case *f.Type == "cachedNamespace":
		if err := out.parseCachedNamespace(c.Factory); err != nil {
			return nil, err
		}
		return out, nil
	case *f.Type != "map":
		return nil, fmt.Errorf("lookupExtractorFactory type [%s] is not supported: only [map] and [cachedNamespace] (uri) lookups are", *f.Type)
	case f.Map == nil || string(*f.Map) == "null":
		return nil, fmt.Errorf("lookupExtractorFactory: a map lookup needs a [map]")
	}
	if err := json.Unmarshal(*f.Map, &out.Map); err != nil {
		return nil, fmt.Errorf("lookupExtractorFactory: [map] must be an object of strings to strings")
	}
	if out.Map == nil {
		out.Map = map[string]string{}
	}
	if f.OneToOne != nil {
		out.OneToOne = *f.OneToOne
	}
	return out, nil
}

// strictObject decodes an object, naming what in the error.
func strictObject(raw []byte, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("%s must be a JSON object", what)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	return nil
}

// AppendJSON appends the canonical JSON of c: keys sorted, strings escaped
// as Jackson writes them. Every node stores and serves these bytes.
func (c *Container) AppendJSON(b []byte) []byte {
	b = append(b, `{"version":`...)
	if c.Version == "" {
		b = append(b, "null"...)
	} else {
		b = javacompat.AppendJSONString(b, c.Version)
	}
	b = append(b, `,"lookupExtractorFactory":`...)
	b = c.AppendFactoryJSON(b)
	return append(b, '}')
}

// AppendFactoryJSON appends the canonical JSON of the extractor factory.
func (c *Container) AppendFactoryJSON(b []byte) []byte {
	if c.URI != nil {
		return c.appendCachedNamespaceJSON(b)
	}
	b = append(b, `{"type":"map","map":{`...)
	for i, k := range c.Keys() {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, k)
		b = append(b, ':')
		b = javacompat.AppendJSONString(b, c.Map[k])
	}
	b = append(b, `},"isOneToOne":`...)
	if c.OneToOne {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	return append(b, '}')
}

// Keys returns the map's keys sorted.
func (c *Container) Keys() []string {
	keys := make([]string, 0, len(c.Map))
	for k := range c.Map {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Replaces reports whether c may replace prior: Druid's rule, a version
// higher than the prior one as strings, or any version over none.
func (c *Container) Replaces(prior *Container) bool {
	switch {
	case c.Version == "" && prior.Version == "":
		return false
	case prior.Version == "":
		return true
	case c.Version == "":
		return false
	}
	return c.Version > prior.Version
}

// ValidateName checks a tier or lookup name.
func ValidateName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name must not be empty", what)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%s name is %d bytes long; the limit is %d", what, len(name), MaxNameLength)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%s name %q cannot contain '/'", what, name)
	}
	return nil
}
