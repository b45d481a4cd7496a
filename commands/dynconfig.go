package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// CoordinatorDynamicConfig is the coordinator's runtime-changeable configuration
// (spec 2.1). Field order is the order GET prints.
type CoordinatorDynamicConfig struct {
	MillisToWaitBeforeDeleting                   int64             `json:"millisToWaitBeforeDeleting"`
	MergeBytesLimit                              int64             `json:"mergeBytesLimit"`
	MergeSegmentsLimit                           int32             `json:"mergeSegmentsLimit"`
	MaxSegmentsToMove                            int32             `json:"maxSegmentsToMove"`
	PercentOfSegmentsToConsiderPerMove           float64           `json:"percentOfSegmentsToConsiderPerMove"`
	UseBatchedSegmentSampler                     bool              `json:"useBatchedSegmentSampler"`
	ReplicantLifetime                            int32             `json:"replicantLifetime"`
	ReplicationThrottleLimit                     int32             `json:"replicationThrottleLimit"`
	BalancerComputeThreads                       int32             `json:"balancerComputeThreads"`
	EmitBalancingStats                           bool              `json:"emitBalancingStats"`
	KillDataSourceWhitelist                      StringList        `json:"killDataSourceWhitelist"`
	KillPendingSegmentsSkipList                  StringList        `json:"killPendingSegmentsSkipList"`
	MaxSegmentsInNodeLoadingQueue                int32             `json:"maxSegmentsInNodeLoadingQueue"`
	DecommissioningNodes                         StringList        `json:"decommissioningNodes"`
	DecommissioningMaxPercentOfMaxSegmentsToMove int32             `json:"decommissioningMaxPercentOfMaxSegmentsToMove"`
	PauseCoordination                            bool              `json:"pauseCoordination"`
	ReplicateAfterLoadTimeout                    bool              `json:"replicateAfterLoadTimeout"`
	MaxNonPrimaryReplicantsToLoad                int32             `json:"maxNonPrimaryReplicantsToLoad"`
	UseRoundRobinSegmentAssignment               bool              `json:"useRoundRobinSegmentAssignment"`
	SmartSegmentLoading                          bool              `json:"smartSegmentLoading"`
	DebugDimensions                              map[string]string `json:"debugDimensions"`
}

// DefaultCoordinatorConfig returns Druid's defaults (ADMIN-API §4.1).
func DefaultCoordinatorConfig() CoordinatorDynamicConfig {
	return CoordinatorDynamicConfig{
		MillisToWaitBeforeDeleting:                   900000,
		MergeBytesLimit:                              524288000,
		MergeSegmentsLimit:                           100,
		MaxSegmentsToMove:                            100,
		PercentOfSegmentsToConsiderPerMove:           100,
		UseBatchedSegmentSampler:                     true,
		ReplicantLifetime:                            15,
		ReplicationThrottleLimit:                     500,
		BalancerComputeThreads:                       1,
		KillDataSourceWhitelist:                      StringList{},
		KillPendingSegmentsSkipList:                  StringList{},
		MaxSegmentsInNodeLoadingQueue:                500,
		DecommissioningNodes:                         StringList{},
		DecommissioningMaxPercentOfMaxSegmentsToMove: 70,
		MaxNonPrimaryReplicantsToLoad:                math.MaxInt32,
		UseRoundRobinSegmentAssignment:               true,
		SmartSegmentLoading:                          true,
	}
}

// CoordinatorConfigPatch is a partial update: nil fields keep their current value.
type CoordinatorConfigPatch struct {
	MillisToWaitBeforeDeleting                   *int64          `json:"millisToWaitBeforeDeleting,omitempty"`
	MergeBytesLimit                              *int64          `json:"mergeBytesLimit,omitempty"`
	MergeSegmentsLimit                           *int32          `json:"mergeSegmentsLimit,omitempty"`
	MaxSegmentsToMove                            *int32          `json:"maxSegmentsToMove,omitempty"`
	PercentOfSegmentsToConsiderPerMove           *float64        `json:"percentOfSegmentsToConsiderPerMove,omitempty"`
	UseBatchedSegmentSampler                     *bool           `json:"useBatchedSegmentSampler,omitempty"`
	ReplicantLifetime                            *int32          `json:"replicantLifetime,omitempty"`
	ReplicationThrottleLimit                     *int32          `json:"replicationThrottleLimit,omitempty"`
	BalancerComputeThreads                       *int32          `json:"balancerComputeThreads,omitempty"`
	EmitBalancingStats                           *bool           `json:"emitBalancingStats,omitempty"`
	KillDataSourceWhitelist                      *StringList     `json:"killDataSourceWhitelist,omitempty"`
	KillPendingSegmentsSkipList                  *StringList     `json:"killPendingSegmentsSkipList,omitempty"`
	MaxSegmentsInNodeLoadingQueue                *int32          `json:"maxSegmentsInNodeLoadingQueue,omitempty"`
	DecommissioningNodes                         *StringList     `json:"decommissioningNodes,omitempty"`
	DecommissioningMaxPercentOfMaxSegmentsToMove *int32          `json:"decommissioningMaxPercentOfMaxSegmentsToMove,omitempty"`
	PauseCoordination                            *bool           `json:"pauseCoordination,omitempty"`
	ReplicateAfterLoadTimeout                    *bool           `json:"replicateAfterLoadTimeout,omitempty"`
	MaxNonPrimaryReplicantsToLoad                *int32          `json:"maxNonPrimaryReplicantsToLoad,omitempty"`
	UseRoundRobinSegmentAssignment               *bool           `json:"useRoundRobinSegmentAssignment,omitempty"`
	SmartSegmentLoading                          *bool           `json:"smartSegmentLoading,omitempty"`
	DebugDimensions                              json.RawMessage `json:"debugDimensions,omitempty"` // absent, null, or an object
}

