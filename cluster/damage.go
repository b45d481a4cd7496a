package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DamagedStoreError says which file of a node's Raft store (the bbolt log and
// stable store, or a snapshot) cannot be used, and what to do about it.
type DamagedStoreError struct {
	DataDir string // the node's data dir ("" when not known)
	File    string
	Problem string
}

func (e *DamagedStoreError) Error() string {
	fix := "run `strata recover --data DIR`"
	if e.DataDir != "" {
		fix = fmt.Sprintf("run `strata recover --data %s`", e.DataDir)
	}
	return fmt.Sprintf("the Raft store is damaged: %s: %s; keep the node stopped and %s to move the store aside "+
		"and restore it from the leader (README, \"Recovering a damaged node\")", e.File, e.Problem, fix)
}

// Recommend is the command that recovers the node.
func (e *DamagedStoreError) Recommend() string {
	return "strata recover --data " + e.DataDir
}

// The files of a node's Raft store, under its data dir.
const (
	raftDirName  = "raft"
	logFileName  = "raft.db"
	snapDirName  = "snapshots" // hashicorp/raft's FileSnapshotStore layout
	snapMetaName = "meta.json"
	snapStateBin = "state.bin"
	snapTmp      = ".tmp"
	// rejoinMarker, left by Recover in the new, empty store, tells Start not to
	// bootstrap: the node is still a member and waits for the leader's snapshot.
	rejoinMarker = "rejoin.json"
)

// CheckStore checks the Raft store under a node's data dir, without opening
// it with bbolt: nil if it is usable (or absent), else a *DamagedStoreError.
func CheckStore(dataDir string) error {
	raftDir := filepath.Join(dataDir, raftDirName)
	if err := checkSnapshots(raftDir); err != nil {
		err.DataDir = dataDir
		return err
	}
	path := filepath.Join(raftDir, logFileName)
	if err := checkBoltFile(path); err != nil {
		return &DamagedStoreError{DataDir: dataDir, File: path, Problem: err.Error()}
	}
	return nil
}

// checkSnapshots verifies every snapshot that hashicorp/raft would consider:
// a readable meta.json, and a state.bin of the recorded size and CRC. Raft
// itself skips a snapshot whose metadata it cannot read and falls back to an
// older one (whose following log entries may be gone), and checks the CRC only
// when it restores; a damaged snapshot is reported here instead.
func checkSnapshots(raftDir string) *DamagedStoreError {
	dir := filepath.Join(raftDir, snapDirName)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &DamagedStoreError{File: dir, Problem: err.Error()}
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), snapTmp) {
			continue // raft ignores them too (a .tmp snapshot was never finished)
		}
		metaPath := filepath.Join(dir, e.Name(), snapMetaName)
		var meta struct {
			Size int64
			CRC  []byte
		}
		b, err := os.ReadFile(metaPath)
		if err == nil {
			err = json.Unmarshal(b, &meta)
		}
		if err != nil {
			return &DamagedStoreError{File: metaPath, Problem: "unreadable snapshot metadata: " + err.Error()}
		}
		statePath := filepath.Join(dir, e.Name(), snapStateBin)
		f, err := os.Open(statePath)
		if err != nil {
			return &DamagedStoreError{File: statePath, Problem: err.Error()}
		}
		h := crc64.New(crc64.MakeTable(crc64.ECMA))
		n, err := io.Copy(h, f)
		f.Close()
		switch {
		case err != nil:
			return &DamagedStoreError{File: statePath, Problem: err.Error()}
		case n != meta.Size:
			return &DamagedStoreError{File: statePath, Problem: fmt.Sprintf("the snapshot is %d bytes, its metadata says %d", n, meta.Size)}
		case !bytes.Equal(h.Sum(nil), meta.CRC):
			return &DamagedStoreError{File: statePath, Problem: "the snapshot's CRC does not match its metadata"}
		}
	}
	return nil
}

// ErrStoreNotDamaged is returned by Recover for a store that CheckStore finds
// usable, unless forced.
var ErrStoreNotDamaged = errors.New("the Raft store is not damaged")

// Recovered says what Recover did.
type Recovered struct {
	Damage  error  // what CheckStore found (nil when forced on a sound store)
	MovedTo string // where the old store now is
}

// Recover moves the Raft store of a stopped node aside (DIR/raft becomes
// DIR/raft.damaged-TIME; nothing is deleted) and leaves an empty store that
// will not bootstrap: restarted with the same id and peers, the node is still
// in the cluster's configuration, so the leader finds its log empty and sends
// it a snapshot (InstallSnapshot) and the entries after it. A sound store is
// left alone unless force is set.
func Recover(dataDir string, force bool, now time.Time) (Recovered, error) {
	raftDir := filepath.Join(dataDir, raftDirName)
	if _, err := os.Stat(raftDir); err != nil {
		return Recovered{}, fmt.Errorf("no Raft store in %s: %w", dataDir, err)
	}
	unlock, err := lockStore(filepath.Join(raftDir, logFileName))
	if err != nil {
		return Recovered{}, err
	}
	damage := CheckStore(dataDir)
	if damage == nil && !force {
		unlock()
		return Recovered{}, fmt.Errorf("%w: %s (--force moves it aside anyway)", ErrStoreNotDamaged, raftDir)
	}
	aside := filepath.Join(dataDir, "raft.damaged-"+now.UTC().Format("20060102T150405Z"))
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
			break
		}
		aside = filepath.Join(dataDir, fmt.Sprintf("raft.damaged-%s-%d", now.UTC().Format("20060102T150405Z"), i))
	}
	err = os.Rename(raftDir, aside)
	unlock()
	if err != nil {
		return Recovered{}, fmt.Errorf("move %s aside: %w", raftDir, err)
	}
	rec := Recovered{Damage: damage, MovedTo: aside}
	if err := os.Mkdir(raftDir, 0o755); err != nil {
		return rec, fmt.Errorf("create %s: %w", raftDir, err)
	}
	problem := "forced"
	if damage != nil {
		problem = damage.Error()
	}
	marker, _ := json.MarshalIndent(map[string]string{
		"movedTo": aside, "at": now.UTC().Format(time.RFC3339), "problem": problem,
	}, "", "  ")
	if err := writeFileSync(filepath.Join(raftDir, rejoinMarker), marker); err != nil {
		return rec, err
	}
	return rec, syncDir(dataDir)
}

func writeFileSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
