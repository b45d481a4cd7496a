package console_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"strata/internal/eventually"
)

// The datasources these tests load: their own, so that marking segments
// unused or killing them never touches what other views' tests query.
const (
	c3ViewDS = "c3wiki" // read, and its rules edited
	c3MarkDS = "c3mark" // segments marked unused, used and killed
	// c3Day is the first of the three day segments examples/wiki.json makes.
	c3Day = "2024-01-01/2024-01-02"
)

// c3Set sets an input's or select's value as a user would (input and change
// events fire, so the view sees it).
func c3Set(p *page, sel, value string) {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	v, _ := json.Marshal(value)
	if !eval[bool](p, fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) return false;
		el.value = %s; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, q, v)) {
		p.t.Fatalf("no element %s", sel)
	}
}

// c3Text is sel's innerText now ("" when absent), for polling.
func c3Text(p *page, sel string) string {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	return eval[string](p, fmt.Sprintf(`(document.querySelector(%s) || {}).innerText || ''`, q))
}

// c3OpenView opens hash and waits for that view's own section to be ready
// (not the previous view's, which is ready until the hash change lands).
func c3OpenView(p *page, hash, view string) {
	p.t.Helper()
	p.open(hash)
	p.waitVisible(fmt.Sprintf(`section#view[data-view=%q][data-ready="true"]`, view))
}

// c3KillTasks counts the kill tasks of ds the overlord knows (any state).
func c3KillTasks(t *testing.T, e *consoleEnv, ds string) int {
	t.Helper()
	var tasks []struct{ Type string }
	if err := e.getJSON("/svc/indexer/v1/tasks?datasource="+ds, &tasks); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		if task.Type == "kill" {
			n++
		}
	}
	return n
}

// c3UsedByInterval reads the segments table: interval text -> Used column.
func c3UsedByInterval(p *page) map[string]string {
	p.t.Helper()
	rows := eval[[]string](p, `[...document.querySelectorAll('#seg-table tbody tr')].filter((tr) => tr.querySelector('[data-col=used]'))
		.map((tr) => tr.cells[1].innerText + '=' + tr.querySelector('[data-col=used]').innerText)`)
	out := map[string]string{}
	for _, r := range rows {
		k, v, _ := strings.Cut(r, "=")
		out[k] = v
	}
	return out
}

