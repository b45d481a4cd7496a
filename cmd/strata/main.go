// Command strata is Strata's single binary: every role, the quickstart cluster and
// the operator tooling.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"strata/server"
)

const usage = `strata: a distributed, real-time analytics data store (Druid-compatible API)

Usage:
  strata quickstart [--data DIR] [--tls-dir DIR] [--config FILE] [--set svc.key=value]...
        run the whole cluster in one process (router on :8888, coordinator on :8081);
        --tls-dir: HTTPS only, with a CA and certificate made in DIR (curl --cacert DIR/ca.pem)
  strata server --id ID --roles coordinator,overlord[,...] --http HOST:PORT --raft HOST:PORT --data DIR
        [--peers ID=RAFTHOST:PORT=HTTPURL,...] [--coordinators URL,...] [--config FILE] [--set svc.key=value]...
        run a control node (Raft); it may carry the other roles too
  strata server --roles broker|historical|middleManager|router[,...] --http HOST:PORT [--data DIR]
        [--coordinators URL,...] [--config FILE] [--set svc.key=value]...
        run a data, worker or router node (no Raft). With --coordinators (the control nodes) it
        announces itself to the leader and finds every other node through it: no URL lists needed
  strata segment build --datasource D --input FILE.json[,FILE...] [--timestamp-column C]
        [--timestamp-format F] [--segment-granularity DAY] [--query-granularity G] [--rollup]
        [--dimensions A,B] [--metrics JSON] [--rows-per-segment N] [--max-parse-exceptions N]
        [--coordinator URL] [--config FILE]
        build segments from NDJSON and publish them
  strata ingest --sql FILE|- [--url URL] [--context JSON] [--no-wait]
        run SQL ingestion, following it with a progress line
  strata query [--native] [-f FILE] [--format table|json|csv] [--context JSON] [--url URL] [SQL | -]
                                       run SQL (or a native JSON query) from the argument, FILE or
                                       stdin: a table, its row count and time; a SQL error's position
                                       is underlined
  strata datasources [--url URL]       list the datasources served: segments, size, time range
  strata segments DATASOURCE [--url URL]
                                       list a datasource's segments
  strata tasks [--url URL]             list the tasks: running, waiting, pending and complete
  strata supervisors [--url URL]       list the supervisors and their state
  strata task status ID [--url URL]    print a task's status
  strata task wait ID [--url URL]      follow a task to its end, with its live progress
  strata task cancel ID [--url URL]    shut a task down
  strata log dump --data DIR | --url URL
                                       print every entry of a stopped node's Raft log, archive included
                                       (--url: a running node's commands, secrets redacted)
  strata log replay --data DIR [--at N] [--from-start] | --url URL
                                       replay that log into a fresh state machine, print its digest
                                       (--url: the digest a running control node replays)
  strata audit log [--since T] [--until T] [--type T,...] [--author A] [--datasource D] [--supervisor S]
        [--task T] [--from-index N] [--to-index N] [--limit N] [--json] [--url URL | --data DIR]
                                       every command, newest first: who, when, what (secrets redacted)
  strata audit state --at INDEX|TIME [--url URL | --data DIR]
                                       the control plane's tables as they were at that moment
  strata audit diff FROM TO [--url URL | --data DIR]
                                       what changed between two moments, table by table
  strata audit verify [--url URL[,URL...] | --data DIR[,DIR...]] [--at INDEX]
                                       every control node's state digest at one index: agreement, or
                                       the first table that differs (exit 1)
  strata recover --data DIR [--force]  move a stopped node's damaged Raft store aside; restarted,
        the node is restored from the leader (README, "Recovering a damaged node")
  strata snapshot save --url URL --out FILE
                                       an online backup: the leader's current state (index, term,
                                       sha256 = the state digest of that index) into FILE
  strata snapshot restore --in FILE --data DIR --id ID (--peers ID=RAFTHOST:PORT=HTTPURL,... | --raft HOST:PORT)
                                       make a fresh control node's data dir start from that backup
  strata certs --dir DIR [--hosts HOST,...]
                                       make a self-signed CA and a node certificate for a local
                                       cluster over TLS (kept if DIR has them already)
  strata version                       print the version
  strata help                          print this help

"strata COMMAND -h" lists a command's flags. Settings are svc.* properties
(README, "Configuration"); --config reads a runtime.properties file and flags
override it. Commands that take --url also take --cacert FILE: the CA bundle an
https URL is verified against. query, datasources, segments, tasks and
supervisors take --format table|json|csv; they, ingest and task take
--user U --password P (or STRATA_USER and STRATA_PASSWORD) for a cluster with
basic auth, and their --url defaults to the quickstart router,
http://127.0.0.1:8888.
`

// Where commands write; tests replace them.
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

func main() { os.Exit(run(os.Args[1:])) }

// usageError is a command line that cannot be run as written (exit code 2);
// printed when the flag package has already said so.
type usageError struct {
	msg     string
	printed bool
}

func (e usageError) Error() string { return e.msg }

