#!/usr/bin/env bash
# Starts a Strata cluster on loopback and prints every node's name, role, URL,
# pid and log. Data and logs go under ${STRATA_CLUSTER_DIR:-./var/cluster}.
#
#   scripts/cluster-up.sh           3 control nodes (coordinator, overlord)
#   scripts/cluster-up.sh --full    3 control nodes, 2 historicals, 2 brokers,
#                                   2 middle managers and 2 routers
#   scripts/cluster-up.sh --tls     (with or without --full) HTTPS only on every
#                                   node, calls between nodes verified against a
#                                   CA made in $dir/tls by `strata certs` (kept
#                                   across restarts); curl --cacert $dir/tls/ca.pem
#
# Every node gets the control nodes' addresses (--coordinators) and nothing
# else: it announces itself to the leader and finds the others through it.
# All share one local deep storage directory. Stop the cluster with
# scripts/cluster-down.sh; restarting reuses the data dirs, so the nodes
# rejoin with their state.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${STRATA_BIN:-$root/bin/strata}
dir=${STRATA_CLUSTER_DIR:-$root/var/cluster}
base_http=${STRATA_BASE_HTTP_PORT:-18081}
base_raft=${STRATA_BASE_RAFT_PORT:-18301}
full=false
tls=false
for arg in "$@"; do
  case "$arg" in
    --full) full=true ;;
    --tls) tls=true ;;
    *) echo "usage: $0 [--full] [--tls]" >&2; exit 2 ;;
  esac
done
if [ ! -x "$bin" ]; then
  echo "building $bin ..." >&2
  (cd "$root" && make build >/dev/null)
fi
mkdir -p "$dir/deep"
dir=$(cd "$dir" && pwd)
scheme=http
tlsargs=()
curlargs=()
if $tls; then
  # HTTPS only, on the same ports; every node trusts the one CA.
  "$bin" certs --dir "$dir/tls" >/dev/null
  scheme=https
  tlsargs=(--set svc.enablePlaintextPort=false --set svc.enableTlsPort=true
    --set "svc.server.https.certFile=$dir/tls/node.pem" --set "svc.server.https.keyFile=$dir/tls/node-key.pem"
    --set "svc.client.https.trustStoreFile=$dir/tls/ca.pem")
  curlargs=(--cacert "$dir/tls/ca.pem")
fi
peers=""
coords=""
for i in 1 2 3; do
  peers+="n$i=127.0.0.1:$((base_raft + i - 1))=$scheme://127.0.0.1:$((base_http + i - 1)),"
  coords+="$scheme://127.0.0.1:$((base_http + i - 1)),"
done
peers=${peers%,}
coords=${coords%,}

# start NAME ROLE PORT [ARGS...]: starts one node unless it runs already.
start() {
  local name=$1 role=$2 port=$3
  shift 3
  if [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then
    echo "$name already running (pid $(cat "$dir/$name.pid"))" >&2
    return
  fi
  # Local input files: the repository's examples (what the README and
  # docs/deploy.md ingest) and $dir/ingest, for every node alike.
  "$bin" server --id "$name" --roles "$role" --http "127.0.0.1:$port" --data "$dir/$name" \
    --coordinators "$coords" --set "svc.storage.storageDirectory=$dir/deep" \
    --set "svc.ingestion.local.allowedBaseDirs=$root/examples,$dir/ingest" ${tlsargs[@]+"${tlsargs[@]}"} "$@" >>"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
  printf "%-4s %-22s $scheme://127.0.0.1:%-6s pid %-7s log %s\n" "$name" "$role" "$port" "$!" "$dir/$name.log"
}

nodes=3
for i in 1 2 3; do
  start "n$i" coordinator,overlord $((base_http + i - 1)) --raft "127.0.0.1:$((base_raft + i - 1))" --peers "$peers"
done
if $full; then
  # Ports: historicals base+300.., brokers base+200.., middle managers
  # base+400.., routers base+800.. (18383, 18282, 18491, 18888 by default).
  for i in 1 2; do start "h$i" historical $((base_http + 301 + i)); done
  for i in 1 2; do start "b$i" broker $((base_http + 200 + i)); done
  # Two task slots at least: a SQL ingestion runs a controller and a worker.
  for i in 1 2; do start "m$i" middleManager $((base_http + 409 + i)) --set svc.worker.capacity=4; done
  for i in 1 2; do start "r$i" router $((base_http + 806 + i)); done
  nodes=11
fi

# Wait until a leader is elected and every node has announced itself.
leader=""
for _ in $(seq 1 300); do
  for i in 1 2 3; do
    url="$scheme://127.0.0.1:$((base_http + i - 1))"
    if curl -sf ${curlargs[@]+"${curlargs[@]}"} "$url/svc/coordinator/v1/isLeader" >/dev/null 2>&1; then
      leader=$url
      break
    fi
  done
  if [ -n "$leader" ]; then
    live=$(curl -sf ${curlargs[@]+"${curlargs[@]}"} "$leader/svc/coordinator/v1/servers?simple" 2>/dev/null | grep -o '"state":"live"' | wc -l || true)
    if [ "$live" -ge "$nodes" ]; then
      echo "leader: $leader; $live nodes live (GET $leader/svc/coordinator/v1/servers?simple)"
      if $full; then
        echo "query and ingest through a router: $scheme://127.0.0.1:$((base_http + 807)) or $scheme://127.0.0.1:$((base_http + 808))"
      fi
      if $tls; then echo "TLS: curl --cacert $dir/tls/ca.pem; strata ingest --cacert $dir/tls/ca.pem --url $scheme://..."; fi
      exit 0
    fi
  fi
  sleep 0.1
done
echo "the cluster did not come up within 30 s (leader: ${leader:-none}); see the logs in $dir" >&2
exit 1
