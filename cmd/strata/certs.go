package main

import (
	"fmt"
	"strings"

	"strata/tlsconf"
)

// runCerts implements `strata certs --dir DIR [--hosts H,...]`: a
// self-signed CA and one node certificate signed by it, for a local or test
// cluster over TLS (scripts/cluster-up.sh --tls). An existing directory is
// left as it is, so clients that trust its CA keep working.
func runCerts(args []string) error {
	fs := newFlagSet("certs", "certs --dir DIR [--hosts HOST,...]")
	dir := fs.String("dir", "", "directory of ca.pem, node.pem and node-key.pem (required)")
	hosts := fs.String("hosts", "", "names and IPs the node certificate is for, besides localhost, 127.0.0.1 and ::1")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("--dir DIR is required")
	}
	var extra []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			extra = append(extra, h)
		}
	}
	f, err := tlsconf.EnsureDir(*dir, extra...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CA bundle (svc.client.https.trustStoreFile, curl --cacert): %s\ncertificate (svc.server.https.certFile): %s\nkey (svc.server.https.keyFile): %s\n", f.CA, f.Cert, f.Key)
	return nil
}
