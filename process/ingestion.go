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
func ingestionPolicy(p *props.Properties) (*input.Policy, error) {
	c, err := config.ParseIngestion(p)
	if err != nil {
		return nil, err
	}
	dirs := c.LocalBaseDirs
	if !c.LocalBaseDirsSet {
		d := filepath.Join(config.ParseNode(p).DataDir, IngestDir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("svc.ingestion.local.allowedBaseDirs: %w", err)
		}
		dirs = []string{d}
	}
	pol := &input.Policy{HTTPProtocols: c.HTTPProtocols, HTTPAllowedHosts: c.HTTPAllowedHosts}
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
