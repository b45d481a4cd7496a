// Command bench-console measures the web console against a real quickstart,
// as the issue asks ("every view interactive in under 1 s on the
// quickstart"): it starts `strata quickstart` on a fresh data directory,
// loads the README's sample data with `strata ingest --sql`, then opens each
// of the seven views in headless Chromium several times and prints, per
// view, the median and maximum time from the start of the navigation to the
// view's `data-ready="true"` (its first data rendered), with the API calls
// of the slowest view; and the bytes of the first load.
//
// The browser's cache is off, so every load fetches the page, its modules
// and the view's API answers again: the figures are a first visit's, not a
// warm one's. The quickstart's ports are fixed, so the run holds
// /tmp/quickstart.lock (as the conformance runs do with flock).
//
//	make bench-console            # or: go run ./cmd/bench-console --bin bin/strata
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

const router = "http://127.0.0.1:8888"

// The seven views of the issue, in the nav's order.
var views = []string{"home", "services", "datasources", "segments", "ingestion", "query", "config"}

func main() {
	bin := flag.String("bin", "bin/strata", "the strata binary")
	runs := flag.Int("runs", 7, "loads of each view")
	shots := flag.String("screenshots", "", "if set, save a 1280×800 screenshot of each view in this directory")
	pages := flag.String("pages", "", "with --screenshots: more pages to capture, comma-separated hashes (e.g. datasources/wiki,config/overlord)")
	chromium := flag.String("chromium", "", "Chromium's path (default: chromium on PATH, or $STRATA_CHROMIUM)")
	flag.Parse()
	if err := run(*bin, *runs, *shots, *pages, *chromium); err != nil {
		fmt.Fprintln(os.Stderr, "bench-console:", err)
		os.Exit(1)
	}
}

