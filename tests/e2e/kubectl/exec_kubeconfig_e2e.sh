#!/usr/bin/env bash
# Exec kubeconfigs end to end (docs/identity.md "Exec kubeconfigs"): septad
# on its embedded defaults (simulated host and virtual control planes), a
# tenant's owner token as the user's septactl credential ($SEPTA_TOKEN),
# `septactl vcluster kubeconfig --exec` with a 60 s certificate lifetime,
# and the real kubectl through it:
#  1. the kubeconfig names septactl itself as the exec plugin, holds no token,
#     certificate or key, and its certificate is cached (0700/0600);
#  2. kubectl get/create/get (and four kubectl runs at once) reuse that one
#     certificate: one credential listed, the cache file unchanged;
#  3. the plugin run directly: a cached run and a run that issues, timed;
#  4. a bogus, a revoked or no septactl token: kubectl fails with septactl's
#     message on its stderr (a fresh cache); a fresh cached certificate is
#     still used with a bogus token (septad is not asked);
#  5. the certificate's expiry crossed with no manual step (polling the
#     cache file's expire_time): the old certificate is refused, four kubectl
#     runs at once all work, and exactly one new certificate was issued (two
#     listed), the cache file holding it; the next run reuses it.
# Usage: exec_kubeconfig_e2e.sh <septad> <septactl> <kubectl>
set -euo pipefail
septad=$1
septactl=$2
kubectl=$3
source "$(dirname "$0")/../septad/septad_lib.sh"

ttl=60s
start
token=$(cat "$dir/data/admin.token")
[[ $(api POST /v1/tenants '{"name":"acme","trust_tier":"shared"}') == 201 ]] || fail "create tenant acme"
acme=$(owner_token acme)
[[ $(rest "$acme" POST /v1/tenants/acme/vclusters \
  '{"name":"train","capacity":{"shared":{"milli_gpu":100}},"quota":{"cpu_milli":1000,"memory_mib":1024,"pods":5}}') == 201 ]] ||
  fail "create acme/train: $(reply)"
wait_for "acme/train READY" 30 vcluster_ready "$acme" acme train

# The user's environment, which kubectl hands to its exec plugin.
mkdir -p "$dir/home"
cache=$dir/xdg-cache
user_env() { env HOME="$dir/home" XDG_CACHE_HOME="$cache" SEPTA_TOKEN="$acme" "$@"; }
sctl() { user_env "$septactl" --server "127.0.0.1:$grpc_port" "$@"; }
kexec() { user_env "$kubectl" --request-timeout=20s --cache-dir "$dir/kube-cache" --kubeconfig "$kubeconfig" "$@"; }
entry=$cache/septa/credentials/acme_train_edit@127.0.0.1_$grpc_port.json
cached() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$entry" "$1"; }
# The edit certificates issued for acme/train, as septactl lists them.
# kubectl's words for a 401 (as septad_credentials_e2e.sh).
unauthorized() { grep -q -e Unauthorized -e 'asked for the client to provide credentials' <<<"$1"; }
edit_credentials() {
  sctl -o json vcluster credentials acme train |
    python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin).get("credentials",[]) if c["role"]=="edit"))'
}

# 1. The exec kubeconfig.
kubeconfig=$dir/train.kubeconfig
sctl vcluster kubeconfig train --tenant acme --role edit --ttl "$ttl" --exec >"$kubeconfig" 2>"$dir/kubeconfig.err" ||
  fail "septactl vcluster kubeconfig --exec: $(cat "$dir/kubeconfig.err")"
[[ ! -s $dir/kubeconfig.err ]] || fail "kubeconfig --exec said: $(cat "$dir/kubeconfig.err")"
# (kubectl as installed here is Google's dispatcher, which asks the server's
# version, so through the plugin, before it runs a kubectl of that version:
# every kubectl command, config view too, runs in the user's environment.)
view() { user_env "$kubectl" config view --kubeconfig "$kubeconfig" --raw -o "jsonpath=$1"; }
[[ $(view '{.users[0].user.exec.command}') == "$(realpath "$septactl")" ]] ||
  fail "the plugin is not this septactl: $(view '{.users[0].user.exec.command}')"
[[ $(view '{.users[0].user.exec.apiVersion}') == client.authentication.k8s.io/v1 ]] || fail "exec apiVersion"
[[ $(view '{.users[0].user.exec.interactiveMode}') == Never ]] || fail "interactiveMode"
[[ $(view '{.users[0].user.exec.provideClusterInfo}') == false ]] || fail "provideClusterInfo"
args=$(view '{.users[0].user.exec.args}')
[[ $args == *'"--server","127.0.0.1:'$grpc_port'","vcluster","credential","train","--tenant","acme","--role","edit","--ttl","60s"'* ]] ||
  fail "the plugin's args: $args"
