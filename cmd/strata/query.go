package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The commands for people at a terminal: `strata query` and the listings
// (datasources, segments, tasks, supervisors). Each talks to one --url (the
// quickstart router by default) with the CLI's client (--cacert) and, on a
// cluster with basic auth, --user/--password or STRATA_USER/STRATA_PASSWORD.

// stdin is where `strata query` reads a query given neither as an argument
// nor with -f; tests replace it.
var stdin io.Reader = os.Stdin

// clusterOpts are the flags every people-facing command shares.
type clusterOpts struct {
	url, user, password, format *string
}

func clusterFlags(fs *flag.FlagSet) clusterOpts {
	cacertFlag(fs)
	return clusterOpts{
		url:      fs.String("url", "http://127.0.0.1:8888", "router (or broker, coordinator, overlord) URL"),
		user:     fs.String("user", "", "basic-auth user (default: $STRATA_USER)"),
		password: fs.String("password", "", "basic-auth password (default: $STRATA_PASSWORD)"),
		format:   fs.String("format", "table", "output: table, json or csv"),
	}
}

// check validates the options once the flags are parsed.
func (o clusterOpts) check() error {
	if *o.user == "" {
		*o.user = os.Getenv("STRATA_USER")
	}
	if *o.password == "" {
		*o.password = os.Getenv("STRATA_PASSWORD")
	}
	return checkFormat(*o.format)
}

// call sends one request and returns the status and body.
func (o clusterOpts) call(method, path string, body []byte) (int, []byte, error) {
	u := strings.TrimRight(*o.url, "/") + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, nil, usagef("--url: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if *o.user != "" || *o.password != "" {
		req.SetBasicAuth(*o.user, *o.password)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w (is the cluster up? strata quickstart)", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// credentialFlags adds --user and --password to a command that calls the
// cluster with the CLI's shared client (ingest, task); use applies them,
// or STRATA_USER and STRATA_PASSWORD, to every request it sends.
func credentialFlags(fs *flag.FlagSet) (use func()) {
	user := fs.String("user", "", "basic-auth user (default: $STRATA_USER)")
	password := fs.String("password", "", "basic-auth password (default: $STRATA_PASSWORD)")
	return func() {
		u, p := *user, *password
		if u == "" {
			u = os.Getenv("STRATA_USER")
		}
		if p == "" {
			p = os.Getenv("STRATA_PASSWORD")
		}
		if u == "" && p == "" {
			return
		}
		next := httpClient.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		httpClient = &http.Client{Timeout: httpClient.Timeout, Transport: basicAuth{u, p, next}}
	}
}

// basicAuth sends credentials with every request, redirects to the leader
// included.
type basicAuth struct {
	user, password string
	next           http.RoundTripper
}

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.password)
	return b.next.RoundTrip(r)
}

