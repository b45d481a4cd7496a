// Package streaming ingests Kafka topics the way Druid's Kafka indexing
// service does. A supervisor (one per datasource, its spec stored in the Raft
// FSM) runs on the overlord leader and keeps `index_kafka` tasks running on
// the middle managers; each task reads a set of partitions from exact start
// offsets for taskDuration, builds segments, uploads them to deep storage and
// publishes them together with the partitions' next offsets in one FSM
// command whose compare-and-swap on the stored offsets makes every record
// land exactly once.
//
// Rows become queryable about a second after a task reads them: the task
// builds them into "hydrant" segments its middle manager serves to brokers
// beside the published timeline (realtime.go), and at publish hands them off
// to the published segments without a gap or a double count.
package streaming
