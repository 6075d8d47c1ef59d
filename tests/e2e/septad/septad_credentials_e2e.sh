#!/usr/bin/env bash
# Credentials end to end through septad's real interfaces (embedded
# defaults): tenants' own API tokens create virtual clusters over REST and
# take kubeconfigs from IssueKubeconfig (REST and septactl); the real
# kubectl uses them against the virtual clusters' TLS listener and openssl
# reads the certificates (lifetime as asked, CN <tenant>:<token id>, O the
# role's group, the virtual cluster's own CA). A ttl outside the API's range
# is a 400 naming `ttl`; one above the trust tier's cap is capped, as
# documented (ttl_capped). ListCredentials (REST and septactl) shows what was
# issued; after RevokeCredential the same kubeconfig gets 401 at once while
# another one still works; a kubeconfig of virtual cluster A is refused by B,
# of the same tenant or another; a kubeconfig with the smallest ttl the API
# takes (1s) stops working once it has expired (polled, bounded).
set -euo pipefail
septad=$1
septactl=$2
kubectl=$3
source "$(dirname "$0")/septad_lib.sh"

sctl() { HOME=$dir "$septactl" --server "127.0.0.1:$grpc_port" --token "$@"; }
# The certificate of a kubeconfig, as PEM, read by kubectl itself.
certificate_of() { kc "$1" config view --raw -o 'jsonpath={.users[0].user.client-certificate-data}' | base64 -d; }
x509() { certificate_of "$1" | openssl x509 -noout -nameopt RFC2253 "${@:2}"; }
epoch_of() { date -u -d "$1" +%s; }
# kubectl's words for a 401: "Unauthorized", or during discovery "the server
# has asked for the client to provide credentials".
unauthorized() { grep -q -e Unauthorized -e 'asked for the client to provide credentials' <<<"$1"; }

start
token=$(cat "$dir/data/admin.token")

# 1. Tenants acme and beta (shared tier, cap 24 h), each with an owner API
# token; their virtual clusters created with those tokens: acme/train
# ("A"), acme/dev and beta/train.
vc_body='{"name":"%s","capacity":{"shared":{"milli_gpu":100}},"quota":{"cpu_milli":1000,"memory_mib":1024,"pods":5}}'
for t in acme beta; do
  [[ $(api POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"shared\"}") == 201 ]] || fail "create tenant $t"
done
acme=$(owner_token acme)
acme_id=$(json 'r["id"]')
beta=$(owner_token beta)
created=$(now_ms)
for name in train dev; do
  # shellcheck disable=SC2059
  [[ $(rest "$acme" POST /v1/tenants/acme/vclusters "$(printf "$vc_body" "$name")") == 201 ]] ||
    fail "acme's token creates acme/$name: $(reply)"
done
# shellcheck disable=SC2059
[[ $(rest "$beta" POST /v1/tenants/beta/vclusters "$(printf "$vc_body" train)") == 201 ]] ||
  fail "beta's token creates beta/train: $(reply)"
wait_for "acme/train READY" 20 vcluster_ready "$acme" acme train
wait_for "acme/dev READY" 20 vcluster_ready "$acme" acme dev
wait_for "beta/train READY" 20 vcluster_ready "$beta" beta train
endpoint_of() { rest "$1" GET "/v1/tenants/$2/vclusters/$3" >/dev/null && json 'r["endpoint"]'; }
acme_dev=$(endpoint_of "$acme" acme dev)
beta_train=$(endpoint_of "$beta" beta train)
echo "three virtual clusters READY $(($(now_ms) - created)) ms after their creates"

# 2. A kubeconfig over REST with a ttl of 10 minutes works with kubectl.
issue() {  # tenant-token tenant vcluster body: the kubeconfig in $dir/<tenant>-<vcluster>-<n>.kubeconfig
  [[ $(rest "$1" POST "/v1/tenants/$2/vclusters/$3:kubeconfig" "$4") == 200 ]] ||
    fail "IssueKubeconfig $2/$3 $4: $(reply)"
  grep -qi '^cache-control: no-store' "$dir/headers" || fail "the kubeconfig reply is not Cache-Control: no-store"
  issued=$dir/$2-$3-$(json 'r["serial"]').kubeconfig
  json 'r["kubeconfig"]' >"$issued"
}
before=$(date +%s)
issue "$acme" acme train '{"ttl":"10m","role":"edit"}'
after=$(date +%s)
a1=$issued
a1_serial=$(json 'r["serial"]')
[[ $(json 'r["role"]') == edit && $(json 'r["ttl_capped"]') == false ]] || fail "IssueKubeconfig reply: $(reply)"
a1_expire=$(epoch_of "$(json 'r["expire_time"]')")
namespaces=$(kc "$a1" get namespaces -o name) || fail "kubectl get namespaces with the issued kubeconfig: $namespaces"
grep -qx namespace/kube-system <<<"$namespaces" || fail "the virtual cluster's namespaces: $namespaces"
kc "$a1" create configmap settings --from-literal=mode=e2e >/dev/null || fail "kubectl create configmap"
[[ $(kc "$a1" get configmap settings -o 'jsonpath={.data.mode}') == e2e ]] || fail "the config map reads back"

