package console_test

import (
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
)

type c4AuditEntry struct {
	AuditInfo struct {
		Author, Comment string
	}
	Payload   string
	AuditTime string
}

// saveWithComment presses Save, checks the dialog lists the change, types
// the comment into the dialog's audit field and confirms.
func c4SaveWithComment(p *page, change, comment string) {
	p.t.Helper()
	p.click("#c4-cfg-save")
	p.waitVisible(`dialog[open] .audit`)
	if got := p.text(`dialog[open] .c4-changes`); !strings.Contains(got, change) {
		p.t.Fatalf("the save dialog lists %q, not %q", got, change)
	}
	p.typeText(`dialog[open] .audit input[id$="-comment"]`, comment)
	c4Confirm(p)
}

// TestConsoleCoordinatorConfigSave refuses an out-of-bounds value in the
// form (nothing is sent), then saves a change with a comment: the API has the
// value and the audit entry its comment, and the page's history shows it.
func TestConsoleCoordinatorConfigSave(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	p := e.browser(t, "", "")
	p.open("/config/coordinator")
	p.waitVisible("#c4-cfg-save")
	var before []c4AuditEntry
	if err := e.getJSON("/svc/coordinator/v1/config/history?count=100", &before); err != nil {
		t.Fatal(err)
	}

	c4SetField(p, `input[name="maxSegmentsToMove"]`, "-5")
	p.click("#c4-cfg-save")
	if msg := p.text("#c4-cfg-msg"); !strings.Contains(msg, "Max segments to move") {
		t.Fatalf("a negative count gave the message %q", msg)
	}
	if c4Present(p, "dialog[open]") {
		t.Fatal("an invalid form opened the save dialog")
	}
	c4SetField(p, `input[name="percentOfSegmentsToConsiderPerMove"]`, "0")
	c4SetField(p, `input[name="maxSegmentsToMove"]`, "7")
	p.click("#c4-cfg-save")
	if msg := p.text("#c4-cfg-msg"); !strings.Contains(msg, "Must be more than 0") {
		t.Fatalf("a 0 percentage gave the message %q", msg)
	}
	c4SetField(p, `input[name="percentOfSegmentsToConsiderPerMove"]`, "100")
	p.screenshot("config-coordinator-invalid")

	comment := "console test " + time.Now().UTC().Format(time.RFC3339Nano)
	c4SetField(p, `input[name="maxSegmentsToMove"]`, "42")
	c4SaveWithComment(p, "maxSegmentsToMove", comment)
	eventually.True(t, "the history to show the comment", func() bool {
		return strings.Contains(c4TextOf(p, "#c4-history"), comment)
	}, slow)
	if first := c4TextOf(p, "#c4-history > li"); !strings.Contains(first, comment) || !strings.Contains(first, "maxSegmentsToMove") {
		t.Fatalf("the newest history entry says %q", first)
	}
	p.screenshot("config-coordinator-saved")

	var cfg map[string]any
	if err := e.getJSON("/svc/coordinator/v1/config", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["maxSegmentsToMove"] != float64(42) {
		t.Fatalf("maxSegmentsToMove is %v after the save", cfg["maxSegmentsToMove"])
	}
	var after []c4AuditEntry
	if err := e.getJSON("/svc/coordinator/v1/config/history?count=100", &after); err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 {
		t.Fatalf("%d history entries after one save (and one refused), had %d", len(after), len(before))
	}
	found := false
	for _, a := range after {
		found = found || a.AuditInfo.Comment == comment && strings.Contains(a.Payload, `"maxSegmentsToMove":42`)
	}
	if !found {
		t.Fatalf("no history entry has the comment %q and the new value: %+v", comment, after)
	}
}

// TestConsoleOverlordConfigSave chooses an affinity strategy, fills in its
// JSON, saves with a comment, and finds both in the API and the history.
func TestConsoleOverlordConfigSave(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	p := e.browser(t, "", "")
	p.open("/config/overlord")
	p.waitVisible("#c4-cfg-save")

	c4SetField(p, `select[name="selectStrategy"]`, "fillCapacityWithAffinity")
	p.waitVisible(`textarea[name="affinity"]`)
	c4SetField(p, `textarea[name="affinity"]`, `{"c4_nothing": ""}`)
	p.click("#c4-cfg-save")
	if msg := p.text("#c4-cfg-msg"); !strings.Contains(msg, "Affinity") {
		t.Fatalf("an affinity that is not host lists gave the message %q", msg)
	}
	// Hosts that no worker has: the affinity is weak, so it changes nothing
	// for the other tests' tasks.
	c4SetField(p, `textarea[name="affinity"]`, `{"c4_nothing": ["127.0.0.1:1"]}`)
	comment := "overlord console test " + time.Now().UTC().Format(time.RFC3339Nano)
	c4SaveWithComment(p, "selectStrategy.type", comment)
	eventually.True(t, "the history to show the comment", func() bool {
		return strings.Contains(c4TextOf(p, "#c4-history"), comment)
	}, slow)
	// The entry lists what it changed (from the defaults when it is the first).
	if first := c4TextOf(p, "#c4-history > li"); !strings.Contains(first, "selectStrategy.type") || !strings.Contains(first, "fillCapacityWithAffinity") {
		t.Fatalf("the newest overlord history entry says %q", first)
	}
	p.screenshot("config-overlord-saved")

	var cfg struct {
		SelectStrategy struct {
			Type           string
			AffinityConfig struct {
				Affinity map[string][]string
				Strong   bool
			}
		}
	}
	if err := e.getJSON("/svc/indexer/v1/worker", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.SelectStrategy.Type != "fillCapacityWithAffinity" || len(cfg.SelectStrategy.AffinityConfig.Affinity["c4_nothing"]) != 1 {
		t.Fatalf("the worker config after the save: %+v", cfg)
	}
	var hist []c4AuditEntry
	if err := e.getJSON("/svc/indexer/v1/worker/history?count=10", &hist); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hist {
		found = found || h.AuditInfo.Comment == comment && strings.Contains(h.Payload, "fillCapacityWithAffinity")
	}
	if !found {
		t.Fatalf("no worker history entry with the comment %q: %+v", comment, hist)
	}
}
