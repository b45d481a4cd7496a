package config

import (
	"strings"
	"testing"
)

func TestCheckExposure(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		ok    bool
	}{
		{map[string]string{}, true}, // the default address is 127.0.0.1:8081
		{map[string]string{"svc.http.address": "127.0.0.1:8081"}, true},
		{map[string]string{"svc.http.address": "127.9.9.9:8081"}, true},
		{map[string]string{"svc.http.address": "[::1]:8081"}, true},
		{map[string]string{"svc.http.address": "localhost:8081"}, true},
		{map[string]string{"svc.http.address": "0.0.0.0:8081"}, false},
		{map[string]string{"svc.http.address": ":8081"}, false},
		{map[string]string{"svc.http.address": "[::]:8081"}, false},
		{map[string]string{"svc.http.address": "10.0.0.5:8081"}, false},
		{map[string]string{"svc.http.address": "loopback.example.com:8081"}, false}, // names are not trusted
		{map[string]string{"svc.http.address": "0.0.0.0:8081", "svc.auth.allowInsecure": "true"}, true},
		{map[string]string{"svc.http.address": "0.0.0.0:8081", "svc.auth.authenticatorChain": `["basic"]`}, true},
	} {
		err := CheckExposure(mapSource(c.props))
		if (err == nil) != c.ok {
			t.Errorf("%v: %v, want ok=%v", c.props, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "svc.auth.allowInsecure=true") {
			t.Errorf("%v: the error does not say how to proceed: %v", c.props, err)
		}
	}
	if err := CheckExposure(mapSource{"svc.auth.allowInsecure": "maybe"}); err == nil {
		t.Error("a malformed svc.auth.allowInsecure is accepted")
	}
}
