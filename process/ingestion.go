package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"strata/config"
	"strata/ingest/input"
	"strata/props"
)

// IngestDir is the folder of the data directory local input sources may
// read by default (svc.ingestion.local.allowedBaseDirs).
const IngestDir = "ingest"

// ingestionPolicy builds the process's input policy from svc.ingestion.*:
// the allowed directories made absolute (relative ones are relative to the
// directory the process starts in) and, by default, the data directory's
// ingest/ folder, created so that it can be used at once.
//
// The process's own listeners (its HTTP and TLS addresses, its Raft address
// and extra, the other listeners of a quickstart) are recorded so that
// Kafka consumer properties cannot point at them.
func ingestionPolicy(p *props.Properties, extra ...string) (*input.Policy, error) {
	c, err := config.ParseIngestion(p)
	if err != nil {
		return nil, err
	}
	node := config.ParseNode(p)
	var self []string
	t, tlsErr := config.ParseTLS(p)
	for _, a := range append([]string{node.HTTPAddress}, extra...) {
		self = append(self, a)
		if tlsErr == nil {
			if ta := t.TLSAddress(a); ta != "" {
				self = append(self, ta)
			}
		}
	}
	if r, err := config.ParseRaft(p); err == nil && r.Address != "" {
		self = append(self, r.Address)
	}
	dirs := c.LocalBaseDirs
	if !c.LocalBaseDirsSet {
		d := filepath.Join(node.DataDir, IngestDir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("svc.ingestion.local.allowedBaseDirs: %w", err)
		}
		dirs = []string{d}
	}
	pol := &input.Policy{HTTPProtocols: c.HTTPProtocols, HTTPAllowedHosts: c.HTTPAllowedHosts, SelfAddrs: self}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("svc.ingestion.local.allowedBaseDirs: %s: %w", d, err)
		}
		pol.LocalBaseDirs = append(pol.LocalBaseDirs, abs)
	}
	return pol, nil
}

// quickstartIngestDirs is quickstart's default of
// svc.ingestion.local.allowedBaseDirs: the data directory's ingest/ folder
// and the directory quickstart runs in, so that the README's example (a
// file of the repository, quickstart started at its root) works as written.
func quickstartIngestDirs(dataDir string) string {
	dirs := []string{filepath.Join(dataDir, IngestDir)}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	return strings.Join(dirs, ",")
}
