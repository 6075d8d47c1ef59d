# Finding M2 (../shared/docs/HOSTILE-TENANT-FINDINGS.md): the hashed host
# namespace of one virtual cluster was the plain one of another of the same
# tenant, so both ran in one namespace and deleting the second deleted the
# first's pods. Now a second virtual cluster whose name reads like the first
# one's namespace is refused (409 naming the field) or gets a namespace of
# its own, and deleting it leaves the first's pod running.
# Sourced by septad_hostile_e2e.sh, which provides the helpers used here.

m2_host_namespace_tenant=longtenantname-abcdefghij
m2_host_namespace_first=firstvcluster-abcdefghijklmnopq

# "<uid> <phase>" of the first virtual cluster's host pods in namespace $1.
m2_host_namespace_pods() {
  k -n "$1" get pods -l "septa.dev/vcluster=$m2_host_namespace_first" \
    -o jsonpath='{range .items[*]}{.metadata.uid} {.status.phase}{"\n"}{end}'
}
m2_host_namespace_running() { [[ $(m2_host_namespace_pods "$1") == *" Running" ]]; }
m2_host_namespace_state() { field "$(get "/v1/tenants/$m2_host_namespace_tenant/vclusters/$1")" state; }
m2_host_namespace_ready() { [[ $(m2_host_namespace_state "$1") == READY ]]; }
m2_host_namespace_gone() {
  [[ $(api GET "/v1/tenants/$m2_host_namespace_tenant/vclusters/$1") == 404 ]]
}

hostile_case() {
  local t=$m2_host_namespace_tenant first=$m2_host_namespace_first capacity='{"shared":{"milli_gpu":100}}'
  tenant "$t" shared
  vcluster "$t" "$first" "$capacity"
  local ns1 pods status ns2 second
  ns1=$(host_ns "$t" "$first")
  restricted_pod web1 | vk "$t" "$first" apply -f - >/dev/null || fail "m2: web1 was not applied to $t/$first"
  wait_for "m2: web1 running in $ns1" 30 m2_host_namespace_running "$ns1"
  pods=$(m2_host_namespace_pods "$ns1")
  # The old rule's hashed name read as a plain one, and the tail of the
  # first's namespace now (a name holding "-x-": hashed in turn).
  for second in firstvcluster-abcd-49ffa608db "${ns1#"septa-$t-x-"}"; do
    status=$(api POST "/v1/tenants/$t/vclusters" "{\"name\":\"$second\",\"capacity\":$capacity}")
    if [[ $status == 409 ]]; then
      grep -q '"field": *"name"' "$dir/reply" || fail "m2: the refusal of $second names no field: $(cat "$dir/reply")"
      continue
    fi
    [[ $status == 201 ]] || fail "m2: creating $t/$second answered $status: $(cat "$dir/reply")"
    wait_for "m2: $t/$second READY" 30 m2_host_namespace_ready "$second"
    ns2=$(host_ns "$t" "$second")
    [[ $ns2 != "$ns1" ]] || fail "m2: $t/$second was given $t/$first's namespace $ns1"
    [[ $(api DELETE "/v1/tenants/$t/vclusters/$second") == 200 ]] || fail "m2: deleting $t/$second: $(cat "$dir/reply")"
    wait_for "m2: $t/$second deleted" 30 m2_host_namespace_gone "$second"
    [[ $(m2_host_namespace_pods "$ns1") == "$pods" ]] ||
      fail "m2: deleting $t/$second touched $t/$first's pod: was '$pods', now '$(m2_host_namespace_pods "$ns1")'"
  done
  m2_host_namespace_ready "$first" || fail "m2: $t/$first is $(m2_host_namespace_state "$first")"
}
