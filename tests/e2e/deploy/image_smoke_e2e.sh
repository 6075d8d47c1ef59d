#!/usr/bin/env bash
# The image's root filesystem (deploy/image/rootfs.sh: Debian packages by
# mmdebstrap, cached by the hash of the pinned package list) with this
# build's septad, run as the StatefulSet runs it, without a container
# engine: in a private mount namespace (unshare -m) the root filesystem is
# bind-mounted read-only, the pod's volumes are mounted where the
# StatefulSet mounts them (config.yaml of deploy/kustomize/base at
# /etc/septa/config, the KEK 0440 with group 65532 at /etc/septa/kek, tmpfs
# at /var/lib/septa and /tmp, a service account's token, CA and namespace
# at /var/run/secrets/kubernetes.io/serviceaccount), and septad runs
# chrooted as uid/gid 65532 with no_new_privs and a clean environment (the
# StatefulSet's variables, KUBERNETES_SERVICE_HOST/PORT): `kubeconfig:
# in-cluster` against a septa-kubesim where the kubesim overlay is applied
# (so as its own ServiceAccount) and the test run's PostgreSQL (by TCP). It must
# become ready (/readyz 200), run as 65532 on a read-only root, hold no
# shell, and stop cleanly on SIGTERM.
# The first run after a change of the package list builds the libraries'
# part (about 15 s to 2 min, Debian's mirror); later runs copy the cache.
# Needs root (mount namespaces, chroot): otherwise it exits 77, which CTest
# reports as Skipped (never as passed), saying why.
# Usage: image_smoke_e2e.sh SEPTAD SEPTA_KUBESIM SEPTA_VCP_ADMIN TESTDB_DIR REPO_ROOT
set -euo pipefail
septad=$1
kubesim=$2
admin=$3
testdb_dir=$4
root=$5
if [[ $(id -u) -ne 0 ]]; then
  echo "image_smoke_e2e: SKIPPED: needs root for a mount namespace and chroot (runs as uid $(id -u))"
  exit 77
