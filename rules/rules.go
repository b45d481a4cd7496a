// Package rules holds retention rules: parse, validate, serialize and
// match, as Druid's coordinator does. A datasource has an ordered list of
// rules; each used segment takes the first rule (of its own list, then of
// the cluster defaults) that applies to its interval, and that rule says
// whether the segment is loaded (how many replicas per tier), dropped, or
// broadcast to every server.
package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"strata/interval"
)

// Kind is what a rule does with the segments it applies to.
type Kind int

// The rule kinds.
const (
	Load Kind = iota + 1
	Drop
	Broadcast
)

// scope is which segments a rule applies to.
type scope uint8

const (
	forever scope = iota
	byInterval
	byPeriod
	beforePeriod // only dropBeforeByPeriod
)

// DefaultTier and DefaultReplicants fill in a load rule whose
// tieredReplicants is absent or null (Druid's DruidServer defaults).
const (
	DefaultTier       = "_default_tier"
	DefaultReplicants = 2
)

type typeInfo struct {
	name  string
	kind  Kind
	scope scope
}

// types lists the ten rule types in the order error messages name them.
var types = [...]typeInfo{
	{"loadForever", Load, forever},
	{"loadByInterval", Load, byInterval},
	{"loadByPeriod", Load, byPeriod},
	{"dropForever", Drop, forever},
	{"dropByInterval", Drop, byInterval},
	{"dropByPeriod", Drop, byPeriod},
	{"dropBeforeByPeriod", Drop, beforePeriod},
	{"broadcastForever", Broadcast, forever},
	{"broadcastByInterval", Broadcast, byInterval},
	{"broadcastByPeriod", Broadcast, byPeriod},
}

// Tier is one entry of a load rule's tieredReplicants.
type Tier struct {
	Name       string
	Replicants int
}

// Rule is one retention rule (a `type`-discriminated JSON object). The zero
// Rule has no type and applies to nothing; build rules with Parse or Default.
type Rule struct {
	kind          Kind
	scope         scope
	iv            interval.Interval // byInterval rules
	period        interval.Period   // byPeriod and beforePeriod rules
	includeFuture bool              // byPeriod rules
	useDefault    bool              // load rules: useDefaultTierForNull
	// tiers is a load rule's effective tieredReplicants in the order the
	// user wrote them: Druid keeps the JSON object's order (a LinkedHashMap)
	// and prints it back in that order. nil when empty.
	tiers []Tier
}

// Default returns the cluster default rules used until _default is set:
// load everything with two replicas on the default tier.
func Default() []Rule {
	return []Rule{{kind: Load, scope: forever, useDefault: true, tiers: []Tier{{DefaultTier, DefaultReplicants}}}}
}

// Type returns the rule's JSON type name ("loadByPeriod", ...).
func (r Rule) Type() string {
	for _, t := range types {
		if t.kind == r.kind && t.scope == r.scope {
			return t.name
		}
	}
	return ""
}

// Kind reports whether the rule loads, drops or broadcasts.
func (r Rule) Kind() Kind { return r.kind }

// Interval returns the interval of a *ByInterval rule.
func (r Rule) Interval() (interval.Interval, bool) { return r.iv, r.kind != 0 && r.scope == byInterval }

// Period returns the period of a *ByPeriod or dropBeforeByPeriod rule.
func (r Rule) Period() (interval.Period, bool) {
	return r.period, r.kind != 0 && (r.scope == byPeriod || r.scope == beforePeriod)
}

// Tiers returns a copy of a load rule's effective tieredReplicants in their
// serialized order; nil for other kinds or when no tier is named.
func (r Rule) Tiers() []Tier {
	if len(r.tiers) == 0 {
		return nil
	}
	return append([]Tier(nil), r.tiers...)
}

// Replicants returns a copy of a load rule's effective tieredReplicants:
// absent or null means {"_default_tier": 2} when useDefaultTierForNull is
// true (the default) and {} otherwise. It is nil for drop and broadcast rules.
func (r Rule) Replicants() map[string]int {
	if r.kind != Load {
		return nil
	}
	m := make(map[string]int, len(r.tiers))
	for _, t := range r.tiers {
		m[t.Name] = t.Replicants
	}
	return m
}