// TestConsoleDatasourcesAndSegmentsViews: both views load without a console
// error and show the sample datasource's numbers as the API has them; the
// segments view's timeline draws a bar per day segment, and choosing a bar
// with the keyboard lists only that interval's segment.
func TestConsoleDatasourcesAndSegmentsViews(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	e.ingestWiki(t, c3ViewDS)
	p := e.browser(t, "", "")

	c3OpenView(p, "/datasources", "datasources")
	row := p.text(fmt.Sprintf(`tr[data-key=%q]`, c3ViewDS))
	// 3 day segments, 36 rows, 2024-01-01 to 2024-01-04.
	for _, want := range []string{c3ViewDS, "\t3\t", "\t36\t", "2024-01-01 / 2024-01-04", "available", "Show segments"} {
		if !strings.Contains(row, want) {
			t.Errorf("the datasources row says %q, without %q", row, want)
		}
	}
	p.screenshot("datasources-list")

	c3OpenView(p, "/segments?datasource="+c3ViewDS, "segments")
	if got := eval[int](p, `document.querySelectorAll('#seg-table tbody tr[data-key]').length`); got != 3 {
		t.Fatalf("the segments table has %d rows, want 3: %s", got, p.text("#seg-table"))
	}
	if got := c3UsedByInterval(p); got["2024-01-01 / 2024-01-02"] != "yes" || len(got) != 3 {
		t.Fatalf("used column: %v", got)
	}
	if tbl := p.text("#seg-table"); strings.Count(tbl, c3ViewDS) != 3 || !strings.Contains(tbl, "\t12\t") {
		t.Fatalf("the segments table lacks the datasource or the rows per segment: %s", tbl)
	}
	// Where each is loaded: the historical's address, from sys.server_segments.
	if loaded := eval[string](p, `document.querySelector('#seg-table tbody tr[data-key] td:nth-child(9)').innerText`); !strings.Contains(loaded, "127.0.0.1:") {
		t.Fatalf("Loaded on says %q", loaded)
	}
	if got := eval[int](p, `document.querySelectorAll('svg.timeline rect[role=button]').length`); got != 3 {
		t.Fatalf("the timeline has %d bars, want 3", got)
	}
	if alt := eval[int](p, `document.querySelectorAll('figure.timeline-figure details tbody tr').length`); alt != 3 {
		t.Fatalf("the timeline's text alternative has %d rows, want 3", alt)
	}
	p.screenshot("segments-timeline")

	// Keyboard: Tab-reachable bars answer Enter by filtering to their interval.
	p.do(chromedp.Focus(chromedp.CSS(`svg.timeline rect[role=button]`)), chromedp.KeyEvent("\r"))
	eventually.True(t, "the table to list the chosen interval only", func() bool {
		return eval[int](p, `document.querySelectorAll('#seg-table tbody tr[data-key]').length`) == 1
	}, slow)
	if hash := eval[string](p, `location.hash`); !strings.Contains(hash, "interval=2024-01-01") || !strings.Contains(hash, "datasource="+c3ViewDS) {
		t.Fatalf("the filters are not in the address: %s", hash)
	}
	if got := c3UsedByInterval(p); len(got) != 1 || got["2024-01-01 / 2024-01-02"] != "yes" {
		t.Fatalf("after choosing the first bar the table has %v", got)
	}

	// An interval that ends before it starts is refused in words, no query sent.
	c3Set(p, "#seg-interval", "2024-01-02/2024-01-01")
	p.click(`form[role=search] button[type=submit]`)
	eventually.True(t, "the bad interval's message", func() bool {
		return strings.Contains(c3Text(p, "#seg-list-h + p"), `"2024-01-02/2024-01-01" is not an interval`)
	}, slow)
	if got := eval[int](p, `document.querySelectorAll('#seg-table tbody tr[data-key]').length`); got != 0 {
		t.Fatalf("a bad interval left %d rows listed", got)
	}
	// The same from the address: the view still renders (and its timeline).
	c3OpenView(p, "/segments?interval=bogus&datasource="+c3ViewDS, "segments")
	if msg := c3Text(p, "#seg-list-h + p"); !strings.Contains(msg, `"bogus" is not an interval`) || eval[int](p, `document.querySelectorAll('svg.timeline rect').length`) != 3 {
		t.Fatalf("a bad interval in the address: %q", msg)
	}
}

