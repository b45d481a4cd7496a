package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"strata/audit"
	"strata/fsm"
)

func init() { auditVerbs["log"] = runAuditLog }

const auditLogSynopsis = "audit log [--since T] [--until T] [--type T,...] [--author A] [--datasource D] [--supervisor S] " +
	"[--task T] [--from-index N] [--to-index N] [--limit N] [--json] [--url URL | --data DIR]"

// runAuditLog implements `strata audit log`: the commands of the log, newest
// first, filtered as GET /svc/coordinator/v1/audit filters them, from a
// running cluster (--url) or a stopped node's archive and log (--data).
func runAuditLog(args []string) error {
	fs := newFlagSet("audit log", auditLogSynopsis)
	cacertFlag(fs)
	var src source
	done := src.flags(fs)
	since := fs.String("since", "", "only commands stamped at or after this ISO-8601 time or date")
	until := fs.String("until", "", "only commands stamped at or before this ISO-8601 time or date")
	typ := fs.String("type", "", `command types, comma-separated ("rules.set", "segments.*")`)
	author := fs.String("author", "", "only commands by this author (X-Svc-Author)")
	ds := fs.String("datasource", "", "only commands naming this datasource")
	sup := fs.String("supervisor", "", "only commands naming this supervisor")
	task := fs.String("task", "", "only commands naming this task")
	fromIndex := fs.Uint64("from-index", 0, "only entries from this Raft index")
	toIndex := fs.Uint64("to-index", 0, "only entries up to this Raft index")
	limit := fs.Int("limit", 100, "print at most this many commands, newest first (0: all)")
	asJSON := fs.Bool("json", false, "print the records as JSON lines (with the redacted commands)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := done(); err != nil {
		return err
	}
	if fs.NArg() > 0 || *limit < 0 {
		return usagef("usage: strata %s", auditLogSynopsis)
	}
	// The flags become the endpoint's parameters, so that both ways of
	// reading check them alike (audit.ParseQuery).
	v := url.Values{}
	for _, p := range []struct{ name, val string }{
		{"since", *since}, {"until", *until}, {"type", *typ}, {"author", *author}, {"dataSource", *ds},
		{"supervisor", *sup}, {"task", *task},
	} {
		if p.val != "" {
			v.Set(p.name, p.val)
		}
	}
	if *fromIndex != 0 {
		v.Set("fromIndex", strconv.FormatUint(*fromIndex, 10))
	}
	if *toIndex != 0 {
		v.Set("toIndex", strconv.FormatUint(*toIndex, 10))
	}
	q, err := audit.ParseQuery(v)
	if err != nil {
		return usagef("%v", strings.TrimPrefix(err.Error(), audit.ErrBadQuery.Error()+": "))
	}
	var next func(audit.Query) (audit.Page, error)
	if src.url != "" {
		next = func(q audit.Query) (audit.Page, error) { return fetchAuditPage(src.url, q) }
	} else {
		h, closeFn, err := openHistory(src.data)
		if err != nil {
			return err
		}
		defer closeFn()
		names := &offlineNames{h: h}
		next = func(q audit.Query) (audit.Page, error) {
			return audit.List(audit.Source{Log: h.Log(), Names: audit.StateNames(names.read), IndexAt: h.IndexAt}, q)
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "INDEX\tTIME\tTYPE\tAUTHOR\tSUMMARY\tCOMMENT")
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false) // "<redacted>" as written
	printed := 0
	for {
		q.Limit = audit.MaxLimit
		if *limit > 0 {
			q.Limit = min(audit.MaxLimit, *limit-printed)
		}
		page, err := next(q)
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			if *asJSON {
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Index, r.Time, r.Type, oneLine(r.Author), oneLine(r.Summary), oneLine(r.Comment))
			}
			printed++
		}
		if page.Next == 0 || (*limit > 0 && printed >= *limit) {
			break
		}
		q.Before = page.Next
	}
	if *asJSON {
		return nil
	}
	return tw.Flush()
}

// fetchAuditPage reads one page of GET /svc/coordinator/v1/audit.
func fetchAuditPage(base string, q audit.Query) (audit.Page, error) {
	u := base + "/svc/coordinator/v1/audit?" + q.Values().Encode()
	code, body, err := httpGet(u)
	if err != nil {
		return audit.Page{}, err
	}
	if code != 200 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return audit.Page{}, fmt.Errorf("%s: %s", u, e.Error)
		}
		return audit.Page{}, fmt.Errorf("%s: HTTP %d %s", u, code, strings.TrimSpace(string(body)))
	}
	var p audit.Page
	if err := json.Unmarshal(body, &p); err != nil {
		return audit.Page{}, fmt.Errorf("%s: %v", u, err)
	}
	return p, nil
}

// offlineNames is the state a stopped node's history ends in, rebuilt on
// first use: it names the datasource of the tasks and supervisors that
// commands name only by id, as a running node's state does.
type offlineNames struct {
	h    *audit.History
	once sync.Once
	st   *fsm.State
}

func (n *offlineNames) read(fn func(*fsm.State)) {
	n.once.Do(func() {
		last, err := n.h.Log().LastIndex()
		if err == nil && last > 0 {
			n.st, _, _ = n.h.StateAt(last) // without it, records keep the names their commands give
		}
	})
	if n.st != nil {
		fn(n.st)
	}
}

// oneLine keeps a table row on one line: authors, comments and summaries are
// the requests' own words and may hold line breaks or tabs.
var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace
