package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"strata/cluster"
	"strata/server"
)

// A snapshot file is one JSON header line (snapshotHeader) followed by the
// state machine's snapshot bytes, as GET /svc/coordinator/v1/snapshot
// streams them (cluster/backup.go): enough to restore a fresh control plane
// (the index and term name the Raft position; the sha256 checks the bytes
// and is the state digest of that index).
const (
	snapshotFileFormat  = "strata-control-snapshot"
	snapshotFileVersion = 1
	maxSnapshotHeader   = 64 << 10
)

type snapshotHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Index   uint64 `json:"index"`
	Term    uint64 `json:"term"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	From    string `json:"from"`
	SavedAt string `json:"savedAt"`
}

// runSnapshot implements `strata snapshot save|restore`.
func runSnapshot(args []string) error {
	const synopsis = "snapshot save|restore"
	if len(args) == 0 {
		return usagef("snapshot: want a verb: save or restore")
	}
	switch verb, rest := args[0], args[1:]; {
	case isHelp(verb):
		return verbHelp("snapshot", synopsis)
	case verb == "save":
		return snapshotSave(rest)
	case verb == "restore":
		return snapshotRestore(rest)
	default:
		return usagef("snapshot: unknown verb %q%s (want save or restore)", verb, didYouMean(verb, "save", "restore"))
	}
}

// snapshotSave streams the leader's current snapshot into a file: written
// beside it first and renamed only once its checksum matched, so a cut-short
// download never leaves a file that looks like a backup.
func snapshotSave(args []string) error {
	fs := newFlagSet("snapshot save", "snapshot save --url URL --out FILE")
	u := fs.String("url", "", "a control node's URL (a follower sends the request on to the leader); user:password@ for basic auth")
	out := fs.String("out", "", "the file to write")
	cacertFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("snapshot save: unexpected argument %q", fs.Arg(0))
	}
	if *u == "" || *out == "" {
		return usagef("snapshot save: --url URL and --out FILE are required")
	}
	base := strings.TrimRight(*u, "/")
	req, err := http.NewRequest(http.MethodGet, base+"/svc/coordinator/v1/snapshot", nil)
	if err != nil {
		return err
	}
	// No overall timeout: a large state takes a while to stream. The
	// credentials of the URL go on to the leader a follower redirects to.
	client := &http.Client{Transport: httpClient.Transport, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if a := via[0].Header.Get("Authorization"); a != "" {
			r.Header.Set("Authorization", a)
		}
		return nil
	}}
	if req.URL.User != nil {
		pw, _ := req.URL.User.Password()
		req.SetBasicAuth(req.URL.User.Username(), pw)
		req.URL.User = nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("snapshot from %s: %s: %s", base, resp.Status, strings.TrimSpace(string(body)))
	}
	index, err1 := strconv.ParseUint(resp.Header.Get(server.SnapshotIndexHeader), 10, 64)
	term, err2 := strconv.ParseUint(resp.Header.Get(server.SnapshotTermHeader), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("snapshot from %s: no index or term: %w", base, err)
	}
	body, err := os.CreateTemp(filepath.Dir(*out), filepath.Base(*out)+".body-*")
	if err != nil {
		return err
	}
	defer os.Remove(body.Name())
	defer body.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(body, h), resp.Body)
	if err != nil {
		return fmt.Errorf("snapshot from %s cut short after %d bytes: %w", base, n, err)
	}
	// The trailers are read once the body is.
	sum := hex.EncodeToString(h.Sum(nil))
	if want := resp.Trailer.Get(server.SnapshotSHA256Header); want != sum {
		return fmt.Errorf("snapshot from %s: %d bytes with sha256 %s, the server's checksum is %q: not saved", base, n, sum, want)
	}
	hdr := snapshotHeader{Format: snapshotFileFormat, Version: snapshotFileVersion, Index: index, Term: term, Bytes: n, SHA256: sum,
		From: base, SavedAt: time.Now().UTC().Format(time.RFC3339)}
	if err := writeSnapshotFile(*out, hdr, body); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "saved %s: index %d, term %d, %d bytes, sha256 %s\n", *out, index, term, n, sum)
	return nil
}

// writeSnapshotFile writes the header line and the body into a temporary
// file beside out, synced, then renames it to out.
func writeSnapshotFile(out string, hdr snapshotHeader, body *os.File) error {
	line, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, nothing to remove
	w := bufio.NewWriter(f)
	w.Write(line)
	w.WriteByte('\n')
	if _, err := io.Copy(w, body); err != nil {
		f.Close()
		return err
	}
	err = errors.Join(w.Flush(), f.Sync(), f.Close())
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), out)
}

// readSnapshotHeader reads a snapshot file's header line and leaves f at
// the first byte of the snapshot; the returned reader reads the snapshot
// bytes (seekable back to their start).
func readSnapshotHeader(f *os.File) (snapshotHeader, io.ReadSeeker, error) {
	var hdr snapshotHeader
	br := bufio.NewReaderSize(io.LimitReader(f, maxSnapshotHeader), maxSnapshotHeader)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return hdr, nil, fmt.Errorf("%s: no snapshot header line: %w", f.Name(), err)
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), &hdr); err != nil || hdr.Format != snapshotFileFormat {
		return hdr, nil, fmt.Errorf("%s is not a strata snapshot file (strata snapshot save writes them)", f.Name())
	}
	if hdr.Version < 1 || hdr.Version > snapshotFileVersion {
		return hdr, nil, fmt.Errorf("%s: snapshot file version %d is newer than this strata reads", f.Name(), hdr.Version)
	}
	start := int64(len(line))
	st, err := f.Stat()
	if err != nil {
		return hdr, nil, err
	}
	if got := st.Size() - start; got != hdr.Bytes {
		return hdr, nil, fmt.Errorf("%s: %d snapshot bytes, the header says %d: the file is cut short or damaged", f.Name(), got, hdr.Bytes)
	}
	return hdr, io.NewSectionReader(f, start, hdr.Bytes), nil
}

// snapshotRestore writes a snapshot file as the Raft state of a fresh
// control node's data directory. Every node of the new control plane is
// restored from the same file with the same --peers, then started as usual.
func snapshotRestore(args []string) error {
	fs := newFlagSet("snapshot restore", "snapshot restore --in FILE --data DIR --id ID (--peers ID=RAFTHOST:PORT=HTTPURL,... | --raft HOST:PORT)")
	in := fs.String("in", "", "the snapshot file (strata snapshot save)")
	data := fs.String("data", "", "the new node's data directory (empty or absent)")
	id := fs.String("id", "", "the new node's id (svc.node.id)")
	peers := fs.String("peers", "", "the new control plane's nodes, as strata server --peers takes them")
	raftAddr := fs.String("raft", "", "a single control node's raft address (without --peers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("snapshot restore: unexpected argument %q", fs.Arg(0))
	}
	if *in == "" || *data == "" || *id == "" || (*peers == "") == (*raftAddr == "") {
		return usagef("snapshot restore: --in FILE, --data DIR, --id ID and one of --peers or --raft are required")
	}
	o := cluster.RestoreOptions{DataDir: *data, ID: *id, RaftAddr: *raftAddr}
	if *peers != "" {
		var err error
		if o.Peers, err = cluster.ParsePeers(*peers); err != nil {
			return usagef("snapshot restore: --peers: %v", err)
		}
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr, snap, err := readSnapshotHeader(f)
	if err != nil {
		return err
	}
	if err := cluster.Restore(o, hdr.Index, hdr.Term, hdr.SHA256, snap); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored index %d (term %d, sha256 %s) into %s: start the node with --id %s and the same --peers\n",
		hdr.Index, hdr.Term, hdr.SHA256, *data, *id)
	return nil
}
