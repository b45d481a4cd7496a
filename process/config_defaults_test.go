package process

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/props"
	"strata/querynode/broker"
)

// The defaults config.Keys documents are the ones the roles get.
func TestDocumentedDefaultsReachTheRoles(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.data.dir", t.TempDir())
	b, err := BrokerConfig(p, "b:1", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxSubqueryRows != broker.DefaultMaxSubqueryRows {
		t.Errorf("svc.server.http.maxSubqueryRows default %d, broker's %d", b.MaxSubqueryRows, broker.DefaultMaxSubqueryRows)
	}
	h, err := HistoricalConfig(p, "h:1", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Locations) != 1 || h.Locations[0].MaxSize != 300_000_000_000 || h.LoadThreads != 4 {
		t.Errorf("historical defaults: %+v", h)
	}
	n, err := NodeConfig(p, hclog.NewNullLogger())
	if err != nil || n.HeartbeatTimeout.String() != "300ms" || n.MaxAppendEntries != 512 || n.SnapshotRetain != 2 {
		t.Errorf("raft defaults: %+v, %v", n, err)
	}
}
