package audit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/klauspost/compress/zstd"

	"strata/commands"
	"strata/storage/deep"
)

// Archive keeps the log entries Raft trims after a snapshot, and the snapshots
// taken at those points, in a directory:
//
//	manifest.json                      the index: every chunk (first..last Raft
//	                                   index, the leader times of its first and
//	                                   last command, size, SHA-256) and snapshot
//	log/<first>-<last>.zst             entries, zstd-compressed frames (chunk.go)
//	snapshots/<index>-<term>.zst       an FSM snapshot, zstd-compressed
//
// Files are written whole (temporary file, fsync, rename) before the manifest
// names them, and the manifest before Raft deletes the entries, so a crash
// loses nothing: at worst an entry is both archived and still in the log.
// Every file is checked against its SHA-256 when read; a damaged one is an
// error naming it, never a silently shorter history.
type Archive struct {
	mu        sync.RWMutex // readers (combinedLog) vs. Trim
	dir       string
	retention time.Duration // 0: keep everything
	logger    hclog.Logger
	now       func() time.Time // for retention only; tests replace it
	m         *manifest

	// deep, when set, holds the chunks and snapshots (under prefix); the
	// manifest stays in dir and a copy goes to deep storage too. Each file's
	// load spec is in the manifest.
	deep   deep.DeepStorage
	prefix string
}

const (
	manifestFile    = "manifest.json"
	manifestFormat  = "strata-audit-archive"
	manifestVersion = 1
	// chunkEntries bounds a chunk, so that reading one old entry
	// decompresses a bounded amount.
	chunkEntries = 4096
)

type manifest struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// PrunedThrough: entries up to here were dropped by retention.
	PrunedThrough uint64         `json:"prunedThrough,omitempty"`
	Chunks        []chunkMeta    `json:"chunks"`
	Snapshots     []snapshotMeta `json:"snapshots"`
}

type chunkMeta struct {
	File        string         `json:"file"`
	LoadSpec    *deep.LoadSpec `json:"loadSpec,omitempty"` // in deep storage; nil: in the archive's directory
	First       uint64         `json:"first"`
	Last        uint64         `json:"last"`
	FirstTimeMs int64          `json:"firstTime,omitempty"` // leader stamp of the first command (0: none)
	LastTimeMs  int64          `json:"lastTime,omitempty"`  // of the last command
	Bytes       int64          `json:"bytes"`
	SHA256      string         `json:"sha256"`
}

type snapshotMeta struct {
	File     string         `json:"file"`
	LoadSpec *deep.LoadSpec `json:"loadSpec,omitempty"`
	Index    uint64         `json:"index"`
	Term     uint64         `json:"term"`
	Bytes    int64          `json:"bytes"`
	SHA256   string         `json:"sha256"`
}

// OpenArchive opens (or creates) the archive in dir. retention 0 keeps every
// entry forever; otherwise chunks whose last command is older than retention
// are dropped (with the snapshots only they needed) after each trim.
func OpenArchive(dir string, retention time.Duration, logger hclog.Logger) (*Archive, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a := &Archive{dir: dir, retention: retention, logger: logger, now: time.Now}
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		a.m = &manifest{Format: manifestFormat, Version: manifestVersion}
	case err != nil:
		return nil, fmt.Errorf("audit archive: %w", err)
	default:
		var m manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("audit archive %s: damaged manifest: %v", filepath.Join(dir, manifestFile), err)
		}
		if m.Format != manifestFormat || m.Version < 1 || m.Version > manifestVersion {
			return nil, fmt.Errorf("audit archive %s: unsupported format %q version %d", dir, m.Format, m.Version)
		}
		a.m = &m
	}
	return a, nil
}

// InDeepStorage makes the archive keep its chunks and snapshots in deep
// storage under prefix (a node's own: several nodes may share a bucket),
// and read those already there. Readers of an archive written so need it
// too (a stopped node's with S3 deep storage: --config).
func (a *Archive) InDeepStorage(ds deep.DeepStorage, prefix string) *Archive {
	a.deep, a.prefix = ds, prefix
	return a
}

