# L2, L7, L10, L11: what a baseline-tier pod could still ask for. Other
# vendors' extended resources reached the host unchecked and unpinned; a
# pod naming its node was deleted without a word; azureFile, flexVolume and
# glusterfs kept the raw names of the host namespace's objects; AppArmor
# Unconfined and SELinux spc_t ran. Each is refused now with a SyncRefused
# event naming the field (volumes the node mounts by itself at every level
# but privileged, where their references are renamed).

lows_refused() {  # POD TEXT: a SyncRefused event about POD says TEXT
  vk lowe l1 get events --field-selector "reason=SyncRefused,involvedObject.name=$1" \
    -o 'jsonpath={.items[*].message}' | grep -qF "$2"
}

lows_pod() {  # NAME SPEC-LINES CONTAINER-LINES: a baseline pod with those lines added
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
$2
  containers:
    - name: main
      image: busybox
$3
YAML
}

hostile_case() {
  tenant lowe isolated  # Pod Security baseline
  vcluster lowe l1 '{"mig":[{"profile":"1g.10gb","count":1}]}'
  local ns
  ns=$(host_ns lowe l1)
  {
    lows_pod vendor '' '      resources: {limits: {amd.com/gpu: 1, rdma/hca: 1}}'
    echo ---
    lows_pod pinned '  nodeName: h100-0' ''
    echo ---
    lows_pod apparmor '' '      securityContext: {appArmorProfile: {type: Unconfined}}'
    echo ---
    lows_pod selinux '  securityContext: {seLinuxOptions: {type: spc_t}}' ''
  } | vk lowe l1 apply -f - >/dev/null || fail "apply the refused pods"
  wait_for "amd.com/gpu refused naming the container" 15 lows_refused vendor \
    'spec.containers[0].resources.limits[amd.com/gpu]: container "main" asks for amd.com/gpu'
  wait_for "the pod naming its node refused" 15 lows_refused pinned 'spec.nodeName: '
  wait_for "AppArmor Unconfined refused" 15 lows_refused apparmor \
    'spec.containers[0].securityContext.appArmorProfile.type: '
  wait_for "SELinux spc_t refused" 15 lows_refused selinux 'spec.securityContext.seLinuxOptions.type: '
  for pod in vendor pinned apparmor selinux; do
    k get pod "$pod-x-default-x-l1" -n "$ns" -o name >/dev/null 2>&1 && fail "$pod reached the host"
  done
  [[ $(vk lowe l1 get pod pinned -o 'jsonpath={.status.phase}') == Pending ]] ||
    fail "the pod naming its node is gone or ran"
  vk lowe l1 get node h100-0 -o name >/dev/null 2>&1 && fail "the virtual cluster shows the node the pod only names"

  # Storage the node mounts by itself (a flexVolume driver, an Azure share, a
  # Gluster server, NFS) is refused below privileged; where a privileged
  # tier allows it, the plugins' secrets and glusterfs' Endpoints are renamed
  # into the virtual cluster (tenancy_sync_test SyncTranslate).
  lows_pod plugins '  volumes:
    - {name: flex, flexVolume: {driver: example.com/flex, secretRef: {name: plugin-creds}}}
    - {name: gluster, glusterfs: {endpoints: gluster-eps, path: vol}}' '' | vk lowe l1 apply -f - >/dev/null ||
    fail "apply the plugins pod"
  wait_for "the node-mounted volume refused" 15 lows_refused plugins 'spec.volumes[0].flexVolume: volume type flexVolume'
  k get pod plugins-x-default-x-l1 -n "$ns" -o name >/dev/null 2>&1 && fail "the plugins pod reached the host"
  [[ $(api DELETE /v1/tenants/lowe/vclusters/l1) == 200 ]] || fail "delete l1: $(reply)"
}
