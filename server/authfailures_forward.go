package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"strata/commands"
)

// AuthFailuresPath is where a data node (broker, historical, middle
// manager, router) sends its windows of authentication failures: only a
// control node's leader can propose, so it records them for the node.
const AuthFailuresPath = "/svc-internal/v1/security/authFailures"

// maxForwardedFailuresBytes bounds a forwarded report: at most
// maxReportedAddresses addresses of a few dozen bytes each, and the counts.
const maxForwardedFailuresBytes = 64 << 10

// maxNodeNameLen bounds the reporting node's name (an URL) in the audit.
const maxNodeNameLen = 512

// forwardedFailures is the body of AuthFailuresPath: the reporting node and
// its window, in the command's own shape.
type forwardedFailures struct {
	Node string `json:"node"`
	commands.RecordAuthFailures
}

// recordForwardedFailures serves POST AuthFailuresPath on the leader: one
// RecordAuthFailures per window and node, whose audit comment names the
// node. The FSM validates the counts (400).
func (s *Server) recordForwardedFailures(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > maxForwardedFailuresBytes {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("an authentication failure report is at most %d bytes", maxForwardedFailuresBytes))
		return
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxForwardedFailuresBytes))
	dec.DisallowUnknownFields()
	var f forwardedFailures
	if err := dec.Decode(&f); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("an authentication failure report is at most %d bytes", maxForwardedFailuresBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid authentication failure report: "+err.Error())
		return
	}
	if f.Node = strings.TrimSpace(f.Node); f.Node == "" || len(f.Node) > maxNodeNameLen {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid authentication failure report: node must name the reporting node (1 to %d bytes)", maxNodeNameLen))
		return
	}
	a := commands.Audit{Author: "strata", Comment: "authentication failures on " + f.Node, IP: clientIP(r)}
	if _, ok := s.proposeAudited(w, r, f.RecordAuthFailures, a); !ok {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ForwardAuthFailures is the RecordFailures of a data node: it sends each
// window to the control nodes in turn (a follower redirects to the leader)
// until one records it. client is the node-to-node client
// (escalator.NodeClient), which carries the internal credentials.
func ForwardAuthFailures(client *http.Client, controlURLs func() []string, node string) func(FailureReport) error {
	return func(r FailureReport) error {
		body, err := json.Marshal(forwardedFailures{Node: node, RecordAuthFailures: commands.RecordAuthFailures{
			StartMs: r.Start.UnixMilli(), EndMs: r.End.UnixMilli(),
			Missing: r.Missing, Wrong: r.Wrong, Throttled: r.Throttled, ByAddress: r.ByAddress}})
		if err != nil {
			return err
		}
		var errs []error
		for _, base := range controlURLs() {
			req, err := http.NewRequest(http.MethodPost, base+AuthFailuresPath, bytes.NewReader(body))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			errs = append(errs, fmt.Errorf("%s: %s: %s", base, resp.Status, msg))
		}
		if len(errs) == 0 {
			return errors.New("no control node is known")
		}
		return errors.Join(errs...)
	}
}
