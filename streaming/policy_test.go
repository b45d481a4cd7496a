package streaming

import (
	"strings"
	"testing"

	"strata/ingest/input"
)

// TestSupervisorSpecConsumerPolicy: a supervisor spec whose consumer
// properties read a local file or point at Strata's own listener is
// refused with an error naming the property; one reading a broker on
// loopback is accepted (local development, kfake in the tests).
func TestSupervisorSpecConsumerPolicy(t *testing.T) {
	input.SetPolicy(&input.Policy{SelfAddrs: []string{"127.0.0.1:8081"}})
	t.Cleanup(func() { input.SetPolicy(nil) })
	for prop, props := range map[string]string{
		"ssl.keystore.location":   `"bootstrap.servers":"h:9092","ssl.keystore.location":"/etc/shadow"`,
		"sasl.kerberos.kinit.cmd": `"bootstrap.servers":"h:9092","sasl.kerberos.kinit.cmd":"/bin/sh"`,
		"bootstrap.servers":       `"bootstrap.servers":"localhost:8081"`,
	} {
		body := strings.Replace(specBody, `"bootstrap.servers":"h:9092"`, props, 1)
		_, err := ParseSupervisorSpec([]byte(body))
		if err == nil || !strings.Contains(err.Error(), "consumerProperties."+prop) {
			t.Errorf("%s: %v", prop, err)
		}
	}
	if _, err := ParseSupervisorSpec([]byte(strings.Replace(specBody, `"h:9092"`, `"127.0.0.1:9092"`, 1))); err != nil {
		t.Errorf("a broker on loopback: %v", err)
	}
}
