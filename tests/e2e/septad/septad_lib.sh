# Shared by the septad end-to-end scripts (sourced, not run): a throwaway
# data directory that is cleaned up whatever happens, and starting septad on
# free ports. Expects $septad to name the binary.
dir=$(mktemp -d /tmp/septad-e2e.XXXXXX)
log=$dir/septad.log
pid=""
cleanup() {
  [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
  # A killed septad's PostgreSQL is stopped by its lifeline helper, but the
  # script must not depend on the feature it tests.
  if [[ -f $dir/data/postgres/data/postmaster.pid ]]; then
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$dir/data/postgres/data" -m immediate stop >/dev/null 2>&1 ||
      /usr/lib/postgresql/15/bin/pg_ctl -D "$dir/data/postgres/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- septad log:"; cat "$log"; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
  echo $((20000 + RANDOM % 20000)); }

# Starts septad (extra arguments go to it) on ports the kernel picks (port
# 0: no race with another test for a port chosen beforehand) and waits up to
# 30 s for its ready line; sets $pid, $http_port, $grpc_port (read from that
# line) and $ready_ms.
start() {
  local begun line; begun=$(now_ms)
  : >"$log"  # now, not in the child: the last start's ready line must be gone before we look
  "$septad" --data-dir "$dir/data" --kubesim-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 \
    "$@" >>"$log" 2>&1 &
  pid=$!
  until line=$(grep -m1 "septad ready" "$log"); do
    kill -0 "$pid" 2>/dev/null || fail "septad exited during start"
    (($(now_ms) - begun < 30000)) || fail "septad not ready after 30 s"
    sleep 0.05
  done
  ready_ms=$(($(now_ms) - begun))
  http_port=$(sed -E 's|.*REST https?://[^ ]*:([0-9]+) gRPC.*|\1|' <<<"$line")
  grpc_port=$(sed -E 's|.* gRPC [^ ]*:([0-9]+).*|\1|' <<<"$line")
  [[ $http_port =~ ^[0-9]+$ && $grpc_port =~ ^[0-9]+$ ]] || fail "no REST or gRPC port in: $line"
}

# rest TOKEN METHOD PATH [BODY]: the HTTP status; the body in $dir/reply, the headers in $dir/headers.
rest() {
  curl -s -o "$dir/reply" -D "$dir/headers" -w '%{http_code}' -X "$2" -H "Authorization: Bearer $1" \
    -H 'Content-Type: application/json' ${4:+-d "$4"} "http://127.0.0.1:$http_port$3"
}
reply() { cat "$dir/reply"; }
# json EXPRESSION: evaluates a Python expression over the last reply (`r`).
json() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list,bool)) else v)' "$dir/reply" "$1"; }
# kc KUBECONFIG kubectl-args...: the real kubectl ($kubectl) with its own cache directory.
kc() { "$kubectl" --request-timeout=10s --cache-dir "$dir/kube-cache" --kubeconfig "$@"; }

# REST as the admin whose token the script put in $token, and kubectl against
# septad's simulated host.
api() { rest "$token" "$@"; }  # method path [body]: the HTTP status
get() { curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$http_port$1"; }
k() { kubectl --kubeconfig "$dir/data/kubeconfig" --request-timeout=5s "$@"; }
# The status of condition $2 in the virtual cluster JSON $1 ("" when absent).
condition() {  # JSON TYPE [FIELD]: the condition's status, or FIELD (message, reason)
  python3 -c 'import json,sys; vc=json.loads(sys.argv[1]); print(next((c.get(sys.argv[3], "") for c in vc.get("conditions",[]) if c["type"]==sys.argv[2]), ""))' "$1" "$2" "${3:-status}"
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"; }
wait_for() {  # what seconds command...: until the command succeeds
  local what=$1 seconds=$2 begun; shift 2
  begun=$(now_ms)
  until "$@"; do
    (($(now_ms) - begun < seconds * 1000)) || fail "$what not within $seconds s"
    sleep 0.05
  done
}

# Tenant acme (shared tier) and its virtual cluster train (300 milli-GPU,
# 4 CPUs, 8 GiB, 20 pods); $created is when the create was sent.
create_acme_train() {
  [[ $(api POST /v1/tenants '{"name":"acme","trust_tier":"shared"}') == 201 ]] || fail "create tenant"
  created=$(now_ms)
  [[ $(api POST /v1/tenants/acme/vclusters \
    '{"name":"train","capacity":{"shared":{"milli_gpu":300}},"quota":{"cpu_milli":4000,"memory_mib":8192,"pods":20}}') == 201 ]] ||
    fail "create virtual cluster"
}

# owner_token TENANT: an owner API token of the tenant (1 h), created by the
# admin whose token is in $token; the reply (with its id) stays in $dir/reply.
owner_token() {
  [[ $(rest "$token" POST /v1/tokens "{\"principal\":\"tenant:$1\",\"role\":\"owner\",\"ttl\":\"1h\"}") == 201 ]] ||
    fail "create an owner token of $1: $(reply)"
  json 'r["token"]'
}
# vcluster_ready TOKEN TENANT NAME: the virtual cluster is READY, as TOKEN reads it.
vcluster_ready() { [[ $(rest "$1" GET "/v1/tenants/$2/vclusters/$3") == 200 && $(json 'r["state"]') == READY ]]; }
# gpu_pod NAME UTILIZATION MEMORY-MIB [GPUS]: a restricted pod holding GPUS
# (1) GPUs that kubesim's dcgm-exporter shows busy UTILIZATION percent of the
# time (Run:ai's annotation) and holding MEMORY-MIB on each.
gpu_pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations:
    run.ai/simulated-gpu-utilization: "$2"
    simulation.septa.dev/gpu-memory-mib: "$3"
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
    - name: main
      image: busybox
      securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      resources:
        limits: {cpu: 500m, memory: 512Mi, nvidia.com/gpu: ${4:-1}}
YAML
}
