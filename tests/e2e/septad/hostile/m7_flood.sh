# M7: a tenant floods its virtual cluster past the API limits an admin set
# for it (small, so that the flood reaches them within seconds): big
# ConfigMaps past api_limits.object_bytes and small ones past
# api_limits.objects are refused 403 `exceeded quota: api_limits` and not
# stored; watches past api_limits.watches are refused 429 with Retry-After.
# Meanwhile the victim's reads are answered, each within a generous bound
# (the strict p99 is scripts/bench/tenant_flood_bench.sh's).

m7_flood_configmap() {  # NAME BYTES: writes a ConfigMap of about BYTES bytes to $dir/m7-NAME.json, prints the path
  python3 -c 'import json,sys; print(json.dumps({"apiVersion":"v1","kind":"ConfigMap",
    "metadata":{"name":sys.argv[1],"namespace":"default"},"data":{"v":"x"*int(sys.argv[2])}}))' \
    "$1" "$2" >"$dir/m7-$1.json"
  echo "$dir/m7-$1.json"
}

m7_flood_post() {  # FILE: creates that ConfigMap in mona/m1; prints the status, the body is in $dir/vreply
  vcurl mona m1 POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' \
    --data-binary "@$1"
}

m7_flood_limits() {  # JSON: an admin's override of mona/m1's api_limits
  [[ $(api PATCH "/v1/tenants/mona/vclusters/m1?update_mask=api_limits" "{\"api_limits\":$1}") == 200 ]] ||
    fail "m7: set mona/m1's api_limits to $1: $(reply)"
}

m7_flood_victim_reads() {  # N: the victim's GETs, each answered 200 within 2 s
  local i begun status
  for ((i = 0; i < $1; i++)); do
    begun=$(now_ms)
    status=$(vcurl victim v1 GET /api/v1/namespaces/default/configmaps)
    [[ $status == 200 ]] || fail "m7: the victim's GET answered $status during the flood"
    (($(now_ms) - begun < 2000)) || fail "m7: the victim's GET took $(($(now_ms) - begun)) ms during the flood"
  done
}

m7_flood_attempt=0
m7_flood_small_refused() {  # a new small ConfigMap is refused by api_limits.objects
  m7_flood_attempt=$((m7_flood_attempt + 1))
  [[ $(m7_flood_post "$(m7_flood_configmap "small-$m7_flood_attempt" 10)") == 403 ]]
}

m7_flood_watch_refused() {  # a watch is refused 429; the headers are in $dir/m7-headers
  [[ $(vcurl mona m1 GET '/api/v1/namespaces/default/configmaps?watch=true' -D "$dir/m7-headers") == 429 ]]
}

m7_flood_watches_open() {  # each kubectl of $dir/m7-watch-{1,2,3}.log had its watch answered 200
  local i
  for i in 1 2 3; do
    grep -q 'watch=true 200 OK' "$dir/m7-watch-$i.log" 2>/dev/null || return 1
  done
}

hostile_case() {
  tenant mona isolated
  vcluster mona m1 '{"mig":[{"profile":"1g.10gb","count":1}]}'
  local status i stored_big=0 endpoint small watchers=() flood

  # Bytes: 2 MiB in all, the seeded objects included: 400 KB ConfigMaps fit
  # a few times, then the next is refused and nothing of it is stored.
  m7_flood_limits '{"object_bytes":2097152,"watches":3}'
  for ((i = 0; i < 12; i++)); do
    status=$(m7_flood_post "$(m7_flood_configmap "big-$i" 400000)")
    if [[ $status == 201 ]]; then
      stored_big=$((stored_big + 1))
      continue
    fi
    [[ $status == 403 ]] || fail "m7: a big ConfigMap answered $status: $(head -c 300 "$dir/vreply")"
    grep -q "configmaps \\\\\"big-$i\\\\\" is forbidden: exceeded quota: api_limits, requested: object_bytes=" \
      "$dir/vreply" || fail "m7: not the quota's refusal: $(cat "$dir/vreply")"
    break
  done
  ((i < 12)) || fail "m7: 12 ConfigMaps of 400 KB fitted in 2 MiB (api_limits not applied?)"
  [[ $(vcurl mona m1 GET "/api/v1/namespaces/default/configmaps/big-$i") == 404 ]] ||
    fail "m7: the refused big-$i was stored"

  # Objects: 1, fewer than the seeded objects, so every create is refused;
  # a flood of them in parallel too, while the victim is answered.
  m7_flood_limits '{"objects":1,"watches":3}'
  wait_for "m7: api_limits.objects applied" 10 m7_flood_small_refused
  grep -q 'exceeded quota: api_limits, requested: objects=1, used: objects=[0-9]*, limited: objects=1"' \
    "$dir/vreply" || fail "m7: not the objects quota's refusal: $(cat "$dir/vreply")"
  small=$(m7_flood_configmap small 10)
  endpoint=$(field "$(get /v1/tenants/mona/vclusters/m1)" endpoint)
  seq 40 | xargs -P 8 -I{} curl -sk -o /dev/null -w '%{http_code}\n' --max-time 30 \
    --cert "$dir/kc/mona-m1.crt" --key "$dir/kc/mona-m1.key" -H 'Content-Type: application/json' \
    --data-binary "@$small" "$endpoint/api/v1/namespaces/default/configmaps" >"$dir/m7-flood" &
  flood=$!
  m7_flood_victim_reads 10
  wait "$flood" || true
  [[ $(sort -u "$dir/m7-flood") == 403 ]] || fail "m7: the flood was answered $(sort "$dir/m7-flood" | uniq -c)"
  [[ $(vk mona m1 get configmaps -o name | grep -c -e '^configmap/big-' -e '^configmap/small$') == "$stored_big" ]] ||
    fail "m7: what is stored changed under the refusals"

  # Watches: three open (kubectl get -w), a fourth is 429 with Retry-After.
  # The probe waits until kubectl logged all three watches answered: a probe
  # sent earlier would take a slot itself and hold it for curl's 30 s.
  for i in 1 2 3; do
    "$kubectl" --kubeconfig "$dir/kc/mona-m1" get configmaps -w -v=6 >/dev/null 2>"$dir/m7-watch-$i.log" &
    watchers+=($!)
  done
  wait_for "m7: three watches open" 30 m7_flood_watches_open
  m7_flood_watch_refused || fail "m7: a fourth watch answered $(head -1 "$dir/m7-headers")"
  grep -qi '^retry-after: 1' "$dir/m7-headers" || fail "m7: no Retry-After on the 429: $(cat "$dir/m7-headers")"
  grep -q '"reason":"TooManyRequests"' "$dir/vreply" || fail "m7: not TooManyRequests: $(cat "$dir/vreply")"
  m7_flood_victim_reads 5
  kill "${watchers[@]}" 2>/dev/null || true
  wait "${watchers[@]}" 2>/dev/null || true
}