// Dir is the archive's directory.
func (a *Archive) Dir() string { return a.dir }

// manifest returns the current index; callers hold mu.
func (a *Archive) manifest() *manifest { return a.m }

// Trim archives the entries first..last of store that are not archived yet
// and every snapshot of snaps not archived yet, then runs del (the deletion
// of those entries from the log), all under the archive's lock so that a
// reader never finds an entry in neither place. An entry that cannot be
// archived fails the trim: Raft then keeps its log and retries at the next
// snapshot. Entries after last up to through (committed ones the log keeps
// for now: Raft's trailing logs) are archived too, so that replays before
// the newest snapshot read only the archive, which is faster to read than
// the live log; through < last archives first..last only.
func (a *Archive) Trim(store raft.LogStore, snaps raft.SnapshotStore, first, last, through uint64, del func() error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	next := first
	if n := len(a.m.Chunks); n > 0 {
		archived := a.m.Chunks[n-1].Last
		if archived+1 < first {
			// Entries the log lost without passing through here (a node that
			// got the leader's snapshot instead of them): the archive says so
			// when a scan crosses the hole.
			a.logger.Warn("audit archive: entries were trimmed before they could be archived", "from", archived+1, "to", first-1)
		}
		next = max(next, archived+1)
	}
	m := *a.m
	m.Chunks = append([]chunkMeta(nil), a.m.Chunks...)
	m.Snapshots = append([]snapshotMeta(nil), a.m.Snapshots...)
	upTo := max(last, through)
	for next <= upTo {
		end := min(upTo, next+chunkEntries-1)
		cm, err := a.writeChunk(store, next, end)
		if err != nil {
			return fmt.Errorf("audit archive: entries %d to %d: %w", next, end, err)
		}
		m.Chunks = append(m.Chunks, cm)
		next = end + 1
	}
	if snaps != nil {
		if err := a.archiveSnapshots(&m, snaps); err != nil {
			return fmt.Errorf("audit archive: %w", err)
		}
	}
	dropped := a.prune(&m)
	if err := a.writeManifest(&m); err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	a.m = &m
	for _, f := range dropped {
		if err := a.removeBlob(f); err != nil {
			a.logger.Warn("audit archive: cannot remove a file past retention", "file", f.file, "error", err)
		}
	}
	return del()
}

func (a *Archive) writeChunk(store raft.LogStore, first, last uint64) (chunkMeta, error) {
	cm := chunkMeta{First: first, Last: last}
	var raw []byte
	var l raft.Log
	for i := first; i <= last; i++ {
		if err := store.GetLog(i, &l); err != nil {
			return cm, fmt.Errorf("read log entry %d: %w", i, err)
		}
		raw = appendEntry(raw, Entry{Index: l.Index, Term: l.Term, Type: l.Type, Data: l.Data, AppendedAt: l.AppendedAt})
		if l.Type == raft.LogCommand {
			if env, _, _ := commands.Decode(l.Data); env.TimeMs != 0 {
				if cm.FirstTimeMs == 0 {
					cm.FirstTimeMs = env.TimeMs
				}
				cm.LastTimeMs = max(cm.LastTimeMs, env.TimeMs)
			}
		}
	}
	comp := encoder.EncodeAll(raw, nil)
	cm.File = fmt.Sprintf("log/%020d-%020d.zst", first, last)
	cm.Bytes = int64(len(comp))
	cm.SHA256 = sum(comp)
	var err error
	cm.LoadSpec, err = a.writeBlob(cm.File, comp)
	return cm, err
}