func run(bin string, runs int, shots, pages, chromium string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if chromium == "" {
		chromium = os.Getenv("STRATA_CHROMIUM")
	}
	if chromium == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				chromium = p
				break
			}
		}
	}
	if chromium == "" {
		return fmt.Errorf("no Chromium found (install Debian's chromium package, or pass --chromium)")
	}
	unlock, err := lockQuickstart()
	if err != nil {
		return err
	}
	defer unlock()
	dir, err := os.MkdirTemp("", "bench-console-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stop, err := startQuickstart(bin, dir)
	if err != nil {
		return err
	}
	defer stop()
	if err := loadWiki(bin, dir); err != nil {
		return err
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.WindowSize(1280, 800),
		chromedp.NoSandbox, // root in a container has no user namespace for the sandbox
		chromedp.Flag("disable-gpu", true),
	)
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer stopAlloc()
	ctx, stopBrowser := chromedp.NewContext(alloc)
	defer stopBrowser()
	if err := chromedp.Do(ctx); err != nil {
		return fmt.Errorf("starting Chromium: %w", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return err
	}

	// The first load: the page, its style and modules, the home view and
	// its API answers, compressed as sent.
	first, err := load(ctx, "home")
	if err != nil {
		return err
	}
	fmt.Printf("first load (#/home, cache off): %d requests, %.1f KB compressed (console files %.1f KB in %d, API answers %.1f KB in %d)\n",
		len(first.resources), float64(first.assetBytes+first.apiBytes)/1024, float64(first.assetBytes)/1024, first.assets,
		float64(first.apiBytes)/1024, first.apis)

	fmt.Printf("\n%-12s %9s %9s %9s   (ms from navigation to data-ready, %d loads each, cache off)\n", "view", "median", "max", "min", runs)
	var slowest result
	var slowestView string
	over := false
	for _, v := range views {
		var ms []float64
		for range runs {
			r, err := load(ctx, v)
			if err != nil {
				return fmt.Errorf("%s: %w", v, err)
			}
			ms = append(ms, r.readyMs)
			if r.readyMs > slowest.readyMs {
				slowest, slowestView = r, v
			}
		}
		slices.Sort(ms)
		med, max := ms[len(ms)/2], ms[len(ms)-1]
		mark := ""
		if max >= 1000 {
			mark, over = "  over 1 s", true
		}
		fmt.Printf("%-12s %9.0f %9.0f %9.0f%s\n", v, med, max, ms[0], mark)
		if shots != "" {
			if err := screenshot(ctx, v, shots); err != nil {
				return err
			}
		}
	}
	fmt.Printf("\nslowest load: #/%s, %.0f ms; its API calls (ms from navigation: start–end):\n", slowestView, slowest.readyMs)
	for _, r := range slowest.resources {
		if strings.Contains(r.Name, "/svc/") || strings.HasSuffix(r.Name, "/status") {
			fmt.Printf("  %5.0f–%5.0f  %s\n", r.Start, r.End, strings.TrimPrefix(r.Name, router))
		}
	}
	if over {
		fmt.Println("\nsome view took 1 s or more")
	}
	if shots != "" && pages != "" {
		for _, pg := range strings.Split(pages, ",") {
			if err := screenshot(ctx, pg, shots); err != nil {
				return fmt.Errorf("%s: %w", pg, err)
			}
		}
	}
	if shots != "" {
		fmt.Printf("\nscreenshots in %s\n", shots)
	}
	return nil
}

// resource is one entry of the page's resource timing.
type resource struct {
	Name       string  `json:"name"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Compressed float64 `json:"bytes"`
}

type result struct {
	readyMs      float64
	resources    []resource
	assets, apis int
	assetBytes   int64
	apiBytes     int64
}

// readyJS resolves, in the page, with the time from the navigation's start
// (performance.now()'s origin) to the view root's data-ready, and the page's
// resources, the document's own bytes first.
const readyJS = `new Promise((resolve) => {
  const done = () => {
    const t = performance.now();
    const nav = performance.getEntriesByType('navigation')[0];
    const res = [{name: location.href, start: 0, end: nav ? nav.responseEnd : 0, bytes: nav ? nav.encodedBodySize : 0}]
      .concat(performance.getEntriesByType('resource').map((r) => ({name: r.name, start: r.startTime, end: r.responseEnd, bytes: r.encodedBodySize})));
    resolve({ms: t, res});
  };
  const ready = () => document.querySelector('#view[data-ready="true"]');
  if (ready()) return done();
  const obs = new MutationObserver(() => { if (ready()) { obs.disconnect(); done(); } });
  obs.observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready']});
})`

// load opens the console at #/view as a new page (not a hash change, so
// every file and call is fetched again) and times it.
func load(ctx context.Context, view string) (result, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		return result{}, err
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(router+"/#/"+view)); err != nil {
		return result{}, err
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := chromedp.Run(tctx, chromedp.Evaluate[struct {
		Ms  float64    `json:"ms"`
		Res []resource `json:"res"`
	}](readyJS, chromedp.EvalAwaitPromise))
	if err != nil {
		return result{}, fmt.Errorf("waiting for data-ready: %w", err)
	}
	r := result{readyMs: out.Ms, resources: out.Res}
	for _, x := range out.Res {
		if strings.Contains(x.Name, "/svc/") || strings.HasSuffix(x.Name, "/status") {
			r.apis++
			r.apiBytes += int64(x.Compressed)
		} else {
			r.assets++
			r.assetBytes += int64(x.Compressed)
		}
	}
	return r, nil
}

func screenshot(ctx context.Context, view, dir string) error {
	if _, err := load(ctx, view); err != nil {
		return err
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := strings.NewReplacer("/", "_", "?", "_", "=", "_", "&", "_").Replace(view)
	return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
}

// lockQuickstart holds /tmp/quickstart.lock: the quickstart's ports are
// fixed, so a conformance run or a test's quickstart must wait.
func lockQuickstart() (func(), error) {
	f, err := os.OpenFile("/tmp/quickstart.lock", os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// startQuickstart runs `strata quickstart` on dir, from the repository's
// root (where the README runs it, so examples/ may be read), until ready.
func startQuickstart(bin, dir string) (func(), error) {
	logf, err := os.Create(filepath.Join(dir, "quickstart.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "quickstart", "--data", filepath.Join(dir, "var"), "--set", "svc.log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		logf.Close()
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(router + "/status/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return stop, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	return nil, fmt.Errorf("the quickstart was not healthy within a minute (log: %s)", logf.Name())
}

// loadWiki ingests examples/wiki.json with the README's SQL and command.
func loadWiki(bin, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	sql := `INSERT INTO wiki
SELECT TIME_PARSE("timestamp") AS __time, page, "user", added, deleted
FROM TABLE(EXTERN('{"type":"local","files":["` + filepath.Join(wd, "examples", "wiki.json") + `"]}', '{"type":"json"}',
  '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"added","type":"long"},{"name":"deleted","type":"long"}]'))
PARTITIONED BY DAY
`
	f := filepath.Join(dir, "wiki.sql")
	if err := os.WriteFile(f, []byte(sql), 0o644); err != nil {
		return err
	}
	out, err := exec.Command(bin, "ingest", "--sql", f).CombinedOutput()
	if err != nil {
		return fmt.Errorf("strata ingest --sql: %w\n%s", err, out)
	}
	return nil
}
