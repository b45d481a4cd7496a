package commands

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// AppendJSON appends c's JSON encoding, byte for byte what json.Marshal(c)
// produces (field order, float format, HTML escaping, sorted map keys), without
// reflection: every node encodes the merged config for the audit trail on every
// config write.
func (c CoordinatorDynamicConfig) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"millisToWaitBeforeDeleting":`...)
	b = strconv.AppendInt(b, c.MillisToWaitBeforeDeleting, 10)
	b = append(b, `,"mergeBytesLimit":`...)
	b = strconv.AppendInt(b, c.MergeBytesLimit, 10)
	b = append(b, `,"mergeSegmentsLimit":`...)
	b = strconv.AppendInt(b, int64(c.MergeSegmentsLimit), 10)
	b = append(b, `,"maxSegmentsToMove":`...)
	b = strconv.AppendInt(b, int64(c.MaxSegmentsToMove), 10)
	b = append(b, `,"percentOfSegmentsToConsiderPerMove":`...)
	b, err := appendJSONFloat(b, c.PercentOfSegmentsToConsiderPerMove)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"useBatchedSegmentSampler":`...)
	b = strconv.AppendBool(b, c.UseBatchedSegmentSampler)
	b = append(b, `,"replicantLifetime":`...)
	b = strconv.AppendInt(b, int64(c.ReplicantLifetime), 10)
	b = append(b, `,"replicationThrottleLimit":`...)
	b = strconv.AppendInt(b, int64(c.ReplicationThrottleLimit), 10)
	b = append(b, `,"balancerComputeThreads":`...)
	b = strconv.AppendInt(b, int64(c.BalancerComputeThreads), 10)
	b = append(b, `,"emitBalancingStats":`...)
	b = strconv.AppendBool(b, c.EmitBalancingStats)
	b = append(b, `,"killDataSourceWhitelist":`...)
	b = c.KillDataSourceWhitelist.appendJSON(b)
	b = append(b, `,"killPendingSegmentsSkipList":`...)
	b = c.KillPendingSegmentsSkipList.appendJSON(b)
	b = append(b, `,"maxSegmentsInNodeLoadingQueue":`...)
	b = strconv.AppendInt(b, int64(c.MaxSegmentsInNodeLoadingQueue), 10)
	b = append(b, `,"decommissioningNodes":`...)
	b = c.DecommissioningNodes.appendJSON(b)
	b = append(b, `,"decommissioningMaxPercentOfMaxSegmentsToMove":`...)
	b = strconv.AppendInt(b, int64(c.DecommissioningMaxPercentOfMaxSegmentsToMove), 10)
	b = append(b, `,"pauseCoordination":`...)
	b = strconv.AppendBool(b, c.PauseCoordination)
	b = append(b, `,"replicateAfterLoadTimeout":`...)
	b = strconv.AppendBool(b, c.ReplicateAfterLoadTimeout)
	b = append(b, `,"maxNonPrimaryReplicantsToLoad":`...)
	b = strconv.AppendInt(b, int64(c.MaxNonPrimaryReplicantsToLoad), 10)
	b = append(b, `,"useRoundRobinSegmentAssignment":`...)
	b = strconv.AppendBool(b, c.UseRoundRobinSegmentAssignment)
	b = append(b, `,"smartSegmentLoading":`...)
	b = strconv.AppendBool(b, c.SmartSegmentLoading)
	b = append(b, `,"debugDimensions":`...)
	b = appendJSONStringMap(b, c.DebugDimensions)
	return append(b, '}'), nil
}

// appendJSON is MarshalJSON's output: an array, never null.
func (l StringList) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONStringMap encodes a map as encoding/json does: null when nil, keys sorted.
func appendJSONStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = AppendJSONString(b, m[k])
	}
	return append(b, '}')
}

// AppendJSONString appends s quoted as encoding/json quotes it. Plain printable
// ASCII (the usual case) is copied; anything that needs escaping (quotes,
// backslashes, control bytes, <, >, &, non-ASCII) goes through encoding/json.
//
// This is deliberately not javacompat.AppendJSONString (Jackson's quoting, for
// API responses): Raft log entries and audit records must stay byte for byte
// what json.Marshal writes, so that nodes of any version agree on them.
func AppendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONFloat formats a float64 as encoding/json does.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
