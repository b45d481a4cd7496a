package server

import (
	"fmt"
	"net/http"
	"testing"

	"strata/internal/eventually"
	"strata/querynode/broker"
	"strata/querynode/historical"
)

// sys.segments.num_rows is each segment's row count as the data servers
// serving it report it (Druid's broker fills it from segment metadata), for
// published and realtime segments alike; the coordinator's listing has
// none, and the column read 0.
func TestSysSegmentsNumRows(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki") // four segments of four rows
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	task, taskURL := startTaskServer(t)
	rt, rtPath := f.segmentFile("wiki", "2013-09-04/2013-09-05", "realtime-task1", 0, 0, wikiRows("2013-09-04", 100)[:3])
	if err := task.ServeLocal("task1", []historical.Served{{Segment: rt, Path: rtPath, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, []string{h.url, taskURL}, func(c *broker.Config) {
		c.PastTimelines = &broker.HTTPPastTimelines{URLs: []string{f.coord}, Client: http.DefaultClient}
	})
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 1)
	sql := func(q string) string {
		_, body, _ := sqlCall(t, b, `{"query":`+fmt.Sprintf("%q", q)+`,"resultFormat":"array"}`)
		return body
	}
	// The coordinator's inventory polls the historical on its own period.
	eventually.True(t, "sys.segments to show the served segments", func() bool {
		return sql(`SELECT COUNT(*) FROM sys.segments WHERE datasource = 'wiki' AND is_available = 1 AND is_realtime = 0`) == `[[4]]`
	})
	for q, want := range map[string]string{
		`SELECT COUNT(*), MIN(num_rows), SUM(num_rows) FROM sys.segments WHERE datasource = 'wiki' AND is_realtime = 0`: `[[4,4,16]]`,
		`SELECT num_rows FROM sys.segments WHERE is_realtime = 1`:                                                       `[[3]]`,
	} {
		if got := sql(q); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}