// Equal reports whether two rules are the same rule.
func (r Rule) Equal(o Rule) bool {
	if r.kind != o.kind || r.scope != o.scope || r.iv != o.iv || r.period != o.period ||
		r.includeFuture != o.includeFuture || r.useDefault != o.useDefault || len(r.tiers) != len(o.tiers) {
		return false
	}
	for i := range r.tiers {
		if r.tiers[i] != o.tiers[i] {
			return false
		}
	}
	return true
}

// AppliesTo reports whether the rule applies to a segment covering iv when
// the time is nowMs, with the tests of Druid's rule classes. Period windows
// are [now − period, now], the period subtracted in UTC with calendar
// arithmetic (P1M before 31 March is 28 or 29 February).
func (r Rule) AppliesTo(iv interval.Interval, nowMs int64) bool {
	switch r.scope {
	case forever:
		return r.kind != 0
	case byInterval:
		if r.kind == Drop {
			return r.iv.Contains(iv) // drop only segments wholly inside
		}
		return r.iv.Overlaps(iv)
	case byPeriod:
		window := interval.Interval{Start: r.period.AddMillis(nowMs, -1, nil), End: nowMs}
		if r.kind == Drop {
			if r.includeFuture {
				return window.Start <= iv.Start
			}
			return window.Contains(iv)
		}
		if r.includeFuture {
			return window.Start < iv.End
		}
		return window.Overlaps(iv)
	case beforePeriod:
		return iv.End <= r.period.AddMillis(nowMs, -1, nil)
	}
	return false
}

