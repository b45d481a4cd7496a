package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// navLinks lists the nav's view ids, in order.
func navLinks(p *page) []string {
	return eval[[]string](p, `[...document.querySelectorAll('#nav a')].map(a => a.dataset.view)`)
}

// TestLoginWithSecurity: with security on the console asks for a login
// (the API's 401), refuses a wrong password in the dialog, logs the admin
// in, shows who is logged in, and logs out back to the dialog.
func TestLoginWithSecurity(t *testing.T) {
	e := startConsole(t, consoleOpts{Security: true})
	p := e.browser(t, "", "")
	p.do(chromedp.Navigate(e.url + "/#/home"))
	p.waitVisible("#login-user")
	p.screenshot("login")
	p.typeText("#login-user", adminUser)
	p.typeText("#login-password", "not-the-password")
	p.click("#login-submit")
	p.waitVisible("#login-error")
	if msg := p.text("#login-error"); !strings.Contains(msg, "not accepted") {
		t.Errorf("wrong password: %q", msg)
	}
	eval[any](p, `document.getElementById('login-password').value = ''`)
	p.typeText("#login-password", adminPassword)
	p.click("#login-submit")
	p.waitReady()
	if who := p.text("#who-user"); who != adminUser {
		t.Errorf("logged in as %q, want %s", who, adminUser)
	}
	if got := navLinks(p); strings.Join(got, ",") != "home,services,datasources,segments,ingestion,query,config" {
		t.Errorf("admin's nav %v", got)
	}
	if stored := eval[string](p, `sessionStorage.getItem('strata.auth') || ''`); stored == "" {
		t.Error("the credentials are not in sessionStorage")
	}
	p.click("#logout")
	p.waitVisible("#login-user")
	if stored := eval[string](p, `sessionStorage.getItem('strata.auth') || ''`); stored != "" {
		t.Errorf("after logout sessionStorage holds %q", stored)
	}
}

// TestAnalystSeesOnlyItsDatasource: a user allowed to READ one datasource
// sees that one and not another, no Services or Config in the nav (it has
// no STATE or CONFIG READ), and a plain Forbidden when it opens Config by
// its address.
func TestAnalystSeesOnlyItsDatasource(t *testing.T) {
	e := startConsole(t, consoleOpts{Security: true})
	e.ingestWiki(t, analystDatasource)
	e.ingestWiki(t, "payroll")
	p := e.browser(t, analystUser, analystPassword)
	p.open("/home")
	if got := strings.Join(navLinks(p), ","); got != "home,datasources,segments,ingestion,query" {
		t.Errorf("analyst's nav %s, want no services and no config", got)
	}
	ds := p.text("#datasource-list")
	if !strings.Contains(ds, analystDatasource) || strings.Contains(ds, "payroll") || !strings.Contains(ds, "100% available") {
		t.Errorf("analyst's datasources %q: want %s (100%% available) only", ds, analystDatasource)
	}
	if n := eval[int](p, `document.querySelectorAll('#control-nodes').length`); n != 0 {
		t.Error("the analyst sees the cluster's processes without STATE READ")
	}
	p.screenshot("analyst-home")
	p.open("/config")
	if msg := p.text("#view .error-box"); !strings.HasPrefix(msg, "Forbidden: ") {
		t.Errorf("config for the analyst: %q, want Forbidden", msg)
	}
	// A 403 that happens anyway is shown plainly, naming what is missing.
	p.allowConsole("status of 403")
	shown := eval[string](p, `(async () => {
		const [{ get }, { errorBox, missingPermission }] = await Promise.all([import('/console/lib/api.js'), import('/console/lib/ui.js')]);
		try { await get('/svc/coordinator/v1/config'); return 'no error'; } catch (e) { return errorBox(e).textContent + ' | ' + missingPermission(e); }
	})()`)
	if shown != "Forbidden: Unauthorized | READ on CONFIG:CONFIG" {
		t.Errorf("the analyst's 403 reads %q", shown)
	}
	// The admin, by contrast, sees both datasources.
	a := e.browser(t, adminUser, adminPassword)
	a.open("/home")
	if ds := a.text("#datasource-list"); !strings.Contains(ds, "payroll") || !strings.Contains(ds, analystDatasource) {
		t.Errorf("admin's datasources %q", ds)
	}
}

