#!/usr/bin/env bash
# Starts septa-kubesim on a free port, then drives it with the real kubectl.
# Usage: kubectl_e2e.sh <septa-kubesim> <kubectl>
set -uo pipefail
SIM=${1:?septa-kubesim binary}
KUBECTL=${2:-kubectl}
[[ -x $KUBECTL ]] || KUBECTL=$(command -v kubectl) || { echo "kubectl not found"; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_kubesim "$SIM"

cat >"$WORK/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx
YAML
cat >"$WORK/deploy.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: d1}
spec:
  replicas: 2
  selector: {matchLabels: {app: d1}}
  template:
    metadata: {labels: {app: d1}}
    spec: {containers: [{name: c, image: busybox}]}
YAML
cat >"$WORK/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
YAML
cat >"$WORK/widget.yaml" <<'YAML'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 4}
YAML

expect "version" "Server Version: v1.30" k version
expect "api-resources lists pods" "pods" k api-resources
expect "api-resources lists deployments" "deployments" k api-resources
expect "create -f" "pod/web created" k create -f "$WORK/pod.yaml"
expect "create again is AlreadyExists" "AlreadyExists" k create -f "$WORK/pod.yaml"
expect "get -o json" '"name": "web"' k get pod web -o json
expect "get -l" "pod/web" k get pods -l app=web -o name
expect "get -l that matches nothing" "No resources found" k get pods -l app=other
expect "label" "pod/web labeled" k label pod web tier=front
expect "annotate" "pod/web annotated" k annotate pod web note=hello
expect "patch --type merge" "pod/web patched" k patch pod web --type merge -p '{"metadata":{"labels":{"x":"y"}}}'
expect "patch --type json" "pod/web patched" k patch pod web --type json -p '[{"op":"add","path":"/metadata/labels/z","value":"w"}]'
expect "labels after label and patches" '"app":"web","tier":"front","x":"y","z":"w"' k get pod web -o 'jsonpath={.metadata.labels}'
expect "annotation" "hello" k get pod web -o 'jsonpath={.metadata.annotations.note}'
expect "json patch test failure is refused" "The request is invalid" k patch pod web --type json -p '[{"op":"test","path":"/metadata/labels/app","value":"nope"}]'
expect "apply --server-side creates" "deployment.apps/d1 serverside-applied" k apply --server-side -f "$WORK/deploy.yaml"
expect "apply --server-side again" "deployment.apps/d1 serverside-applied" k apply --server-side -f "$WORK/deploy.yaml"
expect "patch replicas" "patched" k patch deployment d1 --type merge -p '{"spec":{"replicas":5}}'
expect "apply conflict without force" "conflict" k apply --server-side -f "$WORK/deploy.yaml"
expect "apply --force-conflicts" "serverside-applied" k apply --server-side --force-conflicts -f "$WORK/deploy.yaml"
expect "replicas back to the applied value" "2" k get deployment d1 -o 'jsonpath={.spec.replicas}'
expect "invalid name is 422" "Invalid value" k create configmap Bad_Name
cat >"$WORK/typo.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: typo, lables: {a: b}}
dat: {k: v}
YAML
expect "unknown fields refused (kubectl sends fieldValidation=Strict)" \
  'strict decoding error: unknown field "dat", unknown field "metadata.lables"' k create -f "$WORK/typo.yaml"
expect_fail "the refused object was not stored" k get configmap typo
expect "--validate=false creates it" "configmap/typo created" k create --validate=false -f "$WORK/typo.yaml"
expect_absent "... without the unknown fields, as the API server drops them" "lables" k get configmap typo -o json
expect_absent "... not even the misspelt data" '"dat"' k get configmap typo -o json
expect "kubectl patch (no fieldValidation) drops an unknown field too" "configmap/typo patched" \
  k patch configmap typo --type merge -p '{"metadata":{"labelz":{"x":"y"}}}'
expect_absent "... and keeps nothing of it" "labelz" k get configmap typo -o json
expect "dry run does not store" "created (server dry run)" k create configmap dry --dry-run=server
expect_fail "dry run left nothing" k get configmap dry
expect "CRD create" "created" k create -f "$WORK/crd.yaml"
expect "custom resource create" "widget.example.com/w1 created" k create -f "$WORK/widget.yaml"
expect "custom resource get" "w1" k get widgets
expect "delete" 'pod "web" deleted' k delete pod web
expect_fail "deleted pod is gone" k get pod web

# The schedulers' CRDs are there from the start, and quota admission refuses
# pods in the API server's words.
source "$(dirname "${BASH_SOURCE[0]}")/scheduler_quota_checks.sh"