for secret in "$acme" client-certificate-data client-key-data "PRIVATE KEY" "token:"; do
  ! grep -q -- "$secret" "$kubeconfig" || fail "the exec kubeconfig holds $secret: $(cat "$kubeconfig")"
done
[[ -f $entry ]] || fail "kubeconfig --exec cached no certificate at $entry: $(find "$cache" 2>&1)"
[[ $(stat -c %a "$entry") == 600 && $(stat -c %a "$(dirname "$entry")") == 700 &&
  $(stat -c %a "$cache/septa") == 700 ]] ||
  fail "cache modes: $(stat -c '%a %n' "$entry" "$(dirname "$entry")" "$cache/septa")"
first_serial=$(cached serial)
first_expire=$(date -u -d "$(cached expire_time)" +%s)
first_sum=$(sha256sum <"$entry")
[[ $(edit_credentials) == 1 ]] || fail "credentials after kubeconfig --exec: $(edit_credentials)"
echo "ok   an exec kubeconfig; its certificate $first_serial cached until $(cached expire_time)"

# 2. kubectl through it, reusing the cached certificate.
began=$(now_ms)
out=$(kexec get pods 2>&1) || fail "kubectl get pods: $out"
[[ $out == *"No resources found"* ]] || fail "kubectl get pods: $out"
cached_kubectl_ms=$(($(now_ms) - began))
out=$(kexec create configmap settings --from-literal=mode=exec 2>&1) || fail "kubectl create: $out"
[[ $(kexec get configmap settings -o 'jsonpath={.data.mode}') == exec ]] || fail "kubectl get the config map"
pids=()
for i in 1 2 3 4; do kexec get configmap settings -o name >"$dir/parallel-$i.out" 2>&1 & pids+=($!); done
for i in 1 2 3 4; do wait "${pids[$((i - 1))]}" || fail "parallel kubectl $i: $(cat "$dir/parallel-$i.out")"; done
# Before the renewal point (notAfter - 30 s) kubectl's runs reuse the certificate.
still_one() {  # what
  local listed; listed=$(edit_credentials)
  [[ $listed == 1 && $(sha256sum <"$entry") == "$first_sum" ]] && return 0
  (($(date +%s) < first_expire - 30)) ||
    fail "$1 ran past the renewal point (a machine too slow for a ${ttl} certificate's 30 s of reuse)"
  fail "$1 minted certificates ($listed listed) or rewrote the cache file"
}
still_one "kubectl get, create, get and 4 runs at once"
# A fresh cached certificate is used without asking septad: a bogus token does not matter yet.
out=$(env SEPTA_TOKEN=septa_bogus HOME="$dir/home" XDG_CACHE_HOME="$cache" "$kubectl" --request-timeout=20s \
  --cache-dir "$dir/kube-cache" --kubeconfig "$kubeconfig" get configmap settings -o name 2>&1) ||
  fail "the cached certificate with a bogus token: $out"
still_one "kubectl with a bogus token"
echo "ok   kubectl get, create, get and 4 runs at once: one certificate (a kubectl run with it: ${cached_kubectl_ms} ms)"

# 3. The plugin as kubectl runs it: a cached run, and one that issues (role view: a key of its own).
plugin_args() { view '{.users[0].user.exec.args}' | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)))'; }
mapfile -t pargs < <(plugin_args)
began=$(now_ms)
credential=$(user_env "$septactl" "${pargs[@]}") || fail "the plugin, cached"
cached_run_ms=$(($(now_ms) - began))
python3 - "$credential" "$entry" <<'PY' || fail "the ExecCredential: $credential"
import json, sys
c = json.loads(sys.argv[1]); e = json.load(open(sys.argv[2]))
assert c["apiVersion"] == "client.authentication.k8s.io/v1" and c["kind"] == "ExecCredential", c
s = c["status"]
assert set(s) == {"expirationTimestamp", "clientCertificateData", "clientKeyData"}, s
assert s["clientCertificateData"] == e["certificate"] and s["clientKeyData"] == e["private_key"]
assert s["expirationTimestamp"] <= e["expire_time"] and s["expirationTimestamp"].endswith("Z")
PY
view_args=("${pargs[@]}")
for i in "${!view_args[@]}"; do [[ ${view_args[$i]} == edit ]] && view_args[i]=view; done
began=$(now_ms)
user_env "$septactl" "${view_args[@]}" >/dev/null || fail "the plugin, issuing"
issuing_run_ms=$(($(now_ms) - began))
echo "ok   the plugin: a cached run ${cached_run_ms} ms, a run that issues ${issuing_run_ms} ms"

