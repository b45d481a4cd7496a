package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"strata/escalator"
	"strata/granularity"
	"strata/ingest"
	"strata/interval"
	"strata/props"
	"strata/storage/segment"
)

// runSegment implements `strata segment build`: NDJSON → segments in deep
// storage → one atomic publish through the control plane.
func runSegment(args []string) error {
	const synopsis = "segment build --datasource D --input FILE.json[,FILE...] [--timestamp-column C] [flags]"
	if len(args) > 0 && isHelp(args[0]) {
		return verbHelp("segment", synopsis)
	}
	if len(args) == 0 {
		return usagef("usage: strata %s", synopsis)
	}
	if args[0] != "build" {
		return unknownVerb("segment", args[0], "build")
	}
	fs := newFlagSet("segment build", synopsis)
	cacertFlag(fs)
	ds := fs.String("datasource", "", "datasource name (required)")
	input := fs.String("input", "", "newline-delimited JSON file(s), comma-separated (required)")
	tsCol := fs.String("timestamp-column", "timestamp", "column holding the row time")
	tsFormat := fs.String("timestamp-format", "auto", "auto, iso, millis, posix, micro, nano or a Joda pattern")
	segGran := fs.String("segment-granularity", "DAY", "time chunk of each segment")
	queryGran := fs.String("query-granularity", "NONE", "timestamp truncation before rollup")
	rollup := fs.Bool("rollup", false, "roll rows up: numbers become sum metrics, plus a count metric")
	dimList := fs.String("dimensions", "", "comma-separated dimensions (default: every field, types inferred)")
	metricsJSON := fs.String("metrics", "", `metricsSpec as a JSON array, e.g. [{"type":"count","name":"count"}]`)
	rowsPer := fs.Int("rows-per-segment", 5_000_000, "maximum rows per segment (partitions split at this size)")
	maxBad := fs.Int64("max-parse-exceptions", 0, "unparseable rows to skip before failing")
	coordinator := fs.String("coordinator", "http://127.0.0.1:8081", "a control node's URL to publish through (the publish is an internal call: routers do not forward it)")
	config := fs.String("config", "", "runtime.properties with svc.storage.* settings (default: ask the coordinator)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *ds == "" || *input == "" {
		return usagef("--datasource and --input are required")
	}
	sg, err := granularity.FromName(*segGran)
	if err != nil {
		return fmt.Errorf("--segment-granularity: %w", err)
	}
	qg, err := granularity.FromName(*queryGran)
	if err != nil {
		return fmt.Errorf("--query-granularity: %w", err)
	}
	parseTime, err := interval.ParseTimestampFormat(*tsFormat)
	if err != nil {
		return fmt.Errorf("--timestamp-format: %w", err)
	}
	storageProps, err := storageSettings(*coordinator, *config)
	if err != nil {
		return err
	}
	uploader, err := newUploader(storageProps)
	if err != nil {
		return err
	}

	files := props.ParseList(*input)
	var total int64
	for _, name := range files {
		st, err := os.Stat(name)
		if err != nil {
			return err
		}
		total += st.Size()
	}
	f, err := os.Open(files[0])
	if err != nil {
		return err
	}
	schema, err := ingest.InferSchema(f, 10000, *tsCol)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	spec := ingest.Spec{DataSource: *ds, Fields: schema.Fields, SegmentGranularity: sg, QueryGranularity: qg,
		Rollup: *rollup, RowsPerSegment: *rowsPer, Version: interval.FormatMillis(time.Now().UnixMilli())}
	if err := chooseColumns(&spec, schema, *dimList, *metricsJSON); err != nil {
		return err
	}
	b, err := ingest.NewBuilder(spec)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	bar := newProgress(total, start)
	var stats ingest.ReadStats
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			b.Abort()
			return err
		}
		done := stats
		rd := &ingest.Reader{TimestampColumn: *tsCol, ParseTime: parseTime, Fields: schema.Fields, MaxParseErrors: *maxBad - done.Skipped,
			Progress: func(rows, read int64) { bar.update(done.Rows+rows, done.Bytes+read) }}
		st, err := rd.Read(ctx, f, b.Add)
		f.Close()
		stats.Rows, stats.Skipped, stats.Bytes = stats.Rows+st.Rows, stats.Skipped+st.Skipped, stats.Bytes+st.Bytes
		if stats.FirstError == "" && st.FirstError != "" {
			stats.FirstError = name + ": " + st.FirstError
		}
		if err != nil {
			bar.done(stats.Rows, false)
			b.Abort()
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	bar.done(stats.Rows, true)
	fmt.Fprintf(stderr, "writing and uploading segments...\n")
	segs, err := b.Finish(ctx, uploader)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return errors.New("no rows: nothing to publish")
	}
	// Publishing is an internal endpoint: a cluster with internal credentials
	// needs them in --config.
	cl := &ingest.Cluster{Coordinators: []string{strings.TrimRight(*coordinator, "/")}, HTTP: escalator.FromProps(storageProps).Client(&http.Client{Transport: httpClient.Transport})}
	n, err := cl.PublishCount(ctx, *ds, segs)
	if err != nil {
		return err
	}
	var bytesOut int64
	for _, s := range segs {
		bytesOut += s.Size
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "published %d segments (%d new) of %s: %d rows in %.1fs (%.0f rows/s), %d bytes on disk, %d rows skipped\n",
		len(segs), n, *ds, stats.Rows, el.Seconds(), float64(stats.Rows)/el.Seconds(), bytesOut, stats.Skipped)
	if stats.FirstError != "" {
		fmt.Fprintf(stdout, "first skipped row: %s\n", stats.FirstError)
	}
	return nil
}

