package layout

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The planes, by import path pattern ("/..." matches the package and those
// below it).
var (
	// The data plane: segment storage, the query side (query model, engine, and
	// the historical and broker nodes that serve queries), and the protocol
	// between them.
	dataPlane = []string{"strata/storage/...", "strata/querynode/...", "strata/protocol"}
	// The control plane's internals: commands, the replicated state machine,
	// Raft, and the leader's coordinator and overlord duties.
	controlInternals = []string{"strata/fsm/...", "strata/cluster/...", "strata/commands/...", "strata/coordinator/...", "strata/overlord/..."}
	// Query code, which storage serves but must not know.
	queryCode = []string{"strata/querynode/...", "strata/protocol"}
	// Storage, query and ingestion code, above the aggregators.
	aboveAggregate = []string{"strata/storage/...", "strata/querynode/...", "strata/protocol", "strata/ingest/..."}
)

// rules says which packages may not depend, directly or through others, on
// which. Test files are not counted: a test may assemble planes.
var rules = []struct {
	name      string
	from, not []string
}{
	// Queries must keep running when the control plane is down or being
	// replaced: data servers learn about the cluster only over HTTP.
	{"the data plane does not import the control plane's internals", dataPlane, controlInternals},
	// The segment format is read by the engine, ingestion and tools alike.
	{"storage does not import query code", []string{"strata/storage/..."}, queryCode},
	// One aggregator family serves the engine, SQL ingestion and the
	// segment writer's rollup, so it sits below all three.
	{"aggregate imports no storage, query or ingestion code", []string{"strata/aggregate/..."}, aboveAggregate},
	// Interactive SQL (querynode/sqlplan) and SQL ingestion (ingest/msq)
	// translate expressions through one package, so it knows neither.
	{"the SQL expression translator imports neither SQL planner", []string{"strata/sqlexpr"}, []string{"strata/querynode/...", "strata/ingest/..."}},
}

// exceptions lists known violations as "from -> dependency", each with the
// reason it is tolerated and the issue that removes it. There are none; an
// entry that no longer occurs fails the test, so the list cannot go stale.
var exceptions = map[string]string{}

func TestImportRules(t *testing.T) {
	deps := listDeps(t)
	used := map[string]bool{}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, p := range slices.Concat(r.from, r.not) {
				if !matchesSome(p, deps) {
					t.Errorf("%s matches no package: update the rule after a move", p)
				}
			}
			for _, pkg := range slices.Sorted(maps.Keys(deps)) {
				if !matchAny(r.from, pkg) {
					continue
				}
				for _, d := range deps[pkg] {
					if !matchAny(r.not, d) {
						continue
					}
					edge := pkg + " -> " + d
					if _, ok := exceptions[edge]; ok {
						used[edge] = true
						continue
					}
					t.Errorf("%s: %s depends on %s (directly or through the packages it imports)", r.name, pkg, d)
				}
			}
		})
	}
	for edge := range exceptions {
		if !used[edge] {
			t.Errorf("exception %q no longer occurs: remove it", edge)
		}
	}
}

// listDeps returns every package of the module with the module's packages it
// depends on, directly or not (tests excluded).
func listDeps(t *testing.T) map[string][]string {
	t.Helper()
	// go test puts its own go first on PATH. -e: a package another change
	// leaves broken still lists its imports.
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "strata/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var own []string
		for _, d := range f[1:] {
			if d == "strata" || strings.HasPrefix(d, "strata/") {
				own = append(own, d)
			}
		}
		deps[f[0]] = own
	}
	if len(deps) == 0 {
		t.Fatal("go list found no packages")
	}
	return deps
}

func match(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, pkg) })
}

func matchesSome(pattern string, deps map[string][]string) bool {
	for pkg := range deps {
		if match(pattern, pkg) {
			return true
		}
	}
	return false
}
