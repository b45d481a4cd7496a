package tlsconf

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority made on the spot, for `strata quickstart
// --tls-dir`, scripts/cluster-up.sh and tests: never for production, where
// the certificates come from the operator's own CA.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	PEM  []byte
}

// NewCA makes a self-signed CA valid for validFor.
func NewCA(commonName string, validFor time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"Strata"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Issue makes a certificate for hosts (DNS names or IP addresses), usable
// both as a server's and as a client's, and returns it and its key as PEM.
func (ca *CA) Issue(commonName string, hosts []string, validFor time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"Strata"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// Files names a directory's CA bundle and the node certificate and key
// signed by it.
type Files struct{ Dir, CA, Cert, Key string }

// DirFiles names the files of dir.
func DirFiles(dir string) Files {
	return Files{Dir: dir, CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "node.pem"), Key: filepath.Join(dir, "node-key.pem")}
}

// EnsureDir makes dir's CA and a node certificate for hosts (and
// localhost, 127.0.0.1, ::1) valid a year, unless ca.pem is there already:
// then the files are used as they are, so a restart keeps the CA clients
// trust. Only the CA's certificate is written, not its key: no further
// certificate can be signed with it later.
func EnsureDir(dir string, hosts ...string) (Files, error) {
	f := DirFiles(dir)
	if _, err := os.Stat(f.CA); err == nil {
		for _, p := range []string{f.Cert, f.Key} {
			if _, err := os.Stat(p); err != nil {
				return f, fmt.Errorf("%s exists but %s does not: remove the directory to make new certificates", f.CA, p)
			}
		}
		return f, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, err
	}
	ca, err := NewCA("Strata local CA", 365*24*time.Hour)
	if err != nil {
		return f, err
	}
	cert, key, err := ca.Issue("strata", append([]string{"localhost", "127.0.0.1", "::1"}, hosts...), 365*24*time.Hour)
	if err != nil {
		return f, err
	}
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{f.Key, key, 0o600}, {f.Cert, cert, 0o644}, {f.CA, ca.PEM, 0o644}} { // ca.pem last: it marks the set complete
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return f, err
		}
	}
	return f, nil
}