// get fetches a JSON answer, decoded with its key order kept.
func (o clusterOpts) get(path string) (any, error) {
	code, b, err := o.call(http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if code == http.StatusNoContent {
		return []any{}, nil
	}
	if code != http.StatusOK {
		return nil, httpFailure(code, b)
	}
	return decodeOrdered(b)
}

// httpFailure names a refused request by its status and the error the
// cluster gave.
func httpFailure(code int, body []byte) error {
	msg := strings.TrimSpace(string(body))
	var e struct {
		Error        string `json:"error"`
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &e) == nil {
		if e.ErrorMessage != "" {
			msg = e.ErrorMessage
		} else if e.Error != "" {
			msg = e.Error
		}
	}
	switch code {
	case http.StatusUnauthorized:
		msg += " (give --user and --password, or STRATA_USER and STRATA_PASSWORD)"
	case http.StatusForbidden:
		msg += " (the user lacks the permission)"
	}
	return fmt.Errorf("HTTP %d: %s", code, msg)
}

// parseInterleaved parses flags and positional arguments in any order (Go's
// flag package stops at the first word that is not a flag): the words, and
// nothing silently dropped.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlagsArgs(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

const querySynopsis = "query [--native] [-f FILE] [--url URL] [--format table|json|csv] [--context JSON] [--user U --password P] [SQL | -]"

// runQuery implements `strata query`: a SQL statement (or a native query
// with --native) from the argument, -f FILE or stdin, answered as a table
// with its row count and time.
func runQuery(args []string) error {
	fs := newFlagSet("query", querySynopsis)
	o := clusterFlags(fs)
	native := fs.Bool("native", false, "the query is native JSON (POST /svc/v2/), not SQL")
	file := fs.String("f", "", "read the query from FILE (- for stdin)")
	ctxJSON := fs.String("context", "", `query context as JSON, e.g. {"sqlTimeZone":"UTC"}`)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if len(pos) > 1 {
		return unexpectedArg(fs, pos[1]+` (quote the whole query: strata query "SELECT ...")`)
	}
	var src []byte
	switch {
	case len(pos) == 1 && *file != "":
		return usagef("query: give the query as an argument or with -f, not both")
	case len(pos) == 1 && pos[0] != "-":
		src = []byte(pos[0])
	case *file != "" && *file != "-":
		if src, err = os.ReadFile(*file); err != nil {
			return err
		}
	default:
		if f, ok := stdin.(*os.File); ok && len(pos) == 0 && *file == "" {
			// Waiting on a terminal for a query nobody knows to type reads as a hang.
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				fmt.Fprintln(stderr, "strata query: no query given (an argument, -f FILE or stdin)")
				fs.Usage()
				return usageError{msg: "no query given", printed: true}
			}
		}
		if src, err = io.ReadAll(stdin); err != nil {
			return err
		}
	}
	q := strings.TrimSpace(string(src))
	if q == "" {
		return usagef("query: no query given (an argument, -f FILE or stdin)")
	}
	var qctx map[string]any
	if *ctxJSON != "" {
		if err := json.Unmarshal([]byte(*ctxJSON), &qctx); err != nil {
			return usagef("--context: %v", err)
		}
	}
	start := time.Now()
	var t table
	if *native {
		t, err = nativeQuery(o, q, qctx)
	} else {
		t, err = sqlQuery(o, q, qctx)
	}
	if err != nil {
		return err
	}
	took := time.Since(start)
	if err := t.write(stdout, *o.format); err != nil {
		return err
	}
	// The count goes with the table; beside JSON or CSV it would spoil the
	// output for a program, so it goes to stderr there.
	w := stderr
	if *o.format == "table" {
		w = stdout
	}
	noun := "rows"
	if len(t.rows) == 1 {
		noun = "row"
	}
	fmt.Fprintf(w, "(%d %s in %.3fs)\n", len(t.rows), noun, took.Seconds())
	return nil
}

