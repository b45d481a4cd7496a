package sysinfo

import (
	"context"
	"strings"
)

const pathRules = "/svc/coordinator/v1/rules"

// broadcastTables are the datasources Druid calls globally available: the
// rules that place them (their own, else the cluster's _default) broadcast
// them and load them nowhere else, so every data server holds them and a
// join may read them as its right side. INFORMATION_SCHEMA.TABLES reports
// them as joinable and broadcast. Without a readable control plane none is
// reported: the flag is advice about a table, not a reason to fail the
// table listing.
func (t *Tables) broadcastTables(ctx context.Context) func(ds string) bool {
	var rules map[string][]struct {
		Type string `json:"type"`
	}
	if err := t.get(ctx, pathRules, &rules); err != nil {
		return func(string) bool { return false }
	}
	return func(ds string) bool {
		rs := rules[ds]
		if len(rs) == 0 {
			rs = rules["_default"]
		}
		broadcast, loads := false, false
		for _, r := range rs {
			broadcast = broadcast || strings.HasPrefix(r.Type, "broadcast")
			loads = loads || strings.HasPrefix(r.Type, "load")
		}
		return broadcast && !loads
	}
}
