package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"strata/auth"
	"strata/internal/eventually"
	"strata/querynode/broker"
	"strata/querynode/historical"
)

// The metadata tables through POST /svc/v2/sql on a real broker whose
// control plane is a real coordinator: planned like any table, filtered and
// aggregated by the engine.
func TestSQLMetadataTables(t *testing.T) {
	f := newDPFixture(t)
	segs := publishWiki(f, "wiki")
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	// A task's realtime segment, which only the broker knows of.
	task, taskURL := startTaskServer(t)
	rt, rtPath := f.segmentFile("wiki", "2013-09-04/2013-09-05", "realtime-task1", 0, 0, wikiRows("2013-09-04", 100))
	if err := task.ServeLocal("task1", []historical.Served{{Segment: rt, Path: rtPath, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, []string{h.url, taskURL}, func(c *broker.Config) {
		c.PastTimelines = &broker.HTTPPastTimelines{URLs: []string{f.coord}, Client: http.DefaultClient}
	})
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 1)
	var total int64
	for _, s := range segs {
		total += s.Size
	}
	sql := func(q string) (int, string) {
		code, body, _ := sqlCall(t, b, `{"query":`+fmt.Sprintf("%q", q)+`,"resultFormat":"array"}`)
		return code, body
	}
	// The coordinator's inventory polls the historical on its own period.
	want := fmt.Sprintf(`[[4,%d]]`, total)
	eventually.True(t, "sys.segments to show the served segments", func() bool {
		_, body := sql(`SELECT COUNT(*) AS n, SUM("size") AS s FROM sys.segments WHERE datasource = 'wiki' AND is_available = 1 AND is_realtime = 0`)
		return body == want
	})
	// Without ORDER BY (a scan orders by time only) rows come in the
	// table's order: COLUMNS lists a table's columns by ordinal position.
	for q, want := range map[string]string{
		`SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'druid'`:                                               `[["wiki"]]`,
		`SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'wiki'`:                                     `[["__time","TIMESTAMP"],["page","VARCHAR"],["added","BIGINT"],["count","BIGINT"]]`,
		`SELECT COUNT(*) AS n FROM sys.server_segments WHERE segment_id LIKE 'wiki%'`:                                                 `[[5]]`,
		`SELECT segment_id, is_published, is_available, is_realtime, is_active, num_replicas FROM sys.segments WHERE is_realtime = 1`: fmt.Sprintf(`[[%q,0,1,1,1,1]]`, rt.ID().String()),
		`SELECT server FROM sys.server_segments WHERE segment_id = '` + rt.ID().String() + `'`:                                        fmt.Sprintf(`[[%q]]`, strings.TrimPrefix(taskURL, "http://")),
		`SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA GROUP BY SCHEMA_NAME`:                                                    `[["INFORMATION_SCHEMA"],["druid"],["lookup"],["sys"]]`,
	} {
		if code, body := sql(q); code != 200 || body != want {
			t.Errorf("%s: %d %s, want %s", q, code, body, want)
		}
	}
	// ROUTINES lists the planner's functions, aggregates marked.
	q := `SELECT ROUTINE_NAME, ROUTINE_TYPE, IS_AGGREGATOR FROM INFORMATION_SCHEMA.ROUTINES WHERE ROUTINE_NAME IN ('COUNT', 'UPPER', 'NO_SUCH_FN') ORDER BY ROUTINE_NAME`
	if code, body := sql(q); code != 200 || body != `[["COUNT","FUNCTION","YES"],["UPPER","FUNCTION","NO"]]` {
		t.Errorf("ROUTINES: %d %s", code, body)
	}
}

// A metadata table the caller may not read fails as a table query does: 403
// with Druid's forbidden error, which the SQL API writes as it is.
func TestSQLMetadataTablesForbidden(t *testing.T) {
	b := startBroker(t, nil, nil)
	s, err := New(Options{Roles: []string{RoleBroker}, Broker: b.b})
	if err != nil {
		t.Fatal(err)
	}
	ctx := auth.WithIdentity(auth.WithAuthorizer(context.Background(), metaGrants{}), &auth.Identity{Name: "u"})
	_, err = sqlMetaTable(ctx, s, "sys", "servers")
	var be *broker.Error
	if !errors.As(err, &be) || be.Status != http.StatusForbidden || !strings.Contains(string(be.Body()), "STATE:STATE") {
		t.Fatalf("sys.servers without STATE READ: %v", err)
	}
	if tab, err := sqlMetaTable(ctx, s, "druid", "wiki"); tab != nil || err != nil {
		t.Errorf("druid schema through the metadata hook: %v %v", tab, err)
	}
}
