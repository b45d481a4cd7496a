package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// WorkerBehaviorConfig is the overlord's dynamic configuration (spec 2.2,
// ADMIN-API §5.1): how tasks are assigned to middle managers and how workers
// are autoscaled. A POST replaces it as a whole.
type WorkerBehaviorConfig struct {
	Type           string          `json:"type"`
	SelectStrategy *SelectStrategy `json:"selectStrategy"`
	AutoScaler     json.RawMessage `json:"autoScaler"`
}

// SelectStrategy chooses the worker for a task.
type SelectStrategy struct {
	Type               string              `json:"type"`
	AffinityConfig     *AffinityConfig     `json:"affinityConfig,omitempty"`
	WorkerCategorySpec *WorkerCategorySpec `json:"workerCategorySpec,omitempty"`
	Function           *string             `json:"function,omitempty"`
}

// AffinityConfig pins datasources to worker hosts.
type AffinityConfig struct {
	Affinity map[string][]string `json:"affinity"`
	Strong   bool                `json:"strong"`
}

// WorkerCategorySpec maps task types to worker categories.
type WorkerCategorySpec struct {
	CategoryMap map[string]CategoryConfig `json:"categoryMap"`
	Strong      bool                      `json:"strong"`
}

// CategoryConfig is the category choice for one task type.
type CategoryConfig struct {
	DefaultCategory  *string           `json:"defaultCategory"`
	CategoryAffinity map[string]string `json:"categoryAffinity"`
}

// Select strategy names Druid accepts (legacy aliases included).
var selectStrategies = map[string]bool{
	"equalDistribution": true, "equalDistributionWithCategorySpec": true,
	"fillCapacity": true, "fillCapacityWithCategorySpec": true,
	"fillCapacityWithAffinity": true, "equalDistributionWithAffinity": true,
	"javascript": true,
}

// SelectStrategyNames lists the accepted strategy types, sorted (for error messages).
func SelectStrategyNames() []string {
	out := make([]string, 0, len(selectStrategies))
	for k := range selectStrategies {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseWorkerBehaviorConfig parses and normalises a POST body. Unknown fields
// are ignored (as Druid does) and returned, sorted, as dotted paths for the
// caller to log.
func ParseWorkerBehaviorConfig(body []byte) (c WorkerBehaviorConfig, unknown []string, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return c, nil, fmt.Errorf("request body must be a JSON object")
	}
	if unknown, err = decodeFields(trimmed, &c); err != nil {
		return c, nil, err
	}
	if c.Type == "" {
		c.Type = "default"
	}
	// Druid's defaults for an object without a type: the equalDistribution
	// strategy, and the no-op autoscaler (stored as null, no autoscaling).
	if c.SelectStrategy != nil && c.SelectStrategy.Type == "" {
		c.SelectStrategy.Type = "equalDistribution"
	}
	if len(c.AutoScaler) == 0 || untypedObject(c.AutoScaler) {
		c.AutoScaler = json.RawMessage("null")
	} else {
		var buf bytes.Buffer
		if err := json.Compact(&buf, c.AutoScaler); err != nil {
			return c, nil, fmt.Errorf("autoScaler: %v", err)
		}
		c.AutoScaler = buf.Bytes()
	}
	if err := c.Validate(); err != nil {
		return c, nil, err
	}
	if err := c.checkNames(); err != nil {
		return c, nil, err
	}
	return c, unknown, nil
}

// checkNames refuses empty datasource, host, task type and category names in
// the strategy, which Druid stores though they can never match a task or a
// worker (README, "Checks beyond Druid's"). It is not part of Validate: the
// state machine replays log entries written before this check existed, and
// must apply them as it did.
func (c WorkerBehaviorConfig) checkNames() error {
	s := c.SelectStrategy
	if s == nil {
		return nil
	}
	if a := s.AffinityConfig; a != nil {
		for _, ds := range slices.Sorted(maps.Keys(a.Affinity)) {
			if ds == "" {
				return fmt.Errorf("selectStrategy.affinityConfig.affinity: a datasource name must not be empty")
			}
			if slices.Contains(a.Affinity[ds], "") {
				return fmt.Errorf("selectStrategy.affinityConfig.affinity[%q]: a worker host must not be empty", ds)
			}
		}
	}
	if w := s.WorkerCategorySpec; w != nil {
		for _, typ := range slices.Sorted(maps.Keys(w.CategoryMap)) {
			cc := w.CategoryMap[typ]
			where := fmt.Sprintf("selectStrategy.workerCategorySpec.categoryMap[%q]", typ)
			switch {
			case typ == "":
				return fmt.Errorf("selectStrategy.workerCategorySpec.categoryMap: a task type must not be empty")
			case cc.DefaultCategory != nil && *cc.DefaultCategory == "":
				return fmt.Errorf("%s.defaultCategory must be null or a category name, not empty", where)
			}
			for _, ds := range slices.Sorted(maps.Keys(cc.CategoryAffinity)) {
				if ds == "" || cc.CategoryAffinity[ds] == "" {
					return fmt.Errorf("%s.categoryAffinity: datasource and category names must not be empty", where)
				}
			}
		}
	}
	return nil
}

// untypedObject reports whether raw is a JSON object without a "type".
func untypedObject(raw json.RawMessage) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	_, typed := probe["type"]
	return !typed
}

