package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// everyCommand is every command line form: its words before the flags, and
// the flags it needs to get past its own checks. TestEveryCommandRejects...
// fails when a command of commandNames has no entry here.
var everyCommand = [][]string{
	{"quickstart"},
	{"server"},
	{"segment", "build", "--datasource", "d", "--input", "f.json"},
	{"ingest", "--sql", "-"},
	{"task", "status", "id1"}, {"task", "wait", "id1"}, {"task", "cancel", "id1"},
	{"log", "dump"}, {"log", "replay"},
	{"audit", "log"}, {"audit", "state", "--at", "1"}, {"audit", "diff", "1", "2"}, {"audit", "verify"},
	{"recover", "--data", "d"},
	{"snapshot", "save", "--url", "http://127.0.0.1:1", "--out", "f"},
	{"snapshot", "restore", "--in", "f", "--data", "d", "--id", "n1", "--raft", "127.0.0.1:1"},
	{"certs", "--dir", "d"},
	{"query", "SELECT 1"},
	{"datasources"}, {"segments", "wiki"}, {"tasks"}, {"supervisors"},
	{"version"}, {"help"},
}

// No command ignores a word or a flag it does not take: each is a usage
// error (exit 2) naming it, before the command does anything (the URLs
// above would fail with exit 1 if it were reached). The line from the
// README that used to run with its flags dropped is one of them.
func TestEveryCommandRejectsExtraArgumentsAndUnknownFlags(t *testing.T) {
	covered := map[string]bool{}
	for _, line := range everyCommand {
		covered[line[0]] = true
		for _, extra := range [][]string{{"stray"}, {"--no-such-flag"}, {"[--segment-granularity", "DAY]"}} {
			args := append(append([]string{}, line...), extra...)
			code, out, errOut := capture(t, args...)
			name := "strata " + strings.Join(args, " ")
			if code != 2 {
				t.Errorf("%s: exit %d, want 2\nstdout: %s\nstderr: %s", name, code, out, errOut)
				continue
			}
			if !strings.Contains(errOut, strings.TrimLeft(extra[0], "-")) {
				t.Errorf("%s: the error does not name %q:\n%s", name, extra[0], errOut)
			}
		}
	}
	for _, name := range commandNames {
		if !covered[name] {
			t.Errorf("command %q is not in everyCommand", name)
		}
	}
}

func TestUnknownCommandSuggestsNearest(t *testing.T) {
	for typo, want := range map[string]string{"qury": "query", "datasource": "datasources", "taks": "task", "snapshots": "snapshot", "segmnts": "segments"} {
		code, _, errOut := capture(t, typo)
		if code != 2 || !strings.Contains(errOut, `did you mean "`+want+`"?`) {
			t.Errorf("strata %s: exit %d\n%s", typo, code, errOut)
		}
	}
	// Every command made of verbs: task, snapshot, audit, log, segment.
	for _, line := range [][]string{{"task", "stauts", "x"}, {"snapshot", "sav"}, {"audit", "veriyf"},
		{"log", "dmup"}, {"log", "replya", "--data", "d"}, {"segment", "biuld", "--datasource", "d"}} {
		code, _, errOut := capture(t, line...)
		if code != 2 || !strings.Contains(errOut, "did you mean") {
			t.Errorf("strata %s: exit %d\n%s", strings.Join(line, " "), code, errOut)
		}
	}
	if _, _, errOut := capture(t, "frobnicate"); strings.Contains(errOut, "did you mean") {
		t.Errorf("a word near no command got a suggestion:\n%s", errOut)
	}
}

// A command missing its word says so before its usage (it printed only the
// usage, which reads as a help request).
func TestMissingArgumentIsNamed(t *testing.T) {
	code, _, errOut := capture(t, "segments")
	if code != 2 || !strings.HasPrefix(errOut, "strata segments: missing argument\nusage: strata segments DATASOURCE") {
		t.Errorf("strata segments: exit %d\n%s", code, errOut)
	}
}

// A --set of a property Strata does not have is a usage error naming the
// nearest one, before anything starts: a typo used to be stored and never
// read, so the node ran with the default.
func TestSetOfAnUnknownPropertyIsRefused(t *testing.T) {
	for _, cmd := range []string{"quickstart", "server"} {
		code, _, errOut := capture(t, cmd, "--data", t.TempDir(), "--set", "svc.log.levle=debug")
		if code != 2 || !strings.Contains(errOut, `unknown property "svc.log.levle" (did you mean "svc.log.level"?)`) {
			t.Errorf("strata %s --set svc.log.levle=debug: exit %d\n%s", cmd, code, errOut)
		}
	}
	if code, _, errOut := capture(t, "quickstart", "--data", t.TempDir(), "--set", "svc.frobnicate=1"); code != 2 || !strings.Contains(errOut, `unknown property "svc.frobnicate"`) {
		t.Errorf("--set svc.frobnicate=1: exit %d\n%s", code, errOut)
	}
}

// A --config file's svc.* property that Strata does not have is named at
// start with the nearest one (a warning: a file may carry a newer version's
// keys); other namespaces are left alone. The server below stops at its
// unknown role, after the warning.
func TestConfigFileUnknownPropertyIsWarned(t *testing.T) {
	f := filepath.Join(t.TempDir(), "runtime.properties")
	os.WriteFile(f, []byte("svc.log.levle=debug\nsvc.log.level=info\ndruid.extensions.loadList=[]\n"), 0o644)
	out, err := strataCmd("server", "--config", f, "--roles", "nosuchrole", "--http", "127.0.0.1:1").CombinedOutput()
	if err == nil {
		t.Fatalf("a server with an unknown role started:\n%s", out)
	}
	if !strings.Contains(string(out), `unknown property in the configuration file, ignored`) ||
		!strings.Contains(string(out), `svc.log.levle`) || !strings.Contains(string(out), `svc.log.level`) || strings.Contains(string(out), "druid.extensions") {
		t.Errorf("output:\n%s", out)
	}
}

// A mistyped flag gets the nearest flag of its command, as a mistyped
// command or verb does.
func TestUnknownFlagSuggestsNearest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--formt", "csv", "SELECT 1"}, `did you mean --format?`},
		{[]string{"segments", "wiki", "-ulr", "http://x"}, `did you mean --url?`},
		{[]string{"segment", "build", "--segment-granularty", "DAY"}, `did you mean --segment-granularity?`},
		{[]string{"task", "status", "x", "--pasword", "p"}, `did you mean --password?`},
	} {
		code, _, errOut := capture(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("strata %s: exit %d\n%s", strings.Join(c.args, " "), code, errOut)
		}
	}
	if _, _, errOut := capture(t, "query", "--zzzzzzzz", "SELECT 1"); strings.Contains(errOut, "did you mean") {
		t.Errorf("a flag near none got a suggestion:\n%s", errOut)
	}
}
