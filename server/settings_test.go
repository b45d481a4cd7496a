package server

import (
	"strings"
	"testing"

	"strata/props"
)

// Settings the handlers use are parsed when the server is built: a malformed
// one stops the start with an error naming the key, instead of failing each
// request that reads it.
func TestNewRefusesBadSettings(t *testing.T) {
	for _, key := range []string{
		"svc.server.http.maxRequestBytes",
		"svc.debug.pprof",
		"svc.audit.manager.auditHistoryMillis",
		"svc.indexer.storage.recentlyFinishedThreshold",
		"svc.centralizedDatasourceSchema.enabled",
	} {
		t.Run(key, func(t *testing.T) {
			p := props.Defaults()
			p.Set(key, "not-a-value")
			if _, err := New(Options{Roles: []string{RoleRouter}, Props: p}); err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("%s=not-a-value: error %v, want one naming the key", key, err)
			}
		})
	}
}
