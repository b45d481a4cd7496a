# Strata build, test and benchmark entry points. `make test` is what CI runs.
GO       ?= go
PKGS     := ./...
BIN      := bin/strata
CONFORMANCE_DIR ?= $(abspath ../shared/conformance/druid)
CONFORMANCE_SQL_DIR ?= $(abspath ../shared/conformance/druid-sql)

.PHONY: all build test vet fmt-check raft-fork quickstart bench-control bench-query bench-ingest bench-audit bench-console conformance chaos clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/strata

# Vet, formatting, the Raft fork's check, then every package's tests under the race detector.
test: vet fmt-check raft-fork
	$(GO) test -race -timeout 15m -count=1 $(PKGS)

# third_party/raft must be upstream hashicorp/raft plus third_party/raft.patch;
# upstream's own tests (most of them, about a minute) run against it.
raft-fork:
	GO=$(GO) ./scripts/check-raft-fork.sh

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

quickstart: build
	./$(BIN) quickstart

# Control-plane benchmark: 3-node loopback cluster (real processes, fsync on),
# write latency with 1 and 64 clients, and leader failover after kill -9; then
# the same write loads against strata built with and without the Raft patch
# (third_party/raft) in alternating rounds, to show what the patch buys.
BENCH_CONTROL_FLAGS ?= --compare-unpatched
bench-control: build
	$(GO) run ./cmd/bench-control --bin $(BIN) $(BENCH_CONTROL_FLAGS)

# Audit replay speed: the state machine rebuilt from a 50,000-command log
# (all archived, then all in the live log) on one core; prints commands/s (target ≥ 100,000).
bench-audit:
	GOMAXPROCS=1 $(GO) test -run '^$$' -bench BenchmarkReplay -benchtime 5x -cpu 1 ./audit/

# Data plane against ClickHouse on ../shared/bench (10M rows by default; ROWS=n to change).
ROWS ?= 10000000
# AUTH=false skips the second, authenticated run (the per-query overhead of basic authentication).
AUTH ?= true
# METRICS=false skips the comparison of data planes with the query path's metric updates on and off
# (svc.metrics.queryPath; cmd/bench-dataplane/metricscost.go).
METRICS ?= true

bench-query: build
	$(GO) run ./cmd/bench-dataplane --mode query --rows $(ROWS) --auth=$(AUTH) --metrics-cost=$(METRICS)

bench-ingest: build
	$(GO) run ./cmd/bench-dataplane --mode ingest --rows $(ROWS)

# The web console on a quickstart with the README's sample data: each of the
# seven views loaded in headless Chromium (cache off), median and max time to
# its first data; and the first load's bytes. Needs chromium; holds
# /tmp/quickstart.lock. BENCH_CONSOLE_FLAGS passes e.g. --runs 11 --screenshots DIR.
BENCH_CONSOLE_FLAGS ?=
bench-console: build
	$(GO) run ./cmd/bench-console --bin $(BIN) $(BENCH_CONSOLE_FLAGS)

# Druid's conformance corpus (../shared/conformance/druid, or CONFORMANCE_DIR)
# against a quickstart started by the harness, then Druid's SQL tests
# (../shared/conformance/druid-sql, or CONFORMANCE_SQL_DIR; totals only, they
# do not fail the build yet). CONFORMANCE_FLAGS passes e.g. --sql-only --sql qaAggFuncs.
conformance: build
	STRATA_CONFORMANCE_DIR=$(CONFORMANCE_DIR) STRATA_CONFORMANCE_SQL_DIR=$(CONFORMANCE_SQL_DIR) $(GO) run ./cmd/conformance --bin $(BIN) $(CONFORMANCE_FLAGS)

# Fault injection (chaos/): clusters of real processes, each in a network
# namespace of its own when run as root, with kill -9, SIGSTOP, partitions,
# crashes and corrupted segment files while clients check every answer;
# about 10 minutes. `make test` runs a short version (TestChaosShort).
CHAOS_FLAGS ?=
chaos: build
	$(GO) run ./cmd/chaos --bin $(BIN) $(CHAOS_FLAGS)

clean:
	rm -rf bin var
