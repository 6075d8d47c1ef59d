#!/usr/bin/env bash
# deploy/kustomize/overlays/kubesim server-side applied to a fresh
# septa-kubesim with the pinned kubectl (deploy/tools/kubectl.sh): every
# object must be accepted (strict field validation) and the StatefulSet must
# make its three pods. Then, as septad's own ServiceAccount (a TokenRequest
# token, not admin; kubesim enforces RBAC for it), the host objects
# tenancy/host renders for a virtual cluster of each trust tier
# (tests/unit/tenancy/host/golden/*-kai.json and *-default.json) must apply,
# and the Kueue ones must be refused with 403: the overlay binds KAI's
# ClusterRole, not Kueue's, so the check tells a grant from its absence.
# Not checked here: the RBAC escalation check (kubesim has none; the unit
# test DeployRbac.* covers it), PDBs (kubesim serves no policy/v1).
# Usage: kubesim_apply_e2e.sh SEPTA_KUBESIM REPO_ROOT
set -euo pipefail
kubesim=$1
root=$2
kubectl=$("$root/deploy/tools/kubectl.sh")
golden=$root/tests/unit/tenancy/host/golden
dir=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "kubesim_apply_e2e: $*" >&2
  echo "--- septa-kubesim log" >&2
  tail -20 "$dir/kubesim.log" >&2
  exit 1
}

"$kubesim" --inventory "$root/deploy/dev/inventory.yaml" --listen 127.0.0.1:0 \
  --kubeconfig-out "$dir/admin.kubeconfig" >"$dir/kubesim.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s $dir/admin.kubeconfig ]] && break; sleep 0.1; done
[[ -s $dir/admin.kubeconfig ]] || fail "septa-kubesim wrote no kubeconfig"
admin=(--kubeconfig "$dir/admin.kubeconfig")

# 1. The overlay, server-side applied as the install would be.
"$kubectl" "${admin[@]}" apply --server-side --field-manager septa-install \
  -k "$root/deploy/kustomize/overlays/kubesim" >"$dir/apply.out" 2>&1 ||
  { cat "$dir/apply.out" >&2; fail "the kubesim overlay was not accepted"; }
rendered=$("$kubectl" kustomize "$root/deploy/kustomize/overlays/kubesim" | grep -c '^kind:')
applied=$(grep -c 'serverside-applied' "$dir/apply.out")
((applied == rendered)) || { cat "$dir/apply.out" >&2; fail "applied $applied of $rendered objects"; }
for _ in $(seq 50); do
  running=$("$kubectl" "${admin[@]}" -n septa-system get pods -l app.kubernetes.io/name=septad \
    -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Running || true)
  ((running == 3)) && break
  sleep 0.1
done
((running == 3)) || fail "the StatefulSet runs $running of 3 pods"
echo "kubesim_apply_e2e: overlay accepted ($applied objects), septad-0..2 running"

# 2. septad's ServiceAccount token (what its in-cluster kubeconfig reads).
echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' >"$dir/tr.json"
token=$("$kubectl" "${admin[@]}" create --raw /api/v1/namespaces/septa-system/serviceaccounts/septad/token \
  -f "$dir/tr.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["token"])')
server=$("$kubectl" "${admin[@]}" config view --minify -o jsonpath='{.clusters[0].cluster.server}')
"$kubectl" "${admin[@]}" config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
  base64 -d >"$dir/ca.crt"
septad=(--kubeconfig /dev/null --server "$server" --certificate-authority "$dir/ca.crt" --token "$token")

apply_as_septad() {  # apply_as_septad FILE: server-side apply as septad's provisioner would
  "$kubectl" "${septad[@]}" apply --server-side --validate=false --field-manager septa-provisioner -f "$1"
}
for file in "$golden"/*-kai.json "$golden"/*-default.json; do
  apply_as_septad "$file" >"$dir/as-septad.out" 2>&1 ||
    { cat "$dir/as-septad.out" >&2; fail "septad's ServiceAccount could not apply $(basename "$file")"; }
done
echo "kubesim_apply_e2e: septad's ServiceAccount applied the host objects of every tier (kai, default)"
if apply_as_septad "$golden/isolated-kueue.json" >"$dir/kueue.out" 2>&1; then
  fail "Kueue's kinds applied without septa-kueue bound: RBAC is not enforced, the check checks nothing"
fi
grep -q 'is forbidden: User "system:serviceaccount:septa-system:septad" cannot patch resource "clusterqueues"' \
  "$dir/kueue.out" || { cat "$dir/kueue.out" >&2; fail "not the 403 expected for Kueue's kinds"; }
echo "kubesim_apply_e2e: Kueue's kinds refused (403) without septa-kueue"
