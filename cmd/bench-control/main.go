// Command bench-control benchmarks Strata's control plane on a 3-node loopback cluster
// of real processes with fsync on: config-write latency and throughput with 1 and
// 64 clients, and leader failover time (kill -9 of the leader to the first
// acknowledged write on the new leader), then that no acknowledged write is lost
// across kill -9 of the leader under load. When an etcd binary is installed, the
// same write loads run against a 3-member etcd cluster in the same run, as the
// anchor.
//
// Each load writer keeps one HTTP/1.1 keep-alive connection and parses responses
// on its own goroutine (--std-client uses net/http's client instead, which costs
// the load generator about twice the CPU per request on the servers' two cores).
// After each load phase the servers' CPU time per write is printed, read from
// /proc; --profile DIR also saves the servers' CPU profiles and traces.
//
// --compare-unpatched measures what Strata's patch of hashicorp/raft
// (third_party/raft) buys: it builds cmd/strata twice, as is and against
// upstream hashicorp/raft v1.7.3 from the module cache or proxy, and runs the
// same write loads against a fresh cluster of each, alternating, side by side.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	flag.BoolVar(&stdClient, "std-client", false, "load with net/http's client instead of one raw keep-alive connection per writer")
	etcdBin := flag.String("etcd", "", "etcd binary for the anchor (default: etcd on PATH, skipped if absent; \"off\" skips it)")
	flag.Var(&serverProps, "set", "an extra svc.* property for every server, as key=value (repeatable), e.g. svc.raft.noSync=true to measure the path without disk")
	flag.StringVar(&profileDir, "profile", "", "save CPU profiles and execution traces of the leader and a follower during each load phase to this directory")
	flag.BoolVar(&compare, "compare-unpatched", false, "also build strata against upstream hashicorp/raft (without third_party/raft's patch) and compare the write loads of both builds in this run")
	flag.IntVar(&compareRounds, "rounds", 2, "with --compare-unpatched: rounds of the comparison, each running both builds (in alternating order)")
	flag.Parse()
	killOnInterrupt()
	if err := run(*bin, *dur, *trials, *clients, *etcdBin); err != nil {
		fmt.Fprintln(os.Stderr, "bench-control:", err)
		os.Exit(1)
	}
}

// serverProps are extra --set key=value arguments for every server.
type propList []string

func (p *propList) String() string     { return strings.Join(*p, ",") }
func (p *propList) Set(v string) error { *p = append(*p, v); return nil }

var serverProps propList

// profileDir, when set, enables the servers' pprof endpoint and collects profiles.
var profileDir string

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
	for _, kv := range serverProps {
		n.cmd.Args = append(n.cmd.Args, "--set", kv)
	}
	if profileDir != "" {
		n.cmd.Args = append(n.cmd.Args, "--set", "svc.debug.pprof=true")
	}
	logf, err := os.OpenFile(n.data+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	return startChild(n.cmd)
}

// children are the server processes started so far, killed if the benchmark is
// interrupted so that none is left running on the shared machine.
var (
	childMu  sync.Mutex
	children = map[*exec.Cmd]bool{}
	tempDirs []string
)

// tempDir makes a data directory that is also removed on interrupt.
func tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err == nil {
		childMu.Lock()
		tempDirs = append(tempDirs, dir)
		childMu.Unlock()
	}
	return dir, err
}

func startChild(cmd *exec.Cmd) error {
	childMu.Lock()
	defer childMu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	children[cmd] = true
	return nil
}

func killOnInterrupt() {
	// A closed stdout (| head) must not kill the benchmark before its cleanup.
	signal.Ignore(syscall.SIGPIPE)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-ch
		childMu.Lock()
		for cmd := range children {
			cmd.Process.Kill()
			cmd.Wait()
		}
		for _, dir := range tempDirs {
			os.RemoveAll(dir)
		}
		os.Exit(1)
	}()
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
		if n.cmd != nil && isLeaderAt(n.http) {
			return n
		}
	}
	return nil
}

