# Issue 28 L1: a SUSPENDED tenant keeps its records but uses nothing. Its
# owner token reads and never writes, no kubeconfig or token is issued for
# it (not even by an admin), its virtual cluster's API answers 403 Forbidden
# to its client certificate and service-account token, and its workloads are
# stopped on the host with its reservation released (the runner's
# --sleep-reservation release); resumed, it is placed again and runs.
# Sourced by septad_hostile_e2e.sh, which then checks that the victim is untouched.

# The virtual cluster's JSON, as the admin reads it.
l1_suspended_tenant_vc() { get /v1/tenants/lucy/vclusters/m1; }

l1_suspended_tenant_slept() {
  local vc; vc=$(l1_suspended_tenant_vc)
  [[ $(condition "$vc" Sleeping) == True && $(condition "$vc" Sleeping reason) == TenantSuspended ]] &&
    [[ -z $(k get pods -n "$(host_ns lucy m1)" -o name 2>/dev/null) ]] &&
    [[ $(field "$vc" reservation) == "" || $(field "$vc" reservation) == "{}" ]]
}

l1_suspended_tenant_awake() {
  local vc; vc=$(l1_suspended_tenant_vc)
  [[ $(field "$vc" state) == READY && $(condition "$vc" Sleeping reason) == Awake &&
    $(condition "$vc" CapacityReady) == True ]]
}

l1_suspended_tenant_running() {  # NAME: its host pod runs
  [[ $(k get pods -n "$(host_ns lucy m1)" -o jsonpath='{range .items[*]}{.metadata.annotations.septa\.dev/object-name}={.status.phase}{"\n"}{end}' 2>/dev/null) == *"$1=Running"* ]]
}

hostile_case() {
  tenant lucy isolated
  vcluster lucy m1 '{"mig":[{"profile":"1g.10gb","count":1}]}'
  [[ $(api POST /v1/tokens '{"principal":"tenant:lucy","role":"owner"}') == 201 ]] || fail "lucy's token: $(reply)"
  local owner; owner=$(json 'r["token"]')
  restricted_pod p1 | vk lucy m1 apply -f - >/dev/null || fail "p1 not created"
  wait_for "lucy's p1 running on the host" 15 l1_suspended_tenant_running p1
  local sa; sa=$(vk lucy m1 create token default) || fail "no service account token"

  [[ $(api PATCH /v1/tenants/lucy '{"state":"SUSPENDED"}') == 200 ]] || fail "suspend: $(reply)"

  # The API: reads only, nothing issued.
  [[ $(rest "$owner" GET /v1/tenants/lucy) == 200 && $(json 'r["state"]') == SUSPENDED ]] ||
    fail "a suspended owner cannot read its tenant: $(reply)"
  [[ $(rest "$owner" POST /v1/tenants/lucy/vclusters/m1:kubeconfig '{"ttl":"1h","role":"admin"}') == 403 ]] ||
    fail "a suspended owner got a kubeconfig: $(reply)"
  [[ $(reply) == *'is suspended'* ]] || fail "the 403 does not say why: $(reply)"
  [[ $(rest "$owner" PATCH /v1/tenants/lucy/vclusters/m1 '{"display_name":"x"}') == 403 ]] ||
    fail "a suspended owner changed its virtual cluster: $(reply)"
  [[ $(api POST /v1/tenants/lucy/vclusters/m1:kubeconfig '{"ttl":"1h","role":"admin"}') == 412 ]] ||
    fail "an admin got a kubeconfig for a suspended tenant: $(reply)"
  [[ $(api POST /v1/tokens '{"principal":"tenant:lucy","role":"owner"}') == 412 ]] ||
    fail "an admin minted a token for a suspended tenant: $(reply)"

  # The virtual cluster's API: its certificate and its service-account token are Forbidden.
  [[ $(vcurl lucy m1 GET /api/v1/namespaces/default/pods) == 403 ]] ||
    fail "a suspended tenant's certificate still works: $(cat "$dir/vreply")"
  grep -q 'is suspended' "$dir/vreply" || fail "the 403 does not say why: $(cat "$dir/vreply")"
  local out; out=$(vk lucy m1 --token "$sa" get serviceaccounts 2>&1) &&
    fail "a suspended tenant's service-account token still works: $out"
  [[ $out == *Forbidden*'is suspended'* ]] || fail "the service-account token's refusal does not say why: $out"

  # Its workloads stop and its reservation is released; nothing runs for it.
  wait_for "lucy's workloads stopped and its reservation released" 15 l1_suspended_tenant_slept

  # Resumed: placed again, its credentials work, a new pod runs.
  [[ $(api PATCH /v1/tenants/lucy '{"state":"ACTIVE"}') == 200 ]] || fail "resume: $(reply)"
  wait_for "lucy's m1 awake and placed again" 15 l1_suspended_tenant_awake
  [[ $(vcurl lucy m1 GET /api/v1/namespaces/default/pods) == 200 ]] ||
    fail "the certificate does not work after resuming: $(cat "$dir/vreply")"
  restricted_pod p2 | vk lucy m1 apply -f - >/dev/null || fail "p2 not created after resuming"
  wait_for "lucy's p2 running on the host" 15 l1_suspended_tenant_running p2
}
