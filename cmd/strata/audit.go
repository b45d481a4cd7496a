package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"strata/audit"
	"strata/cluster"
	"strata/ingest"
	"strata/props"
	"strata/storage/deep"
)

// auditVerbs are the verbs of `strata audit`; a verb defined elsewhere
// registers itself here (audit log: auditlog.go).
var auditVerbs = map[string]func(args []string) error{
	"state":  runAuditState,
	"diff":   runAuditDiff,
	"verify": runAuditVerify,
}

const auditSynopsis = "audit state|diff|verify|log [--url URL | --data DIR] ..."

// runAudit implements `strata audit VERB`: the control plane's past, asked
// of a running cluster (--url) or read from a stopped node's data directory
// (--data).
func runAudit(args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		return verbHelp("audit", auditSynopsis)
	}
	if len(args) == 0 {
		return usagef("usage: strata %s", auditSynopsis)
	}
	fn, ok := auditVerbs[args[0]]
	if !ok {
		names := slices.Sorted(mapKeys(auditVerbs))
		return usagef("strata audit: unknown verb %q%s (want %s)", args[0], didYouMean(args[0], names...), strings.Join(names, ", "))
	}
	return fn(args[1:])
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// source is where an audit verb reads history: a control node's API or a
// stopped node's data directory.
type source struct {
	url, data string
}

func (s *source) flags(fs interface {
	String(name, value, usage string) *string
}) func() error {
	u := fs.String("url", "", "a control node's (or the router's) URL: ask the running cluster")
	d := fs.String("data", "", "data directory of a stopped node: read its archive, log and snapshots")
	cfg := configFlag(fs)
	return func() error {
		archiveConfig = *cfg
		s.url, s.data = strings.TrimRight(*u, "/"), *d
		switch {
		case s.url != "" && s.data != "":
			return usagef("give --url or --data, not both")
		case s.url == "" && s.data == "":
			s.url = "http://127.0.0.1:8888"
		}
		return nil
	}
}

// archiveConfig is --config: the runtime.properties whose deep storage
// settings (svc.storage.*, svc.s3.*) hold a stopped node's archive when it
// is in S3.
var archiveConfig string

func configFlag(fs interface {
	String(name, value, usage string) *string
}) *string {
	return fs.String("config", "", "with --data: runtime.properties of the node, for an audit archive in S3 deep storage")
}

// openHistory opens a stopped node's history (its archive in S3 through
// --config's deep storage settings).
func openHistory(data string) (*audit.History, func() error, error) {
	if err := cluster.CheckStore(data); err != nil {
		return nil, nil, err
	}
	h, closeFn, err := audit.OpenDir(data)
	if err != nil || archiveConfig == "" || h.Archive == nil {
		return h, closeFn, err
	}
	p, err := props.Load(archiveConfig)
	if err == nil {
		var ds deep.DeepStorage
		if ds, err = ingest.DeepStorageFromProps(p); err == nil {
			h.Archive.InDeepStorage(ds, "")
			return h, closeFn, nil
		}
	}
	closeFn()
	return nil, nil, fmt.Errorf("--config %s: %w", archiveConfig, err)
}

// getAudit GETs an audit endpoint and decodes its answer; a JSON error
// answer becomes the error it says.
func getAudit(base, path string, q url.Values, v any) error {
	u := base + "/svc/coordinator/v1/audit/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	code, body, err := httpGet(u)
	if err != nil {
		return err
	}
	if code != 200 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %s", u, e.Error)
		}
		return fmt.Errorf("%s: HTTP %d %s", u, code, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, v)
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// runAuditState implements `strata audit state --at A`.
func runAuditState(args []string) error {
	fs := newFlagSet("audit state", "audit state --at INDEX|TIME [--datasource DS] [--url URL | --data DIR]")
	cacertFlag(fs)
	var src source
	done := src.flags(fs)
	at := fs.String("at", "", "the moment: a Raft index or an ISO-8601 time")
	ds := fs.String("datasource", "", "only this datasource's segments, tasks, locks, rules and supervisors")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := done(); err != nil {
		return err
	}
	if *at == "" || fs.NArg() > 0 {
		return usagef("usage: strata audit state --at INDEX|TIME [--url URL | --data DIR]")
	}
	if src.url != "" {
		q := url.Values{"at": {*at}}
		if *ds != "" {
			q.Set("dataSource", *ds)
		}
		var v json.RawMessage
		if err := getAudit(src.url, "state", q, &v); err != nil {
			return err
		}
		return printJSON(stdout, v)
	}
	h, closeFn, err := openHistory(src.data)
	if err != nil {
		return err
	}
	defer closeFn()
	i, err := h.ParseAt(*at)
	if err != nil {
		return err
	}
	v, err := h.ViewAt(i)
	if err != nil {
		return err
	}
	if *ds != "" {
		v = v.Only(*ds)
	}
	return printJSON(stdout, v)
}

