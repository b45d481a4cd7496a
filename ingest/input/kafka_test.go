package input

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKafkaPolicy tries the ways a supervisor spec's consumer properties
// could read local files, run commands or aim at Strata itself; each is
// refused naming the property, while a broker on loopback and key stores
// under an allowed directory stay allowed.
func TestKafkaPolicy(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(allowed, "ks.jks"), []byte("x"), 0o600)
	os.Symlink("/etc/shadow", filepath.Join(allowed, "shadow.jks"))
	self, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	_, selfPort, _ := net.SplitHostPort(self.Addr().String())
	p := &Policy{LocalBaseDirs: []string{allowed}, SelfAddrs: []string{"0.0.0.0:" + selfPort, "127.0.0.1:1"}}
	for prop, v := range map[string]string{
		"ssl.keystore.location":               "/etc/shadow",
		"ssl.truststore.location":             filepath.Join(outside, "ts.jks"),
		"ssl.keystore.location ":              "", // placeholder replaced below
		"sasl.kerberos.kinit.cmd":             "/bin/sh -c id",
		"sasl.jaas.config":                    `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/etc/krb5.keytab" principal="x";`,
		"config.providers":                    "file",
		"sasl.oauthbearer.token.endpoint.url": "file:///etc/passwd",
		"ssl.key.password":                    "${file:/etc/secrets.properties:pw}",
		"bootstrap.servers":                   "localhost:" + selfPort,
	} {
		if prop == "ssl.keystore.location " {
			prop, v = "ssl.keystore.location", filepath.Join(allowed, "shadow.jks") // a symlink pointing out
		}
		err := p.CheckKafka(context.Background(), map[string]any{"bootstrap.servers": "127.0.0.1:9092", prop: v})
		if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), prop) {
			t.Errorf("%s=%s: %v", prop, v, err)
		}
	}
	for _, bs := range []string{"127.0.0.1:" + selfPort, "[::1]:" + selfPort, "PLAINTEXT://0.0.0.0:" + selfPort, "127.0.0.1:9092,localhost:1"} {
		if err := p.CheckKafka(context.Background(), map[string]any{"bootstrap.servers": bs}); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("bootstrap.servers=%s: %v", bs, err)
		}
	}
	ok := map[string]any{"bootstrap.servers": "127.0.0.1:9092,localhost:19092", "ssl.keystore.location": filepath.Join(allowed, "ks.jks"),
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`, "group.id": "g"}
	if err := p.CheckKafka(context.Background(), ok); err != nil {
		t.Errorf("allowed properties refused: %v", err)
	}
}
