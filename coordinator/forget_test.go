package coordinator

import (
	"testing"
	"time"
)

// Forget drops a historical at once (discovery says it is gone), so
// placement stops counting on it without waiting for Expiry; its next
// assignment poll, if it comes back, makes it known again.
func TestInventoryForget(t *testing.T) {
	v := &Inventory{Expiry: time.Hour}
	v.Seen("127.0.0.1:8083", time.Now())
	v.Seen("127.0.0.1:8084", time.Now())
	gen := v.Generation()
	v.Forget("127.0.0.1:8083")
	if s := v.Servers(); len(s) != 1 || s[0].Meta.Name != "127.0.0.1:8084" {
		t.Fatalf("servers after Forget: %+v", s)
	}
	if v.Generation() == gen {
		t.Fatal("Forget did not change the generation placement watches")
	}
	v.Forget("127.0.0.1:9") // unknown: nothing happens
	v.Seen("127.0.0.1:8083", time.Now())
	if len(v.Servers()) != 2 {
		t.Fatal("a forgotten historical that polls again is not known again")
	}
}
