#!/usr/bin/env bash
# GPU usage end to end on septad's embedded defaults, whose simulated host
# runs kubesim's dcgm-exporter test double on every GPU node (docs/usage.md,
# docs/kubesim.md): septad finds the exporters through the host's API and
# scrapes them every second. Two dedicated tenants each hold one A100: acme
# runs a pod that the simulator keeps 50 % busy (Run:ai's
# run.ai/simulated-gpu-utilization), beta a pod that holds 20,000 MiB and
# computes nothing. An admin prices dedicated A100s at 3.60 per GPU-hour.
#  - A whole minute with acme's pod running: used is exactly half of what
#    was measured, waste the other half, coverage over 0.75 (0.99
#    unloaded), cost exactly 3.60 per allocated GPU-hour (REST, and
#    septactl usage -o csv).
#  - beta is a hoarder at the dedicated threshold (set to 30s here), with
#    its memory held; acme is not. Its virtual cluster gets the condition
#    Hoarding=True, and /metrics septa_gpu_hoarding; since the dedicated
#    tier opts in here (usage_hoarding_sleep_after dedicated=1m), a minute
#    later it is put to sleep, the condition saying why; acme's is untouched.
#  - The platform report (admins only): tenants' allocated GPU-hours plus
#    the unreserved pool are the capacity.
#  - Authorization: acme reads its own usage; beta's and the platform's are
#    refused (404 and 403); a bad window is a 400 naming the field.
#  - /metrics carries the usage by tenant and virtual cluster, never by pod.
set -euo pipefail
septad=$1
septactl=$2
kubectl=$3
source "$(dirname "$0")/septad_lib.sh"

sctl() { HOME=$dir "$septactl" --server "127.0.0.1:$grpc_port" --token "$@"; }
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

start --usage-scrape-interval 1s --usage-hoarding-after dedicated=30s --usage-hoarding-sleep-after dedicated=1m
token=$(cat "$dir/data/admin.token")

[[ $(api POST /v1/usage/prices '{"model":"A100-80GB","tier":"dedicated","per_gpu_hour":3.6}') == 201 ]] ||
  fail "the admin sets a price: $(reply)"
[[ $(api POST /v1/usage/prices '{"model":"A100-80GB","tier":"dedicated","per_gpu_hour":1,"valid_from":"2020-01-01T00:00:00Z"}') == 400 ]] ||
  fail "a rate that starts in the past is refused: $(reply)"
[[ $(reply) == *valid_from* ]] || fail "the refusal names valid_from: $(reply)"

for t in acme beta; do
  [[ $(api POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"dedicated\"}") == 201 ]] || fail "create tenant $t: $(reply)"
done
acme=$(owner_token acme)
beta=$(owner_token beta)
cluster='{"name":"%s","capacity":{"gpus":{"model":"A100-80GB","count":1}},"quota":{"cpu_milli":2000,"memory_mib":4096,"pods":5}}'
# shellcheck disable=SC2059
[[ $(rest "$acme" POST /v1/tenants/acme/vclusters "$(printf "$cluster" train)") == 201 ]] || fail "acme/train: $(reply)"
# shellcheck disable=SC2059
[[ $(rest "$beta" POST /v1/tenants/beta/vclusters "$(printf "$cluster" idle)") == 201 ]] || fail "beta/idle: $(reply)"
wait_for "acme/train READY" 20 vcluster_ready "$acme" acme train
wait_for "beta/idle READY" 20 vcluster_ready "$beta" beta idle

kubeconfig() {  # token tenant vcluster
  [[ $(rest "$1" POST "/v1/tenants/$2/vclusters/$3:kubeconfig" '{"role":"admin"}') == 200 ]] || fail "kubeconfig of $2/$3: $(reply)"
  json 'r["kubeconfig"]' >"$dir/$2.kubeconfig"
}
kubeconfig "$acme" acme train
kubeconfig "$beta" beta idle
gpu_pod work 50 8000 | kc "$dir/acme.kubeconfig" apply -f - >/dev/null || fail "acme's pod"
gpu_pod hoard 0 20000 | kc "$dir/beta.kubeconfig" apply -f - >/dev/null || fail "beta's pod"
running() { [[ $(kc "$dir/$1.kubeconfig" get pod "$2" -o 'jsonpath={.status.phase}') == Running ]]; }
wait_for "acme's pod Running" 30 running acme work
wait_for "beta's pod Running" 30 running beta hoard

