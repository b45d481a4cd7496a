// Package streaming ingests Kafka topics the way Druid's Kafka indexing
// service does. A supervisor (one per datasource, its spec stored in the Raft
// FSM) runs on the overlord leader and keeps `index_kafka` tasks running on
// the middle managers; each task reads a set of partitions from exact start
// offsets for taskDuration, builds segments, uploads them to deep storage and
// publishes them together with the partitions' next offsets in one FSM
// command whose compare-and-swap on the stored offsets makes every record
// land exactly once.
//
// Data becomes queryable when a task publishes (every taskDuration, or when
// the task is stopped gracefully); rows still held by a running task are not
// queryable, unlike Druid's realtime segments.
package streaming
