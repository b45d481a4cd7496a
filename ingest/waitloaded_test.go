package ingest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strata/interval"
	"strata/props"
	"strata/segmeta"
)

// The load waiter does not wait for segments the retention rules keep off the
// historicals (a drop rule, or no rule at all), as Druid's counts replication
// factor 0 as loaded; it still waits for the ones a load rule places.
func TestWaitLoadedSkipsSegmentsRulesDoNotLoad(t *testing.T) {
	day := func(d string) interval.Interval {
		iv, err := interval.Parse(d + "/P1D")
		if err != nil {
			t.Fatal(err)
		}
		return iv
	}
	kept := &segmeta.DataSegment{DataSource: "wiki", Interval: day("2020-01-01"), Version: "v1", ShardSpec: segmeta.NumberedShard(0, 1)}
	dropped := &segmeta.DataSegment{DataSource: "wiki", Interval: day("2021-06-01"), Version: "v1", ShardSpec: segmeta.NumberedShard(0, 1)}
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/svc/coordinator/v1/rules/wiki" || !r.URL.Query().Has("full") {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `[{"type":"loadByInterval","interval":"2020-01-01/2020-02-01","tieredReplicants":{"_default_tier":1}},{"type":"dropForever"}]`)
	}))
	defer coord.Close()
	var hideKept atomic.Bool
	broker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/candidates") {
			http.NotFound(w, r)
			return
		}
		if hideKept.Load() {
			fmt.Fprint(w, `[]`)
			return
		}
		fmt.Fprintf(w, `[{"interval":%q,"version":"v1","partitionNumber":0,"locations":[{"name":"h1"}]}]`, kept.Interval.String())
	}))
	defer broker.Close()
	c := &Cluster{Coordinators: []string{coord.URL}, Broker: broker.URL, HTTP: http.DefaultClient}

	start := time.Now()
	if err := c.WaitLoaded(context.Background(), []*segmeta.DataSegment{kept, dropped}, 5*time.Second); err != nil {
		t.Fatalf("waiting for a loaded segment and a dropped one: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("waited %s for a segment the rules drop", time.Since(start))
	}
	hideKept.Store(true)
	err := c.WaitLoaded(context.Background(), []*segmeta.DataSegment{kept, dropped}, 300*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 published segments") {
		t.Fatalf("a segment a load rule places was not waited for: %v", err)
	}
}

// A task's load waiter with no broker known (none announced through
// discovery, svc.router.brokerUrls unset) gives up once
// svc.coordinator.loadTimeout has passed and says why, instead of polling a
// default broker address that nothing listens on for minutes while the task
// holds its datasource lock.
func TestWaitLoadedWithoutBrokersEndsAtLoadTimeout(t *testing.T) {
	coord := httptest.NewServer(http.NotFoundHandler()) // no rules: wait for every segment
	defer coord.Close()
	p := props.Defaults()
	p.Set("svc.data.dir", t.TempDir())
	p.Set("svc.indexer.coordinatorUrls", coord.URL)
	p.Set("svc.coordinator.loadTimeout", "1s")
	c, err := ClusterFromProps(p)
	if err != nil {
		t.Fatal(err)
	}
	iv, _ := interval.Parse("2020-01-01/P1D")
	seg := &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: "v1", ShardSpec: segmeta.NumberedShard(0, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err = c.WaitLoaded(ctx, []*segmeta.DataSegment{seg}, c.LoadTimeout)
	if took := time.Since(start); err == nil || errors.Is(err, context.Canceled) || ctx.Err() != nil || took > 10*time.Second {
		t.Fatalf("load wait with svc.coordinator.loadTimeout=1s and no broker: %v after %s", err, took)
	}
	if !strings.Contains(err.Error(), "no broker is known") {
		t.Fatalf("the error does not say no broker is known: %v", err)
	}

	// Discovery that lists no broker (yet): the wait lasts the load timeout,
	// in case one joins, and no longer.
	c.Brokers = func() []string { return nil }
	start = time.Now()
	err = c.WaitLoaded(ctx, []*segmeta.DataSegment{seg}, c.LoadTimeout)
	if took := time.Since(start); err == nil || ctx.Err() != nil || took < time.Second || took > 10*time.Second {
		t.Fatalf("load wait with discovery listing no broker: %v after %s", err, took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no broker is known") || !strings.Contains(err.Error(), "svc.coordinator.loadTimeout") {
		t.Fatalf("the error does not say no broker is known: %v", err)
	}

	// A broker found through discovery is asked; the static list stays unset.
	broker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `[{"interval":%q,"version":"v1","partitionNumber":0,"locations":[{"name":"h1"}]}]`, iv.String())
	}))
	defer broker.Close()
	c.Brokers = func() []string { return []string{"http://127.0.0.1:1", broker.URL} } // the first refuses
	if err := c.WaitLoaded(ctx, []*segmeta.DataSegment{seg}, c.LoadTimeout); err != nil {
		t.Fatalf("with a discovered broker: %v", err)
	}
}
