# Strata's container image: the static strata binary on an empty base, run as
# an unprivileged numeric user. Nothing is pulled: the build context is the
# directory scripts/image-context.sh prepares (see docs/deploy.md):
#
#   scripts/image-context.sh dist/image     # static build (CGO_ENABLED=0), rootfs.tar
#   docker build -t strata:dev dist/image
#
# rootfs.tar holds /usr/local/bin/strata, the build machine's CA certificates
# (for https S3 endpoints), /etc/passwd and /etc/group naming user 65532, a
# sticky world-writable /tmp (brokers stage inline and subquery tables there)
# and the data directory, which belongs to that user. ADD unpacks it with the
# owners and modes it records, which COPY would not keep.
FROM scratch
ADD rootfs.tar /
USER 65532:65532
ENV TMPDIR=/tmp
WORKDIR /var/lib/strata
VOLUME ["/var/lib/strata"]
# HTTP: control nodes 8081, brokers 8082, historicals 8083, middle managers
# 8091, routers 8888; Raft between control nodes 8300.
EXPOSE 8081 8082 8083 8091 8888 8300
ENTRYPOINT ["/usr/local/bin/strata"]
# Without arguments: the whole cluster in one process, its router reachable
# from outside the container on 8888.
CMD ["quickstart", "--data", "/var/lib/strata", "--set", "svc.router.address=0.0.0.0:8888"]