# beta idles with its memory held: past the 30 s threshold its virtual
# cluster is flagged, and a minute later (checked at the end) put to sleep.
hoarding() {  # token tenant vcluster status reason: its Hoarding condition
  [[ $(rest "$1" GET "/v1/tenants/$2/vclusters/$3") == 200 ]] &&
    [[ $(json '" ".join(c["status"] + " " + c.get("reason", "") for c in r.get("conditions", []) if c["type"] == "Hoarding")') == "$4 $5" ]]
}
# The waits are generous (a loaded CI machine delays the syncer, the scrapes
# and the controllers); what they wait for is exact.
wait_for "beta/idle flagged as hoarding" 90 hoarding "$beta" beta idle True IdleHoldingMemory
[[ $(json '[c["message"] for c in r["conditions"] if c["type"] == "Hoarding"][0]') == *"will be put to sleep at"* ]] ||
  fail "the condition says when beta/idle will sleep: $(reply)"
# The hoarders are computed from idle runs fresh within 4 scrapes: a late
# scrape drops beta for a moment, so these are waited for too.
holding_memory() { [[ $(api GET /v1/usage/hoarders) == 200 && $(json 'r["hoarders"][0]["holding_memory"] if r.get("hoarders") else ""') == true ]]; }
wait_for "beta listed holding memory" 20 holding_memory
hoarding_metric() {
  grep -q 'septa_gpu_hoarding{[^}]*tenant="beta"[^}]*vcluster="idle"' <<<"$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$http_port/metrics")"
}
wait_for "beta/idle hoarding on /metrics" 20 hoarding_metric

# The first whole minute that begins after both pods run, once accounted.
minute=$((($(date +%s) / 60 + 1) * 60))
echo "waiting for the minute $(utc "$minute") to be over"
while (($(date +%s) < minute + 63)); do sleep 1; done
window="start=$(utc "$minute")&end=$(utc $((minute + 60)))"

[[ $(rest "$acme" GET "/v1/tenants/acme/usage?$window&group_by=vcluster") == 200 ]] || fail "acme's usage: $(reply)"
python3 - "$dir/reply" <<'PY' || fail "acme's minute: $(reply)"
import json, sys
r = json.load(open(sys.argv[1]))
[item] = r["items"]
close = lambda a, b, tol=1e-9: abs(a - b) <= tol * max(1.0, abs(b))
assert item["vcluster"] == "train", item
assert r["resolution"] == "minute" and r["currency"] == "USD", r
assert close(item["allocated_gpu_hours"], 1 / 60, 1e-6), item            # one GPU held the whole minute
assert 0.75 < item["coverage"] <= 1 + 1e-9, item                           # 1 s scrapes: most seconds measured (0.99 unloaded; a failed scrape takes 1/60 off)
assert close(item["used_gpu_hours"], 0.5 * item["measured_gpu_hours"]), item  # 50 % busy, exactly
assert close(item["efficiency"], 0.5), item
assert close(item["waste_gpu_hours"], item["measured_gpu_hours"] - item["used_gpu_hours"]), item
assert close(item["cost"], 3.6 * item["allocated_gpu_hours"]), item        # held is billed, used or not
assert close(item["max_used_memory_mib"], 8000), item
print("acme's minute:", json.dumps(item))
PY

# The same figures through septactl, as CSV for finance.
sctl "$acme" usage --tenant acme --window "$(utc "$minute")/$(utc $((minute + 60)))" --by vcluster -o csv >"$dir/usage.csv" ||
  fail "septactl usage: $(cat "$dir/usage.csv")"
python3 - "$dir/usage.csv" "$dir/reply" <<'PY' || fail "septactl usage -o csv: $(cat "$dir/usage.csv")"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
item = json.load(open(sys.argv[2]))["items"][0]
assert len(rows) == 1 and rows[0]["vcluster"] == "train", rows
for key in ("allocated_gpu_hours", "used_gpu_hours", "waste_gpu_hours", "cost"):
    assert abs(float(rows[0][key]) - item[key]) <= 1e-6, (key, rows[0], item)
PY