// TestConsoleRetentionRulesEdit: a rule the API refuses shows the API's
// message and changes nothing; a rule saved from the form is the JSON the
// API then answers, and it appears in the rules history with its comment.
func TestConsoleRetentionRulesEdit(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	e.ingestWiki(t, c3ViewDS)
	// No rules of its own to start from, whatever ran before in this cluster.
	if code, body, err := e.call("POST", "/svc/coordinator/v1/rules/"+c3ViewDS, "application/json", "[]"); err != nil || code != 200 {
		t.Fatalf("clearing the rules: %d %s %v", code, body, err)
	}
	p := e.browser(t, "", "")
	c3OpenView(p, "/datasources/"+c3ViewDS, "datasources")

	p.allowConsole("status of 400") // the browser logs the 400 the bad period provokes
	p.click("#rule-add")
	c3Set(p, ".rule-type", "loadByPeriod")
	c3Set(p, ".rule-period", "not-a-period")
	p.typeText(`.rules-form .audit input[id$="-comment"]`, "refused")
	p.click("#rules-save")
	p.waitVisible(".rules-form .error-box")
	if msg := c3Text(p, ".rules-form .error-box"); !strings.Contains(msg, "Error 400") || !strings.Contains(msg, "period") {
		t.Fatalf("a bad period gave the message %q", msg)
	}
	var rules []map[string]any
	if err := e.getJSON("/svc/coordinator/v1/rules/"+c3ViewDS, &rules); err != nil || len(rules) != 0 {
		t.Fatalf("a refused save changed the rules: %v %v", rules, err)
	}

	c3Set(p, ".rule-period", "P10Y") // 2016-2036: the sample's segments stay loaded
	c3Set(p, ".rule-replicants", "1")
	comment := "c3 rules " + time.Now().UTC().Format(time.RFC3339Nano)
	c3Set(p, `.rules-form .audit input[id$="-comment"]`, comment)
	c3Set(p, `.rules-form .audit input[id$="-author"]`, "c3-test")
	p.click("#rules-save")
	eventually.True(t, "the rules history to show the comment", func() bool {
		return strings.Contains(c3Text(p, "#ds-hist-h + *"), comment)
	}, slow)
	hist := c3Text(p, "#ds-hist-h + *")
	if !strings.Contains(hist, "c3-test") || !strings.Contains(hist, "load (1× _default_tier) P10Y") {
		t.Fatalf("the history row lacks the author or the rule: %s", hist)
	}
	if cur := c3Text(p, "#rules-current"); !strings.Contains(cur, "P10Y") {
		t.Fatalf("the current rules say %q", cur)
	}
	p.screenshot("datasource-rules-saved")

	// The API has exactly what the form showed it would post.
	if err := e.getJSON("/svc/coordinator/v1/rules/"+c3ViewDS, &rules); err != nil {
		t.Fatal(err)
	}
	// (The API adds useDefaultTierForNull, its default, to what it stores.)
	want := `[{"includeFuture":true,"period":"P10Y","tieredReplicants":{"_default_tier":1},"type":"loadByPeriod","useDefaultTierForNull":true}]`
	if got, _ := json.Marshal(rules); !jsonEqual(t, string(got), want) {
		t.Fatalf("rules after the save: %s, want %s", got, want)
	}
	var entries []struct {
		AuditInfo struct{ Author, Comment string }
	}
	if err := e.getJSON("/svc/coordinator/v1/rules/"+c3ViewDS+"/history?count=1", &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].AuditInfo.Comment != comment || entries[0].AuditInfo.Author != "c3-test" {
		t.Fatalf("the audit entry is %+v", entries)
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// TestConsoleMarkUnusedUsedAndKill: marking a day unused and then used
// again changes the segments table's Used column each time; the kill
// confirmation names the datasource, the interval and what it deletes, and
// cancelling it deletes nothing (no kill task, the unused segment still
// there); confirming it (typing the datasource's name) deletes the segment.
func TestConsoleMarkUnusedUsedAndKill(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	// The kill below changes the datasource: a rerun in this cluster loads
	// it again (REPLACE), and starts with the new version only (the
	// replaced segments are marked unused and killed first).
	t.Cleanup(func() {
		e.mu.Lock()
		delete(e.ingested, c3MarkDS)
		e.mu.Unlock()
	})
	e.ingestWiki(t, c3MarkDS)
	p := e.browser(t, "", "")
	day := "2024-01-01 / 2024-01-02"
	unusedPath := "/svc/coordinator/v1/metadata/datasources/" + c3MarkDS + "/unusedSegments"
	var status []struct {
		Identifier   string
		Overshadowed bool
	}
	if err := e.getJSON("/svc/coordinator/v1/metadata/segments?includeOvershadowedStatus&datasources="+c3MarkDS, &status); err != nil {
		t.Fatal(err)
	}
	var replaced []string
	for _, s := range status {
		if s.Overshadowed {
			replaced = append(replaced, s.Identifier)
		}
	}
	if len(replaced) > 0 {
		body, _ := json.Marshal(map[string][]string{"segmentIds": replaced})
		if code, resp, err := e.call("POST", "/svc/coordinator/v1/datasources/"+c3MarkDS+"/markUnused", "application/json", string(body)); err != nil || code != 200 {
			t.Fatalf("marking the replaced segments unused: %d %s %v", code, resp, err)
		}
	}
	var unused []json.RawMessage
	if err := e.getJSON(unusedPath, &unused); err != nil {
		t.Fatal(err)
	}
	if len(unused) > 0 {
		if code, body, err := e.call("DELETE", "/svc/coordinator/v1/datasources/"+c3MarkDS+"/intervals/2000-01-01_2100-01-01", "", ""); err != nil || code != 200 {
			t.Fatalf("killing the unused segments left by a previous run: %d %s %v", code, body, err)
		}
		eventually.True(t, "no unused segment left", func() bool { return e.getJSON(unusedPath, &unused) == nil && len(unused) == 0 }, slow)
	}

	c3OpenView(p, "/datasources/"+c3MarkDS, "datasources")
	c3Set(p, "#mark-interval", c3Day)
	p.click("#mark-unused")
	p.waitVisible("dialog[open]")
	p.click("dialog[open] button[type=submit]")
	eventually.True(t, "the mark's result", func() bool {
		return strings.Contains(c3Text(p, "#mark-result"), "1 segment changed")
	}, slow)

	c3OpenView(p, "/segments?state=all&datasource="+c3MarkDS, "segments")
	if got := c3UsedByInterval(p); got[day] != "no" || len(got) != 3 {
		t.Fatalf("after marking %s unused the Used column is %v", c3Day, got)
	}
	p.screenshot("segments-one-unused")
	// Two rows a page: the used ones come from SQL (LIMIT/OFFSET), the
	// unused one from the metadata API, on the second page.
	c3OpenView(p, "/segments?state=all&size=2&datasource="+c3MarkDS, "segments")
	if got, count := c3UsedByInterval(p), p.text("#seg-count"); len(got) != 2 || got[day] != "" || count != "Segments 1–2 of 3" {
		t.Fatalf("the first page of 2 has %v, %q", got, count)
	}
	p.click("#seg-next")
	eventually.True(t, "the second page", func() bool { return c3Text(p, "#seg-count") == "Segments 3–3 of 3" }, slow)
	if got := c3UsedByInterval(p); len(got) != 1 || got[day] != "no" {
		t.Fatalf("the second page of 2 has %v", got)
	}
	if hash := eval[string](p, `location.hash`); !strings.Contains(hash, "page=1") || !strings.Contains(hash, "size=2") {
		t.Fatalf("the page is not in the address: %s", hash)
	}

	// Kill, cancelled.
	c3OpenView(p, "/datasources/"+c3MarkDS, "datasources")
	c3Set(p, "#kill-interval", c3Day)
	p.click("#kill-start")
	p.waitVisible("dialog[open]")
	msg := p.text("dialog[open]")
	for _, want := range []string{"Datasource: " + c3MarkDS, "Interval: " + c3Day, "1 unused segment (", c3MarkDS + "_2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z_", "Type " + c3MarkDS + " to confirm"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the kill confirmation says %q, without %q", msg, want)
		}
	}
	if !eval[bool](p, `document.querySelector('dialog[open] button[type=submit]').disabled`) {
		t.Error("the kill can be confirmed without typing the datasource's name")
	}
	p.screenshot("datasource-kill-confirm")
	killsBefore := c3KillTasks(t, e, c3MarkDS)
	p.click("dialog[open] button[type=button]") // Cancel
	eventually.True(t, "the cancel to be reported", func() bool {
		return strings.Contains(c3Text(p, "#kill-result"), "Cancelled: nothing was deleted")
	}, slow)
	if err := e.getJSON(unusedPath, &unused); err != nil || len(unused) != 1 {
		t.Fatalf("after a cancelled kill the unused segments are %d (%v)", len(unused), err)
	}
	if kills := c3KillTasks(t, e, c3MarkDS); kills != killsBefore {
		t.Fatalf("a cancelled kill submitted a kill task: %d kill tasks, %d before", kills, killsBefore)
	}

	// Used again.
	c3Set(p, "#mark-interval", c3Day)
	p.click("#mark-used")
	eventually.True(t, "the mark's result", func() bool {
		return strings.Contains(c3Text(p, "#mark-result"), "Marked used in "+c3Day+": 1 segment changed")
	}, slow)
	c3OpenView(p, "/segments?state=all&datasource="+c3MarkDS, "segments")
	if got := c3UsedByInterval(p); got[day] != "yes" || len(got) != 3 {
		t.Fatalf("after marking %s used again the Used column is %v", c3Day, got)
	}

	// Unused once more, then killed for real: the segment is gone.
	c3OpenView(p, "/datasources/"+c3MarkDS, "datasources")
	c3Set(p, "#mark-interval", c3Day)
	p.click("#mark-unused")
	p.waitVisible("dialog[open]")
	p.click("dialog[open] button[type=submit]")
	eventually.True(t, "the mark's result", func() bool {
		return strings.Contains(c3Text(p, "#mark-result"), "1 segment changed")
	}, slow)
	c3Set(p, "#kill-interval", c3Day)
	p.click("#kill-start")
	p.waitVisible("dialog[open]")
	p.typeText("dialog[open] input", c3MarkDS)
	p.click("dialog[open] button[type=submit]")
	eventually.True(t, "the kill to be reported done", func() bool {
		return strings.Contains(c3Text(p, "#kill-result"), "Deleted: 1 segment of "+c3MarkDS+" in "+c3Day)
	}, slow)
	eventually.True(t, "the killed segment to be gone", func() bool {
		return e.getJSON(unusedPath, &unused) == nil && len(unused) == 0
	}, slow)
	var segs []string
	if err := e.getJSON("/svc/coordinator/v1/metadata/datasources/"+c3MarkDS+"/segments", &segs); err != nil || len(segs) != 2 {
		t.Fatalf("after the kill the used segments are %v (%v), want the other 2 days", segs, err)
	}
	c3OpenView(p, "/segments?state=all&datasource="+url.QueryEscape(c3MarkDS), "segments")
	if got := c3UsedByInterval(p); len(got) != 2 || got[day] != "" {
		t.Fatalf("after the kill the segments table has %v", got)
	}

	// All unused (confirmed by typing the name), then all used again.
	c3OpenView(p, "/datasources/"+c3MarkDS, "datasources")
	p.click("#mark-all-unused")
	p.waitVisible("dialog[open]")
	if !eval[bool](p, `document.querySelector('dialog[open] button[type=submit]').disabled`) {
		t.Fatal("marking every segment unused can be confirmed without typing the datasource's name")
	}
	p.typeText("dialog[open] input", c3MarkDS)
	p.click("dialog[open] button[type=submit]")
	eventually.True(t, "all marked unused", func() bool {
		return strings.Contains(c3Text(p, "#mark-result"), "Marked all unused: 2 segments changed")
	}, slow)
	c3OpenView(p, "/segments?state=all&datasource="+url.QueryEscape(c3MarkDS)+"&order=oldest", "segments")
	if got := c3UsedByInterval(p); len(got) != 2 || got["2024-01-02 / 2024-01-03"] != "no" || got["2024-01-03 / 2024-01-04"] != "no" {
		t.Fatalf("after marking all unused the segments table has %v", got)
	}
	c3OpenView(p, "/datasources/"+c3MarkDS, "datasources")
	p.click("#mark-all-used")
	eventually.True(t, "all marked used", func() bool {
		return strings.Contains(c3Text(p, "#mark-result"), "Marked all used: 2 segments changed")
	}, slow)
	// The summary is read again after the change.
	eventually.True(t, "the summary to count 2 used segments", func() bool {
		return strings.HasPrefix(c3Text(p, "#ds-used-count"), "2")
	}, slow)
}

// TestConsoleSegmentTimelineChart draws the timeline of segments with two
// partitions of one version in the first day and an overshadowed version
// under a newer one in the second: partitions stack with heights in
// proportion to their bytes, each version has its colour and legend entry,
// the overshadowed bar is faded, the text alternative has a row per
// interval, and Enter on a bar selects its interval.
func TestConsoleSegmentTimelineChart(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	p := e.browser(t, "", "")
	p.open("/home")
	type rect struct {
		Interval, Version, Fill, Opacity string
		X, Y, W, H                       float64
	}
	var got struct {
		Rects    []rect
		Legend   []string
		AltRows  []string
		Title    string
		Selected string
	}
	raw := run(p, chromedp.Evaluate[string](`(async () => {
		const { segmentTimeline } = await import('/console/lib/timeline.js');
		const d1 = ['2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z'], d2 = ['2024-01-02T00:00:00.000Z', '2024-01-03T00:00:00.000Z'];
		let selected = '';
		const fig = segmentTimeline({ width: 600, height: 200, title: 'test chart', onSelect: (iv) => { selected = iv; }, segments: [
			{ id: 'a0', start: d1[0], end: d1[1], version: 'v1', partition: 0, size: 100, overshadowed: false },
			{ id: 'a1', start: d1[0], end: d1[1], version: 'v1', partition: 1, size: 300, overshadowed: false },
			{ id: 'b0', start: d2[0], end: d2[1], version: 'v1', partition: 0, size: 200, overshadowed: true },
			{ id: 'b1', start: d2[0], end: d2[1], version: 'v2', partition: 0, size: 400, overshadowed: false },
		] });
		document.body.append(fig);
		const rects = [...fig.querySelectorAll('rect[role=button]')];
		rects[3].dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
		const out = {
			rects: rects.map((r) => ({ interval: r.dataset.interval, version: r.dataset.version, fill: r.getAttribute('fill'), opacity: r.getAttribute('fill-opacity'),
				x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: +r.getAttribute('width'), h: +r.getAttribute('height') })),
			legend: [...fig.querySelectorAll('.timeline-legend li')].map((li) => li.innerText.trim()),
			altRows: [...fig.querySelectorAll('details tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent).join(' ')),
			title: document.getElementById(fig.querySelector('svg').getAttribute('aria-labelledby')).textContent,
			selected,
		};
		fig.remove();
		return JSON.stringify(out);
	})()`, chromedp.EvalAwaitPromise))
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rects) != 4 {
		t.Fatalf("%d bars, want 4: %+v", len(got.Rects), got.Rects)
	}
	a0, a1, b0, b1 := got.Rects[0], got.Rects[1], got.Rects[2], got.Rects[3]
	// Stacked: partition 1 sits on partition 0, three times as tall.
	if a1.Y+a1.H > a0.Y+0.01 || a1.Y+a1.H < a0.Y-1.01 || a1.H < 2.9*a0.H || a1.H > 3.1*a0.H {
		t.Errorf("day 1's partitions are not stacked by size: %+v %+v", a0, a1)
	}
	if a0.X != a1.X || b0.X <= a0.X+a0.W-1 {
		t.Errorf("bars are not placed by time: %+v", got.Rects)
	}
	if a0.Fill != b0.Fill || b0.Fill == b1.Fill {
		t.Errorf("colours do not follow versions: v1 %s/%s, v2 %s", a0.Fill, b0.Fill, b1.Fill)
	}
	if b0.Opacity != "0.35" || b1.Opacity != "1" {
		t.Errorf("the overshadowed bar is not faded: %s, %s", b0.Opacity, b1.Opacity)
	}
	// The tallest interval fills the plot: day 2 holds 600 bytes.
	if b1.Y > 10.01 || a0.H+a1.H >= b0.H+b1.H {
		t.Errorf("heights are not bytes: %+v", got.Rects)
	}
	if len(got.Legend) != 3 || !strings.Contains(got.Legend[0], "v2") || !strings.Contains(got.Legend[1], "v1") || !strings.Contains(got.Legend[2], "overshadowed") {
		t.Errorf("legend %q", got.Legend)
	}
	if len(got.AltRows) != 2 || !strings.Contains(got.AltRows[0], "2024-01-01 / 2024-01-02 2 v1 400 B") || !strings.Contains(got.AltRows[1], "2 v1, v2 600 B") {
		t.Errorf("text alternative %q", got.AltRows)
	}
	if got.Title != "test chart" || got.Selected != "2024-01-02T00:00:00.000Z/2024-01-03T00:00:00.000Z" {
		t.Errorf("title %q, Enter selected %q", got.Title, got.Selected)
	}
}

