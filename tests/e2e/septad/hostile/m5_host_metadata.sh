# M5: a virtual Service's labels and annotations reached the host unfiltered:
# an external-dns hostname the platform's external-dns would publish,
# Septa's own keys, an ExternalName to the host's own services. One filter
# for every synced kind now refuses them (a SyncRefused event) or keeps
# them off the host copy.

m5_refused() {  # OBJECT-NAME TEXT: a SyncRefused event about the object says TEXT
  vk trent t1 get events --field-selector "reason=SyncRefused,involvedObject.name=$1" \
    -o 'jsonpath={.items[*].message}' | grep -qF "$2"
}

hostile_case() {
  tenant trent shared
  vcluster trent t1 '{"shared":{"milli_gpu":100}}'
  local ns
  ns=$(host_ns trent t1)
  # A pod, so that the virtual cluster's services are synced at all.
  restricted_pod anchor | sed 's|^  name: anchor|  name: anchor\n  labels: {app: anchor}|' |
    vk trent t1 apply -f - >/dev/null || fail "apply the anchor pod"
  vk trent t1 apply -f - >/dev/null <<'YAML' || fail "apply the services"
apiVersion: v1
kind: Service
metadata:
  name: publish
  annotations: {external-dns.alpha.kubernetes.io/hostname: api.platform.example.com}
spec: {selector: {app: anchor}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: forged
  annotations: {septa.dev/service-recreate: "{}"}
spec: {selector: {app: anchor}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: owned
  labels: {app.kubernetes.io/managed-by: septa}
spec: {selector: {app: anchor}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata:
  name: alias
spec: {type: ExternalName, externalName: kubernetes.default.svc.cluster.local}
---
apiVersion: v1
kind: Service
metadata:
  name: plain
  labels: {app.kubernetes.io/managed-by: Helm}
spec: {selector: {app: anchor}, ports: [{port: 80}]}
YAML
  m5_plain() { k get service plain-x-default-x-t1 -n "$ns" -o name >/dev/null 2>&1; }
  wait_for "the plain service on the host" 15 m5_plain
  [[ $(k get service plain-x-default-x-t1 -n "$ns" -o 'jsonpath={.metadata.labels.app\.kubernetes\.io/managed-by}') == Helm ]] ||
    fail "a tenant's own managed-by value did not reach the host"
  wait_for "the external-dns annotation refused" 15 m5_refused publish external-dns.alpha.kubernetes.io
  wait_for "Septa's annotation refused" 15 m5_refused forged septa.dev/service-recreate
  wait_for "Septa's ownership label refused" 15 m5_refused owned app.kubernetes.io/managed-by
  wait_for "the in-cluster ExternalName refused" 15 m5_refused alias spec.externalName
  local name
  for name in publish forged owned alias; do
    k get service "$name-x-default-x-t1" -n "$ns" -o name >/dev/null 2>&1 && fail "service $name reached the host"
  done

  # A Secret of type service-account-token naming a service account: on the
  # host, the token controller would fill it with a host token. Its copy is Opaque, without the name.
  vk trent t1 apply -f - >/dev/null <<'YAML' || fail "apply the token secret"
apiVersion: v1
kind: Secret
metadata:
  name: sa-token
  annotations: {kubernetes.io/service-account.name: default}
type: kubernetes.io/service-account-token
YAML
  restricted_pod reader | sed 's|^  containers:|  volumes: [{name: t, secret: {secretName: sa-token}}]\n  containers:|' |
    vk trent t1 apply -f - >/dev/null || fail "apply the pod mounting the token secret"
  m5_copy() { k get secret sa-token-x-default-x-t1 -n "$ns" -o name >/dev/null 2>&1; }
  wait_for "the token secret's copy" 15 m5_copy
  [[ $(k get secret sa-token-x-default-x-t1 -n "$ns" -o 'jsonpath={.type}') == Opaque ]] ||
    fail "the copy keeps its service-account-token type: $(k get secret sa-token-x-default-x-t1 -n "$ns" -o json)"
  [[ -z $(k get secret sa-token-x-default-x-t1 -n "$ns" -o 'jsonpath={.metadata.annotations.kubernetes\.io/service-account\.name}') ]] ||
    fail "the copy names a host service account"
  [[ $(api DELETE /v1/tenants/trent/vclusters/t1) == 200 ]] || fail "delete t1: $(reply)"
}