func (a *Archive) archiveSnapshots(m *manifest, snaps raft.SnapshotStore) error {
	metas, err := snaps.List()
	if err != nil {
		return fmt.Errorf("list snapshots: %w", err)
	}
	have := map[uint64]bool{}
	for _, s := range m.Snapshots {
		have[s.Index] = true
	}
	for i := len(metas) - 1; i >= 0; i-- { // oldest first
		meta := metas[i]
		if have[meta.Index] || meta.Index <= m.PrunedThrough {
			continue
		}
		sm := snapshotMeta{File: fmt.Sprintf("snapshots/%020d-%d.zst", meta.Index, meta.Term), Index: meta.Index, Term: meta.Term}
		tmp, err := a.compressSnapshot(snaps, meta.ID, &sm)
		if err != nil {
			return err
		}
		sm.LoadSpec, err = a.storeFile(sm.File, tmp)
		os.Remove(tmp)
		if err != nil {
			return err
		}
		m.Snapshots = append(m.Snapshots, sm)
		have[meta.Index] = true
	}
	// Oldest first, whatever order they arrived in.
	sortSnapshots(m.Snapshots)
	return nil
}

// compressSnapshot streams a snapshot, zstd-compressed, into a temporary
// file of the archive's directory (snapshots can be large: never whole in
// memory), recording its size and SHA-256 in sm.
func (a *Archive) compressSnapshot(snaps raft.SnapshotStore, id string, sm *snapshotMeta) (string, error) {
	_, rc, err := snaps.Open(id)
	if err != nil {
		return "", fmt.Errorf("open snapshot %s: %w", id, err)
	}
	defer rc.Close()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(a.dir, ".snapshot-*")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(tmp, h)}
	zw, err := zstd.NewWriter(cw)
	if err == nil {
		if _, err = io.Copy(zw, rc); err != nil {
			err = fmt.Errorf("read snapshot %s: %w", id, err)
		}
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	sm.Bytes, sm.SHA256 = cw.n, hex.EncodeToString(h.Sum(nil))
	return tmp.Name(), nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// blob is an archived file: a name in the archive's directory, or an object
// in deep storage.
type blob struct {
	file string
	spec *deep.LoadSpec
}

// prune applies the retention to m and returns the files it no longer names.
func (a *Archive) prune(m *manifest) []blob {
	if a.retention <= 0 {
		return nil
	}
	cutoff := a.now().Add(-a.retention).UnixMilli()
	var dropped []blob
	for len(m.Chunks) > 0 && m.Chunks[0].LastTimeMs > 0 && m.Chunks[0].LastTimeMs < cutoff {
		dropped = append(dropped, blob{m.Chunks[0].File, m.Chunks[0].LoadSpec})
		m.PrunedThrough = m.Chunks[0].Last
		m.Chunks = m.Chunks[1:]
	}
	// A snapshot before the pruned point is no use: the entries after it
	// are gone. The one at the point (if any) is the new start of replay.
	keep := m.Snapshots[:0]
	for _, s := range m.Snapshots {
		if s.Index < m.PrunedThrough {
			dropped = append(dropped, blob{s.File, s.LoadSpec})
			continue
		}
		keep = append(keep, s)
	}
	m.Snapshots = keep
	return dropped
}

func (a *Archive) writeManifest(m *manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(a.dir, manifestFile), b); err != nil {
		return err
	}
	if a.deep != nil {
		// A copy next to the files, so that deep storage alone says what it holds.
		if _, err := a.writeBlob(manifestFile, b); err != nil {
			return err
		}
	}
	return nil
}

// deepTimeout bounds one deep storage call of the archive.
const deepTimeout = 2 * time.Minute

