package server

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
)

// The control plane's online backup (cluster.Node.Backup): the leader's
// state machine snapshot as of its last applied entry, streamed as the
// response body. The index and term are headers; the sha256 and size of the
// bytes follow as trailers, as they are known only once the bytes are
// written: a client that gets no trailer got a cut-short snapshot. The
// sha256 is the state digest of that index (audit/digest?at=<index>).
const (
	SnapshotIndexHeader  = "X-Strata-Snapshot-Index"
	SnapshotTermHeader   = "X-Strata-Snapshot-Term"
	SnapshotSHA256Header = "X-Strata-Snapshot-Sha256"
	SnapshotBytesHeader  = "X-Strata-Snapshot-Bytes"
)

// controlSnapshot serves GET /svc/coordinator/v1/snapshot (the leader; the
// route's access is STATE WRITE: the state holds the security tables).
func (s *Server) controlSnapshot(w http.ResponseWriter, r *http.Request) {
	b, err := s.node.Backup()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "snapshot: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(SnapshotIndexHeader, strconv.FormatUint(b.Index, 10))
	w.Header().Set(SnapshotTermHeader, strconv.FormatUint(b.Term, 10))
	w.Header().Set("Trailer", SnapshotSHA256Header+", "+SnapshotBytesHeader)
	w.WriteHeader(http.StatusOK)
	h := sha256.New()
	n, err := b.Snapshot.WriteTo(io.MultiWriter(w, h))
	if err != nil {
		// The status is sent: the missing trailers tell the client.
		s.log.Warn("control-plane snapshot cut short", "index", b.Index, "bytes", n, "error", err)
		return
	}
	w.Header().Set(SnapshotSHA256Header, hex.EncodeToString(h.Sum(nil)))
	w.Header().Set(SnapshotBytesHeader, strconv.FormatInt(n, 10))
}
