#!/usr/bin/env bash
# Stops the cluster started by scripts/cluster-up.sh (data dirs are kept; remove
# ${STRATA_CLUSTER_DIR:-./var/cluster} to start from scratch). Routers, brokers,
# middle managers and historicals stop first, each telling the leader it leaves;
# the control nodes last.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${STRATA_CLUSTER_DIR:-$root/var/cluster}
for prefix in r b m h n; do
  for f in "$dir"/$prefix[0-9]*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
      echo "stopped $(basename "$f" .pid) (pid $pid)"
    fi
    rm -f "$f"
  done
done
