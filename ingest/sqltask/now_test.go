package sqltask

import (
	"encoding/json"
	"testing"
	"time"
)

// A task's msq request takes CURRENT_TIMESTAMP from the payload the
// overlord leader stamped; without one (a task submitted before stamping)
// msq uses the start of its run.
func TestRequestUsesTheStampedCurrentTimestamp(t *testing.T) {
	var p Payload
	if err := json.Unmarshal([]byte(`{"type":"query_controller","sqlQuery":"SELECT 1","sqlCurrentTimestamp":946782245000}`), &p); err != nil {
		t.Fatal(err)
	}
	if got := p.request("id", "v", "/tmp").Now; !got.Equal(time.UnixMilli(946782245000)) {
		t.Errorf("Now = %v, want 2000-01-02T03:04:05Z", got)
	}
	var old Payload
	if err := json.Unmarshal([]byte(`{"type":"query_controller","sqlQuery":"SELECT 1"}`), &old); err != nil {
		t.Fatal(err)
	}
	if got := old.request("id", "v", "/tmp").Now; !got.IsZero() {
		t.Errorf("Now = %v without a stamp, want zero", got)
	}
}