// ParseCoordinatorConfigPatch parses a POST body. Unknown fields are ignored (as
// Druid does) and returned, sorted, for the caller to log; a field of the wrong
// type, or a count or limit below zero, is an error naming the field.
func ParseCoordinatorConfigPatch(body []byte) (p CoordinatorConfigPatch, unknown []string, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return p, nil, fmt.Errorf("request body must be a JSON object")
	}
	if unknown, err = decodeFields(trimmed, &p); err != nil {
		return p, nil, err
	}
	if p.DebugDimensions != nil {
		if _, err := parseDebugDimensions(p.DebugDimensions); err != nil {
			return p, nil, err
		}
	}
	if err := p.checkNonNegative(); err != nil {
		return p, nil, err
	}
	return p, unknown, nil
}

// checkNonNegative refuses negative counts, limits and durations, which Druid
// stores though none means anything (README, "Checks beyond Druid's"). It looks
// at the request only and is not part of Apply: the state machine replays log
// entries written before this check existed, and must apply them as it did.
func (p CoordinatorConfigPatch) checkNonNegative() error {
	return errors.Join(
		nonNegative("millisToWaitBeforeDeleting", p.MillisToWaitBeforeDeleting),
		nonNegative("mergeBytesLimit", p.MergeBytesLimit),
		nonNegative("mergeSegmentsLimit", p.MergeSegmentsLimit),
		nonNegative("maxSegmentsToMove", p.MaxSegmentsToMove),
		nonNegative("replicantLifetime", p.ReplicantLifetime),
		nonNegative("replicationThrottleLimit", p.ReplicationThrottleLimit),
		nonNegative("maxSegmentsInNodeLoadingQueue", p.MaxSegmentsInNodeLoadingQueue),
	)
}

func nonNegative[T int32 | int64](name string, v *T) error {
	if v != nil && *v < 0 {
		return fmt.Errorf("%s must be greater than or equal to 0, got %d", name, *v)
	}
	return nil
}

func parseDebugDimensions(raw json.RawMessage) (map[string]string, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	m := map[string]string{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("debugDimensions must be null or an object of strings")
	}
	return m, nil
}

// Apply merges the patch over cur and validates the result. It is pure: the FSM
// calls it during apply.
func (p CoordinatorConfigPatch) Apply(cur CoordinatorDynamicConfig) (CoordinatorDynamicConfig, error) {
	c := cur
	setI64(&c.MillisToWaitBeforeDeleting, p.MillisToWaitBeforeDeleting)
	setI64(&c.MergeBytesLimit, p.MergeBytesLimit)
	setI32(&c.MergeSegmentsLimit, p.MergeSegmentsLimit)
	setI32(&c.MaxSegmentsToMove, p.MaxSegmentsToMove)
	if p.PercentOfSegmentsToConsiderPerMove != nil {
		c.PercentOfSegmentsToConsiderPerMove = *p.PercentOfSegmentsToConsiderPerMove
	}
	setBool(&c.UseBatchedSegmentSampler, p.UseBatchedSegmentSampler)
	setI32(&c.ReplicantLifetime, p.ReplicantLifetime)
	setI32(&c.ReplicationThrottleLimit, p.ReplicationThrottleLimit)
	setI32(&c.BalancerComputeThreads, p.BalancerComputeThreads)
	setBool(&c.EmitBalancingStats, p.EmitBalancingStats)
	setList(&c.KillDataSourceWhitelist, p.KillDataSourceWhitelist)
	setList(&c.KillPendingSegmentsSkipList, p.KillPendingSegmentsSkipList)
	setI32(&c.MaxSegmentsInNodeLoadingQueue, p.MaxSegmentsInNodeLoadingQueue)
	setList(&c.DecommissioningNodes, p.DecommissioningNodes)
	setI32(&c.DecommissioningMaxPercentOfMaxSegmentsToMove, p.DecommissioningMaxPercentOfMaxSegmentsToMove)
	setBool(&c.PauseCoordination, p.PauseCoordination)
	setBool(&c.ReplicateAfterLoadTimeout, p.ReplicateAfterLoadTimeout)
	setI32(&c.MaxNonPrimaryReplicantsToLoad, p.MaxNonPrimaryReplicantsToLoad)
	setBool(&c.UseRoundRobinSegmentAssignment, p.UseRoundRobinSegmentAssignment)
	setBool(&c.SmartSegmentLoading, p.SmartSegmentLoading)
	if p.DebugDimensions != nil {
		m, err := parseDebugDimensions(p.DebugDimensions)
		if err != nil {
			return cur, err
		}
		c.DebugDimensions = m
	}
	// Druid raises fewer than one balancer thread to one rather than rejecting.
	if c.BalancerComputeThreads < 1 {
		c.BalancerComputeThreads = 1
	}
	if err := c.Validate(); err != nil {
		return cur, err
	}
	return c, nil
}

