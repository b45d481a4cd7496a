// Command strata is Strata's single binary: every role, the quickstart cluster and
// the operator tooling.
package main

import (
	"fmt"
	"os"

	"strata/server"
)

const usage = `strata: a distributed, real-time analytics data store (Druid-compatible API)

Usage:
  strata quickstart [--data DIR] [--config FILE]   run the whole cluster in one process
  strata server --id ID --roles coordinator,overlord --http HOST:PORT --raft HOST:PORT \
                --data DIR [--peers ID=RAFTHOST:PORT=HTTPURL,...] [--config FILE] [--set svc.key=value]...
                                                   run one node
  strata segment build --datasource D --input FILE.json --timestamp-column C \
                [--segment-granularity DAY] [--query-granularity G] [--coordinator URL]
                                                   build segments from NDJSON and publish them
  strata ingest --sql FILE|- [--url URL] [--context JSON]
                                                   run SQL ingestion, following it with a progress line
  strata task status|wait|cancel ID [--url URL]    inspect, follow or cancel a task
  strata log dump --data DIR                       print every command in a node's Raft log
  strata log replay --data DIR                     replay a node's log into a fresh state machine
  strata version                                   print the version

Settings are svc.* properties (README, "Configuration"); --config reads a
runtime.properties file and flags override it.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "quickstart":
		err = runQuickstart(args)
	case "server":
		err = runServer(args)
	case "log":
		err = runLog(args)
	case "segment":
		err = runSegment(args)
	case "ingest":
		err = runIngest(args)
	case "task":
		err = runTask(args)
	case "version", "--version":
		fmt.Println("strata", server.Version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "strata: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata:", err)
		os.Exit(1)
	}
}