// Match returns the first rule of own, then of defaults, that applies to
// a segment covering iv at nowMs; false when none does.
func Match(own, defaults []Rule, iv interval.Interval, nowMs int64) (Rule, bool) {
	for _, list := range [2][]Rule{own, defaults} {
		for _, r := range list {
			if r.AppliesTo(iv, nowMs) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// Parse reads a JSON array of rule objects, the body of POST /rules/{ds}.
// "[]" gives an empty, non-nil slice. Errors name the rule index and the
// property to fix, and suit a 400 {"error": msg} response.
//
// As in Druid (whose object mapper disables FAIL_ON_UNKNOWN_PROPERTIES),
// properties a rule type does not define are ignored and not kept, so old
// bodies with e.g. broadcast "colocatedDataSources" are still accepted.
// Booleans may also be written "true"/"false" and replica counts as quoted
// integers, the scalar coercions Jackson applies.
func Parse(body []byte) ([]Rule, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '[' {
		what := "an empty body"
		if len(body) > 0 {
			what = jsonKind(body)
		}
		return nil, fmt.Errorf("retention rules must be a JSON array of rule objects, got %s", what)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, fmt.Errorf("retention rules are not valid JSON: %v", err)
	}
	out := make([]Rule, 0, len(raws))
	for i, raw := range raws {
		r, typ, err := parseRule(raw)
		if err != nil && typ != "" {
			return nil, fmt.Errorf("invalid retention rule at index %d (type %q): %w", i, typ, err)
		} else if err != nil {
			return nil, fmt.Errorf("invalid retention rule at index %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// parseRule reads one rule object; typ is set once the type is known.
func parseRule(raw json.RawMessage) (r Rule, typ string, err error) {
	if raw[0] != '{' {
		return r, "", fmt.Errorf("expected a rule object with a \"type\", got %s", jsonKind(raw))
	}
	var props map[string]json.RawMessage // duplicate keys: the last wins, as in Jackson
	if err := json.Unmarshal(raw, &props); err != nil {
		return r, "", err
	}
	if t, ok := props["type"]; !ok || isNull(t) {
		return r, "", fmt.Errorf("property \"type\" is missing; %s", typeChoices())
	} else if err := json.Unmarshal(t, &typ); err != nil {
		return r, "", fmt.Errorf("property \"type\" must be a string; %s", typeChoices())
	}
	found := false
	for _, t := range types {
		if t.name == typ {
			r.kind, r.scope, found = t.kind, t.scope, true
		}
	}
	if !found {
		return r, "", fmt.Errorf("unknown type %q; %s", typ, typeChoices())
	}
	switch r.scope {
	case byInterval:
		r.iv, err = parseIntervalProp(props["interval"])
	case byPeriod, beforePeriod:
		r.period, err = parsePeriodProp(props["period"])
		if err == nil && r.scope == byPeriod {
			r.includeFuture, err = parseBool(props, "includeFuture", true)
		}
	}
	if err == nil && r.kind == Load {
		if r.useDefault, err = parseBool(props, "useDefaultTierForNull", true); err == nil {
			r.tiers, err = parseTiers(props["tieredReplicants"], r.useDefault)
		}
	}
	if err != nil {
		return Rule{}, typ, err
	}
	return r, typ, nil
}

// Strict runs, on a body Parse accepted, the checks Strata adds at the API to
// Druid's: a tier name in tieredReplicants must not be empty (no historical
// has an empty tier: an unset svc.server.tier is _default_tier). It also
// returns, sorted, the properties Parse ignored, as "[index].name", for the
// caller to log: a misspelt "tieredReplicants" silently gives the default
// two replicas. Parse does neither, because the state machine replays rules
// stored before these checks existed and must read them as it did.
func Strict(body []byte) (unknown []string, err error) {
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(body, &objs); err != nil {
		return nil, fmt.Errorf("retention rules are not valid JSON: %v", err)
	}
	for i, props := range objs {
		var typ string
		json.Unmarshal(props["type"], &typ) // Parse checked it
		var t typeInfo
		for _, c := range types {
			if c.name == typ {
				t = c
			}
		}
		for name := range props {
			if !definesProperty(t, name) {
				unknown = append(unknown, fmt.Sprintf("[%d].%s", i, name))
			}
		}
		if raw := props["tieredReplicants"]; t.kind == Load && raw != nil && !isNull(raw) {
			var tiers map[string]json.RawMessage
			if json.Unmarshal(raw, &tiers) == nil {
				if _, ok := tiers[""]; ok {
					return nil, fmt.Errorf("invalid retention rule at index %d (type %q): property \"tieredReplicants\": a tier name must not be empty", i, typ)
				}
			}
		}
	}
	slices.Sort(unknown)
	return unknown, nil
}

// definesProperty reports whether rules of type t have the property name.
func definesProperty(t typeInfo, name string) bool {
	switch name {
	case "type":
		return true
	case "interval":
		return t.scope == byInterval
	case "period":
		return t.scope == byPeriod || t.scope == beforePeriod
	case "includeFuture":
		return t.scope == byPeriod
	case "tieredReplicants", "useDefaultTierForNull":
		return t.kind == Load
	}
	return false
}

func typeChoices() string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.name
	}
	return "it must be one of " + strings.Join(names, ", ")
}

func parseIntervalProp(raw json.RawMessage) (interval.Interval, error) {
	const want = `an ISO-8601 interval such as "2023-01-01/2023-02-01"`
	var s string
	if raw == nil || isNull(raw) {
		return interval.Interval{}, errors.New(`property "interval" is required: ` + want)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return interval.Interval{}, errors.New(`property "interval" must be a string, ` + want)
	}
	iv, err := interval.Parse(s)
	if err != nil {
		return interval.Interval{}, fmt.Errorf(`property "interval" must be %s: %v`, want, err)
	}
	return iv, nil
}

// parsePeriodProp insists on a positive period. Druid itself takes any
// Joda period (a missing one acts as zero), but a zero or negative window
// only ever matches by accident, so it is refused here.
func parsePeriodProp(raw json.RawMessage) (interval.Period, error) {
	const want = `a positive ISO-8601 period such as "P1M" or "PT6H"`
	var s string
	if raw == nil || isNull(raw) {
		return interval.Period{}, errors.New(`property "period" is required: ` + want)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return interval.Period{}, errors.New(`property "period" must be a string, ` + want)
	}
	p, err := interval.ParsePeriod(s)
	if err != nil {
		return interval.Period{}, fmt.Errorf(`property "period" must be %s: %v`, want, err)
	}
	if !p.IsPositive() {
		return interval.Period{}, fmt.Errorf(`property "period" must be %s, got %q`, want, s)
	}
	return p, nil
}

// parseBool reads an optional boolean property; absent or null gives def.
func parseBool(props map[string]json.RawMessage, name string, def bool) (bool, error) {
	raw, ok := props[name]
	if !ok || isNull(raw) {
		return def, nil
	}
	switch string(raw) {
	case "true", `"true"`:
		return true, nil
	case "false", `"false"`:
		return false, nil
	}
	return false, fmt.Errorf("property %q must be true or false, got %s", name, raw)
}

// parseTiers reads tieredReplicants, keeping the object's key order (a
// repeated key keeps its first place and takes the last value, as a
// LinkedHashMap does). Empty is allowed: Druid then loads no replica and
// the data is queryable from deep storage only.
func parseTiers(raw json.RawMessage, useDefault bool) ([]Tier, error) {
	if raw == nil || isNull(raw) {
		if useDefault {
			return []Tier{{DefaultTier, DefaultReplicants}}, nil
		}
		return nil, nil
	}
	const bad = `property "tieredReplicants" must be an object mapping tier names to replica counts, such as {"_default_tier": 2}`
	if raw[0] != '{' {
		return nil, errors.New(bad)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, errors.New(bad)
	}
	var tiers []Tier
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New(bad)
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New(bad)
		}
		n, err := parseReplicants(v)
		if err != nil {
			return nil, fmt.Errorf("property \"tieredReplicants\": invalid number of replicas for tier %q: %v", name, err)
		}
		if i, ok := index[name]; ok {
			tiers[i].Replicants = n
			continue
		}
		index[name] = len(tiers)
		tiers = append(tiers, Tier{name, n})
	}
	return tiers, nil
}

func parseReplicants(v json.RawMessage) (int, error) {
	if isNull(v) {
		return 0, errors.New("the value must not be null")
	}
	s := string(v)
	if s[0] == '"' {
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
	}
	n, err := strconv.ParseInt(s, 10, 32) // a Java int
	if err != nil {
		return 0, fmt.Errorf("the value %s must be a whole number from 0 to 2147483647", v)
	}
	if n < 0 {
		return 0, fmt.Errorf("the value %d must not be negative", n)
	}
	return int(n), nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// jsonKind names the JSON value that starts raw, for error messages.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		return "a number"
	}
	return "something that is not JSON"
}

// AppendJSON appends the rules as Druid's GET prints them: the properties
// each rule class declares, in Jackson's order for those classes (creator
// parameters first, then "type"), with defaults filled in (includeFuture,
// the effective tieredReplicants, useDefaultTierForNull) and intervals in
// full UTC ISO form. The output is deterministic; "[]" for no rules.
func AppendJSON(dst []byte, rs []Rule) []byte {
	dst = append(dst, '[')
	for i, r := range rs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.appendJSON(dst)
	}
	return append(dst, ']')
}

// String returns the rule's JSON object.
func (r Rule) String() string { return string(r.appendJSON(nil)) }

func (r Rule) appendJSON(b []byte) []byte {
	b = append(b, '{')
	switch r.scope {
	case byInterval:
		b = append(b, `"interval":"`...)
		b = append(b, r.iv.String()...)
		b = append(b, `",`...)
	case byPeriod, beforePeriod:
		b = append(b, `"period":"`...)
		b = append(b, r.period.String()...)
		b = append(b, `",`...)
		if r.scope == byPeriod {
			b = append(b, `"includeFuture":`...)
			b = strconv.AppendBool(b, r.includeFuture)
			b = append(b, ',')
		}
	}
	if r.kind == Load {
		b = append(b, `"tieredReplicants":{`...)
		for i, t := range r.tiers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, t.Name)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(t.Replicants), 10)
		}
		b = append(b, `},"useDefaultTierForNull":`...)
		b = strconv.AppendBool(b, r.useDefault)
		b = append(b, ',')
	}
	b = append(b, `"type":`...)
	b = appendString(b, r.Type())
	return append(b, '}')
}

var shortEscapes = [0x20]byte{'\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

// appendString writes a JSON string escaped as Jackson does: quote,
// backslash and control characters only, with upper-case \u00XX.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 && shortEscapes[c] != 0:
			b = append(b, '\\', shortEscapes[c])
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
