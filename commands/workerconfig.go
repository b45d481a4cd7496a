package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// ParseWorkerBehaviorConfig parses and normalises a POST body.
func ParseWorkerBehaviorConfig(body []byte) (WorkerBehaviorConfig, error) {
	var c WorkerBehaviorConfig
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return c, fmt.Errorf("request body must be a JSON object")
	}
	if err := decodeFields(trimmed, &c); err != nil {
		return c, err
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
			return c, fmt.Errorf("autoScaler: %v", err)
		}
		c.AutoScaler = buf.Bytes()
	}
	return c, c.Validate()
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
		return fmt.Errorf("autoScaler must be null or an object with type, minNumWorkers, maxNumWorkers: %v", err)
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
