# M4: a host Endpoints could name the IP of the tenant's pod that had
# finished, whose IP goes back to the CNI's pool and may be another
# tenant's pod's next (CVE-2021-25740 by IP reuse). Only live pods' IPs are
# accepted now, and a host Endpoints goes as soon as a pod it leads to
# finishes or goes.

m4_refused() {  # an Endpoints `stale` SyncRefused event names FIELD
  vk mort m1 get events --field-selector reason=SyncRefused,involvedObject.name=stale \
    -o 'jsonpath={.items[*].message}' | grep -qF "$1"
}

m4_endpoints() {  # NAME IP: a selector-less Service and its Endpoints at IP
  cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: $1}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: $1}
subsets: [{addresses: [{ip: "$2"}], ports: [{port: 80}]}]
YAML
}

hostile_case() {
  tenant mort shared
  vcluster mort m1 '{"shared":{"milli_gpu":100}}'
  local ns ip
  ns=$(host_ns mort m1)
  for pod in aweb bweb; do
    restricted_pod "$pod" | sed 's|^spec:|spec:\n  restartPolicy: Never|' | vk mort m1 apply -f - >/dev/null ||
      fail "apply $pod"
  done
  m4_running() {
    [[ $(vk mort m1 get pods aweb bweb -o 'jsonpath={.items[*].status.phase}') == "Running Running" ]]
  }
  wait_for "aweb and bweb Running" 20 m4_running
  ip=$(vk mort m1 get pod aweb -o 'jsonpath={.status.podIP}')

  # aweb exits, as the kubelet reports it; then Endpoints name its IP: refused.
  k annotate pod aweb-x-default-x-m1 -n "$ns" kubesim.septa.dev/exit-code=0 >/dev/null || fail "end aweb"
  m4_done() { [[ $(vk mort m1 get pod aweb -o 'jsonpath={.status.phase}') == Succeeded ]]; }
  wait_for "aweb Succeeded" 15 m4_done
  m4_endpoints stale "$ip" | vk mort m1 apply -f - >/dev/null || fail "apply the stale endpoints"
  wait_for "Endpoints at the finished pod's IP refused" 15 m4_refused "subsets[0].addresses[0].ip: $ip"
  k get endpoints stale-x-default-x-m1 -n "$ns" -o name >/dev/null 2>&1 && fail "the host Endpoints name $ip"

  # Endpoints at the live bweb are copied, and go when bweb goes.
  ip=$(vk mort m1 get pod bweb -o 'jsonpath={.status.podIP}')
  m4_endpoints stale "$ip" | vk mort m1 apply -f - >/dev/null || fail "point the endpoints at bweb"
  m4_copied() { [[ $(k get endpoints stale-x-default-x-m1 -n "$ns" -o 'jsonpath={.subsets[0].addresses[0].ip}' 2>/dev/null) == "$ip" ]]; }
  wait_for "the host Endpoints at bweb's IP" 15 m4_copied
  vk mort m1 delete pod bweb --wait=false >/dev/null || fail "delete bweb"
  m4_gone() { ! k get endpoints stale-x-default-x-m1 -n "$ns" -o name >/dev/null 2>&1; }
  wait_for "the host Endpoints gone with bweb" 15 m4_gone
  [[ $(api DELETE /v1/tenants/mort/vclusters/m1) == 200 ]] || fail "delete m1: $(reply)"
}
