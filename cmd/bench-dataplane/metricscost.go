package main

// The cost of the query path's metric updates, measured in the same run:
// two more data planes (a historical and a broker each, separate
// processes), one with the metrics on and one with svc.metrics.queryPath
// off, load the same segments; every query then runs in rounds, one run on
// each plane per round in alternating order, and the round's on/off ratio
// is kept. A round's two runs share the machine's load of the moment, so
// the median of the rounds' ratios resolves what medians of separate runs
// on a shared machine cannot.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// metricsTier is the tier of the two measured historicals: a rule gives it
// two replicas of every segment, so each holds all of them.
const metricsTier = "metricscost"

// metricsPlane is one measured data plane.
type metricsPlane struct {
	on          bool
	broker      string // URL
	procs       []*exec.Cmd
	histAddress string
}

func (p *metricsPlane) stop() {
	for _, c := range p.procs {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startPlane starts a historical of metricsTier reading the quickstart's
// deep storage and a broker querying only it, both with
// svc.metrics.queryPath=on.
func startPlane(bin, quickstartDir string, on bool) (*metricsPlane, error) {
	p := &metricsPlane{on: on}
	hist, err := freeAddr()
	if err != nil {
		return nil, err
	}
	brk, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p.histAddress, p.broker = hist, "http://"+brk
	name := map[bool]string{true: "on", false: "off"}[on]
	common := []string{"--set", "svc.log.level=warn", "--set", fmt.Sprintf("svc.metrics.queryPath=%v", on)}
	start := func(role, addr string, sets ...string) error {
		dir := filepath.Join(quickstartDir, "metricscost-"+name+"-"+role)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		args := append([]string{"server", "--roles", role, "--http", addr, "--data", dir}, common...)
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		cmd := exec.Command(bin, args...)
		logf, _ := os.Create(filepath.Join(dir, "process.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return err
		}
		p.procs = append(p.procs, cmd)
		return nil
	}
	if err := start("historical", hist, "svc.historical.coordinatorUrls=http://127.0.0.1:8081",
		"svc.storage.storageDirectory="+filepath.Join(quickstartDir, "deepstorage"), "svc.server.tier="+metricsTier); err != nil {
		p.stop()
		return nil, err
	}
	if err := start("broker", brk, "svc.broker.historicalUrls=http://"+hist); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// queryAt posts a native query to a broker.
func queryAt(broker string, q json.RawMessage) ([]byte, error) {
	resp, err := client.Post(broker+"/svc/v2/", "application/json", bytes.NewReader(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return b, err
}

// countQuery counts every row: a plane is ready when its broker answers it
// as the quickstart's does.
var countQuery = json.RawMessage(`{"queryType":"timeseries","dataSource":"wiki","intervals":["1000-01-01/3000-01-01"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`)

// setRules replaces wiki's own retention rules (nil: back to the defaults).
func setRules(rules string) error {
	resp, err := client.Post("http://127.0.0.1:8888/svc/coordinator/v1/rules/wiki", "application/json", bytes.NewReader([]byte(rules)))
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("rules: HTTP %d %s", resp.StatusCode, b)
	}
	return nil
}

// Rounds of the comparison per query: at least metricsMinRounds, more
// while the query's rounds have taken less than metricsBudget.
// A round of the longest query (0.5 s at 10M rows) varies by tens of
// percent on a shared machine: 15 rounds at least.
const (
	metricsMinRounds = 15
	metricsMaxRounds = 400
)

// metricsCost runs the comparison and prints its table.
func metricsCost(bin, quickstartDir string, qs []benchQuery, budget time.Duration) error {
	t0 := time.Now()
	want, err := query(countQuery)
	if err != nil {
		return fmt.Errorf("count query: %w", err)
	}
	if err := setRules(`[{"type":"loadForever","tieredReplicants":{"_default_tier":1,"` + metricsTier + `":2}}]`); err != nil {
		return err
	}
	defer setRules(`[]`)
	var planes [2]*metricsPlane
	for i, on := range []bool{true, false} {
		p, err := startPlane(bin, quickstartDir, on)
		if err != nil {
			return err
		}
		defer p.stop()
		planes[i] = p
	}
	deadline := time.Now().Add(10 * time.Minute)
	for _, p := range planes {
		for {
			if b, err := queryAt(p.broker, countQuery); err == nil && bytes.Equal(b, want) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the measured data planes did not load every segment in 10 minutes (see %s/metricscost-*/process.log)", quickstartDir)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	fmt.Printf("\nmetric updates on the query path: %s (on) against %s (svc.metrics.queryPath=false), each a broker and a historical holding every segment (ready in %.0f s)\n",
		planes[0].broker, planes[1].broker, time.Since(t0).Seconds())
	fmt.Printf("%-5s %10s %10s %10s %7s\n", "query", "on ms", "off ms", "on/off", "rounds")
	var all, perQuery []float64
	for _, q := range qs {
		ms := func(p *metricsPlane) (float64, error) {
			t := time.Now()
			if _, err := queryAt(p.broker, q.Native); err != nil {
				return 0, err
			}
			return float64(time.Since(t).Microseconds()) / 1000, nil
		}
		for _, p := range planes { // warm-up
			if _, err := ms(p); err != nil {
				return fmt.Errorf("%s on the %v plane: %w", q.ID, p.on, err)
			}
		}
		var on, off, ratios []float64
		start := time.Now()
		for i := 0; i < metricsMinRounds || (i < metricsMaxRounds && time.Since(start) < budget); i++ {
			var took [2]float64
			for k := range 2 {
				j := (i + k) % 2 // which plane goes first alternates
				if took[j], err = ms(planes[j]); err != nil {
					return fmt.Errorf("%s: %w", q.ID, err)
				}
			}
			on, off = append(on, took[0]), append(off, took[1])
			ratios = append(ratios, took[0]/math.Max(took[1], 0.001))
		}
		r := median(ratios)
		all = append(all, ratios...)
		perQuery = append(perQuery, r)
		fmt.Printf("%-5s %10.2f %10.2f %10.4f %7d\n", q.ID, median(on), median(off), r, len(ratios))
	}
	fmt.Printf("overall on/off: %.4f (median of all %d rounds' ratios); %.4f (median of the queries' medians); the issue's bound is 1.01; the comparison took %.0f s\n",
		median(all), len(all), median(perQuery), time.Since(t0).Seconds())
	return nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
