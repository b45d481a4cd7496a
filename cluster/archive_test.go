package cluster

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"strata/audit"
)

// A follower that gets the leader's snapshot instead of entries trims the
// entries it held up to the snapshot's index. Some of those may be a deposed
// leader's that were never committed (Raft had no chance to overwrite them):
// they are not history and must not be archived. Log matching tells: the
// follower's entries up to the snapshot's index are the committed ones
// exactly when it holds the snapshot's entry with the snapshot's term.
func TestTrimArchivesOnlyEntriesMatchingTheSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name     string
		snapTerm uint64
		archived bool
	}{
		{"own snapshot, or the leader's matching this log", 2, true},
		{"the leader's snapshot over a deposed leader's entries", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"), NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			// Entries 1..10 of term 1, 11..20 of term 2.
			var logs []*raft.Log
			for i := uint64(1); i <= 20; i++ {
				logs = append(logs, &raft.Log{Index: i, Term: 1 + (i-1)/10, Type: raft.LogNoop})
			}
			if err := store.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			sink, err := snaps.Create(raft.SnapshotVersionMax, 15, tc.snapTerm, raft.Configuration{}, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			sink.Write([]byte("state"))
			sink.Close()
			arch, err := audit.OpenArchive(filepath.Join(dir, "archive"), 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := &archivingStore{LogStore: store, archive: arch, snaps: snaps, appliedIndex: func() uint64 { return 15 }}
			// Raft keeps trailing entries: it trims 1..10 of the 15 the
			// snapshot covers.
			if err := s.DeleteRange(1, 10); err != nil {
				t.Fatal(err)
			}
			if first, _ := store.FirstIndex(); first != 11 {
				t.Fatalf("log starts at %d after the trim, want 11", first)
			}
			// Archived: the trimmed entries and those up to the snapshot.
			last, _ := (&audit.History{Archive: arch}).Log().LastIndex()
			if got := last == 15; got != tc.archived {
				t.Fatalf("archive ends at %d; archived = %v, want %v", last, got, tc.archived)
			}
			if !tc.archived {
				return
			}
			// Archive and log read as one, each entry once.
			var got []uint64
			(&audit.History{Archive: arch, Live: store}).Log().Scan(1, 20, func(e audit.Entry) error {
				got = append(got, e.Index)
				return nil
			})
			if len(got) != 20 || got[0] != 1 || got[19] != 20 {
				t.Fatalf("scan read %v", got)
			}
		})
	}
}