// reportedError is a failure the command has already logged (exit code 1).
type reportedError struct{ error }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// run runs one command line and returns the exit code: 0 on success and
// for -h/--help, 1 when the command failed, 2 when the command line is wrong.
func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "quickstart":
		err = runQuickstart(rest)
	case "server":
		err = runServer(rest)
	case "log":
		err = runLog(rest)
	case "audit":
		err = runAudit(rest)
	case "recover":
		err = runRecover(rest)
	case "segment":
		err = runSegment(rest)
	case "ingest":
		err = runIngest(rest)
	case "task":
		err = runTask(rest)
	case "certs":
		err = runCerts(rest)
	case "snapshot":
		err = runSnapshot(rest)
	case "query":
		err = runQuery(rest)
	case "datasources":
		err = runDataSources(rest)
	case "segments":
		err = runSegments(rest)
	case "tasks":
		err = runTasks(rest)
	case "supervisors":
		err = runSupervisors(rest)
	case "version", "--version":
		if len(rest) > 0 && !isHelp(rest[0]) {
			fmt.Fprintf(stderr, "strata: version takes no arguments (got %q)\n", rest[0])
			return 2
		}
		fmt.Fprintf(stdout, "strata %s (Druid API %s)\n", server.Version, server.DruidVersion)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "strata: help takes no arguments (got %q): use strata COMMAND -h\n", rest[0])
			return 2
		}
		fmt.Fprint(stdout, usage)
	default:
		if near := nearest(cmd, commandNames); near != "" {
			fmt.Fprintf(stderr, "strata: unknown command %q: did you mean %q?\n\n%s", cmd, near, usage)
		} else {
			fmt.Fprintf(stderr, "strata: unknown command %q\n\n%s", cmd, usage)
		}
		return 2
	}
	var ue usageError
	var reported reportedError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &reported):
		return 1
	case errors.As(err, &ue):
		if !ue.printed {
			fmt.Fprintln(stderr, "strata:", err)
		}
		return 2
	}
	fmt.Fprintln(stderr, "strata:", err)
	return 1
}

// newFlagSet returns the flag set of a command whose -h prints synopsis
// (the command line after "strata ") and the flags.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: strata %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// commandNames are run's commands, for "did you mean" and the test that
// walks every command.
var commandNames = []string{"quickstart", "server", "segment", "ingest", "task", "log", "audit", "recover",
	"snapshot", "certs", "query", "datasources", "segments", "tasks", "supervisors", "version", "help"}

// parseFlags parses args, which must all be flags; -h/--help gives
// flag.ErrHelp (exit 0), any other mistake a usage error (printed with the
// usage). A word left over is an error, not ignored: Go's flag package stops
// at the first non-flag, so a line copied with its "[--flag X]" brackets
// would otherwise run with every flag after the bracket dropped.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagsArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpectedArg(fs, fs.Arg(0))
	}
	return nil
}

// parseFlagsArgs is parseFlags for a command that reads positional
// arguments itself (fs.Args()) and rejects the ones it does not take.
func parseFlagsArgs(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	// The flag package has printed the error and the usage; a typo of one
	// of the command's flags gets the nearest one after them.
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near := nearest(name, names); near != "" {
			fmt.Fprintf(fs.Output(), "strata %s: unknown flag -%s: did you mean --%s?\n", fs.Name(), name, near)
		}
	}
	return usageError{msg: err.Error(), printed: true}
}

// unexpectedArg is the usage error of a word a command does not take,
// printed with the command's usage.
func unexpectedArg(fs *flag.FlagSet, arg string) error {
	msg := fmt.Sprintf("unexpected argument %q", arg)
	if strings.HasPrefix(arg, "[") {
		msg += " (brackets in the usage mark optional flags: leave them out)"
	}
	fmt.Fprintf(fs.Output(), "strata %s: %s\n", fs.Name(), msg)
	fs.Usage()
	return usageError{msg: msg, printed: true}
}

// nearest is the name closest to word by edit distance, if close enough to
// be a typo (at most a third of the word's letters, and at least one).
func nearest(word string, names []string) string {
	best, bestD := "", max(1, len(word)/3)+1
	for _, n := range names {
		if d := editDistance(word, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// didYouMean is " (did you mean X?)" when word is a typo of one of names.
func didYouMean(word string, names ...string) string {
	if n := nearest(word, names); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// unknownVerb is the usage error of a command made of verbs given a word
// that is none of them: the nearest verb if it looks like a typo, and the
// list.
func unknownVerb(cmd, word string, verbs ...string) error {
	return usagef("%s: unknown verb %q%s (want %s)", cmd, word, didYouMean(word, verbs...), strings.Join(verbs, " or "))
}

// editDistance is the edit distance between a and b, a swap of two
// neighbouring letters counting as one edit (the commonest typo).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// isHelp reports whether a command's first word asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// verbHelp answers "strata CMD -h" for commands made of verbs: the
// synopsis on stdout and flag.ErrHelp.
func verbHelp(cmd, synopsis string) error {
	fmt.Fprintf(stdout, "usage: strata %s\n\"strata %s VERB -h\" lists a verb's flags.\n", synopsis, cmd)
	return flag.ErrHelp
}
