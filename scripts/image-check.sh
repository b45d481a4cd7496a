#!/usr/bin/env bash
# Checks the container image's files without a container engine. Given the
# build context scripts/image-context.sh made (default dist/image), it unpacks
# rootfs.tar with its owners and modes, as the Dockerfile's ADD does, and runs
# that tree the way the image would: chroot into it as user 65532:65532 with
# no other group, TMPDIR=/tmp, the image's command (the quickstart, router on
# 0.0.0.0:8888), in a network namespace of its own.
# It then ingests examples/wiki.json with SQL through the router (strata
# ingest, run the same way), counts the rows with a query, and checks that the
# server ran as 65532 and that everything it wrote under /var/lib/strata
# belongs to 65532. Needs root, chroot, unshare and ip.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = --inside ]; then
  # In the new network namespace; $2 is the unpacked rootfs.
  fs=$2
  ip link set lo up
  cp "$root/examples/wiki.json" "$fs/tmp/wiki.json"
  cat >"$fs/tmp/wiki.sql" <<'SQL'
INSERT INTO wiki
SELECT TIME_PARSE("timestamp") AS __time, page, "user", added, deleted
FROM TABLE(EXTERN('{"type":"local","files":["/tmp/wiki.json"]}', '{"type":"json"}',
  '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"added","type":"long"},{"name":"deleted","type":"long"}]'))
PARTITIONED BY DAY
SQL
  chmod 644 "$fs/tmp/wiki.json" "$fs/tmp/wiki.sql"
  as_image() { env -i TMPDIR=/tmp /usr/sbin/chroot --userspec=65532:65532 "$fs" /usr/local/bin/strata "$@"; }
  echo "strata version: $(as_image version)"
  # Not through as_image: env execs chroot, which execs strata, so $! is the server's pid.
  env -i TMPDIR=/tmp /usr/sbin/chroot --userspec=65532:65532 "$fs" /usr/local/bin/strata \
    quickstart --data /var/lib/strata --set svc.router.address=0.0.0.0:8888 >"$fs.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
  for _ in $(seq 1 300); do
    curl -sf localhost:8888/status/health >/dev/null 2>&1 && break
    kill -0 $pid 2>/dev/null || { echo "the quickstart exited:" >&2; cat "$fs.log" >&2; exit 1; }
    sleep 0.2
  done
  echo "server process: $(grep -E '^(Uid|Gid|Groups):' /proc/$pid/status | tr -s '\t' ' ' | paste -sd ';')"
  as_image ingest --sql /tmp/wiki.sql --url http://127.0.0.1:8888 2>&1 | tail -1
  answer=$(curl -s -XPOST localhost:8888/svc/v2/ -H 'Content-Type: application/json' \
    -d '{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-04"],"granularity":"all","aggregations":[{"type":"count","name":"rows"}]}')
  echo "query: $answer"
  status=0
  grep -q '"rows":36' <<<"$answer" || { echo "FAIL: the query did not count 36 rows" >&2; status=1; }
  grep -q '^Uid:[[:space:]]*65532[[:space:]]65532[[:space:]]65532[[:space:]]65532$' /proc/$pid/status ||
    { echo "FAIL: the server did not run as 65532" >&2; status=1; }
  others=$(find "$fs/var/lib/strata" ! -uid 65532 | head -5)
  [ -z "$others" ] || { echo "FAIL: not owned by 65532: $others" >&2; status=1; }
  echo "files under /var/lib/strata: $(find "$fs/var/lib/strata" | wc -l), all owned by 65532: $([ -z "$others" ] && echo yes || echo no)"
  exit $status
fi

ctx=${1:-$root/dist/image}
[ "$(id -u)" = 0 ] || { echo "image-check: needs root (chroot, unshare)" >&2; exit 2; }
[ -f "$ctx/rootfs.tar" ] || { echo "image-check: no $ctx/rootfs.tar; run scripts/image-context.sh $ctx" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/rootfs"
tar --numeric-owner --same-owner --same-permissions -C "$work/rootfs" -xf "$ctx/rootfs.tar"
echo "rootfs.tar: $(stat -c '%A %u:%g %n' "$work/rootfs/tmp" "$work/rootfs/var/lib/strata" "$work/rootfs/usr/local/bin/strata" | sed "s|$work/rootfs||" | paste -sd ';')"
if unshare --net "$0" --inside "$work/rootfs"; then
  echo "image-check: OK"
else
  echo "image-check: FAILED (server log: kept in $work.log)" >&2
  cp "$work/rootfs.log" "$work.log" 2>/dev/null || true
  exit 1
fi
