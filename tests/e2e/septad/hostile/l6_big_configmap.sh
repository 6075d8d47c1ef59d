# L6: config maps of 1-3 MiB were accepted virtually, but their host copy
# exceeded the host's limit: RequestEntityTooLarge retried forever, the pod
# Pending with no event. The virtual side now refuses more than Kubernetes'
# 1 MiB as kube-apiserver does, and a copy the host refuses for what it is
# gets a SyncRefused event (and the pod that needs it is refused saying
# why) instead of a retry forever.

l6_big_configmap_refusal() {  # KIND NAME: the message of its SyncRefused event, if any
  vk peggy p1 get events --field-selector "reason=SyncRefused,involvedObject.kind=$1,involvedObject.name=$2" \
    -o 'jsonpath={.items[*].message}'
}

hostile_case() {
  tenant peggy shared
  vcluster peggy p1 '{"shared":{"milli_gpu":100}}'
  head -c 1048577 /dev/zero | tr '\0' x >"$dir/l6-big"
  vk peggy p1 create configmap big --from-file=a="$dir/l6-big" 2>"$dir/l6.err" >/dev/null &&
    fail "a config map of 1 MiB + 1 byte was accepted"
  grep -q 'Too long: must have at most 1048576 bytes' "$dir/l6.err" || fail "the refusal: $(cat "$dir/l6.err")"
  # A copy the host refuses: annotations at the host's 256 KiB bound, which
  # the copy's bookkeeping annotations take past it (created, not applied:
  # apply's last-applied annotation would take it past the bound already).
  python3 -c '
import json
print(json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "noted", "namespace": "default", "annotations": {"note": "x" * (262144 - 4)}},
                  "data": {"a": "1"}}))' | vk peggy p1 create -f - >/dev/null || fail "create the annotated config map"
  restricted_pod reader | sed 's|^  containers:|  volumes: [{name: c, configMap: {name: noted}}]\n  containers:|' |
    vk peggy p1 apply -f - >/dev/null || fail "apply the pod that mounts it"
  l6_refused() { [[ -n $(l6_big_configmap_refusal ConfigMap noted) && -n $(l6_big_configmap_refusal Pod reader) ]]; }
  wait_for "SyncRefused on the config map and its pod" 20 l6_refused
  l6_big_configmap_refusal ConfigMap noted | grep -q 'metadata.annotations: Too long' ||
    fail "the config map's event: $(l6_big_configmap_refusal ConfigMap noted)"
  [[ $(vk peggy p1 get pod reader -o 'jsonpath={.status.phase}') == Pending ]] || fail "the pod is not Pending"
  [[ $(api DELETE /v1/tenants/peggy/vclusters/p1) == 200 ]] || fail "delete p1: $(reply)"
}