// isLeaderAt asks the node at addr whether it is the (caught-up) leader.
func isLeaderAt(addr string) bool {
	resp, err := httpc.Get("http://" + addr + "/svc/coordinator/v1/isLeader")
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == 200
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

// configBody is the next config change: a partial update of one field.
func configBody() []byte {
	return fmt.Appendf(nil, `{"maxSegmentsToMove":%d}`, seq.Add(1)%1000)
}

// write posts one config change to url through net/http's client (failover
// probing); returns the HTTP status.
func write(url string) (int, string, error) {
	resp, err := httpc.Post(url+"/svc/coordinator/v1/config", "application/json", bytes.NewReader(configBody()))
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location"), nil
}

type loadResult struct {
	n         int
	elapsed   time.Duration
	lat       []time.Duration
	failures  int
	cpu       []nodeCPU
	clientCPU time.Duration // this benchmark process
}

// nodeCPU is the CPU time one server spent during a load phase.
type nodeCPU struct {
	leader bool
	d      time.Duration
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

// load runs `clients` closed-loop writers for d; each has its own connection.
func load(clients int, d time.Duration, op func(cl *client) error) loadResult {
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
			cl := &client{}
			defer cl.close()
			var mine []time.Duration
			for time.Now().Before(stop) {
				t0 := time.Now()
				if err := op(cl); err != nil {
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

// client is one load writer's keep-alive HTTP/1.1 connection. With stdClient
// set it goes through net/http's client instead (shared pool, same keep-alive).
type client struct {
	host string
	conn net.Conn
	br   *bufio.Reader
	buf  []byte
}

// stdClient selects net/http's client for the load phases (--std-client).
var stdClient bool

// post sends one JSON POST to http://host+path and returns the status. The
// request is written with one syscall and the response parsed on the calling
// goroutine: net/http's client adds two goroutine handoffs per request (its
// per-connection reader and writer), CPU that the load generator would take
// from the servers on the same two cores.
func (c *client) post(host, path string, body []byte) (int, error) {
	if stdClient {
		resp, err := httpc.Post("http://"+host+path, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if c.conn == nil || c.host != host {
		c.close()
		conn, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			return 0, err
		}
		c.conn, c.host = conn, host
		c.br = bufio.NewReaderSize(conn, 4096)
	}
	c.buf = append(c.buf[:0], "POST "...)
	c.buf = append(c.buf, path...)
	c.buf = append(c.buf, " HTTP/1.1\r\nHost: "...)
	c.buf = append(c.buf, host...)
	c.buf = append(c.buf, "\r\nUser-Agent: bench-control\r\nContent-Type: application/json\r\nContent-Length: "...)
	c.buf = strconv.AppendInt(c.buf, int64(len(body)), 10)
	c.buf = append(c.buf, "\r\n\r\n"...)
	c.buf = append(c.buf, body...)
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Write(c.buf); err != nil {
		c.close()
		return 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.close()
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		c.close()
	}
	return resp.StatusCode, err
}

func (c *client) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func report(name string, r loadResult) {
	fmt.Printf("%-34s %8.0f writes/s  p50 %6.3f ms  p99 %6.3f ms  mean %6.3f ms  (%d writes, %d failed)\n",
		name, float64(r.n)/r.elapsed.Seconds(), ms(r.pct(0.5)), ms(r.pct(0.99)), ms(r.mean()), r.n, r.failures)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// printTargets checks the figures against the control plane's targets (the
// foundation issue): 1-client p50 ≤ 1.0 ms, ≥ 7,300 writes/s with 64
// clients, failover ≤ 1.5 s at worst.
func printTargets(one, many loadResult, clients int, failovers []time.Duration) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	p50 := ms(one.pct(0.5))
	line := fmt.Sprintf("targets: 1-client p50 %.3f ms (<= 1.000: %s)", p50, verdict(p50 <= 1.0))
	if clients == 64 {
		rate := float64(many.n) / many.elapsed.Seconds()
		line += fmt.Sprintf("; 64 clients %.0f writes/s (>= 7300: %s)", rate, verdict(rate >= 7300))
	}
	if len(failovers) > 0 {
		worst := ms(slices.Max(failovers))
		line += fmt.Sprintf("; failover max %.0f ms (<= 1500: %s)", worst, verdict(worst <= 1500))
	}
	fmt.Println(line)
}

// startCluster starts a 3-node cluster of bin with data under a new temporary
// directory and waits for its leader. stop kills the nodes and removes the data.
func startCluster(bin string) (c *cluster, l *node, dir string, stop func(), err error) {
	abs, _ := filepath.Abs(bin)
	dir, err = tempDir("strata-bench-control-")
	if err != nil {
		return nil, nil, "", nil, err
	}
	c = &cluster{bin: abs}
	stop = func() {
		for _, n := range c.nodes {
			c.kill(n)
		}
		os.RemoveAll(dir)
	}
	var peers []string
	for i := 1; i <= 3; i++ {
		n := &node{id: fmt.Sprintf("n%d", i), http: freePort(), raft: freePort(), data: filepath.Join(dir, fmt.Sprintf("n%d", i))}
		c.nodes = append(c.nodes, n)
		peers = append(peers, fmt.Sprintf("%s=%s=http://%s", n.id, n.raft, n.http))
	}
	c.peers = strings.Join(peers, ",")
	for _, n := range c.nodes {
		if err := c.start(n); err != nil {
			stop()
			return nil, nil, "", nil, err
		}
	}
	if l, err = c.waitLeader(15 * time.Second); err != nil {
		stop()
		return nil, nil, "", nil, err
	}
	return c, l, dir, stop, nil
}

// writeOp is one config write to the leader l, an error unless acknowledged.
func writeOp(l *node) func(cl *client) error {
	return func(cl *client) error {
		code, err := cl.post(l.http, "/svc/coordinator/v1/config", configBody())
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("status %d", code)
		}
		return nil
	}
}

func run(bin string, dur time.Duration, trials, clients int, etcdBin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found: run make build", bin)
	}
	c, l, dir, stop, err := startCluster(bin)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("strata control plane: 3 nodes on loopback, fsync on, data in %s\n", dir)
	op := writeOp(l)
	load(8, time.Second, op) // warm-up
	one := c.phase(l, "1client", dur, func() loadResult { return load(1, dur, op) })
	report("strata config write, 1 client", one)
	c.reportCPU(one)
	many := c.phase(l, fmt.Sprintf("%dclients", clients), dur, func() loadResult { return load(clients, dur, op) })
	report(fmt.Sprintf("strata config write, %d clients", clients), many)
	c.reportCPU(many)

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
	if trials > 0 { // --trials 0 measures the write phases only
		sort.Slice(fo, func(i, j int) bool { return fo[i] < fo[j] })
		fmt.Printf("%-34s median %.0f ms  max %.0f ms  (%d trials; kill -9 of the leader to first acknowledged write)\n",
			"strata leader failover", ms(fo[len(fo)/2]), ms(fo[len(fo)-1]), len(fo))
		if err := c.durability(8, 2); err != nil {
			return err
		}
	}
	printTargets(one, many, clients, fo)
	stop()

	if compare {
		if err := compareUnpatched(dur, clients); err != nil {
			return err
		}
	}

	if etcdBin == "off" {
		return nil
	}
	if etcdBin == "" {
		etcdBin, _ = exec.LookPath("etcd")
	}
	if etcdBin == "" {
		fmt.Println("etcd anchor: etcd not installed (apt-get install etcd-server); figures on this project's machines: 1 client 943 writes/s at 1.05 ms mean; 64 clients 7,297 writes/s")
		return nil
	}
	eOne, eMany, err := etcdAnchor(etcdBin, dur, clients)
	if err != nil {
		return err
	}
	// The machine's speed drifts; the same-run ratio to the anchor does not.
	fmt.Printf("beside etcd in this run: 1-client p50 %.3f ms vs %.3f ms (%.2fx); %d clients %.0f vs %.0f writes/s (%.2fx)\n",
		ms(one.pct(0.5)), ms(eOne.pct(0.5)), ms(one.pct(0.5))/ms(eOne.pct(0.5)), clients,
		float64(many.n)/many.elapsed.Seconds(), float64(eMany.n)/eMany.elapsed.Seconds(),
		(float64(many.n)/many.elapsed.Seconds())/(float64(eMany.n)/eMany.elapsed.Seconds()))
	return nil
}

// phase runs fn while recording the CPU time each node spends and, with
// --profile, CPU profiles of the leader and one follower.
func (c *cluster) phase(leader *node, name string, d time.Duration, fn func() loadResult) loadResult {
	var wg sync.WaitGroup
	if profileDir != "" {
		follower := false // one follower is enough
		for _, n := range c.nodes {
			role := "leader"
			if n != leader {
				if follower {
					continue
				}
				role, follower = "follower", true
			}
			wg.Add(2)
			go func(n *node, file string) {
				defer wg.Done()
				if err := fetchProfile(n, "profile", 0, d-500*time.Millisecond, file); err != nil {
					fmt.Fprintln(os.Stderr, "profile:", err)
				}
			}(n, filepath.Join(profileDir, role+"-"+name+".pprof"))
			go func(n *node, file string) { // a one-second execution trace mid-phase
				defer wg.Done()
				if err := fetchProfile(n, "trace", d/2, time.Second, file); err != nil {
					fmt.Fprintln(os.Stderr, "trace:", err)
				}
			}(n, filepath.Join(profileDir, role+"-"+name+".trace"))
		}
	}
	before, self0 := c.cpuTimes(), selfCPU()
	r := fn()
	after, self1 := c.cpuTimes(), selfCPU()
	r.clientCPU = self1 - self0
	wg.Wait()
	for i, n := range c.nodes {
		r.cpu = append(r.cpu, nodeCPU{leader: n == leader, d: after[i] - before[i]})
	}
	return r
}

// fetchProfile saves n's /debug/pprof/<kind> over d seconds, starting after delay.
func fetchProfile(n *node, kind string, delay, d time.Duration, file string) error {
	time.Sleep(delay)
	secs := int(d.Seconds())
	if secs < 1 {
		secs = 1
	}
	cl := &http.Client{Timeout: d + 10*time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", n.http, kind, secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d", n.id, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuTimes returns each node's process CPU time (user+system) so far, from
// /proc (zero where unavailable).
func (c *cluster) cpuTimes() []time.Duration {
	out := make([]time.Duration, len(c.nodes))
	for i, n := range c.nodes {
		if n.cmd == nil || n.cmd.Process == nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state is the first, utime
		// and stime the 12th and 13th, in clock ticks (100 per second on Linux).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[i] = time.Duration(ut+st) * 10 * time.Millisecond
	}
	return out
}

// selfCPU is this process's CPU time (user+system) so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU prints the servers' CPU time per acknowledged write.
func (c *cluster) reportCPU(r loadResult) {
	if r.n == 0 {
		return
	}
	var lead, fol time.Duration
	nf := 0
	for _, x := range r.cpu {
		if x.leader {
			lead += x.d
		} else {
			fol += x.d
			nf++
		}
	}
	if nf > 0 {
		fol /= time.Duration(nf)
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(r.n) }
	fmt.Printf("%-34s leader %4.0f µs, each follower %4.0f µs, bench client %4.0f µs per write\n", "  CPU time (user+sys)",
		per(lead), per(fol), per(r.clientCPU))
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

// durability kills the leader (kill -9) `kills` times while `writers` clients
// keep changing the worker config, each change with a unique audit comment.
// Afterwards every acknowledged change must be in the audit history: a write
// acknowledged before the crash must not be lost with the leader. (Writes that
// failed or timed out may or may not have been applied; they are not counted.)
func (c *cluster) durability(writers, kills int) error {
	var (
		stop   atomic.Bool
		mu     sync.Mutex
		acked  []string
		wg     sync.WaitGroup
		leader atomic.Value // HTTP address of the last known leader
	)
	// The writers and the leader follower only read these addresses: c.nodes'
	// processes are killed and restarted by this goroutine meanwhile.
	var addrs []string
	for _, n := range c.nodes {
		addrs = append(addrs, n.http)
	}
	leader.Store("")
	body := []byte(`{"selectStrategy":{"type":"equalDistribution"}}`)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				l := leader.Load().(string)
				if l == "" {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				req, _ := http.NewRequest("POST", "http://"+l+"/svc/indexer/v1/worker", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Svc-Comment", id)
				resp, err := httpc.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		}(w)
	}
	// Follow the leader while the writers run; kill it `kills` times.
	follow := make(chan struct{})
	go func() {
		for !stop.Load() {
			for _, a := range addrs {
				if isLeaderAt(a) {
					leader.Store(a)
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(follow)
	}()
	var err error
	for k := 0; k < kills && err == nil; k++ {
		time.Sleep(time.Second)
		var l *node
		if l, err = c.waitLeader(15 * time.Second); err == nil {
			c.kill(l)
			time.Sleep(time.Second)
			err = c.start(l)
		}
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	<-follow
	if err != nil {
		return err
	}

	l, err := c.waitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	resp, err := httpc.Get("http://" + l.http + "/svc/indexer/v1/worker/history?count=10000000")
	if err != nil {
		return err
	}
	var hist []struct {
		AuditInfo struct {
			Comment string `json:"comment"`
		} `json:"auditInfo"`
	}
	err = json.NewDecoder(resp.Body).Decode(&hist)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("worker config history: %w", err)
	}
	seen := make(map[string]bool, len(hist))
	for _, h := range hist {
		seen[h.AuditInfo.Comment] = true
	}
	lost := 0
	for _, id := range acked {
		if !seen[id] {
			lost++
		}
	}
	fmt.Printf("%-34s %d of %d acknowledged writes lost  (%d writers, %d kill -9 of the leader; %d changes in the history)\n",
		"strata durability under failover", lost, len(acked), writers, kills, len(hist))
	if lost > 0 {
		return fmt.Errorf("%d acknowledged writes are missing from the audit history", lost)
	}
	return nil
}

// etcdAnchor runs a 3-member etcd cluster on loopback and measures 256-byte puts
// through its JSON gateway with the same load shapes.
func etcdAnchor(bin string, dur time.Duration, clients int) (one, many loadResult, err error) {
	dir, err := tempDir("etcd-anchor-")
	if err != nil {
		return one, many, err
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
		if err := startChild(cmd); err != nil {
			return one, many, err
		}
		cmds = append(cmds, cmd)
	}
	val := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("v"), 256))
	put := func(cl *client) error {
		key := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("k%d", seq.Add(1)%1000)))
		code, err := cl.post(strings.TrimPrefix(ms[0].client, "http://"), "/v3/kv/put", []byte(`{"key":"`+key+`","value":"`+val+`"}`))
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("etcd status %d", code)
		}
		return nil
	}
	deadline := time.Now().Add(20 * time.Second)
	probe := &client{}
	defer probe.close()
	for put(probe) != nil {
		if time.Now().After(deadline) {
			return one, many, fmt.Errorf("etcd anchor did not start (is %s etcd 3.4+?)", bin)
		}
		time.Sleep(100 * time.Millisecond)
	}
	load(8, time.Second, put)
	one = load(1, dur, put)
	report("etcd anchor put, 1 client", one)
	many = load(clients, dur, put)
	report(fmt.Sprintf("etcd anchor put, %d clients", clients), many)
	return one, many, nil
}
