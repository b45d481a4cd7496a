package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An online backup of a running three-node control plane, taken through a
// follower while the log is snapshotted and trimmed: the file's checksum is
// the live cluster's state digest at its index; a fresh three-node control
// plane restored from it (on other addresses) elects a leader and holds the
// state of that index, not the writes after it, with the same digest. A
// damaged file and a data directory holding state are refused.
func TestSnapshotSaveAndRestore(t *testing.T) {
	c := newProcCluster(t, 3)
	for i := range c.nodes {
		c.start(i)
	}
	l := c.leader()
	for v := 1; v <= 12; v++ {
		c.write(l, v)
	}
	follower := (l + 1) % 3
	dir := t.TempDir()
	file := filepath.Join(dir, "control.snap")
	out, err := strataCmd("snapshot", "save", "--url", "http://"+c.nodes[follower].http, "--out", file).CombinedOutput()
	if err != nil {
		t.Fatalf("snapshot save: %v\n%s", err, out)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	hdr, _, err := readSnapshotHeader(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Index == 0 || hdr.Term == 0 || !strings.Contains(string(out), hdr.SHA256) {
		t.Fatalf("header %+v, output %s", hdr, out)
	}
	var live struct{ SHA256 string }
	if code := getJSON(t, fmt.Sprintf("http://%s/svc/coordinator/v1/audit/digest?at=%d", c.nodes[l].http, hdr.Index), &live); code != 200 {
		t.Fatalf("digest at %d: %d", hdr.Index, code)
	}
	if live.SHA256 != hdr.SHA256 {
		t.Fatalf("the backup's sha256 %s is not the live state digest %s at index %d", hdr.SHA256, live.SHA256, hdr.Index)
	}
	c.write(l, 99) // after the backup: not in it

	// A damaged copy is refused before anything is written.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-10] ^= 0xff
	bad := filepath.Join(dir, "damaged.snap")
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	badData := filepath.Join(dir, "bad-data")
	if out, err := strataCmd("snapshot", "restore", "--in", bad, "--data", badData, "--id", "n1", "--raft", "127.0.0.1:1").CombinedOutput(); err == nil ||
		!bytes.Contains(out, []byte("damaged")) {
		t.Fatalf("restore of a damaged file: %v\n%s", err, out)
	}
	if _, err := os.Stat(badData); !os.IsNotExist(err) {
		t.Fatalf("a refused restore created %s: %v", badData, err)
	}

	// A fresh control plane from the file.
	d := newProcCluster(t, 3)
	for _, nd := range d.nodes {
		out, err := strataCmd("snapshot", "restore", "--in", file, "--data", nd.data, "--id", nd.id, "--peers", d.peers).CombinedOutput()
		if err != nil {
			t.Fatalf("restore %s: %v\n%s", nd.id, err, out)
		}
	}
	if out, err := strataCmd("snapshot", "restore", "--in", file, "--data", d.nodes[0].data, "--id", "n1", "--peers", d.peers).CombinedOutput(); err == nil ||
		!bytes.Contains(out, []byte("holds Raft state already")) {
		t.Fatalf("a second restore into the same data dir: %v\n%s", err, out)
	}
	for i := range d.nodes {
		d.start(i)
	}
	dl := d.leader()
	var cfg struct{ MaxSegmentsToMove int }
	if code := getJSON(t, "http://"+d.nodes[dl].http+"/svc/coordinator/v1/config", &cfg); code != 200 || cfg.MaxSegmentsToMove != 12 {
		t.Fatalf("restored config: %d %+v, want maxSegmentsToMove 12 (the backup's)", code, cfg)
	}
	var restored struct{ SHA256 string }
	if code := getJSON(t, fmt.Sprintf("http://%s/svc/coordinator/v1/audit/digest?at=%d", d.nodes[dl].http, hdr.Index), &restored); code != 200 ||
		restored.SHA256 != hdr.SHA256 {
		t.Fatalf("restored digest at %d: %d %s, want %s", hdr.Index, code, restored.SHA256, hdr.SHA256)
	}
	// The restored cluster takes writes.
	d.write(dl, 13)
	if code := getJSON(t, "http://"+d.nodes[dl].http+"/svc/coordinator/v1/config", &cfg); code != 200 || cfg.MaxSegmentsToMove != 13 {
		t.Fatalf("config after a write: %d %+v", code, cfg)
	}
}
