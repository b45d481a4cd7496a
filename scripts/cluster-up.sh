#!/usr/bin/env bash
# Starts a 3-node Strata control cluster on loopback ports and prints each node's
# URL and pid. Data and logs go under ${STRATA_CLUSTER_DIR:-./var/cluster}.
# Stop it with scripts/cluster-down.sh. Restarting reuses the data dirs, so the
# nodes rejoin with their state.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${STRATA_BIN:-$root/bin/strata}
dir=${STRATA_CLUSTER_DIR:-$root/var/cluster}
base_http=${STRATA_BASE_HTTP_PORT:-18081}
base_raft=${STRATA_BASE_RAFT_PORT:-18301}
if [ ! -x "$bin" ]; then
  echo "building $bin ..." >&2
  (cd "$root" && make build >/dev/null)
fi
mkdir -p "$dir"
peers=""
for i in 1 2 3; do
  peers+="n$i=127.0.0.1:$((base_raft + i - 1))=http://127.0.0.1:$((base_http + i - 1)),"
done
peers=${peers%,}
for i in 1 2 3; do
  if [ -f "$dir/n$i.pid" ] && kill -0 "$(cat "$dir/n$i.pid")" 2>/dev/null; then
    echo "n$i already running (pid $(cat "$dir/n$i.pid"))" >&2
    continue
  fi
  http=127.0.0.1:$((base_http + i - 1))
  "$bin" server --id "n$i" --roles coordinator,overlord --http "$http" \
    --raft "127.0.0.1:$((base_raft + i - 1))" --data "$dir/n$i" --peers "$peers" \
    >>"$dir/n$i.log" 2>&1 &
  echo $! >"$dir/n$i.pid"
  echo "n$i  http://$http  pid $!  log $dir/n$i.log"
done
# Wait until a leader is elected.
for _ in $(seq 1 100); do
  for i in 1 2 3; do
    if curl -sf "http://127.0.0.1:$((base_http + i - 1))/svc/coordinator/v1/isLeader" >/dev/null 2>&1; then
      echo "leader: n$i (http://127.0.0.1:$((base_http + i - 1)))"
      exit 0
    fi
  done
  sleep 0.1
done
echo "no leader elected within 10 s; see the logs in $dir" >&2
exit 1