# 3. The certificate as openssl reads it.
not_before=$(epoch_of "$(x509 "$a1" -startdate | cut -d= -f2)")
not_after=$(epoch_of "$(x509 "$a1" -enddate | cut -d= -f2)")
((not_after - not_before == 600)) || fail "the certificate lives $((not_after - not_before)) s, not the 600 s asked"
((before <= not_before && not_before <= after)) ||
  fail "the certificate's notBefore $not_before is not the issue time ($before..$after)"
((not_after == a1_expire)) || fail "notAfter $not_after differs from the reply's expire_time $a1_expire"
[[ $(x509 "$a1" -subject) == "subject=CN=acme:$acme_id,O=septa:edit" ]] ||
  fail "subject: $(x509 "$a1" -subject); want CN=acme:<the token's id $acme_id>, O=septa:edit"
[[ $(x509 "$a1" -issuer) == "issuer=CN=acme/train-ca" ]] || fail "not acme/train's own CA: $(x509 "$a1" -issuer)"
[[ $(x509 "$a1" -serial | cut -d= -f2 | tr A-F a-f) == "$a1_serial" ]] || fail "serial: $(x509 "$a1" -serial)"
text=$(x509 "$a1" -text)
[[ $(x509 "$a1" -ext extendedKeyUsage | sed -n 2p | xargs) == "TLS Web Client Authentication" ]] ||
  fail "not for client authentication only: $text"
[[ $text == *"Subject Alternative Name"* ]] && fail "the certificate has subject alternative names: $text"

# A ttl the API does not take is a 400 naming `ttl`; the role is checked too.
refused() {  # body field
  local status; status=$(rest "$acme" POST /v1/tenants/acme/vclusters/train:kubeconfig "$1")
  [[ $status == 400 && $(json 'r["violations"][0]["field"]') == "$2" ]] ||
    fail "IssueKubeconfig $1 answered $status, not 400 naming $2: $(reply)"
}
refused '{"ttl":"8761h","role":"edit"}' ttl
refused '{"ttl":"0s","role":"edit"}' ttl
refused '{"ttl":"ten minutes","role":"edit"}' ttl
refused '{"ttl":"10m","role":"root"}' role
# Above the tier's cap (shared: 24 h) the cap applies and the reply says so.
before=$(date +%s)
issue "$acme" acme train '{"ttl":"48h","role":"view"}'
after=$(date +%s)
capped_serial=$(json 'r["serial"]')
[[ $(json 'r["ttl_capped"]') == true ]] || fail "a 48h ttl on the shared tier is not reported capped: $(reply)"
not_after=$(epoch_of "$(x509 "$issued" -enddate | cut -d= -f2)")
((before + 86400 <= not_after && not_after <= after + 86400)) ||
  fail "a capped certificate expires at $not_after, not 24 h after $before..$after"

# 4. A second kubeconfig through septactl (gRPC); both listed; one revoked.
a2=$dir/acme-train-second.kubeconfig
sctl "$acme" vcluster kubeconfig acme train --role view --ttl 10m >"$a2" || fail "septactl vcluster kubeconfig"
kc "$a2" get configmap settings -o name >/dev/null || fail "the septactl kubeconfig reads"
forbidden=$(kc "$a2" create configmap other --from-literal=a=b 2>&1) && fail "a view kubeconfig created a config map"
grep -q "configmaps is forbidden" <<<"$forbidden" || fail "a view kubeconfig's create is not Forbidden: $forbidden"
a2_serial=$(x509 "$a2" -serial | cut -d= -f2 | tr A-F a-f)
[[ $(rest "$acme" GET /v1/tenants/acme/vclusters/train/credentials) == 200 ]] || fail "ListCredentials: $(reply)"
for serial in "$a1_serial" "$a2_serial" "$capped_serial"; do
  [[ $(json "[c['common_name'] for c in r['credentials'] if c['serial']=='$serial' and 'revoke_time' not in c]") == \
    "[\"acme:$acme_id\"]" ]] || fail "ListCredentials lacks $serial unrevoked: $(reply)"
