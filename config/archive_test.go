package config

import (
	"strings"
	"testing"
	"time"
)

func TestArchiveRetention(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", 0, false}, {"0", 0, false}, {"2160h", 2160 * time.Hour, false},
		{"-1h", 0, true}, {"forever", 0, true},
	} {
		c, err := ParseRaft(mapSource{"svc.audit.archive.retention": tc.value})
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), "svc.audit.archive.retention") {
				t.Errorf("%q: error %v, want one naming the key", tc.value, err)
			}
			continue
		}
		if err != nil || c.ArchiveRetention != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.value, c.ArchiveRetention, err, tc.want)
		}
	}
}
