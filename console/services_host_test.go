package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestServicesByAnotherHostName: a user who opens the console by another
// name of the router (localhost rather than the 127.0.0.1 it announces)
// sees each process once. The Services view adds the router answering the
// page only when the cluster lists no router (static lists, no discovery):
// it added it by the page's host, so the router was listed twice, once as
// localhost.
func TestServicesByAnotherHostName(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	p := e.browser(t, "", "")
	byName := strings.Replace(e.url, "127.0.0.1", "localhost", 1)
	if byName == e.url {
		t.Fatalf("router URL %s: want one on 127.0.0.1", e.url)
	}
	p.do(chromedp.Navigate(byName + "/#/services"))
	p.waitVisible(`section#view[data-view="services"][data-ready="true"]`)
	rows := eval[[]string](p, `[...document.querySelectorAll('#view table.data tbody tr')].map(r => r.innerText)`)
	routers := 0
	for _, r := range rows {
		if strings.Contains(r, "router") {
			routers++
		}
	}
	if len(rows) != 5 || routers != 1 {
		t.Errorf("services at %s: %d rows, %d routers %q; want the 5 processes, one router", byName, len(rows), routers, rows)
	}
	p.screenshot("services-localhost")
}