# Namespace deletion removes what is in it.
expect "create namespace" "namespace/t1 created" k create namespace t1
expect "create in namespace" "configmap/a created" k -n t1 create configmap a
expect "delete namespace" 'namespace "t1" deleted' k delete namespace t1
expect_fail "namespace gone" k get namespace t1
expect_fail "its contents gone" k -n t1 get configmap a

# get -w sees ADDED, MODIFIED and DELETED. kubectl lists first, prints what
# exists (here watch-start, one event per line) and then watches from the
# list's resourceVersion: once that line is out, no later change can be missed.
k create configmap watch-start >/dev/null
timeout 60 "$KUBECTL" get configmaps -w --output-watch-events -o json >"$WORK/watch.out" 2>&1 &
WATCH_PID=$!
if wait_for_line "$WORK/watch.out" '"name":"watch-start"' 20; then
  k create configmap watched >/dev/null
  k label configmap watched a=b >/dev/null
  k delete configmap watched >/dev/null
  wait_for_line "$WORK/watch.out" '"type":"DELETED".*"name":"watched"' 20
else
  record "get -w lists before it watches" 0 "watch-start not listed within 20 s" "$(cat "$WORK/watch.out")"
fi
kill $WATCH_PID 2>/dev/null; wait $WATCH_PID 2>/dev/null
for type in ADDED MODIFIED DELETED; do
  expect "get -w receives $type of watched" "\"type\":\"$type\"" grep '"name":"watched"' "$WORK/watch.out"
done

# A client certificate from another CA is refused.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/O=system:masters/CN=mallory" \
  -keyout "$WORK/foreign.key" -out "$WORK/foreign.crt" 2>/dev/null
server=$(k config view --raw -o 'jsonpath={.clusters[0].cluster.server}')
k config view --raw -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$WORK/ca.crt"
expect_fail "foreign client certificate" "$KUBECTL" --request-timeout=5s --kubeconfig=/dev/null --server "$server" \
  --certificate-authority "$WORK/ca.crt" --client-certificate "$WORK/foreign.crt" --client-key "$WORK/foreign.key" get ns
expect "unknown bearer token is 401" "Unauthorized" "$KUBECTL" --request-timeout=5s --kubeconfig=/dev/null \
  --server "$server" --certificate-authority "$WORK/ca.crt" --token not-a-token get ns

# Services get a cluster IP of the service range; an address in use or out of
# range is refused in the API server's words.
k create service clusterip web --tcp=80:8080 >/dev/null
web_ip=$(k get service web -o 'jsonpath={.spec.clusterIP}')
in_range=0
[[ $web_ip =~ ^10\.(9[6-9]|10[0-9]|11[01])\.[0-9]+\.[0-9]+$ ]] && in_range=1
record "a service gets a cluster IP of 10.96.0.0/12" $in_range "not in the service range:" "$web_ip"
expect "the port's targetPort is kept" "8080" k get service web -o 'jsonpath={.spec.ports[0].targetPort}'
expect "an address in use is refused" "provided IP is already allocated" \
  k create service clusterip clash --clusterip "$web_ip" --tcp=80
expect "an address out of range is refused" "The range of valid IPs is 10.96.0.0/12" \
  k create service clusterip outside --clusterip 192.168.0.10 --tcp=80
expect "a headless service has none" "None" k create service clusterip headless --clusterip None -o 'jsonpath={.spec.clusterIP}'

# Service account tokens: kubectl create token asks the TokenRequest API, and
# the API server takes the token as that service account, until the pod it
# is bound to goes.
as_token() { "$KUBECTL" --request-timeout=5s --kubeconfig=/dev/null --server "$server" --certificate-authority "$WORK/ca.crt" --token "$@"; }
k run holder --image busybox >/dev/null
sa_token=$(k create token default --duration 10m --bound-object-kind Pod --bound-object-name holder 2>&1)
expect "create token mints a JWT" "eyJ" echo "$sa_token"
expect "the token authenticates as its service account" \
  'User "system:serviceaccount:default:default" cannot list resource "pods"' as_token "$sa_token" get pods
expect "create token refuses less than 10 minutes" "may not specify a duration less than 10 minutes" \
  k create token default --duration 5m
review() {
  k create -o 'jsonpath={.status.user.username}{.status.error}' -f - <<YAML
apiVersion: authentication.k8s.io/v1
kind: TokenReview
spec: {token: "$1"}
YAML
}
expect "a TokenReview names the token's service account" "system:serviceaccount:default:default" review "$sa_token"
expect "a TokenReview of a bad token says so" "invalid bearer token" review not-a-token
k delete pod holder --grace-period 0 >/dev/null 2>&1
expect "the token dies with the pod it is bound to" "Unauthorized" as_token "$sa_token" get pods

finish