// TestHomeAndServices: the home view shows the real cluster (its control
// node as leader, the five processes by role, the datasource loaded
// in full) and the services view lists every process with its role,
// leader mark, a historical's size and a middle manager's task slots;
// neither logs a console error.
func TestHomeAndServices(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	e.ingestWiki(t, "wiki")
	p := e.browser(t, "", "")
	p.open("/home")
	if got := navLinks(p); strings.Join(got, ",") != "home,services,datasources,segments,ingestion,query,config" {
		t.Errorf("nav %v: security off shows every view", got)
	}
	control := p.text("#control-nodes")
	if !strings.Contains(control, strings.TrimPrefix(e.control, "http://")) || !strings.Contains(control, "coordinator and overlord leader") {
		t.Errorf("control nodes %q: want %s marked leader", control, e.control)
	}
	roles := p.text("#roles")
	for _, r := range []string{"broker", "coordinator", "historical", "middleManager", "overlord", "router"} {
		if !strings.Contains(roles, r+"\n1 live") && !strings.Contains(roles, r+"\t1 live") && !strings.Contains(roles, r+" 1 live") {
			t.Errorf("processes by role %q: want %s with 1 live", roles, r)
		}
	}
	if ds := p.text("#datasource-list"); !strings.Contains(ds, "wiki") || !strings.Contains(ds, "100% available") {
		t.Errorf("datasources %q: want wiki 100%% available", ds)
	}
	p.screenshot("home")
	// The card's link leads to the view, as a user would go.
	p.click(`a.more[href="#/services"]`)
	// The click changes the hash; the router replaces the view when the
	// hashchange event comes, so until then the home view (ready) is still
	// the page's: wait for the services view itself.
	p.waitVisible(`section#view[data-view="services"][data-ready="true"]`)
	rows := eval[[]string](p, `[...document.querySelectorAll('#view table.data tbody tr')].map(r => r.innerText)`)
	if len(rows) != 5 {
		t.Fatalf("services: %d rows %q, want the 5 processes", len(rows), rows)
	}
	all := strings.Join(rows, "\n")
	for _, want := range []string{"coordinator and overlord leader", "historical", "broker", "middleManager", "router", "0 / 4 slots", "300000000000", "live"} {
		if want == "300000000000" {
			want = "279.4 GB" // the historical's max size, 300 GB in bytes, as shown
		}
		if !strings.Contains(all, want) {
			t.Errorf("services rows %q lack %q", all, want)
		}
	}
	if summary := p.text("#services-summary"); !strings.Contains(summary, "5 processes, 5 live") {
		t.Errorf("summary %q", summary)
	}
	// Sorting by a header button, from the keyboard: Enter on the focused
	// button sorts and says so in aria-sort.
	p.do(chromedp.Focus(chromedp.CSS(`#view th:nth-child(1) button`)), chromedp.KeyEvent("\r"))
	if sort := eval[string](p, `document.querySelector('#view th:nth-child(1)').getAttribute('aria-sort')`); sort != "ascending" {
		t.Errorf("aria-sort %q after Enter on the Host header, want ascending", sort)
	}
	p.screenshot("services")
}

// TestNarrowWindow: at 420 px the nav folds into a menu button that opens
// from the keyboard, and its links lead to the views.
func TestNarrowWindow(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	p := e.browser(t, "", "")
	p.viewport(420, 800)
	p.open("/home")
	if vis := eval[bool](p, `getComputedStyle(document.getElementById('nav')).display !== 'none'`); vis {
		t.Error("the nav is spread out at 420 px, want it folded behind the menu button")
	}
	p.do(chromedp.Focus(chromedp.CSS("#nav-toggle")), chromedp.KeyEvent("\r"))
	p.waitVisible(`#nav a[data-view="services"]`)
	if exp := eval[string](p, `document.getElementById('nav-toggle').getAttribute('aria-expanded')`); exp != "true" {
		t.Errorf("aria-expanded %q after opening the menu", exp)
	}
	if w := eval[int](p, `document.documentElement.scrollWidth`); w > 420 {
		t.Errorf("the page is %d px wide at 420 px: it scrolls sideways", w)
	}
	p.screenshot("narrow-menu")
	p.click(`#nav a[data-view="services"]`)
	p.waitVisible(`section#view[data-view="services"][data-ready="true"]`) // not the previous view, still ready until hashchange
	if v := eval[string](p, `document.getElementById('view').dataset.view`); v != "services" {
		t.Errorf("view %q after choosing Services", v)
	}
	if vis := eval[bool](p, `getComputedStyle(document.getElementById('nav')).display !== 'none'`); vis {
		t.Error("the menu stays open after a choice")
	}
	p.screenshot("narrow-services")
	// The skip link, first in the tab order, moves the focus to the view
	// and leaves the address (the router's) alone.
	p.do(chromedp.Focus(chromedp.CSS("a.skip")), chromedp.KeyEvent("\r"))
	if got := eval[string](p, `location.hash + ' ' + document.activeElement.id`); got != "#/services view" {
		t.Errorf("after the skip link: %q, want #/services with the view focused", got)
	}
}
