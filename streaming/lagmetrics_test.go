package streaming

import (
	"reflect"
	"testing"
)

// Lags lists each running supervisor's partitions with their last measured
// lag, and nothing for a supervisor not yet measured.
func TestLags(t *testing.T) {
	m := &Manager{sups: map[string]*supervisor{
		"wiki":  {id: "wiki", ds: "wiki", spec: &SupervisorSpec{Topic: "edits"}, sample: offsetSample{lag: map[int32]int64{1: 7, 0: 3}}},
		"fresh": {id: "fresh", ds: "fresh", spec: &SupervisorSpec{Topic: "t"}},
	}}
	want := []PartitionLag{
		{Supervisor: "wiki", DataSource: "wiki", Stream: "edits", Partition: 0, Lag: 3},
		{Supervisor: "wiki", DataSource: "wiki", Stream: "edits", Partition: 1, Lag: 7},
	}
	if got := m.Lags(); !reflect.DeepEqual(got, want) {
		t.Errorf("Lags() = %+v, want %+v", got, want)
	}
}
