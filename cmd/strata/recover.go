package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
)

// runRecover implements `strata recover --data DIR`: the damaged Raft store
// of a stopped control node is moved aside (kept, never deleted) so that the
// node, restarted as before, rejoins with an empty store and is restored from
// the leader's snapshot.
func runRecover(args []string) error {
	fs := newFlagSet("recover", "recover --data DIR [--force]")
	data := fs.String("data", "", "data directory of the stopped control node (svc.data.dir)")
	force := fs.Bool("force", false, "move the Raft store aside even if it is not found damaged")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("recover: unexpected argument %q", fs.Arg(0))
	}
	if *data == "" {
		return usagef("recover: --data DIR is required (the node's data directory)")
	}
	rec, err := cluster.Recover(*data, *force, time.Now())
	if err != nil {
		return err
	}
	if rec.Damage != nil {
		var damaged *cluster.DamagedStoreError
		if errors.As(rec.Damage, &damaged) {
			fmt.Fprintf(stdout, "damaged: %s: %s\n", damaged.File, damaged.Problem)
		}
	}
	fmt.Fprintf(stdout, "moved the Raft store aside to %s (kept: delete it once the node has caught up)\n", rec.MovedTo)
	fmt.Fprintln(stdout, "start the node as before (same --id and --peers): it rejoins and the leader sends it its snapshot")
	return nil
}

// startError reports a process that could not start. A damaged Raft store is
// logged as one structured line naming the file and the command that
// recovers the node, and not printed again.
func startError(logger hclog.Logger, err error) error {
	var damaged *cluster.DamagedStoreError
	if !errors.As(err, &damaged) {
		return err
	}
	logger.Error("cannot start: the Raft store is damaged", "file", damaged.File, "problem", damaged.Problem,
		"recover", damaged.Recommend(), "docs", `README, "Recovering a damaged node"`)
	return reportedError{err}
}
