#!/usr/bin/env bash
# Prepares the build context of Strata's container image (Dockerfile) in
# DIR (default dist/image): the Dockerfile and rootfs.tar, the image's whole
# file tree with its owners: the strata binary built static (CGO_ENABLED=0),
# this machine's CA certificates, /etc/passwd and /etc/group naming the
# unprivileged user 65532, a sticky world-writable /tmp, and the data
# directory /var/lib/strata owned by 65532. The Dockerfile ADDs the tar, which
# keeps those owners and modes (a COPY would make every file root's). The
# image is FROM scratch, so nothing is pulled: docker build -t strata:dev DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/dist/image}
ca=${STRATA_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
rm -rf "$out"
fs="$out/rootfs"
mkdir -p "$fs/usr/local/bin" "$fs/etc/ssl/certs" "$fs/tmp" "$fs/var/lib/strata"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$fs/usr/local/bin/strata" ./cmd/strata)
cp "$ca" "$fs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nstrata:x:65532:65532:strata:/var/lib/strata:/sbin/nologin\n' >"$fs/etc/passwd"
printf 'root:x:0:\nstrata:x:65532:\n' >"$fs/etc/group"
chmod 755 "$fs/usr/local/bin/strata" "$fs/var/lib/strata"
chmod 644 "$fs/etc/passwd" "$fs/etc/group" "$fs/etc/ssl/certs/ca-certificates.crt"
chmod 1777 "$fs/tmp"
tar --numeric-owner --owner=0 --group=0 --exclude=./var/lib/strata -C "$fs" -cf "$out/rootfs.tar" .
tar --numeric-owner --owner=65532 --group=65532 -C "$fs" -rf "$out/rootfs.tar" ./var/lib/strata
rm -rf "$fs"
cp "$root/Dockerfile" "$out/Dockerfile"
echo "image context in $out ($(du -sh "$out" | cut -f1)); build it with: docker build -t strata:dev $out"
