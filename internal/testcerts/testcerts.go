// Package testcerts makes certificates for tests at run time: a CA of the
// test's own and node certificates it signs, written to the test's temporary
// directory, so no key is ever checked in.
package testcerts

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"strata/tlsconf"
)

// CA is a test's certificate authority and the directory its files go to.
type CA struct {
	*tlsconf.CA
	Dir    string
	CAFile string // the PEM bundle clients trust
}

// New makes a CA valid an hour, its certificate written to a fresh
// directory.
func New(t testing.TB) *CA {
	t.Helper()
	ca, err := tlsconf.NewCA("Strata test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &CA{CA: ca, Dir: dir, CAFile: filepath.Join(dir, "ca.pem")}
	if err := os.WriteFile(c.CAFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue writes a certificate for 127.0.0.1, ::1 and localhost named name
// to name.pem and name-key.pem and returns their paths.
func (c *CA) Issue(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(c.Dir, name+".pem"), filepath.Join(c.Dir, name+"-key.pem")
	c.IssueTo(t, name, certFile, keyFile)
	return certFile, keyFile
}

// IssueTo writes a certificate named name to the given paths (replacing
// them: a rotation), the key first.
func (c *CA) IssueTo(t testing.TB, name, certFile, keyFile string) {
	t.Helper()
	cert, key, err := c.CA.Issue(name, []string{"127.0.0.1", "::1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, cert, 0o644); err != nil {
		t.Fatal(err)
	}
}