fi
for tool in unshare setpriv chroot mount mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "image_smoke_e2e: $tool is missing (deploy/dev/bootstrap.sh installs it)"; exit 1; }
done
kubectl=$("$root/deploy/tools/kubectl.sh")
dir=$(mktemp -d /tmp/septa-image-smoke.XXXXXX)
kubesim_pid='' septad_pid='' relay_pid=''
cleanup() {
  if [[ -n $septad_pid ]]; then kill -9 "$septad_pid" 2>/dev/null || true; fi
  if [[ -n $kubesim_pid ]]; then kill "$kubesim_pid" 2>/dev/null || true; fi
  if [[ -n $relay_pid ]]; then kill "$relay_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- septad log (in the image):"
  tail -40 "$dir/septad.log" 2>/dev/null || true
  echo "--- septa-kubesim log:"
  tail -10 "$dir/kubesim.log" 2>/dev/null || true
  exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# 1. The root filesystem, this build's septad in it.
begun=$(now_ms)
web=()
[[ -f $root/web/dist/index.html ]] && web=(--web "$root/web/dist")
bash "$root/deploy/image/rootfs.sh" --septad "$septad" "${web[@]}" "$dir/rootfs" 2>&1 | grep -v '^I: ' ||
  fail "deploy/image/rootfs.sh failed"
rootfs=$dir/rootfs
[[ -x $rootfs/usr/local/bin/septad ]] || fail "no septad in the root filesystem"
echo "image_smoke_e2e: root filesystem ready in $(($(now_ms) - begun)) ms ($(du -sm "$rootfs" | cut -f1) MB)"
for shell in bin/sh bin/bash bin/dash usr/bin/sh usr/bin/bash usr/bin/dash usr/bin/perl; do
  [[ ! -e $rootfs/$shell ]] || fail "the image holds /$shell"
done

# 2. The host: septa-kubesim with the kubesim overlay applied; septad's ServiceAccount token.
"$kubesim" --inventory "$root/deploy/dev/inventory.yaml" --listen 127.0.0.1:0 --kubeconfig-out "$dir/admin.kubeconfig" \
  >"$dir/kubesim.log" 2>&1 &
kubesim_pid=$!
for _ in $(seq 100); do [[ -s $dir/admin.kubeconfig ]] && break; sleep 0.1; done
[[ -s $dir/admin.kubeconfig ]] || fail "septa-kubesim wrote no kubeconfig"
kc() { "$kubectl" --kubeconfig "$dir/admin.kubeconfig" --request-timeout=10s "$@"; }
kc apply --server-side --field-manager septa-install -k "$root/deploy/kustomize/overlays/kubesim" >/dev/null ||
  fail "the kubesim overlay was not accepted"
mkdir -p "$dir/sa" "$dir/config" "$dir/kek" "$dir/pgrun"
echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' >"$dir/tr.json"
kc create --raw /api/v1/namespaces/septa-system/serviceaccounts/septad/token -f "$dir/tr.json" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["token"], end="")' >"$dir/sa/token"
kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$dir/sa/ca.crt"
printf septa-system >"$dir/sa/namespace"
server=$(kc config view --minify -o jsonpath='{.clusters[0].cluster.server}')
server=${server#https://}

# 3. The pod's volumes: config.yaml as the base ships it, the KEK as the kubelet makes it under fsGroup.
cp "$root/deploy/kustomize/base/config.yaml" "$dir/config/config.yaml"
head -c 32 /dev/urandom | base64 >"$dir/kek/kek"
chgrp 65532 "$dir/kek/kek"
chmod 0440 "$dir/kek/kek"
chmod -R a+rX "$dir/sa" "$dir/config"
# The test run's PostgreSQL listens on a Unix socket only its owner may
# use (0700): a relay run as root here serves it on a loopback TCP port,
# which septad reaches as a pod reaches its database, by TCP.
db_url=$("$admin" createdb "$testdb_dir" "image_smoke_$$_$RANDOM")
read -r socket database < <(python3 -c 'import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1]); q = u.parse_qs(p.query)
print(q["host"][0] + "/.s.PGSQL." + q.get("port", ["5432"])[0], p.path.lstrip("/"))' "$db_url")
db_port=$(free_port)
python3 - "$socket" "$db_port" <<'PY' >"$dir/relay.log" 2>&1 &
import select, socket, socketserver, sys
class Relay(socketserver.BaseRequestHandler):
    def handle(self):
        upstream = socket.socket(socket.AF_UNIX)
        upstream.connect(sys.argv[1])
        ends = [self.request, upstream]
        while True:
            for s in select.select(ends, [], [])[0]:
                data = s.recv(65536)
                if not data:
                    return
                (upstream if s is self.request else self.request).sendall(data)
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer.daemon_threads = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[2])), Relay).serve_forever()
PY
relay_pid=$!
db_url="postgresql://septa@127.0.0.1:$db_port/$database"
http_port=$(free_port) grpc_port=$(free_port) vcluster_port=$(free_port) metrics_port=$(free_port)

