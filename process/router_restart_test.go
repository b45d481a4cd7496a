package process

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/props"
)

// Brokers restarted back to back (issue 20): a router whose membership is
// from before the first broker came back (here its heartbeat is an hour)
// and whose only listed live broker then stops asks the leader for the
// current brokers and sends the query to the restarted one, instead of
// answering 503 until its next heartbeat.
func TestRouterFindsRestartedBrokerThroughDiscovery(t *testing.T) {
	ports := freePorts(t, 7)
	ctlURL := "http://" + ports[0]
	start := func(roles, addr, heartbeat string, extra map[string]string) *Process {
		p := props.Defaults()
		p.Set("svc.node.id", "n-"+addr)
		p.Set("svc.node.roles", roles)
		p.Set("svc.http.address", addr)
		p.Set("svc.data.dir", t.TempDir())
		p.Set("svc.discovery.coordinators", ctlURL)
		p.Set("svc.discovery.heartbeatPeriod", heartbeat)
		p.Set("svc.discovery.leaseTimeout", "2h")
		for k, v := range extra {
			p.Set(k, v)
		}
		proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proc.Close() })
		return proc
	}
	ctl := start("coordinator,overlord", ports[0], "100ms", map[string]string{"svc.raft.address": ports[1],
		"svc.storage.storageDirectory": t.TempDir()})
	eventually.True(t, "a leader", ctl.Node.IsLeader, slow)
	// A historical, so that the brokers become ready (they wait for
	// discovery to list a data server and poll it).
	start("historical", ports[6], "100ms", nil)
	b1 := start("broker", ports[2], "100ms", nil)
	b2 := start("broker", ports[3], "100ms", nil)
	live := func(typ string) int {
		_, _, body := do(t, "GET", ctlURL+"/svc/coordinator/v1/servers?simple", "", "", nil)
		var list []struct{ Type, State string }
		json.Unmarshal([]byte(body), &list)
		n := 0
		for _, s := range list {
			if (typ == "" || s.Type == typ) && s.State == "live" {
				n++
			}
		}
		return n
	}
	liveBrokers := func() int { return live("broker") }
	// Every process but the router has announced, so the router's one
	// announcement lists them all.
	eventually.True(t, "the control node, the historical and both brokers live", func() bool { return live("") == 4 }, slow)
	// The router announces once now and not again during the test.
	start("router", ports[4], "1h", nil)
	routerURL := "http://" + ports[4]
	eventually.True(t, "the router's one announcement answered", func() bool {
		_, _, st := do(t, "GET", routerURL+"/status", "", "", nil)
		var status struct {
			Discovery struct{ Members int } `json:"discovery"`
		}
		return json.Unmarshal([]byte(st), &status) == nil && status.Discovery.Members == 5
	}, slow)
	query := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	if code, _, body := do(t, "POST", routerURL+"/svc/v2/", "application/json", query, nil); code != 200 {
		t.Fatalf("query through the router: %d %s", code, body)
	}

	// b1 restarts (at another address), then b2 stops.
	b1.Close()
	start("broker", ports[5], "100ms", nil)
	eventually.True(t, "the restarted broker live", func() bool { return liveBrokers() == 2 }, slow)
	b2.Close()
	code, _, body := do(t, "POST", routerURL+"/svc/v2/", "application/json", query, nil)
	if code != 200 {
		t.Fatalf("query through the router after the restarts: %d %s", code, body)
	}
}