func chooseColumns(spec *ingest.Spec, schema ingest.Schema, dimList, metricsJSON string) error {
	byName := map[string]segment.Dimension{}
	for _, d := range schema.Dimensions {
		byName[d.Name] = d
	}
	if metricsJSON != "" {
		if err := json.Unmarshal([]byte(metricsJSON), &spec.Metrics); err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
	}
	metricInput := map[string]bool{}
	for _, m := range spec.Metrics {
		metricInput[m.FieldName] = true
	}
	if dimList != "" {
		for _, name := range props.ParseList(dimList) {
			d, ok := byName[name]
			if !ok {
				d = segment.Dimension{Name: name, Kind: segment.KindString}
			}
			spec.Dimensions = append(spec.Dimensions, d)
		}
	} else {
		for _, d := range schema.Dimensions {
			if spec.Rollup && d.Kind.Numeric() && metricsJSON == "" {
				typ := "longSum"
				if d.Kind != segment.KindLong {
					typ = "doubleSum"
				}
				spec.Metrics = append(spec.Metrics, segment.Metric{Type: typ, Name: d.Name, FieldName: d.Name})
				continue
			}
			if !metricInput[d.Name] {
				spec.Dimensions = append(spec.Dimensions, d)
			}
		}
	}
	if spec.Rollup && metricsJSON == "" {
		spec.Metrics = append([]segment.Metric{{Type: "count", Name: "count"}}, spec.Metrics...)
	}
	return nil
}

// storageSettings layers the coordinator's svc.storage.* properties under a
// local --config file, so a tool run on a cluster host writes where the cluster
// reads.
func storageSettings(coordinator, config string) (*props.Properties, error) {
	p := props.Defaults()
	resp, err := httpClient.Get(strings.TrimRight(coordinator, "/") + "/status/properties")
	if err == nil {
		var m map[string]string
		if resp.StatusCode == 200 && json.NewDecoder(resp.Body).Decode(&m) == nil {
			for k, v := range m {
				if strings.HasPrefix(k, "svc.storage.") || strings.HasPrefix(k, "svc.s3.") || k == "svc.data.dir" {
					p.Set(k, v)
				}
			}
		}
		resp.Body.Close()
	} else if config == "" {
		return nil, fmt.Errorf("cannot reach the coordinator at %s (%v): start it (strata quickstart) or pass --coordinator", coordinator, err)
	}
	if config != "" {
		f, err := props.Load(config)
		if err != nil {
			return nil, err
		}
		p.Merge(f)
	}
	return p, nil
}

// progress prints a one-line bar on stderr at most twice a second.
type progress struct {
	total int64
	start time.Time
	last  time.Time
	shown bool
}

func newProgress(total int64, start time.Time) *progress {
	return &progress{total: total, start: start}
}

func (p *progress) update(rows, bytesRead int64) {
	if time.Since(p.last) < 500*time.Millisecond {
		return
	}
	p.last = time.Now()
	pct := 0.0
	if p.total > 0 {
		pct = 100 * float64(bytesRead) / float64(p.total)
	}
	p.render(rows, pct)
}

func (p *progress) render(rows int64, pct float64) {
	pct = min(pct, 100) // a last line without its newline counts one byte more
	width := 30
	fill := int(pct / 100 * float64(width))
	el := time.Since(p.start).Seconds()
	fmt.Fprintf(stderr, "\r[%s%s] %5.1f%%  %d rows  %.0f rows/s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, rows, float64(rows)/el)
	p.shown = true
}

// done ends the bar. After a complete read it shows the final count at 100%:
// updates are throttled, so the last one seen may be well short of the end.
func (p *progress) done(rows int64, complete bool) {
	if complete {
		p.render(rows, 100)
	}
	if p.shown {
		fmt.Fprintln(stderr)
	}
}

func newUploader(p *props.Properties) (ingest.Uploader, error) {
	ds, err := ingest.DeepStorageFromProps(p)
	if err != nil {
		return nil, fmt.Errorf("deep storage: %w", err)
	}
	return ingest.DeepUploader{Storage: ds}, nil
}