# Hoarders: beta (asleep now, its GPU kept: sleep_reservation keep); acme is busy.
hoarders() { [[ $(api GET /v1/usage/hoarders) == 200 ]] && [[ $(json '[h["tenant"] for h in r.get("hoarders", [])]') == '["beta"]' ]]; }
wait_for "beta listed as the one hoarder" 60 hoarders
[[ $(json 'r["hoarders"][0]["threshold_seconds"]') == 30 ]] || fail "the dedicated threshold is 30 s: $(reply)"
own_hoarding() { [[ $(rest "$beta" GET /v1/usage/hoarders?tenant=beta) == 200 && $(json 'len(r.get("hoarders", []))') == 1 ]]; }
wait_for "beta sees its own hoarding" 20 own_hoarding
[[ $(rest "$acme" GET /v1/usage/hoarders?tenant=beta) == 404 ]] || fail "acme must not see beta's hoarding: $(reply)"
[[ $(rest "$acme" GET /v1/usage/hoarders) == 200 && $(json 'len(r.get("hoarders", []))') == 0 ]] ||
  fail "acme asking for every hoarder gets its own, none: $(reply)"
septactl_hoarders() { sctl "$token" usage hoarders | grep -q "beta"; }
wait_for "septactl usage hoarders lists beta" 20 septactl_hoarders

# Authorization and bad input.
[[ $(rest "$acme" GET "/v1/tenants/beta/usage?$window") == 404 ]] || fail "acme reads beta's usage: $(reply)"
[[ $(rest "$acme" GET "/v1/usage?$window") == 403 ]] || fail "acme reads the platform's usage: $(reply)"
[[ $(rest "$acme" GET "/v1/tenants/acme/usage?start=yesterday&end=$(utc $((minute + 60)))") == 400 ]] || fail "a bad start: $(reply)"
[[ $(reply) == *start* ]] || fail "the refusal names start: $(reply)"
[[ $(rest "$acme" GET "/v1/tenants/acme/usage?$window&step=1s") == 400 && $(reply) == *step* ]] || fail "a step of 1s: $(reply)"
[[ $(rest "$acme" GET "/v1/usage/prices") == 403 ]] || fail "prices are the admins': $(reply)"

# The platform: every tenant's allocated plus the unreserved pool is the capacity.
[[ $(api GET "/v1/usage?$window&group_by=tenant") == 200 ]] || fail "the platform's usage: $(reply)"
python3 - "$dir/reply" <<'PY' || fail "the platform's minute: $(reply)"
import json, sys
r = json.load(open(sys.argv[1]))
tenants = {i["tenant"]: i for i in r["usage"]["items"]}
assert set(tenants) == {"acme", "beta"}, tenants
[pool] = r["pool"]
allocated = sum(i["allocated_gpu_hours"] for i in tenants.values())
assert abs(allocated + pool["unreserved_gpu_hours"] - pool["capacity_gpu_hours"]) < 1e-9, (allocated, pool)
assert tenants["beta"]["used_gpu_hours"] == 0 and tenants["beta"]["waste_gpu_hours"] > 0, tenants["beta"]
assert pool["capacity_gpu_hours"] > allocated, pool  # the sample inventory has far more GPUs than two
PY

# /metrics: by tenant and virtual cluster, never by pod.
metrics=$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$http_port/metrics")
grep -q 'septa_gpu_allocated_gpu_hours_total{[^}]*tenant="acme"[^}]*vcluster="train"' <<<"$metrics" ||
  fail "no allocated GPU-hours for acme/train on /metrics"
grep -q 'septa_gpu_idle_seconds{.*tenant="beta"' <<<"$metrics" || fail "no idle run for beta on /metrics"
grep -q 'septa_usage_scrapes_total{result="ok"}' <<<"$metrics" || fail "no successful scrape counted"
if grep -E '^septa_(gpu|usage)_[a-z_]*\{[^}]*pod=' <<<"$metrics"; then fail "a usage series is labelled by pod"; fi

# A minute after it was flagged, beta/idle is put to sleep and told why; acme's is untouched.
sleeping() { [[ $(rest "$beta" GET /v1/tenants/beta/vclusters/idle) == 200 && $(json 'r["state"]') == SLEEPING ]]; }
wait_for "beta/idle put to sleep" 120 sleeping
hoarding "$beta" beta idle False PutToSleep || fail "the Hoarding condition says why beta/idle sleeps: $(reply)"
[[ $(json '[c["message"] for c in r["conditions"] if c["type"] == "Hoarding"][0]') == *"septactl vcluster wake idle --tenant beta"* ]] ||
  fail "the condition says how to wake beta/idle: $(reply)"
[[ $(rest "$acme" GET /v1/tenants/acme/vclusters/train) == 200 && $(json 'r["state"]') == READY ]] ||
  fail "acme/train, busy, stays READY: $(reply)"
[[ $(json '[c for c in r.get("conditions", []) if c["type"] == "Hoarding"]') == "[]" ]] || fail "acme/train never flagged: $(reply)"
echo "usage e2e passed"