// runAuditDiff implements `strata audit diff A B`.
func runAuditDiff(args []string) error {
	const synopsis = "audit diff FROM TO [--datasource DS] [--url URL | --data DIR]   (FROM, TO: Raft indexes or ISO-8601 times)"
	fs := newFlagSet("audit diff", synopsis)
	cacertFlag(fs)
	var src source
	done := src.flags(fs)
	ds := fs.String("datasource", "", "only what changed for this datasource (and the configs, workers and servers)")
	// The moments come first, flags after them (or before).
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := parseFlagsArgs(fs, args); err != nil {
		return err
	}
	if err := done(); err != nil {
		return err
	}
	pos = append(pos, fs.Args()...)
	if len(pos) > 2 {
		return unexpectedArg(fs, pos[2])
	}
	if len(pos) != 2 {
		return usagef("usage: strata %s", synopsis)
	}
	if src.url != "" {
		q := url.Values{"from": {pos[0]}, "to": {pos[1]}}
		if *ds != "" {
			q.Set("dataSource", *ds)
		}
		var d json.RawMessage
		if err := getAudit(src.url, "diff", q, &d); err != nil {
			return err
		}
		return printJSON(stdout, d)
	}
	h, closeFn, err := openHistory(src.data)
	if err != nil {
		return err
	}
	defer closeFn()
	from, err := h.ParseAt(pos[0])
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	to, err := h.ParseAt(pos[1])
	if err != nil {
		return fmt.Errorf("to: %w", err)
	}
	if from > to {
		return fmt.Errorf("from (index %d) is after to (index %d)", from, to)
	}
	a, err := h.ViewAt(from)
	if err != nil {
		return err
	}
	b, err := h.ViewAt(to)
	if err != nil {
		return err
	}
	if *ds != "" {
		a, b = a.Only(*ds), b.Only(*ds)
	}
	return printJSON(stdout, audit.DiffViews(a, b))
}

// nodeDigest is one node's answer to the verification.
type nodeDigest struct {
	Node         string `json:"node"`
	audit.Digest        // index, bytes, sha256, tables
	LastIndex    uint64 `json:"lastIndex"`
	ControlNodes []struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	} `json:"controlNodes"`
}

// runAuditVerify implements `strata audit verify`: every control node (or
// every data directory given) digests its state at the same index; they
// agree, or the first table that differs is named.
func runAuditVerify(args []string) error {
	const synopsis = "audit verify [--url URL[,URL...] | --data DIR[,DIR...]] [--at INDEX]"
	fs := newFlagSet("audit verify", synopsis)
	cacertFlag(fs)
	u := fs.String("url", "", "a control node's or the router's URL (default http://127.0.0.1:8888; the control nodes are found from it), or every control node's, comma-separated")
	d := fs.String("data", "", "data directories of stopped nodes, comma-separated")
	cfg := configFlag(fs)
	atFlag := fs.String("at", "", "the Raft index to compare (default: the newest index every node has committed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || (*u != "" && *d != "") {
		return usagef("usage: strata %s", synopsis)
	}
	archiveConfig = *cfg
	var digests []nodeDigest
	var unreachable []string
	var err error
	if *d != "" {
		digests, err = verifyDirs(strings.Split(*d, ","), *atFlag)
	} else {
		urls := *u
		if urls == "" {
			urls = "http://127.0.0.1:8888"
		}
		digests, unreachable, err = verifyURLs(strings.Split(urls, ","), *atFlag)
	}
	if err != nil {
		return err
	}
	// The reference is the digest most nodes share, so that the odd one out
	// is the one named.
	count := map[string]int{}
	for _, dg := range digests {
		count[dg.SHA256]++
	}
	ref := digests[0]
	for _, dg := range digests {
		if count[dg.SHA256] > count[ref.SHA256] {
			ref = dg
		}
	}
	bad := 0
	for _, dg := range digests {
		diff := audit.FirstDifference(ref.Digest, dg.Digest)
		status := "agrees"
		if diff != "" {
			status = "DIFFERS from " + ref.Node + ", first in table " + diff
			bad++
		}
		fmt.Fprintf(stdout, "%-12s index %d  sha256 %s  %s\n", dg.Node, dg.Index, dg.SHA256, status)
	}
	if bad > 0 {
		for _, dg := range digests {
			if t := audit.FirstDifference(ref.Digest, dg.Digest); t != "" {
				for i := range dg.Tables {
					if dg.Tables[i].Table == t && i < len(ref.Tables) {
						fmt.Fprintf(stdout, "  %s: %s has %d records (sha256 %s), %s has %d (sha256 %s)\n", t,
							ref.Node, ref.Tables[i].Records, ref.Tables[i].SHA256, dg.Node, dg.Tables[i].Records, dg.Tables[i].SHA256)
					}
				}
			}
		}
		fmt.Fprintf(stdout, "%d of %d nodes differ at index %d\n", bad, len(digests), ref.Index)
		return reportedError{errors.New("replicas differ")}
	}
	if len(unreachable) > 0 {
		// Agreement among the others is not the cluster's.
		fmt.Fprintf(stdout, "the %d nodes that answered agree at index %d; the others were not checked\n", len(digests), ref.Index)
		return reportedError{errors.New("not every node answered")}
	}
	fmt.Fprintf(stdout, "all %d nodes agree at index %d\n", len(digests), ref.Index)
	return nil
}