done
listed=$(sctl "$acme" vcluster credentials acme train) || fail "septactl vcluster credentials: $listed"
for serial in "$a1_serial" "$a2_serial"; do grep -q "^$serial " <<<"$listed" || fail "septactl lists no $serial: $listed"; done

[[ $(rest "$acme" DELETE "/v1/tenants/acme/vclusters/train/credentials/$a1_serial") == 200 ]] ||
  fail "RevokeCredential: $(reply)"
[[ -n $(json 'r.get("revoke_time","")') ]] || fail "the revoked credential has no revoke_time: $(reply)"
# Refused from the very next request: the listener reads the revocation on each.
refusal=$(kc "$a1" get configmap settings 2>&1) && fail "the revoked kubeconfig still works"
unauthorized "$refusal" || fail "the revoked kubeconfig is not refused as Unauthorized: $refusal"
kc "$a2" get configmap settings -o name >/dev/null || fail "the unrevoked kubeconfig stopped working"
sctl "$acme" vcluster revoke-credential acme train "$capped_serial" >/dev/null || fail "septactl revoke-credential"
listed=$(sctl "$acme" -o json vcluster credentials acme train) || fail "septactl vcluster credentials -o json"
revoked=$(python3 -c 'import json,sys; print(sorted(c["serial"] for c in json.loads(sys.argv[1])["credentials"] if c.get("revoke_time")))' "$listed")
[[ $revoked == "$(python3 -c 'import sys; print(sorted(sys.argv[1:]))' "$a1_serial" "$capped_serial")" ]] ||
  fail "septactl lists revoked $revoked, not the two revoked: $listed"

# 5. A's kubeconfig against B: acme/dev (same tenant) and beta/train (another
# tenant, same name) refuse it; beta's own works there and not on acme/train.
for other in "$acme_dev" "$beta_train"; do
  refusal=$(kc "$a2" --server "$other" get namespaces 2>&1) && fail "acme/train's kubeconfig works on $other"
  unauthorized "$refusal" || fail "acme/train's kubeconfig on $other: $refusal"
done
issue "$beta" beta train '{"ttl":"10m","role":"admin"}'
b1=$issued
kc "$b1" get namespaces -o name >/dev/null || fail "beta's kubeconfig on beta/train"
refusal=$(kc "$b1" --server "$(endpoint_of "$acme" acme train)" get namespaces 2>&1) &&
  fail "beta/train's kubeconfig works on acme/train"
unauthorized "$refusal" || fail "beta/train's kubeconfig on acme/train: $refusal"
[[ $(rest "$beta" POST /v1/tenants/acme/vclusters/train:kubeconfig '{"ttl":"10m","role":"view"}') == 404 ]] ||
  fail "beta's token got a kubeconfig of acme/train: $(reply)"

# 6. Expiry. The smallest ttl the API takes is 1s: that certificate lives
# exactly one second and is refused once past it. One of 5s first works,
# then stops: polled, with a bound; never refused before its notAfter.
issue "$acme" acme train '{"ttl":"1s","role":"view"}'
shortest=$issued
((($(epoch_of "$(x509 "$shortest" -enddate | cut -d= -f2)") - $(epoch_of "$(x509 "$shortest" -startdate | cut -d= -f2)")) == 1)) ||
  fail "a 1s ttl's certificate does not live 1 s"
issue "$acme" acme train '{"ttl":"5s","role":"view"}'
short=$issued
short_expire=$(epoch_of "$(json 'r["expire_time"]')")
kc "$short" get configmap settings -o name >/dev/null || fail "the 5s kubeconfig does not work before it expires"
expired() {  # kubeconfig: refused as Unauthorized; $attempt_end_ms is when the last try had its answer
  local out status=0
  out=$(kc "$1" get configmap settings -o name 2>&1) || status=$?
  attempt_end_ms=$(now_ms)
  ((status != 0)) || return 1
  unauthorized "$out" || fail "an expiring kubeconfig failed otherwise: $out"
}
wait_for "the 5s kubeconfig refused after it expired" 15 expired "$short"
# The listener refuses once its clock is past notAfter. A refusal whose
# answer came before notAfter would be an early one; a try that began before
# notAfter and reached the listener after it is refused rightly (kubectl takes
# a few hundred milliseconds to send its request), so the answer's time counts.
((attempt_end_ms >= short_expire * 1000)) ||
  fail "the 5s kubeconfig was refused at $attempt_end_ms ms, before its notAfter ${short_expire}000"
echo "a 5 s kubeconfig first refused with an answer $((attempt_end_ms - short_expire * 1000)) ms after its notAfter"
wait_for "the 1s kubeconfig refused after it expired" 5 expired "$shortest"
kc "$a2" get configmap settings -o name >/dev/null || fail "the 10m kubeconfig stopped working"
echo "ok"
