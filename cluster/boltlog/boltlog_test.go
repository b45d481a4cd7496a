package boltlog

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	bolt "go.etcd.io/bbolt"
)

func sample() []*raft.Log {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 123456789, time.UTC)
	return []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("cfg")},
		{Index: 2, Term: 1, Type: raft.LogNoop},
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: []byte(`{"type":"x"}`), Extensions: []byte("ext"), AppendedAt: t0},
		{Index: 4, Term: 2, Type: raft.LogCommand, Data: bytes.Repeat([]byte("y"), 5000), AppendedAt: t0.Add(time.Second).Local()},
		{Index: 5, Term: 3, Type: raft.LogBarrier, AppendedAt: t0.Add(2 * time.Second)},
	}
}

// dump lists a file's buckets as key → value.
func dump(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				out[string(name)+"/"+string(k)] = string(v)
				return nil
			})
		})
	})
	return out
}

func same(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type && bytes.Equal(a.Data, b.Data) &&
		bytes.Equal(a.Extensions, b.Extensions) && a.AppendedAt.Equal(b.AppendedAt)
}

// The store writes exactly the bytes raft-boltdb writes (so data
// directories move between the two, and tools read either), and reads
// raft-boltdb's file back entry for entry, by GetLog and by Scan.
func TestSameFileAsRaftBoltDB(t *testing.T) {
	dir := t.TempDir()
	theirs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "theirs.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Open(filepath.Join(dir, "ours.db"), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []interface {
		StoreLogs([]*raft.Log) error
		SetUint64([]byte, uint64) error
		Set([]byte, []byte) error
		DeleteRange(uint64, uint64) error
		StoreLog(*raft.Log) error
	}{theirs, ours} {
		if err := s.StoreLogs(sample()[:4]); err != nil {
			t.Fatal(err)
		}
		if err := s.StoreLog(sample()[4]); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteRange(1, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
			t.Fatal(err)
		}
		if err := s.Set([]byte("LastVoteCand"), []byte("n2")); err != nil {
			t.Fatal(err)
		}
	}
	theirs.Close()
	ours.Close()
	a, b := dump(t, filepath.Join(dir, "theirs.db")), dump(t, filepath.Join(dir, "ours.db"))
	if len(a) != 6 || len(a) != len(b) {
		t.Fatalf("raft-boltdb wrote %d keys, this store %d", len(a), len(b))
	}
	for k, v := range a {
		if b[k] != v {
			t.Fatalf("key %q: raft-boltdb wrote %x, this store %x", k, v, b[k])
		}
	}

	// raft-boltdb's file, read by this store.
	s, err := Open(filepath.Join(dir, "theirs.db"), &bolt.Options{ReadOnly: true, Timeout: time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := sample()[1:]
	if first, _ := s.FirstIndex(); first != 2 {
		t.Fatalf("first index %d", first)
	}
	if last, _ := s.LastIndex(); last != 5 {
		t.Fatalf("last index %d", last)
	}
	for _, w := range want {
		var l raft.Log
		if err := s.GetLog(w.Index, &l); err != nil || !same(&l, w) {
			t.Fatalf("GetLog(%d) = %+v, %v; want %+v", w.Index, l, err, w)
		}
	}
	var got []*raft.Log
	if err := s.Scan(2, 5, func(l *raft.Log) error { got = append(got, l); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if i >= len(got) || !same(got[i], w) {
			t.Fatalf("Scan: %+v, want %+v", got, want)
		}
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 3 {
		t.Fatalf("CurrentTerm %d %v", v, err)
	}
	if _, err := s.Get([]byte("nothing")); err == nil || err.Error() != "not found" {
		t.Fatalf("a missing key: %v (Raft expects the text \"not found\")", err)
	}
	var l raft.Log
	if err := s.GetLog(1, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("a deleted entry: %v", err)
	}
	// A range running past either end is an error naming the entry.
	for _, r := range [][2]uint64{{1, 3}, {4, 6}} {
		if err := s.Scan(r[0], r[1], func(*raft.Log) error { return nil }); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("Scan(%d, %d): %v", r[0], r[1], err)
		}
	}
}

// Scan reads a range longer than one batch in order, and stops at a gap
// with raft.ErrLogNotFound after the entries before it.
func TestScanAcrossBatches(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "raft.db"), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 3*scanBatch + 7
	var logs []*raft.Log
	for i := uint64(1); i <= n; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte{byte(i), byte(i >> 8)}})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]uint64{{1, n}, {scanBatch, scanBatch + 1}, {5, 5}, {2*scanBatch - 3, n}} {
		next := r[0]
		err := s.Scan(r[0], r[1], func(l *raft.Log) error {
			if l.Index != next || !bytes.Equal(l.Data, []byte{byte(next), byte(next >> 8)}) {
				t.Fatalf("Scan(%d, %d): entry %d where %d was due", r[0], r[1], l.Index, next)
			}
			next++
			return nil
		})
		if err != nil || next != r[1]+1 {
			t.Fatalf("Scan(%d, %d): %v, ended before %d", r[0], r[1], err, next)
		}
	}
	gap := uint64(2*scanBatch + 10)
	if err := s.DeleteRange(gap, gap); err != nil {
		t.Fatal(err)
	}
	var seen uint64
	err = s.Scan(1, n, func(l *raft.Log) error { seen = l.Index; return nil })
	if !errors.Is(err, raft.ErrLogNotFound) || !strings.Contains(err.Error(), fmt.Sprint(gap)) || seen >= gap {
		t.Fatalf("Scan over a gap at %d: %v after entry %d", gap, err, seen)
	}
}