// verifyURLs asks every control node for its digest at one index.
// Nodes that do not answer are returned apart.
func verifyURLs(urls []string, at string) ([]nodeDigest, []string, error) {
	for i := range urls {
		urls[i] = strings.TrimRight(strings.TrimSpace(urls[i]), "/")
	}
	if len(urls) == 1 {
		// Learn the other control nodes from the one given.
		var first nodeDigest
		if err := getAudit(urls[0], "digest", nil, &first); err != nil {
			return nil, nil, err
		}
		urls = urls[:0]
		for _, n := range first.ControlNodes {
			urls = append(urls, strings.TrimRight(n.URL, "/"))
		}
	}
	// A node that does not answer is reported and left out; the others are
	// still compared.
	var unreachable []string
	if at == "" {
		// The newest index every node holds committed.
		var low uint64
		first := true
		reachable := urls[:0:0]
		for _, u := range urls {
			var dg nodeDigest
			if err := getAudit(u, "digest", nil, &dg); err != nil {
				fmt.Fprintf(stdout, "%-12s does not answer: %v\n", u, err)
				unreachable = append(unreachable, u)
				continue
			}
			reachable = append(reachable, u)
			if first || dg.LastIndex < low {
				low, first = dg.LastIndex, false
			}
		}
		urls = reachable
		at = fmt.Sprint(low)
	}
	var out []nodeDigest
	for _, u := range urls {
		var dg nodeDigest
		if err := getAudit(u, "digest", url.Values{"at": {at}}, &dg); err != nil {
			fmt.Fprintf(stdout, "%-12s does not answer: %v\n", u, err)
			unreachable = append(unreachable, u)
			continue
		}
		out = append(out, dg)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no control node answered (%s)", strings.Join(unreachable, ", "))
	}
	return out, unreachable, nil
}

// verifyDirs digests stopped nodes' data directories at one index.
func verifyDirs(dirs []string, at string) ([]nodeDigest, error) {
	type opened struct {
		dir   string
		h     *audit.History
		close func() error
	}
	var hs []opened
	defer func() {
		for _, o := range hs {
			o.close()
		}
	}()
	var low uint64
	for i, dir := range dirs {
		h, closeFn, err := openHistory(strings.TrimSpace(dir))
		if err != nil {
			return nil, err
		}
		hs = append(hs, opened{dir, h, closeFn})
		last, err := h.Log().LastIndex()
		if err != nil {
			return nil, err
		}
		if i == 0 || last < low {
			low = last
		}
	}
	var out []nodeDigest
	for _, o := range hs {
		idx := low
		if at != "" {
			var err error
			if idx, err = o.h.ParseAt(at); err != nil {
				return nil, err
			}
		}
		st, i, err := o.h.StateAt(idx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.dir, err)
		}
		dg, err := audit.DigestOf(st, i)
		if err != nil {
			return nil, err
		}
		out = append(out, nodeDigest{Node: o.dir, Digest: dg, LastIndex: low})
	}
	return out, nil
}
