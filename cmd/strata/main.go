// Command strata is Strata's single binary: every role, the quickstart cluster and
// the operator tooling.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

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
https URL is verified against.
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
	case "version", "--version":
		fmt.Fprintln(stdout, "strata", server.Version)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "strata: unknown command %q\n\n%s", cmd, usage)
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

// parseFlags parses args; -h/--help gives flag.ErrHelp (exit 0), any other
// mistake a usage error (the flag package has printed it and the usage).
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{msg: err.Error(), printed: true}
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
