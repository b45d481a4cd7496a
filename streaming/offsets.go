package streaming

import (
	"encoding/json"
	"fmt"

	"strata/fsm"
)

// Offsets are Kafka offsets per partition of one topic, Druid's
// KafkaDataSourceMetadata: for stored metadata, the next offset to read.
type Offsets struct {
	Stream     string
	Partitions map[int32]int64
}

// ParseOffsets reads Druid's Kafka metadata JSON,
// {"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100}}}.
// "" or "null" give empty Offsets and no error.
func ParseOffsets(metadata string) (Offsets, error) {
	stream, parts, err := fsm.ParseKafkaMetadata(metadata)
	if err != nil {
		return Offsets{}, err
	}
	return Offsets{Stream: stream, Partitions: parts}, nil
}

// MetadataJSON renders the offsets as Druid's metadata JSON, partitions in
// numeric order (the form the FSM stores).
func (o Offsets) MetadataJSON() json.RawMessage {
	return json.RawMessage(fsm.KafkaMetadataJSON(o.Stream, o.Partitions))
}

// parseSequenceNumbers reads an index_kafka task's startSequenceNumbers
// ({"type":"start","stream":..,"partitionSequenceNumberMap":{..}}), which
// is Kafka metadata's partitions object on its own.
func parseSequenceNumbers(raw json.RawMessage) (Offsets, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Offsets{}, fmt.Errorf("ioConfig.startSequenceNumbers is required")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Offsets{}, fmt.Errorf("ioConfig.startSequenceNumbers: %v", err)
	}
	doc := append(append([]byte(`{"type":"kafka","partitions":`), raw...), '}')
	o, err := ParseOffsets(string(doc))
	if err != nil {
		return Offsets{}, fmt.Errorf("ioConfig.startSequenceNumbers: %v", err)
	}
	return o, nil
}
