// Command control benchmarks Strata's control plane on a 3-node loopback cluster
// of real processes with fsync on: config-write latency and throughput with 1 and
// 64 clients, and leader failover time (kill -9 of the leader to the first
// acknowledged write on the new leader). When an etcd binary is installed, the
// same write loads run against a 3-member etcd cluster in the same run, as the
// anchor.
package main

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/strata", "strata binary")
	dur := flag.Duration("duration", 5*time.Second, "duration of each load phase")
	trials := flag.Int("trials", 5, "failover trials")
	clients := flag.Int("clients", 64, "concurrent clients of the parallel phase")
	etcdBin := flag.String("etcd", "", "etcd binary for the anchor (default: etcd on PATH, skipped if absent)")
	flag.Parse()
	if err := run(*bin, *dur, *trials, *clients, *etcdBin); err != nil {
		fmt.Fprintln(os.Stderr, "bench-control:", err)
		os.Exit(1)
	}
}

type node struct {
	id, http, raft, data string
	cmd                  *exec.Cmd
}

type cluster struct {
	bin   string
	nodes []*node
	peers string
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (c *cluster) start(n *node) error {
	n.cmd = exec.Command(c.bin, "server", "--id", n.id, "--roles", "coordinator,overlord", "--http", n.http,
		"--raft", n.raft, "--data", n.data, "--peers", c.peers, "--set", "svc.log.level=warn")
	logf, err := os.OpenFile(n.data+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	return n.cmd.Start()
}

func (c *cluster) kill(n *node) {
	if n.cmd != nil && n.cmd.Process != nil {
		n.cmd.Process.Signal(syscall.SIGKILL)
		n.cmd.Wait()
		n.cmd = nil
	}
}

var httpc = &http.Client{
	Timeout:       5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute},
}

// leader returns the node answering isLeader 200, or nil.
func (c *cluster) leader() *node {
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		resp, err := httpc.Get("http://" + n.http + "/svc/coordinator/v1/isLeader")
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			return n
		}
	}
	return nil
}

