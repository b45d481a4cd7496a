package chaos

import (
	"context"
	"testing"
	"time"

	"strata/internal/testcerts"
)

// Five real processes (control node, historical, broker, middle manager,
// router) serving HTTPS only and wired by discovery over it, Raft on TLS:
// a SQL INSERT through the router loads and its rows are counted through
// the router. The certificates are made for this run.
func TestSelfWiringClusterOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata and starts five processes: about half a minute")
	}
	bin := buildStrata(t)
	work := t.TempDir()
	c, err := NewCluster(bin, work, NewNet(true)) // loopback: the certificates name 127.0.0.1
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		if t.Failed() {
			for _, p := range c.Procs {
				t.Logf("---- %s log tail:\n%s", p.Name, p.LogTail(3000))
			}
		}
	}()
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	if err := c.UseTLS(ca.CAFile, cert, key); err != nil {
		t.Fatal(err)
	}
	c.Props = append(c.Props, raftTimings...)
	c.Props = append(c.Props, "svc.coordinator.startDelay=1s", "svc.historical.pollPeriod=200ms",
		"svc.broker.pollPeriod=200ms", "svc.worker.heartbeatPeriod=300ms", "svc.discovery.heartbeatPeriod=300ms")
	if err := c.AddControl(1); err != nil {
		t.Fatal(err)
	}
	disc := "svc.discovery.coordinators=" + c.ControlURLs()
	c.Control[0].Set(disc)
	c.Props = append(c.Props, disc)
	var router *Proc
	for _, n := range []struct {
		name, role string
		port       int
		extra      []string
	}{
		{"h1", "historical", 8083, nil}, {"b1", "broker", 8082, nil},
		{"m1", "middleManager", 8091, []string{"svc.worker.capacity=2"}}, {"r1", "router", 8888, nil},
	} {
		p, err := c.addProc(n.name, n.role, n.port, n.extra)
		if err != nil {
			t.Fatal(err)
		}
		router = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitLeader(ctx, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Procs {
		if err := c.WaitUp(ctx, p, 60*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	w := &wiringRun{t: t, ctx: ctx, c: c, dir: work}
	w.waitStates(map[string]string{}, 60*time.Second) // every process live, found over TLS
	w.ingest(router, 0)
	w.checkCount([]*Proc{router})
}