// Validate checks Druid's bounds, with Druid's messages. The other fields have
// no bounds in Druid (ADMIN-API §4.2): a negative count is accepted there too.
func (c CoordinatorDynamicConfig) Validate() error {
	switch {
	case c.DecommissioningMaxPercentOfMaxSegmentsToMove < 0 || c.DecommissioningMaxPercentOfMaxSegmentsToMove > 100:
		return fmt.Errorf("decommissioningMaxPercentOfMaxSegmentsToMove should be in range [0, 100]")
	case !(c.PercentOfSegmentsToConsiderPerMove > 0 && c.PercentOfSegmentsToConsiderPerMove <= 100):
		return fmt.Errorf("percentOfSegmentsToConsiderPerMove should be between 1 and 100!")
	case c.MaxNonPrimaryReplicantsToLoad < 0:
		return fmt.Errorf("maxNonPrimaryReplicantsToLoad must be greater than or equal to 0.")
	}
	return nil
}

func setI64(dst *int64, v *int64) {
	if v != nil {
		*dst = *v
	}
}
func setI32(dst *int32, v *int32) {
	if v != nil {
		*dst = *v
	}
}
func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}
func setList(dst *StringList, v *StringList) {
	if v != nil {
		*dst = append(StringList{}, (*v)...)
	}
}

// StringList is a list of strings that also accepts a comma-separated string on
// input (Druid accepts both for its set-valued config fields); it always prints
// as a JSON array.
type StringList []string

// UnmarshalJSON accepts what Druid's parseJsonStringOrArray accepts: an array
// of strings or a comma-separated string, kept as a set (blanks trimmed and
// dropped, duplicates removed, first occurrence first). Druid reads any other
// JSON value as the empty set, which silently clears the list; Strata refuses it.
func (l *StringList) UnmarshalJSON(b []byte) error {
	const want = "expected an array of strings or a comma-separated string"
	b = bytes.TrimSpace(b)
	var items []string
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		items = strings.Split(s, ",")
	case len(b) > 0 && b[0] == '[':
		var arr []*string
		if err := json.Unmarshal(b, &arr); err != nil {
			return errors.New(want + ", got an array holding something else")
		}
		for _, s := range arr {
			if s != nil {
				items = append(items, *s)
			}
		}
	case string(b) == "null":
		// The empty set, as in Druid (a patch field never gets here: null
		// leaves the pointer nil).
	default:
		return fmt.Errorf("%s, got %s", want, describeJSONValue(b))
	}
	out := StringList{}
	seen := map[string]bool{}
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	*l = out
	return nil
}

// MarshalJSON prints an array, never null.
func (l StringList) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(l))
}

// describeJSONError turns encoding/json errors into messages that name the field.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case asErr(err, &te):
		if te.Field != "" {
			return fmt.Errorf("invalid value for field %q: expected %s, got JSON %s", te.Field, te.Type.String(), te.Value)
		}
		return fmt.Errorf("invalid JSON value: expected %s, got %s", te.Type.String(), te.Value)
	case asErr(err, &se):
		return fmt.Errorf("malformed JSON at byte %d: %v", se.Offset, se.Error())
	}
	return fmt.Errorf("invalid request body: %v", err)
}

// describeJSONValue names the kind of JSON value b holds, for error messages.
func describeJSONValue(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "an object"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		return "a number"
	case b[0] == '[':
		return "an array"
	}
	return "JSON " + string(b)
}
