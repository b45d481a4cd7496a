package process

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/props"
)

// A lookup created on a three-node control plane reaches a broker process
// that polls all three (followers redirect it to the leader) within
// seconds, and SQL there uses it. When the leader is stopped the broker
// keeps its lookups, and the new leader learns what it holds within a poll.
func TestLookupsReachABrokerProcess(t *testing.T) {
	c := startCluster(t, 3, nil)
	l := c.leader()
	ports := freePorts(t, 1)
	p := props.Defaults()
	p.Set("svc.node.id", "broker")
	p.Set("svc.node.roles", "broker")
	p.Set("svc.http.address", ports[0])
	p.Set("svc.data.dir", t.TempDir())
	// The leader last, so a poll meets followers first and follows their
	// redirect.
	var coords []string
	for i := range c.procs {
		if i != l {
			coords = append(coords, c.url(i))
		}
	}
	p.Set("svc.broker.coordinatorUrls", strings.Join(append(coords, c.url(l)), ","))
	p.Set("svc.lookup.pollPeriod", "100ms")
	brk, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { brk.Close() })
	broker := "http://" + ports[0]

	lookups := c.url(l) + "/svc/coordinator/v1/lookups"
	if code, _, body := do(t, "POST", lookups+"/config", "application/json", `{}`, nil); code != 202 {
		t.Fatalf("initialise: %d %s", code, body)
	}
	created := time.Now()
	if code, _, body := do(t, "POST", lookups+"/config/__default/country", "application/json",
		`{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"FR":"France","US":"United States"}}}`, nil); code != 202 {
		t.Fatalf("create: %d %s", code, body)
	}
	sql := func(q string) (int, string) {
		code, _, body := do(t, "POST", broker+"/svc/v2/sql", "application/json", `{"query":`+strconv.Quote(q)+`,"resultFormat":"array"}`, nil)
		return code, body
	}
	var last string
	eventually.True(t, "SQL on the broker to use the lookup", func() bool {
		_, last = sql(`SELECT LOOKUP('FR', 'country') AS c, LOOKUP('XX', 'country', 'none') AS d`)
		return last == `[["France","none"]]`
	}, eventually.Within(5*time.Second), eventually.Showing(func() string { return last }))
	t.Logf("a lookup created on the leader answered SQL on the broker %v later", time.Since(created).Round(time.Millisecond))
	if code, body := sql(`SELECT k, v FROM lookup.country ORDER BY k`); code != 200 || body != `[["FR","France"],["US","United States"]]` {
		t.Fatalf("lookup schema: %d %s", code, body)
	}

	// The leader fails: the broker keeps what it holds, and reports it to
	// the new leader.
	c.stop(l)
	nl := c.leader()
	eventually.True(t, "the new leader to show the broker's lookups", func() bool {
		_, _, last = do(t, "GET", c.url(nl)+"/svc/coordinator/v1/lookups/nodeStatus?detailed=false", "", "", nil)
		return last == `{"__default":{"`+ports[0]+`":{"current":["country"],"toLoad":[],"toDrop":[]}}}`
	}, slow, eventually.Showing(func() string { return last }))
	if code, body := sql(`SELECT LOOKUP('US', 'country')`); code != 200 || body != `[["United States"]]` {
		t.Fatalf("after the failover: %d %s", code, body)
	}
}
