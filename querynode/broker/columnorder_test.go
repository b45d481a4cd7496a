package broker

import (
	"slices"
	"testing"

	"strata/interval"
	"strata/segmeta"
)

// Druid's order: the newest segment's columns first (dimensions as
// ingested, metrics by name), then columns only older segments have.
func TestOrderColumns(t *testing.T) {
	seg := func(iv string, dims, mets []string) *segmeta.DataSegment {
		p, err := interval.Parse(iv)
		if err != nil {
			t.Fatal(err)
		}
		return &segmeta.DataSegment{DataSource: "x", Interval: p, Version: "v1", Dimensions: dims, Metrics: mets}
	}
	old := seg("2020-01-01/2020-01-02", []string{"srcIP", "gone", "dstIP"}, []string{"count", "packets", "bytes", "oldMetric"})
	newer := seg("2020-01-02/2020-01-03", []string{"srcIP", "dstIP", "added"}, []string{"count", "packets", "bytes"})
	got := OrderColumns([]*segmeta.DataSegment{old, newer})
	want := []string{"srcIP", "dstIP", "added", "bytes", "count", "packets", "gone", "oldMetric"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
