package process

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/props"
)

func TestScrubPeriodProperty(t *testing.T) {
	for v, want := range map[string]time.Duration{"": time.Hour, "10m": 10 * time.Minute, "0": -1, "-5s": -1} {
		p := props.Defaults()
		p.Set("svc.data.dir", t.TempDir())
		if v != "" {
			p.Set("svc.segmentCache.scrubPeriod", v)
		}
		cfg, err := HistoricalConfig(p, "h:1", hclog.NewNullLogger())
		if err != nil || cfg.ScrubPeriod != want {
			t.Errorf("scrubPeriod %q: %v, %v; want %v", v, cfg.ScrubPeriod, err, want)
		}
	}
	p := props.Defaults()
	p.Set("svc.data.dir", t.TempDir())
	p.Set("svc.segmentCache.scrubPeriod", "often")
	if _, err := HistoricalConfig(p, "h:1", hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "svc.segmentCache.scrubPeriod") {
		t.Errorf("a bad scrubPeriod: %v", err)
	}
}