# 4. septad in the image: a private mount namespace, the root read-only, chroot as 65532.
cat >"$dir/pod.sh" <<SH
set -euo pipefail
r=$rootfs
mount --make-rprivate /
mount --bind "\$r" "\$r"
mount -t tmpfs -o mode=0777,size=256m data "\$r/var/lib/septa"
mount -t tmpfs -o mode=1777,size=64m tmp "\$r/tmp"
mount -t proc proc "\$r/proc"
mount -t tmpfs -o mode=0755,size=1m dev "\$r/dev"
for d in null zero random urandom; do touch "\$r/dev/\$d"; mount --bind "/dev/\$d" "\$r/dev/\$d"; done
mount --bind -o ro "$dir/config" "\$r/etc/septa/config"
mount --bind -o ro "$dir/kek" "\$r/etc/septa/kek"
mount --bind -o ro "$dir/sa" "\$r/var/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro "\$r"
exec env -i PATH=/usr/local/bin HOME=/home/nonroot \
  KUBERNETES_SERVICE_HOST=${server%:*} KUBERNETES_SERVICE_PORT=${server##*:} \
  SEPTA_REPLICA_ID=septad-0 SEPTA_DATABASE_URL='$db_url' SEPTA_METRICS_ADDR=127.0.0.1:$metrics_port \
  SEPTA_SCHEDULER=kai SEPTA_VCLUSTER_ADVERTISE_ADDRESS=127.0.0.1 \
  SEPTA_HTTP_ADDR=127.0.0.1:$http_port SEPTA_GRPC_ADDR=127.0.0.1:$grpc_port SEPTA_VCLUSTER_ADDR=127.0.0.1:$vcluster_port \
  $(command -v setpriv) --no-new-privs $(command -v chroot) --userspec=65532:65532 --groups=65532 "\$r" \
  /usr/local/bin/septad --config /etc/septa/config/config.yaml
SH
begun=$(now_ms)
unshare --mount bash "$dir/pod.sh" >"$dir/septad.log" 2>&1 &
septad_pid=$!  # unshare, bash, env, setpriv and chroot each exec the next: this is septad's pid
ready() { [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/readyz") == 200 ]]; }
until ready; do
  kill -0 "$septad_pid" 2>/dev/null || fail "septad exited during start"
  (($(now_ms) - begun < 60000)) || fail "septad not ready within 60 s"
  sleep 0.1
done
echo "image_smoke_e2e: septad ready (/readyz 200) $(($(now_ms) - begun)) ms after its start"

# 5. What it runs as, and on what.
[[ $(readlink "/proc/$septad_pid/exe") == */usr/local/bin/septad ]] ||
  fail "pid $septad_pid is $(readlink "/proc/$septad_pid/exe"), not septad"
[[ $(awk '/^(Uid|Gid|Groups):/ {$1 = ""; print}' "/proc/$septad_pid/status" | tr -s ' \n' ' ') == \
  " 65532 65532 65532 65532 65532 65532 65532 65532 65532 " ]] || fail "septad's ids: $(grep -E '^(Uid|Gid|Groups):' "/proc/$septad_pid/status")"
[[ $(awk '/^NoNewPrivs:/ {print $2}' "/proc/$septad_pid/status") == 1 ]] || fail "septad runs without no_new_privs"
[[ $(awk '/^CapEff:/ {print $2}' "/proc/$septad_pid/status") == 0000000000000000 ]] || fail "septad holds capabilities"
[[ $(awk '$5 == "/" {print $6}' "/proc/$septad_pid/mountinfo") == ro,* ]] ||
  fail "septad's root is not read-only: $(awk '$5 == "/"' "/proc/$septad_pid/mountinfo")"
[[ -s /proc/$septad_pid/root/var/lib/septa/data/admin.token ]] || fail "septad wrote no data_dir on its volume"
# The in-cluster credentials reached the host: the provisioner runs and the inventory's nodes were read.
if ! grep -q 'provisioner: started' "$dir/septad.log" || ! grep -q 'h100-0' "$dir/septad.log"; then
  fail "septad did not reach the host with its in-cluster credentials"
fi
grep -q "is forbidden: User" "$dir/septad.log" && fail "septad met a 403 with its ServiceAccount's RBAC"
[[ $(curl -s "http://127.0.0.1:$metrics_port/metrics" | grep -c '^septa_') -gt 0 ]] || fail "no metrics on metrics_addr"
echo "image_smoke_e2e: septad runs as 65532:65532 (no_new_privs, no capabilities) on a read-only root, in-cluster as its ServiceAccount"

# 6. SIGTERM: a clean stop.
kill -TERM "$septad_pid"
stopped=0
for _ in $(seq 150); do kill -0 "$septad_pid" 2>/dev/null || { stopped=1; break; }; sleep 0.1; done
((stopped)) || fail "septad still runs 15 s after SIGTERM"
rc=0
wait "$septad_pid" || rc=$?
septad_pid=''
((rc == 0)) || fail "septad exited with $rc after SIGTERM"
echo "image_smoke_e2e: ok"
