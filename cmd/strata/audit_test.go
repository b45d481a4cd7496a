package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"strata/commands"
	"strata/internal/eventually"
)

// archiveManifest is what the test reads of a node's audit archive index.
type archiveManifest struct {
	Chunks []struct {
		First, Last uint64
	} `json:"chunks"`
	Snapshots []struct {
		Index uint64
	} `json:"snapshots"`
}

func readManifest(dataDir string) (archiveManifest, bool) {
	var m archiveManifest
	b, err := os.ReadFile(filepath.Join(dataDir, "audit-archive", "manifest.json"))
	return m, err == nil && json.Unmarshal(b, &m) == nil
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 200 && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, b)
		}
	}
	if resp.StatusCode != 200 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) != nil || e.Error == "" || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d answer is not a JSON error: %s", url, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

type stateView struct {
	Index             uint64
	CoordinatorConfig struct{ MaxSegmentsToMove int }
}

// On three real strata processes with a small snapshot threshold, the log
// is trimmed, and yet the first command is still replayable from the
// archive; the state, diff and digest endpoints and the audit CLI answer
// from any node, online and from a stopped node's directory; and a replica
// whose log was tampered with is caught by `strata audit verify`.
func TestAuditAcrossTrim(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three strata processes")
	}
	c := newProcCluster(t, 3)
	for i := range c.nodes {
		c.start(i)
	}
	l := c.leader()
	url := func(i int) string { return "http://" + c.nodes[i].http }
	var at10 time.Time
	for v := 1; v <= 30; v++ {
		c.write(l, v)
		if v == 10 {
			// A moment after command 10 and before command 11's stamp.
			at10 = time.Now()
			for time.Now().UnixMilli() <= at10.UnixMilli() {
			}
		}
	}
	// Every node snapshots and trims its log; what it trims is archived
	// from the first entry on.
	for i := range c.nodes {
		eventually.True(t, fmt.Sprintf("node %d's archive", i), func() bool {
			m, ok := readManifest(c.nodes[i].data)
			return ok && len(m.Chunks) > 0 && m.Chunks[0].First == 1 && m.Chunks[len(m.Chunks)-1].Last >= 12 && len(m.Snapshots) > 0
		}, eventually.Within(20*time.Second))
	}

	// The first command (maxSegmentsToMove 1) is gone from every live log
	// and yet its state is there, on a follower too.
	f := (l + 1) % 3
	idx1 := uint64(0)
	for k := uint64(1); k < 12 && idx1 == 0; k++ {
		var v stateView
		if code := getJSON(t, fmt.Sprintf("%s/svc/coordinator/v1/audit/state?at=%d", url(f), k), &v); code != 200 {
			t.Fatalf("state at %d: HTTP %d", k, code)
		}
		if v.CoordinatorConfig.MaxSegmentsToMove == 1 {
			idx1 = k
		}
	}
	if idx1 == 0 {
		t.Fatal("no state with the first command's maxSegmentsToMove=1 among indexes 1..11")
	}

	// A time resolves to the last command at or before it, through the CLI.
	code, out, errOut := capture(t, "audit", "state", "--url", url(l), "--at", at10.UTC().Format(time.RFC3339Nano))
	var v10 stateView
	if code != 0 || json.Unmarshal([]byte(out), &v10) != nil || v10.CoordinatorConfig.MaxSegmentsToMove != 10 {
		t.Fatalf("audit state --at (after command 10): exit %d, %s %s", code, out, errOut)
	}
	// One datasource's view keeps the configs.
	code, out, errOut = capture(t, "audit", "state", "--url", url(f), "--at", fmt.Sprint(v10.Index), "--datasource", "wiki")
	if code != 0 || !strings.Contains(out, `"segments": []`) || !strings.Contains(out, `"maxSegmentsToMove": 10`) {
		t.Fatalf("audit state --datasource: exit %d, %s %s", code, out, errOut)
	}
	// The diff from the first command to the tenth names the field, old → new.
	code, out, errOut = capture(t, "audit", "diff", fmt.Sprint(idx1), fmt.Sprint(v10.Index), "--url", url(f))
	var d struct {
		Tables []struct {
			Table   string
			Changed []struct {
				Field    string
				Old, New json.RawMessage
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("audit diff: exit %d, %s %s", code, out, errOut)
	}
	found := false
	for _, tb := range d.Tables {
		for _, ch := range tb.Changed {
			if tb.Table == "coordinatorConfig" && ch.Field == "maxSegmentsToMove" && string(ch.Old) == "1" && string(ch.New) == "10" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("diff %d → %d lacks maxSegmentsToMove 1 → 10:\n%s", idx1, v10.Index, out)
	}

	// Bad moments are 400s with a JSON error, on every endpoint.
	for _, q := range []string{"state?at=yesterday", "state", "state?at=99999999", "diff?from=1", "diff?from=x&to=2", "diff?from=5&to=2",
		"digest?at=-1", "digest?at=99999999"} {
		if code := getJSON(t, url(f)+"/svc/coordinator/v1/audit/"+q, nil); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", q, code)
		}
	}

	// The replicas agree.
	code, out, errOut = capture(t, "audit", "verify", "--url", url(l))
	if code != 0 || !strings.Contains(out, "all 3 nodes agree") {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
	// replay --url is the node's own replay, online.
	if code, out, _ := capture(t, "log", "replay", "--url", url(f)); code != 0 || !digestLine.MatchString(out) {
		t.Fatalf("log replay --url: exit %d\n%s", code, out)
	}

	// log dump --url lists the commands online, oldest first, the first one
	// (now only in the archive) included.
	code, out, _ = capture(t, "log", "dump", "--url", url(f))
	if first := strings.SplitN(out, "\n", 2)[0]; code != 0 || !strings.Contains(out, fmt.Sprintf(`"index":%d,`, idx1)) || !strings.Contains(first, `"maxSegmentsToMove":1`) {
		t.Fatalf("log dump --url (exit %d): first line %s", code, first)
	}

	// A stopped node's directory answers the same, archive included.
	c.stop(f)
	// verify says which node did not answer, and does not call that agreement.
	code, out, _ = capture(t, "audit", "verify", "--url", url(l))
	if code != 1 || !strings.Contains(out, c.nodes[f].http+" does not answer") || !strings.Contains(out, "the 2 nodes that answered agree") {
		t.Fatalf("audit verify with a node down: exit %d\n%s", code, out)
	}
	code, out, errOut = capture(t, "audit", "state", "--data", c.nodes[f].data, "--at", fmt.Sprint(idx1))
	var v1 stateView
	if code != 0 || json.Unmarshal([]byte(out), &v1) != nil || v1.CoordinatorConfig.MaxSegmentsToMove != 1 {
		t.Fatalf("audit state --data --at %d: exit %d, %s %s", idx1, code, out, errOut)
	}
	code, out, _ = capture(t, "log", "dump", "--data", c.nodes[f].data)
	if code != 0 || !strings.Contains(out, fmt.Sprintf(`{"index":%d,`, idx1)) || !strings.Contains(out, `"maxSegmentsToMove":1}`) {
		t.Fatalf("log dump of a trimmed node lacks the first command (exit %d):\n%.2000s", code, out)
	}
	code, out, _ = capture(t, "log", "replay", "--data", c.nodes[f].data, "--from-start")
	if code != 0 || !strings.Contains(out, "read entries 1 to") || !digestLine.MatchString(out) {
		t.Fatalf("log replay --from-start: exit %d\n%s", code, out)
	}

	// Tamper with the stopped follower: the entries it is about to receive
	// are already in its log, same index and term, but saying 999. Raft
	// keeps them (their terms match) and the node applies them.
	c.write(l, 31)
	c.write(l, 32)
	var ld struct{ LastIndex uint64 }
	getJSON(t, url(l)+"/svc/coordinator/v1/audit/digest", &ld)
	tamper(t, c.nodes[f].data, ld.LastIndex)
	c.start(f)
	eventually.True(t, "the tampered node to catch up", func() bool {
		var d struct{ LastIndex uint64 }
		resp, err := http.Get(url(f) + "/svc/coordinator/v1/audit/digest")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&d) == nil && d.LastIndex >= ld.LastIndex
	}, eventually.Within(20*time.Second))
	code, out, errOut = capture(t, "audit", "verify", "--url", url(l), "--at", fmt.Sprint(ld.LastIndex))
	if code != 1 || !strings.Contains(out, c.nodes[f].id) || !strings.Contains(out, "DIFFERS") || !strings.Contains(out, "first in table coordinator_config") {
		t.Fatalf("audit verify over a tampered replica: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("audit verify:\n%s", out)

	// Stopped, the nodes' directories say the same.
	var dirs []string
	for i := range c.nodes {
		c.stop(i)
		dirs = append(dirs, c.nodes[i].data)
	}
	code, out, errOut = capture(t, "audit", "verify", "--data", strings.Join(dirs, ","), "--at", fmt.Sprint(ld.LastIndex))
	if code != 1 || strings.Count(out, "DIFFERS") != 1 || !strings.Contains(out, c.nodes[f].data+" ") || !strings.Contains(out, "first in table coordinator_config") {
		t.Fatalf("audit verify --data over a tampered replica: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = capture(t, "audit", "diff", fmt.Sprint(idx1), fmt.Sprint(v10.Index), "--data", c.nodes[l].data)
	if code != 0 || !strings.Contains(out, `"field": "maxSegmentsToMove"`) {
		t.Fatalf("audit diff --data: exit %d\n%s%s", code, out, errOut)
	}
}

// tamper appends to a stopped node's log the entries up to last it lacks,
// with the term of its last entry and a command setting maxSegmentsToMove
// to 999.
func tamper(t *testing.T, dataDir string, last uint64) {
	t.Helper()
	store, err := raftboltdb.NewBoltStore(filepath.Join(dataDir, "raft", "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	have, _ := store.LastIndex()
	var tail raft.Log
	if err := store.GetLog(have, &tail); err != nil {
		t.Fatal(err)
	}
	if have >= last {
		t.Fatalf("the stopped node already has index %d (its last is %d)", last, have)
	}
	moves := int32(999)
	for i := have + 1; i <= last; i++ {
		data, err := commands.Encode(commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: &moves}},
			time.Now().UnixMilli(), commands.Audit{Author: "tamper"})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.StoreLog(&raft.Log{Index: i, Term: tail.Term, Type: raft.LogCommand, Data: data, AppendedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}
