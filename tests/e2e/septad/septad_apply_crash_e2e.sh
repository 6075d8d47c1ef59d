#!/usr/bin/env bash
# GitOps' Apply across kill -9 (issue 29): septad is SIGKILLed while one
# apply of 400 tenants is writing (PostgreSQL shows its transaction holding
# the tenants table), and started again at once, for several rounds. Every
# round ends with all of that apply or none of it — a Diff of the same
# documents afterwards says 400 to create or 400 unchanged, never a mix —
# and applying again converges. At least one round must have been killed
# inside the transaction (nothing kept), or the test proved nothing.
set -euo pipefail
septad=$1
source "$(dirname "$0")/septad_lib.sh"

objects=400
rounds=3
start
token=$(cat "$dir/data/admin.token")

# SQL on septad's embedded PostgreSQL (as the check, not through septad).
sql() {
  local port
  port=$(sed -n 4p "$dir/data/postgres/data/postmaster.pid")
  psql "host=$dir/data/postgres/run port=$port user=septa dbname=septa" -Atc "$1"
}
# Another backend's open transaction has written to tenants (it holds the
# table's RowExclusiveLock until it commits or dies).
apply_is_writing() {
  [[ $(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE c.relname = 'tenants' AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()") -gt 0 ]]
}
summary() {  # FIELD: of the last reply's plan summary (proto JSON omits zeros)
  json "r.get('summary', {}).get('$1', 0)"
}

killed_inside=0
for round in $(seq 1 "$rounds"); do
  python3 - "$round" "$objects" >"$dir/body.json" <<'PY'
import json, sys
r, n = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps({"objects": [{"tenant": {"name": f"r{r}-t{i:04d}", "trust_tier": "shared",
                                          "display_name": f"Round {r} tenant {i}"}} for i in range(n)]}))
PY
  curl -s -o /dev/null -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary @"$dir/body.json" "http://127.0.0.1:$http_port/v1/applysets/crash-$round:apply" &
  curl_pid=$!
  wait_for "round $round: the apply writing" 30 apply_is_writing
  kill -9 "$pid"
  wait "$curl_pid" || true
  start  # at once, as systemd's Restart=always would

  [[ $(rest "$token" POST "/v1/applysets/crash-$round:diff" "$(cat "$dir/body.json")") == 200 ]] ||
    fail "round $round: diff after the restart: $(reply)"
  creates=$(summary creates)
  unchanged=$(summary unchanged)
  if ((creates == objects && unchanged == 0)); then
    killed_inside=$((killed_inside + 1))
    kept=none
  elif ((unchanged == objects && creates == 0)); then
    kept=all
  else
    fail "round $round: half an apply survived the kill: $creates to create, $unchanged unchanged"
  fi
  rows=$(sql "SELECT count(*) FROM tenants WHERE name LIKE 'r$round-%'")
  members=$(sql "SELECT count(*) FROM apply_set_members WHERE set_name = 'crash-$round'")
  [[ $kept == none && $rows == 0 && $members == 0 || $kept == all && $rows == "$objects" && $members == "$objects" ]] ||
    fail "round $round: kept $kept, but $rows tenant rows and $members member rows"

  # Applying again converges.
  [[ $(rest "$token" POST "/v1/applysets/crash-$round:apply" "$(cat "$dir/body.json")") == 200 ]] ||
    fail "round $round: apply after the restart: $(reply)"
  [[ $(rest "$token" POST "/v1/applysets/crash-$round:diff" "$(cat "$dir/body.json")") == 200 ]] || fail "diff"
  [[ $(summary unchanged) == "$objects" ]] || fail "round $round: not converged: $(reply)"
  echo "round $round: killed while writing; kept $kept; converged"
done
((killed_inside > 0)) || fail "no round was killed inside its transaction: the test proved nothing"
echo "PASS: $rounds kills during an apply of $objects tenants, each all or nothing ($killed_inside inside the transaction)"