# 4. Tokens septactl cannot use: kubectl fails with septactl's message (a fresh cache, so septad is asked).
refused() {  # what expected-stderr env-arguments...
  local what=$1 want=$2 out
  shift 2
  out=$(env "$@" HOME="$dir/home" XDG_CACHE_HOME="$dir/fresh-cache-$RANDOM" "$kubectl" --request-timeout=20s \
    --cache-dir "$dir/kube-cache" --kubeconfig "$kubeconfig" get pods 2>&1) && fail "kubectl worked with $what: $out"
  [[ $out == *"$want"* ]] || fail "kubectl with $what does not show \"$want\": $out"
  echo "ok   $what: kubectl shows \"$want\""
}
refused "a bogus token" "septactl: UNAUTHENTICATED" SEPTA_TOKEN=septa_bogus
refused "a bogus token" "needs a valid Septa token to renew its certificate" SEPTA_TOKEN=septa_bogus
revoked=$(owner_token acme)
revoked_id=$(json 'r["id"]')
[[ $(api DELETE "/v1/tokens/$revoked_id") =~ ^20[04]$ ]] || fail "revoke token $revoked_id: $(reply)"
refused "a revoked token" "septactl: UNAUTHENTICATED" SEPTA_TOKEN="$revoked"
refused "no token" "septactl: UNAUTHENTICATED: no token" -u SEPTA_TOKEN

# 5. Across the expiry: wait until the clock is past the cached certificate's notAfter.
waited_from=$(now_ms)
cached_expire=$(date -u -d "$(cached expire_time)" +%s)
cached_expired() { (($(date +%s) > cached_expire)); }
wait_for "the cached certificate's expiry" 90 cached_expired
echo "waited $(($(now_ms) - waited_from)) ms for the certificate's expiry"
# The old certificate itself is now refused.
python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); open(sys.argv[2],"w").write(e["certificate"]); open(sys.argv[3],"w").write(e["private_key"])' \
  "$entry" "$dir/old.crt" "$dir/old.key"
view '{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$dir/ca.crt"
out=$("$kubectl" --request-timeout=20s --kubeconfig=/dev/null --server "$(view '{.clusters[0].cluster.server}')" \
  --certificate-authority "$dir/ca.crt" --client-certificate "$dir/old.crt" --client-key "$dir/old.key" get pods 2>&1) &&
  fail "the expired certificate still works: $out"
unauthorized "$out" || fail "the expired certificate is not refused as Unauthorized: $out"
pids=()
began=$(now_ms)
for i in 1 2 3 4; do kexec get configmap settings -o name >"$dir/renew-$i.out" 2>&1 & pids+=($!); done
for i in 1 2 3 4; do wait "${pids[$((i - 1))]}" || fail "kubectl after the expiry ($i): $(cat "$dir/renew-$i.out")"; done
renewing_kubectl_ms=$(($(now_ms) - began))
[[ $(cat "$dir/renew-1.out") == configmap/settings ]] || fail "kubectl after the expiry: $(cat "$dir/renew-1.out")"
[[ $(edit_credentials) == 2 ]] || fail "not exactly one new certificate for 4 kubectl runs: $(edit_credentials) listed"
second_serial=$(cached serial)
[[ $second_serial != "$first_serial" && $(date -u -d "$(cached expire_time)" +%s) -gt $first_expire ]] ||
  fail "the cache file still holds $first_serial"
sctl vcluster credentials acme train | grep -q "^$second_serial " || fail "septad lists no $second_serial"
[[ $(stat -c %a "$entry") == 600 ]] || fail "the renewed cache file is mode $(stat -c %a "$entry")"
kexec get configmap settings -o name >/dev/null || fail "kubectl after the renewal"
[[ $(edit_credentials) == 2 && $(cached serial) == "$second_serial" ]] || fail "the run after the renewal minted again"
echo "ok   across the expiry: the old certificate refused, 4 kubectl runs at once renewed it once ($first_serial -> $second_serial, ${renewing_kubectl_ms} ms), the next run reused it"
echo "all exec kubeconfig checks passed"