// TestConsoleDatasourcesAsAnalyst: with security on, a user who may only
// read one datasource sees that one alone, no rule form, no mark or kill
// actions and no per-segment actions, and the views make no call the API
// refuses (the page fails on any console error, a logged 403 included).
func TestConsoleDatasourcesAsAnalyst(t *testing.T) {
	e := startConsole(t, consoleOpts{Security: true})
	e.ingestWiki(t, analystDatasource)
	e.ingestWiki(t, c3ViewDS) // one the analyst may not read
	p := e.browser(t, analystUser, analystPassword)

	c3OpenView(p, "/datasources", "datasources")
	if got := eval[[]string](p, `[...document.querySelectorAll('tr[data-key]')].map((tr) => tr.dataset.key)`); len(got) != 1 || got[0] != analystDatasource {
		t.Fatalf("the analyst's datasources list has %v, want only %s", got, analystDatasource)
	}
	if row := p.text(fmt.Sprintf(`tr[data-key=%q]`, analystDatasource)); !strings.Contains(row, "\t36\t") {
		t.Fatalf("the analyst's row says %q", row)
	}
	if eval[bool](p, `!!document.querySelector('a[href="#/datasources/_default"]')`) {
		t.Fatal("the analyst is offered the cluster's default rules")
	}

	c3OpenView(p, "/datasources/"+analystDatasource, "datasources")
	for _, sel := range []string{"#rule-add", "#rules-save", "#mark-unused", "#mark-all-unused", "#kill-start"} {
		if eval[bool](p, fmt.Sprintf(`!!document.querySelector(%q)`, sel)) {
			t.Errorf("the analyst is offered %s", sel)
		}
	}
	if eval[bool](p, `!!document.querySelector('a[href="#/datasources/_default"]')`) {
		t.Error("the analyst's datasource page links to the default rules, which it may not read")
	}
	if txt := p.text("#view"); !strings.Contains(txt, "You may read these rules but not change them") || !strings.Contains(txt, "36") {
		t.Fatalf("the analyst's datasource page says %q", txt)
	}
	p.screenshot("datasource-analyst")

	c3OpenView(p, "/segments?datasource="+analystDatasource, "segments")
	if got := eval[int](p, `document.querySelectorAll('#seg-table tbody tr[data-key]').length`); got != 3 {
		t.Fatalf("the analyst's segments table has %d rows", got)
	}
	if eval[int](p, `[...document.querySelectorAll('#seg-table tbody button')].length`) != 0 {
		t.Fatal("the analyst is offered per-segment actions")
	}
	if note := p.text("#view"); !strings.Contains(note, "not permitted") || !strings.Contains(note, "STATE READ") {
		t.Fatalf("the Loaded on column does not say it needs STATE READ: %q", note)
	}
	// Every datasource in the filter is one the analyst may read.
	if opts := eval[[]string](p, `[...document.querySelectorAll('#seg-ds option')].map((o) => o.value)`); len(opts) != 2 || opts[1] != analystDatasource {
		t.Fatalf("the datasource filter offers %v", opts)
	}
}