func sqlQuery(o clusterOpts, q string, qctx map[string]any) (table, error) {
	body := map[string]any{"query": q, "resultFormat": "array", "header": true}
	if qctx != nil {
		body["context"] = qctx
	}
	b, _ := json.Marshal(body)
	code, out, err := o.call(http.MethodPost, "/svc/v2/sql", b)
	if err != nil {
		return table{}, err
	}
	if code != http.StatusOK {
		return table{}, sqlFailure(q, code, out)
	}
	// The answer is a header row and then rows, all lists (resultFormat
	// array): anything else (a --url that is not Strata's) is named, not
	// read as a table.
	strange := fmt.Errorf("unexpected answer (not a SQL result of rows: is --url a Strata router or broker?): %.200s", out)
	v, err := decodeOrdered(out)
	rows, ok := v.([]any)
	if err != nil || !ok || len(rows) == 0 {
		return table{}, strange
	}
	header, ok := rows[0].([]any)
	if !ok {
		return table{}, strange
	}
	var t table
	for _, c := range header {
		t.cols = append(t.cols, cell(c))
	}
	for _, r := range rows[1:] {
		row, ok := r.([]any)
		if !ok || len(row) != len(header) {
			return table{}, strange
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

var sqlPosition = regexp.MustCompile(`\(line \[(\d+)\], column \[(\d+)\]\)`)

// sqlFailure is a SQL error with, when the message names a position, the
// statement's line and a mark under that column.
func sqlFailure(q string, code int, body []byte) error {
	err := httpFailure(code, body)
	m := sqlPosition.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	return fmt.Errorf("%v\n%s", err, underline(q, line, col))
}

// underline shows line l of q with a ^~~~ mark from column c (both counted
// from 1) to the end of the word there; tabs before it are kept, so the mark
// lines up.
func underline(q string, l, c int) string {
	lines := strings.Split(q, "\n")
	if l < 1 || l > len(lines) {
		return ""
	}
	text := []rune(strings.TrimRight(lines[l-1], "\r"))
	if c < 1 || c > len(text)+1 {
		return ""
	}
	var mark strings.Builder
	for _, r := range text[:c-1] {
		if r == '\t' {
			mark.WriteRune('\t')
		} else {
			mark.WriteRune(' ')
		}
	}
	mark.WriteRune('^')
	for i := c; i < len(text) && isWordRune(text[i]) && isWordRune(text[c-1]); i++ {
		mark.WriteRune('~')
	}
	return fmt.Sprintf("  %s\n  %s", string(text), mark.String())
}

func isWordRune(r rune) bool {
	return r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127
}

// nativeQuery runs a native query and lays its answer out as rows: the
// timeseries and topN results under their timestamp, groupBy events, scan
// events; any other answer a row per object.
func nativeQuery(o clusterOpts, q string, qctx map[string]any) (table, error) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(q), &doc); err != nil {
		return table{}, usagef("--native: the query is not a JSON object: %v", err)
	}
	if qctx != nil {
		c, _ := doc["context"].(map[string]any)
		if c == nil {
			c = map[string]any{}
		}
		for k, v := range qctx {
			c[k] = v
		}
		doc["context"] = c
	}
	b, _ := json.Marshal(doc)
	code, out, err := o.call(http.MethodPost, "/svc/v2/", b)
	if err != nil {
		return table{}, err
	}
	if code != http.StatusOK {
		return table{}, httpFailure(code, out)
	}
	v, err := decodeOrdered(out)
	if err != nil {
		return table{}, fmt.Errorf("unexpected answer: %v", err)
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	return tableOfObjects(nativeRows(list)), nil
}

// nativeRows flattens the shapes of Druid's native answers into one object
// per row.
func nativeRows(list []any) []any {
	var rows []any
	for _, item := range list {
		o, ok := item.(*ordered)
		if !ok {
			rows = append(rows, item)
			continue
		}
		ts, hasTS := o.vals["timestamp"]
		withTS := func(r *ordered) *ordered {
			if !hasTS {
				return r
			}
			out := &ordered{keys: append([]string{"timestamp"}, r.keys...), vals: map[string]any{"timestamp": ts}}
			for k, v := range r.vals {
				out.vals[k] = v
			}
			return out
		}
		switch {
		case o.vals["events"] != nil: // scan
			cols, _ := o.vals["columns"].([]any)
			events, _ := o.vals["events"].([]any)
			for _, e := range events {
				if arr, ok := e.([]any); ok { // compactedList
					r := &ordered{vals: map[string]any{}}
					for i, c := range cols {
						if i < len(arr) {
							r.keys = append(r.keys, cell(c))
							r.vals[cell(c)] = arr[i]
						}
					}
					e = r
				}
				rows = append(rows, e)
			}
		case o.vals["event"] != nil: // groupBy
			if e, ok := o.vals["event"].(*ordered); ok {
				rows = append(rows, withTS(e))
			}
		case o.vals["result"] != nil: // timeseries (an object), topN (a list)
			switch r := o.vals["result"].(type) {
			case *ordered:
				rows = append(rows, withTS(r))
			case []any:
				for _, e := range r {
					if eo, ok := e.(*ordered); ok {
						rows = append(rows, withTS(eo))
					} else {
						rows = append(rows, e)
					}
				}
			default:
				rows = append(rows, o)
			}
		default:
			rows = append(rows, o)
		}
	}
	return rows
}

// listing runs a command that prints one API list as a table.
func listing(name, synopsis string, args []string, nargs int, path func(pos []string) string, cols ...string) error {
	return listingOr(name, synopsis, args, nargs, path, nil, cols...)
}

// listingOr is listing with a check of an empty answer (ifEmpty), which
// may tell why it is empty or make it an error.
func listingOr(name, synopsis string, args []string, nargs int, path func(pos []string) string,
	ifEmpty func(o clusterOpts, pos []string) error, cols ...string) error {
	fs := newFlagSet(name, synopsis)
	o := clusterFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > nargs {
		return unexpectedArg(fs, pos[nargs])
	}
	if len(pos) < nargs {
		fmt.Fprintf(fs.Output(), "strata %s: missing argument\n", name)
		fs.Usage()
		return usageError{msg: "missing argument", printed: true}
	}
	if err := o.check(); err != nil {
		return err
	}
	v, err := o.get(path(pos))
	if err != nil {
		return err
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	if len(list) == 0 && ifEmpty != nil {
		if err := ifEmpty(o, pos); err != nil {
			return err
		}
	}
	t := tableOfObjects(list, cols...)
	if err := t.write(stdout, *o.format); err != nil {
		return err
	}
	if *o.format == "table" {
		fmt.Fprintf(stdout, "(%d)\n", len(t.rows))
	}
	return nil
}

func runDataSources(args []string) error {
	return listing("datasources", "datasources [--url URL] [--format table|json|csv] [--user U --password P]", args, 0,
		func([]string) string { return "/svc/coordinator/v1/datasources?simple" },
		"name", "properties.segments.count", "properties.segments.size", "properties.segments.minTime", "properties.segments.maxTime")
}

func runSegments(args []string) error {
	return listingOr("segments", "segments DATASOURCE [--url URL] [--format table|json|csv] [--user U --password P]", args, 1,
		func(pos []string) string {
			return "/svc/coordinator/v1/datasources/" + url.PathEscape(pos[0]) + "/segments?full"
		},
		dataSourceExists,
		"interval", "version", "shardSpec.partitionNum", "size", "identifier")
}

// dataSourceExists explains an empty segment list: the coordinator answers
// a datasource it has never heard of as it answers one without used
// segments (204, as Druid's does). A name no segment ever had is an error
// naming the nearest datasource, or the datasources there are; one whose
// segments are all unused gets a note.
func dataSourceExists(o clusterOpts, pos []string) error {
	ds := pos[0]
	v, err := o.get("/svc/coordinator/v1/metadata/datasources?includeUnused")
	if err != nil {
		return err
	}
	list, _ := v.([]any)
	var names []string
	for _, n := range list {
		if s, ok := n.(string); ok {
			names = append(names, s)
		}
	}
	if slices.Contains(names, ds) {
		fmt.Fprintf(stderr, "strata segments: datasource %q has no used segments (all are marked unused)\n", ds)
		return nil
	}
	msg := fmt.Sprintf("datasource %q does not exist", ds)
	switch near := nearestName(ds, names); {
	case near != "":
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	case len(names) == 0:
		msg += "; there are no datasources yet"
	case len(names) <= 20:
		msg += "; the datasources are: " + strings.Join(names, ", ")
	default:
		msg += fmt.Sprintf("; there are %d datasources (strata datasources lists them)", len(names))
	}
	return errors.New(msg)
}

// nearestName is the name closest to word, as nearest but with case
// ignored (WIKI finds wiki).
func nearestName(word string, names []string) string {
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(n)
	}
	near := nearest(strings.ToLower(word), lower)
	if i := slices.Index(lower, near); near != "" && i >= 0 {
		return names[i]
	}
	return ""
}

func runTasks(args []string) error {
	return listing("tasks", "tasks [--url URL] [--format table|json|csv] [--user U --password P]", args, 0,
		func([]string) string { return "/svc/indexer/v1/tasks" },
		"id", "type", "dataSource", "statusCode", "runnerStatusCode", "createdTime", "duration")
}

func runSupervisors(args []string) error {
	return listing("supervisors", "supervisors [--url URL] [--format table|json|csv] [--user U --password P]", args, 0,
		func([]string) string { return "/svc/indexer/v1/supervisor?state=true" },
		"id", "state", "detailedState", "healthy", "suspended")
}
