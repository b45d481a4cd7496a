package config

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the README's Configuration table from Keys")

// The README's Configuration table is Markdown(): every key, its default and
// its meaning, documented from Keys alone.
func TestREADMETable(t *testing.T) {
	const path = "../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "| property | default | meaning |")
	if start < 0 {
		t.Fatal("README.md has no Configuration table")
	}
	end := strings.Index(readme[start:], "\n\n")
	if end < 0 {
		t.Fatal("README.md's Configuration table does not end")
	}
	got, want := readme[start:start+end+1], Markdown()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:start]+want+readme[start+end+1:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's Configuration table differs from config.Keys; run go test ./config -run README -update\n got:\n%s\nwant:\n%s", got, want)
}

// Every svc.* key named in the code is described in Keys.
func TestEveryKeyInCodeIsDocumented(t *testing.T) {
	// Only named in svc.server.hiddenProperties' default, for Druid's sake.
	notRead := map[string]bool{"svc.metadata.storage.connector.password": true}
	re := regexp.MustCompile(`"(svc\.[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)+)"`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "third_party" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if _, ok := Lookup(m[1]); !ok && !notRead[m[1]] {
				t.Errorf("%s reads %s, which config.Keys does not describe", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestKeysAreUniqueAndDefaultsParse(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keys {
		if seen[k.Name] {
			t.Errorf("%s is described twice", k.Name)
		}
		seen[k.Name] = true
		if k.Doc == "" {
			t.Errorf("%s has no meaning", k.Name)
		}
	}
	// The documented defaults are what the parsers use.
	empty := emptySource{}
	for name, parse := range map[string]func() error{
		"log":        func() error { _, err := ParseLog(empty); return err },
		"raft":       func() error { _, err := ParseRaft(empty); return err },
		"http":       func() error { _, err := ParseHTTP(empty); return err },
		"historical": func() error { _, err := ParseHistorical(empty); return err },
		"broker":     func() error { _, err := ParseBroker(empty); return err },
	} {
		if err := parse(); err != nil {
			t.Errorf("%s defaults: %v", name, err)
		}
	}
	c, err := ParseCoordinator(empty, nil)
	if err != nil || c.Period != time.Minute || c.HandoverDelay != time.Second {
		t.Errorf("coordinator defaults: %+v %v", c, err)
	}
	if o := ParseOverlord(empty, nil); o.HeartbeatTimeout != 10*time.Second || o.AssignmentTimeout != o.HeartbeatTimeout {
		t.Errorf("overlord defaults: %+v", o)
	}
	if o := ParseSupervisor(empty, nil); o.MaxStoredExceptionEvents != 3 || o.UnhealthinessThreshold != 3 {
		t.Errorf("overlord defaults: %+v", o)
	}
}

type mapSource map[string]string

func (m mapSource) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

// A malformed value is an error naming its key; where the role logs and uses
// the default instead, it still does.
func TestBadValues(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		parse      func(Source) error
	}{
		{"svc.raft.heartbeatTimeout", "soon", func(s Source) error { _, err := ParseRaft(s); return err }},
		{"svc.raft.maxAppendEntries", "many", func(s Source) error { _, err := ParseRaft(s); return err }},
		{"svc.server.http.maxRequestBytes", "10MB", func(s Source) error { _, err := ParseHTTP(s); return err }},
		{"svc.audit.manager.auditHistoryMillis", "1w", func(s Source) error { _, err := ParseHTTP(s); return err }},
		{"svc.indexer.storage.recentlyFinishedThreshold", "1d", func(s Source) error { _, err := ParseHTTP(s); return err }},
		{"svc.centralizedDatasourceSchema.enabled", "yes", func(s Source) error { _, err := ParseHTTP(s); return err }},
		{"svc.coordinator.period", "0", func(s Source) error { _, err := ParseCoordinator(s, nil); return err }},
		{"svc.segmentCache.scrubPeriod", "daily", func(s Source) error { _, err := ParseHistorical(s); return err }},
		{"svc.query.failOnMissingSegments", "maybe", func(s Source) error { _, err := ParseBroker(s); return err }},
		{"svc.worker.capacity", "0", func(s Source) error { _, err := ParseMiddleManager(s); return err }},
		{"svc.worker.heartbeatPeriod", "often", func(s Source) error { _, err := ParseMiddleManager(s); return err }},
	} {
		t.Run(tc.key, func(t *testing.T) {
			src := mapSource{tc.key: tc.value, "svc.worker.overlordUrls": "http://c:8081"}
			if err := tc.parse(src); err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("%s=%q: error %v, want one naming the key", tc.key, tc.value, err)
			}
		})
	}
	t.Run("logged and defaulted", func(t *testing.T) {
		c, err := ParseCoordinator(mapSource{"svc.coordinator.startDelay": "-1s", "svc.coordinator.loadTimeout": "x"}, nil)
		if err != nil || c.StartDelay != 2*time.Second || c.LoadTimeout != 15*time.Minute {
			t.Errorf("coordinator: %+v %v", c, err)
		}
		o := ParseOverlord(mapSource{"svc.worker.heartbeatTimeout": "x"}, nil)
		if o.HeartbeatTimeout != 10*time.Second || o.AssignmentTimeout != 10*time.Second {
			t.Errorf("overlord: %+v", o)
		}
		s := ParseSupervisor(mapSource{"svc.supervisor.healthinessThreshold": "0", "svc.supervisor.maxStoredExceptionEvents": "x"}, nil)
		if s.HealthinessThreshold != 3 || s.MaxStoredExceptionEvents != 3 {
			t.Errorf("supervisor: %+v", s)
		}
	})
}

func TestSecretsAreNotTrimmed(t *testing.T) {
	src := mapSource{"svc.escalator.internalClientPassword": " pass ", "svc.s3.secretKey": "k ", "svc.storage.bucket": " b "}
	if e := ParseEscalator(src); e.Password != " pass " || e.Username != "svc_system" {
		t.Errorf("escalator: %+v", e)
	}
	if s := ParseStorage(src); s.S3SecretKey != "k " || s.Bucket != "b" || s.Type != "local" {
		t.Errorf("storage: %+v", s)
	}
}

// The forms a value may take: a bare integer duration is milliseconds,
// a list is a JSON array or comma-separated, an unset or blank key is its
// default.
func TestValueForms(t *testing.T) {
	r := &reader{src: mapSource{
		"svc.broker.pollPeriod":           "300",
		"svc.historical.pollPeriod":       " 2s ",
		"svc.router.brokerUrls":           `["http://a", "http://b"]`,
		"svc.router.historicalUrls":       "http://c,http://d",
		"svc.server.priority":             " ",
		"svc.server.http.maxRequestBytes": "42",
	}}
	if d := r.duration("svc.broker.pollPeriod"); d != 300*time.Millisecond {
		t.Errorf("bare integer duration: %v", d)
	}
	if d := r.duration("svc.historical.pollPeriod"); d != 2*time.Second {
		t.Errorf("duration: %v", d)
	}
	if l := r.list("svc.router.brokerUrls"); len(l) != 2 || l[1] != "http://b" {
		t.Errorf("JSON list: %q", l)
	}
	if l := r.list("svc.router.historicalUrls"); len(l) != 2 || l[0] != "http://c" {
		t.Errorf("comma list: %q", l)
	}
	if n := r.int("svc.server.priority"); n != 0 {
		t.Errorf("blank int: %d", n)
	}
	if n := r.int("svc.server.http.maxRequestBytes"); n != 42 {
		t.Errorf("int: %d", n)
	}
	if d := r.duration("svc.coordinator.loadTimeout"); d != 15*time.Minute {
		t.Errorf("unset duration: %v", d)
	}
	if err := r.err(); err != nil {
		t.Error(err)
	}
}
