# Finding M3 (../shared/docs/HOSTILE-TENANT-FINDINGS.md): pod "q-x-r" in
# namespace "s" and pod "q" in "r-x-s" map to one host pod name; creating the
# second deleted the first, and the second stayed Pending with no event. Now
# r-x-s/q keeps running (same host pod) and s/q-x-r gets a SyncRefused event
# naming the collision. With the real kubectl.
# Sourced by septad_hostile_e2e.sh, which provides the helpers used here.

m3_name_collision_tenant=quinn
m3_name_collision_vcluster=m3

m3_name_collision_vk() { vk "$m3_name_collision_tenant" "$m3_name_collision_vcluster" "$@"; }
m3_name_collision_phase() { m3_name_collision_vk -n "$1" get pod "$2" -o jsonpath='{.status.phase}'; }
m3_name_collision_running() { [[ $(m3_name_collision_phase r-x-s q) == Running ]]; }
# The SyncRefused events' messages of pod s/q-x-r, one a line.
m3_name_collision_refusals() {
  m3_name_collision_vk -n s get events -o json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    o = e.get("involvedObject", {})
    if e.get("reason") == "SyncRefused" and o.get("kind") == "Pod" and o.get("name") == "q-x-r":
        print(e.get("message", ""))'
}
m3_name_collision_refused() { [[ $(m3_name_collision_refusals) == *"Pod r-x-s/q"* ]]; }

hostile_case() {
  local t=$m3_name_collision_tenant v=$m3_name_collision_vcluster ns host_pod uid
  tenant "$t" shared
  vcluster "$t" "$v" '{"shared":{"milli_gpu":100}}'
  ns=$(host_ns "$t" "$v")
  host_pod="q-x-r-x-s-x-$v"
  m3_name_collision_vk create namespace r-x-s >/dev/null || fail "m3: namespace r-x-s"
  m3_name_collision_vk create namespace s >/dev/null || fail "m3: namespace s"
  restricted_pod q | m3_name_collision_vk -n r-x-s apply -f - >/dev/null || fail "m3: r-x-s/q was not applied"
  wait_for "m3: r-x-s/q running" 30 m3_name_collision_running
  uid=$(k -n "$ns" get pod "$host_pod" -o jsonpath='{.metadata.uid}') || fail "m3: no host pod $ns/$host_pod"

  restricted_pod q-x-r | m3_name_collision_vk -n s apply -f - >/dev/null || fail "m3: s/q-x-r was not applied"
  wait_for "m3: the SyncRefused event of s/q-x-r naming r-x-s/q" 20 m3_name_collision_refused
  [[ $(m3_name_collision_phase s q-x-r) == Pending ]] || fail "m3: s/q-x-r is $(m3_name_collision_phase s q-x-r)"
  m3_name_collision_running || fail "m3: r-x-s/q is $(m3_name_collision_phase r-x-s q)"
  [[ $(k -n "$ns" get pod "$host_pod" -o jsonpath='{.metadata.uid}') == "$uid" ]] ||
    fail "m3: the host pod of r-x-s/q was replaced"
  [[ $(k -n "$ns" get pod "$host_pod" -o jsonpath='{.metadata.annotations.septa\.dev/object-namespace}') == r-x-s ]] ||
    fail "m3: $ns/$host_pod no longer records r-x-s/q"
}