func (c *cluster) waitLeader(timeout time.Duration) (*node, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if l := c.leader(); l != nil {
			return l, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil, fmt.Errorf("no leader within %s", timeout)
}

var seq atomic.Int64

// write posts one config change to url; returns the HTTP status.
func write(url string) (int, string, error) {
	body := fmt.Sprintf(`{"maxSegmentsToMove":%d}`, seq.Add(1)%1000)
	resp, err := httpc.Post(url+"/svc/coordinator/v1/config", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location"), nil
}

type loadResult struct {
	n        int
	elapsed  time.Duration
	lat      []time.Duration
	failures int
}

func (r loadResult) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[int(float64(len(r.lat)-1)*p)]
}

func (r loadResult) mean() time.Duration {
	var s time.Duration
	for _, l := range r.lat {
		s += l
	}
	if len(r.lat) == 0 {
		return 0
	}
	return s / time.Duration(len(r.lat))
}

// load runs `clients` closed-loop writers for d.
func load(clients int, d time.Duration, op func() error) loadResult {
	var mu sync.Mutex
	var all []time.Duration
	var fails atomic.Int64
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(stop) {
				t0 := time.Now()
				if err := op(); err != nil {
					fails.Add(1)
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return loadResult{n: len(all), elapsed: time.Since(start), lat: all, failures: int(fails.Load())}
}

func report(name string, r loadResult) {
	fmt.Printf("%-34s %8.0f writes/s  p50 %6.3f ms  p99 %6.3f ms  mean %6.3f ms  (%d writes, %d failed)\n",
		name, float64(r.n)/r.elapsed.Seconds(), ms(r.pct(0.5)), ms(r.pct(0.99)), ms(r.mean()), r.n, r.failures)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func run(bin string, dur time.Duration, trials, clients int, etcdBin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found: run make build", bin)
	}
	abs, _ := filepath.Abs(bin)
	dir, err := os.MkdirTemp("", "strata-bench-control-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c := &cluster{bin: abs}
	var peers []string
	for i := 1; i <= 3; i++ {
		n := &node{id: fmt.Sprintf("n%d", i), http: freePort(), raft: freePort(), data: filepath.Join(dir, fmt.Sprintf("n%d", i))}
		c.nodes = append(c.nodes, n)
		peers = append(peers, fmt.Sprintf("%s=%s=http://%s", n.id, n.raft, n.http))
	}
	c.peers = strings.Join(peers, ",")
	for _, n := range c.nodes {
		if err := c.start(n); err != nil {
			return err
		}
	}
	defer func() {
		for _, n := range c.nodes {
			c.kill(n)
		}
	}()
	l, err := c.waitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("strata control plane: 3 nodes on loopback, fsync on, data in %s\n", dir)
	leaderURL := "http://" + l.http
	op := func() error {
		code, _, err := write(leaderURL)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("status %d", code)
		}
		return nil
	}
	load(8, time.Second, op) // warm-up
	one := load(1, dur, op)
	report("strata config write, 1 client", one)
	many := load(clients, dur, op)
	report(fmt.Sprintf("strata config write, %d clients", clients), many)

	var fo []time.Duration
	for t := 0; t < trials; t++ {
		l, err := c.waitLeader(15 * time.Second)
		if err != nil {
			return err
		}
		t0 := time.Now()
		c.kill(l)
		d, err := firstWrite(c, t0)
		if err != nil {
			return fmt.Errorf("failover trial %d: %w", t+1, err)
		}
		fo = append(fo, d)
		fmt.Printf("failover trial %d: %.0f ms\n", t+1, ms(d))
		if err := c.start(l); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond) // let the restarted node rejoin before the next kill
	}
	sort.Slice(fo, func(i, j int) bool { return fo[i] < fo[j] })
	fmt.Printf("%-34s median %.0f ms  max %.0f ms  (%d trials; kill -9 of the leader to first acknowledged write)\n",
		"strata leader failover", ms(fo[len(fo)/2]), ms(fo[len(fo)-1]), len(fo))

	if etcdBin == "" {
		etcdBin, _ = exec.LookPath("etcd")
	}
	if etcdBin == "" {
		fmt.Println("etcd anchor: etcd not installed (apt-get install etcd-server); figures on this project's machines: 1 client 943 writes/s at 1.05 ms mean; 64 clients 7,297 writes/s")
		return nil
	}
	return etcdAnchor(etcdBin, dur, clients)
}

// firstWrite polls the surviving nodes until one acknowledges a write.
func firstWrite(c *cluster, t0 time.Time) (time.Duration, error) {
	for time.Since(t0) < 30*time.Second {
		for _, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			code, _, err := write("http://" + n.http)
			if err == nil && code == 200 {
				return time.Since(t0), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("no write acknowledged within 30 s")
}

// etcdAnchor runs a 3-member etcd cluster on loopback and measures 256-byte puts
// through its JSON gateway with the same load shapes.
func etcdAnchor(bin string, dur time.Duration, clients int) error {
	dir, err := os.MkdirTemp("", "etcd-anchor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	type member struct{ name, client, peer string }
	var ms []member
	var initial []string
	for i := 1; i <= 3; i++ {
		m := member{name: fmt.Sprintf("e%d", i), client: "http://" + freePort(), peer: "http://" + freePort()}
		ms = append(ms, m)
		initial = append(initial, m.name+"="+m.peer)
	}
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for _, m := range ms {
		cmd := exec.Command(bin, "--name", m.name, "--data-dir", filepath.Join(dir, m.name),
			"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
			"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new", "--log-level", "error")
		if err := cmd.Start(); err != nil {
			return err
		}
		cmds = append(cmds, cmd)
	}
	val := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("v"), 256))
	put := func() error {
		key := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("k%d", seq.Add(1)%1000)))
		resp, err := httpc.Post(ms[0].client+"/v3/kv/put", "application/json", strings.NewReader(`{"key":"`+key+`","value":"`+val+`"}`))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("etcd status %d", resp.StatusCode)
		}
		return nil
	}
	deadline := time.Now().Add(20 * time.Second)
	for put() != nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd anchor did not start (is %s etcd 3.4+?)", bin)
		}
		time.Sleep(100 * time.Millisecond)
	}
	load(8, time.Second, put)
	report("etcd anchor put, 1 client", load(1, dur, put))
	report(fmt.Sprintf("etcd anchor put, %d clients", clients), load(clients, dur, put))
	return nil
}