// Validate checks the strategy and autoscaler.
func (c WorkerBehaviorConfig) Validate() error {
	if c.Type != "default" && c.Type != "categorized" {
		return fmt.Errorf("unknown worker config type %q: expected \"default\" or \"categorized\"", c.Type)
	}
	if s := c.SelectStrategy; s != nil {
		if !selectStrategies[s.Type] {
			return fmt.Errorf("unknown selectStrategy type %q: expected one of %v", s.Type, SelectStrategyNames())
		}
		if s.Type == "javascript" && (s.Function == nil || *s.Function == "") {
			return fmt.Errorf("selectStrategy javascript needs a function")
		}
		if s.Type == "javascript" {
			return fmt.Errorf("JavaScript is disabled: use equalDistribution or fillCapacity with affinityConfig or workerCategorySpec")
		}
	}
	if bytes.Equal(c.AutoScaler, []byte("null")) {
		return nil
	}
	var as struct {
		Type          string `json:"type"`
		MinNumWorkers *int32 `json:"minNumWorkers"`
		MaxNumWorkers *int32 `json:"maxNumWorkers"`
	}
	if err := json.Unmarshal(c.AutoScaler, &as); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("invalid value for field \"autoScaler.%s\": expected %s, got JSON %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return fmt.Errorf("autoScaler must be null or an object with type, minNumWorkers, maxNumWorkers, got %s", describeJSONValue(c.AutoScaler))
	}
	if as.Type != "ec2" && as.Type != "gce" {
		return fmt.Errorf("unknown autoScaler type %q: expected \"ec2\" or \"gce\" (or null for no autoscaling)", as.Type)
	}
	minW, maxW := int32(0), int32(0)
	if as.MinNumWorkers != nil {
		minW = *as.MinNumWorkers
	}
	if as.MaxNumWorkers != nil {
		maxW = *as.MaxNumWorkers
	}
	if minW < 0 || maxW < 0 || minW > maxW {
		return fmt.Errorf("autoScaler needs 0 <= minNumWorkers <= maxNumWorkers (got %d and %d)", minW, maxW)
	}
	return nil
}

// MarshalJSON prints the canonical object Druid prints.
func (c WorkerBehaviorConfig) MarshalJSON() ([]byte, error) {
	type plain WorkerBehaviorConfig
	p := plain(c)
	if len(p.AutoScaler) == 0 {
		p.AutoScaler = json.RawMessage("null")
	}
	return json.Marshal(p)
}
