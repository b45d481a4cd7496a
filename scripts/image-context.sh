#!/usr/bin/env bash
# Prepares the build context of Strata's container image (Dockerfile) in
# DIR (default dist/image): the Dockerfile and rootfs/, with the strata binary
# built static (CGO_ENABLED=0), this machine's CA certificates, /etc/passwd
# and /etc/group naming the unprivileged user 65532, a sticky world-writable
# /tmp and the data directory /var/lib/strata. The image is FROM scratch, so
# nothing is pulled: docker build -t strata:dev DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/dist/image}
ca=${STRATA_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
rm -rf "$out"
mkdir -p "$out/rootfs/usr/local/bin" "$out/rootfs/etc/ssl/certs" "$out/rootfs/tmp" "$out/rootfs/var/lib/strata"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$out/rootfs/usr/local/bin/strata" ./cmd/strata)
cp "$ca" "$out/rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nstrata:x:65532:65532:strata:/var/lib/strata:/sbin/nologin\n' >"$out/rootfs/etc/passwd"
printf 'root:x:0:\nstrata:x:65532:\n' >"$out/rootfs/etc/group"
chmod 1777 "$out/rootfs/tmp"
cp "$root/Dockerfile" "$out/Dockerfile"
echo "image context in $out ($(du -sh "$out" | cut -f1)); build it with: docker build -t strata:dev $out"