// writeBlob stores an archive file, in deep storage when the archive has
// one (returning its load spec), else in its directory.
func (a *Archive) writeBlob(file string, b []byte) (*deep.LoadSpec, error) {
	if a.deep == nil {
		return nil, writeFileAtomic(filepath.Join(a.dir, file), b)
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(a.dir, ".upload-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return a.storeFile(file, tmp.Name())
}

// storeFile moves (directory) or uploads (deep storage) the complete file at
// path to be the archive's file; the caller removes path afterwards.
func (a *Archive) storeFile(file, path string) (*deep.LoadSpec, error) {
	if a.deep == nil {
		dst := filepath.Join(a.dir, file)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(path, dst); err != nil {
			return nil, err
		}
		syncDir(filepath.Dir(dst))
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), deepTimeout)
	defer cancel()
	spec, err := a.deep.Put(ctx, a.prefix+"/"+file, path)
	if err != nil {
		return nil, err
	}
	return &spec, nil
}

// fetch returns a local path holding an archived file (a temporary copy
// when it is in deep storage) and the function that disposes of it.
func (a *Archive) fetch(f blob) (string, func(), error) {
	if f.spec == nil {
		return filepath.Join(a.dir, f.file), func() {}, nil
	}
	if a.deep == nil {
		return "", nil, fmt.Errorf("%s is in deep storage (%s %s%s): reading it needs the deep storage settings (--config)", f.file, f.spec.Type, f.spec.Bucket, f.spec.Key)
	}
	tmp, err := os.CreateTemp("", "strata-audit-*")
	if err != nil {
		return "", nil, err
	}
	tmp.Close()
	done := func() { os.Remove(tmp.Name()) }
	ctx, cancel := context.WithTimeout(context.Background(), deepTimeout)
	defer cancel()
	if err := a.deep.Get(ctx, *f.spec, tmp.Name()); err != nil {
		done()
		return "", nil, err
	}
	return tmp.Name(), done, nil
}

func (a *Archive) readBlob(f blob) ([]byte, error) {
	path, done, err := a.fetch(f)
	if err != nil {
		return nil, err
	}
	defer done()
	return os.ReadFile(path)
}

func (a *Archive) removeBlob(f blob) error {
	if f.spec == nil {
		if err := os.Remove(filepath.Join(a.dir, f.file)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if a.deep == nil {
		return errors.New("no deep storage")
	}
	ctx, cancel := context.WithTimeout(context.Background(), deepTimeout)
	defer cancel()
	return a.deep.Delete(ctx, *f.spec)
}

// readFile reads an archived file and checks it against the manifest.
func (a *Archive) readFile(f blob, want string) ([]byte, error) {
	b, err := a.readBlob(f)
	if err != nil {
		return nil, fmt.Errorf("audit archive: %w", err)
	}
	if got := sum(b); got != want {
		return nil, fmt.Errorf("audit archive: %w", a.damaged(f, got, want))
	}
	return b, nil
}

// scan calls fn with the archived entries from..to; callers hold mu.
func (a *Archive) scan(from, to uint64, fn func(Entry) error) error {
	want := from
	for _, c := range a.m.Chunks {
		if c.Last < from || c.First > to {
			continue
		}
		if c.First > want {
			return fmt.Errorf("audit archive: entries %d to %d are missing (this node was sent a snapshot instead of them)", want, c.First-1)
		}
		comp, err := a.readFile(blob{c.File, c.LoadSpec}, c.SHA256)
		if err != nil {
			return err
		}
		raw, err := decoder.DecodeAll(comp, nil)
		if err != nil {
			return fmt.Errorf("audit archive: %s: %v", c.File, err)
		}
		for len(raw) > 0 {
			var e Entry
			e, raw, err = readEntry(raw)
			if err != nil {
				return fmt.Errorf("audit archive: %s: %v", c.File, err)
			}
			if e.Index < want || e.Index > to {
				continue
			}
			if e.Index != want {
				return fmt.Errorf("audit archive: %s: entry %d where %d was expected", c.File, e.Index, want)
			}
			if err := fn(e); err != nil {
				return err
			}
			want++
		}
	}
	return nil
}

// snapshotAt returns the newest archived snapshot at or before index.
func (a *Archive) snapshotAt(index uint64) (snapshotMeta, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var best snapshotMeta
	found := false
	for _, s := range a.m.Snapshots {
		if s.Index <= index && (!found || s.Index > best.Index) {
			best, found = s, true
		}
	}
	return best, found
}

// openSnapshot returns an archived snapshot's bytes, streamed: the file is
// checked against its SHA-256 first, then decompressed as it is read.
func (a *Archive) openSnapshot(s snapshotMeta) (io.ReadCloser, error) {
	f := blob{s.File, s.LoadSpec}
	path, done, err := a.fetch(f)
	if err != nil {
		return nil, fmt.Errorf("audit archive: %w", err)
	}
	file, err := os.Open(path)
	if err != nil {
		done()
		return nil, fmt.Errorf("audit archive: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(h, file)
	if err == nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 {
			err = a.damaged(f, got, s.SHA256)
		}
	}
	if err == nil {
		_, err = file.Seek(0, io.SeekStart)
	}
	var zr *zstd.Decoder
	if err == nil {
		zr, err = zstd.NewReader(file, zstd.WithDecoderConcurrency(1))
	}
	if err != nil {
		file.Close()
		done()
		return nil, fmt.Errorf("audit archive: %w", err)
	}
	return &snapshotReader{Decoder: zr, close: func() { zr.Close(); file.Close(); done() }}, nil
}

type snapshotReader struct {
	*zstd.Decoder
	close func()
}

func (r *snapshotReader) Close() error { r.close(); return nil }

// damaged is the error of a file whose SHA-256 is not the manifest's.
func (a *Archive) damaged(f blob, got, want string) error {
	where := filepath.Join(a.dir, f.file)
	if f.spec != nil {
		where = fmt.Sprintf("%s (%s %s%s)", f.file, f.spec.Type, f.spec.Bucket, f.spec.Key+f.spec.Path)
	}
	return fmt.Errorf("%s is damaged: SHA-256 %s, the manifest says %s", where, got, want)
}

// prunedThrough is the last index retention dropped (0: none).
func (a *Archive) prunedThrough() uint64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.m.PrunedThrough
}

// chunks returns the archived chunks' ranges and times (for IndexAt).
func (a *Archive) chunks() []chunkMeta {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return append([]chunkMeta(nil), a.m.Chunks...)
}

// Frame of one entry (inside a chunk, before compression):
//
//	uvarint index, uvarint term, byte type, varint appendedAt (unix nanos,
//	0 = unknown), uvarint len(data), data
func appendEntry(b []byte, e Entry) []byte {
	b = binary.AppendUvarint(b, e.Index)
	b = binary.AppendUvarint(b, e.Term)
	b = append(b, byte(e.Type))
	var at int64
	if !e.AppendedAt.IsZero() {
		at = e.AppendedAt.UnixNano()
	}
	b = binary.AppendVarint(b, at)
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	return append(b, e.Data...)
}

var errFrame = errors.New("truncated or malformed entry frame")

func readEntry(b []byte) (Entry, []byte, error) {
	var e Entry
	var n int
	if e.Index, n = binary.Uvarint(b); n <= 0 {
		return e, nil, errFrame
	}
	b = b[n:]
	if e.Term, n = binary.Uvarint(b); n <= 0 || len(b) <= n {
		return e, nil, errFrame
	}
	e.Type = raft.LogType(b[n])
	b = b[n+1:]
	at, n := binary.Varint(b)
	if n <= 0 {
		return e, nil, errFrame
	}
	if at != 0 {
		e.AppendedAt = time.Unix(0, at).UTC()
	}
	b = b[n:]
	size, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < size {
		return e, nil, errFrame
	}
	e.Data = b[n : n+int(size) : n+int(size)]
	return e, b[n+int(size):], nil
}

var (
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(1<<30))
)

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func sortSnapshots(s []snapshotMeta) {
	slices.SortFunc(s, func(a, b snapshotMeta) int { return cmp.Compare(a.Index, b.Index) })
}

func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
