#!/usr/bin/env bash
# Usage accounting's crash convergence (docs/usage.md "Ingest"): septad
# scrapes every GPU node's dcgm-exporter each second and is SIGKILLed again
# and again at seeded random moments — half of them at a moment PostgreSQL
# shows one of its backends inside a transaction on the usage tables (an
# accounting being written) — and started again at once each time. Two
# dedicated tenants hold A100s the whole time: acme one, whose pod the
# exporter double keeps 50 % busy, beta two, 20 % busy. The check is on one
# whole minute W (UTC) during which the kills went on, and on the database:
#  - each tenant is billed exactly the wall time it held: 60 s per GPU held in
#    W (the restarts are short, so each is billed from the node's cursor;
#    only gaps over 10 minutes go unbilled, and there are none);
#  - nothing is billed twice: every GPU of the inventory has exactly 60 s of
#    capacity in W, what its holders were billed equals the pool's reserved
#    seconds on it per minute, and (tenants + the unreserved pool) =
#    capacity in the platform report;
#  - used / measured is the duty cycle exactly, used / allocated the duty
#    cycle times the coverage (each restart leaves its gap allocated but not
#    measured);
#  - no duplicated rows: each (minute, entity) once, and the hours table
#    equals the sum of the minutes per group (a scrape added twice to one
#    and once to the other would show), at every minute, not only in W.
#  - acting on hoarders converges too: a third tenant, gamma, holds an A100
#    and runs nothing; with the dedicated tier's thresholds at their least,
#    30 s (flag) and 1 m (sleep), its virtual cluster is flagged and put to
#    sleep while the kills go on (they last 105 s at least), exactly once (one vcluster.sleep_idle audit record),
#    its condition saying why; acme's and beta's are never flagged.
# The host is a separate septa-kubesim process with the dcgm-exporter double
# (its pods and exporters outlive septad), the database the test run's
# PostgreSQL (--testdb) or one of its own.
#
#   tests/e2e/septad/septad_usage_crash_e2e.sh --build build [--seed S] [--testdb DIR] [--kubectl PATH]
# The seed decides the kill points; it is printed first, so a failing run
# can be replayed (timing still varies).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=septad_crash_lib.sh
source "$here/septad_crash_lib.sh"
crash_args "--build DIR [--seed S] [--testdb DIR] [--kubectl PATH]" "$@"
((${#crash_extra[@]} == 0)) || crash_usage "--build DIR [--seed S] [--testdb DIR] [--kubectl PATH]"
crash_setup "$build" "$kubectl" "$seed"
echo "seed $seed (replay: $0 --build $build --seed $seed)"
fail() {
  echo "FAIL (seed $seed): $*"
  echo "--- septad logs (earlier starts, then the last):"
  cat "$dir/septad-earlier.log" "$log" 2>/dev/null | grep -v ' DEBUG ' | tail -100
  exit 1
}
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
sql() { psql "$db_url" -XAtqc "$1"; }

begun_run=$(now_ms)
crash_world "usage_crash_$$_$(date +%s%N)" --scheduler-name default-scheduler kai-scheduler --pod-start-delay-ms 100 \
  --dcgm-exporter 4.8.3
septad_args=(--usage-scrape-interval 1s --usage-hoarding-after dedicated=30s
  --usage-hoarding-sleep-after dedicated=1m)
run_septad "${septad_args[@]}"
restarts_ms=0  # from here: restarts only
token=$(cat "$dir/data/admin.token")

# --- two dedicated tenants, their pods at known duty cycles; gamma holds one and idles
declare -A gpus=([acme]=1 [beta]=2 [gamma]=1) duty=([acme]=50 [beta]=20)
for t in acme beta gamma; do
  [[ $(api POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"dedicated\"}") == 201 ]] || fail "create tenant $t: $(reply)"
  [[ $(api POST "/v1/tenants/$t/vclusters" \
    "{\"name\":\"train\",\"capacity\":{\"gpus\":{\"model\":\"A100-80GB\",\"count\":${gpus[$t]}}},\"quota\":{\"cpu_milli\":2000,\"memory_mib\":4096,\"pods\":5}}") == 201 ]] ||
    fail "create $t/train: $(reply)"
done
running() { [[ $(kc "$dir/$1.kubeconfig" get pod work -o 'jsonpath={.status.phase}' 2>/dev/null) == Running ]]; }
for t in acme beta; do
  wait_for "$t/train READY" 20 vcluster_ready "$token" "$t" train
  "$admin" kubeconfig "$db_url" "https://127.0.0.1:$vport" "$t/train" >"$dir/$t.kubeconfig" || fail "kubeconfig of $t/train"
  gpu_pod work "${duty[$t]}" 1000 "${gpus[$t]}" | kc "$dir/$t.kubeconfig" apply -f - >/dev/null || fail "$t's pod"
done
for t in acme beta; do wait_for "$t's pod Running" 30 running "$t"; done

# --- the kills --------------------------------------------------------------------
# W: the first whole minute that begins at least 2 s after the pods run (the
# exporter shows them by then); the kills go on from now until 2 s after it.
window=$((($(date +%s) + 2 + 59) / 60 * 60))
until_s=$((window + 62))
# ... and at least until gamma, idle since its cluster was READY, is due to be slept (30 s + 1 m, and some).
((until_s >= $(date +%s) + 105)) || until_s=$(($(date +%s) + 105))
echo "the window W: $(utc "$window") to $(utc $((window + 60))); kills until $(utc "$until_s") (after $(($(now_ms) - begun_run)) ms of setup)"
# A septad backend inside a transaction that touched the usage tables.
accounting() {
  [[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()
            AND xact_start IS NOT NULL AND query ILIKE '%usage\_%'") -gt 0 ]]
}
killed=0 inside=0
while (($(date +%s) < until_s)); do
  draw 2
  if ((r == 0)); then
    # A random moment 0.3-4 s on.
    draw 3700
    sleep_s=$(printf '%d.%03d' $(((300 + r) / 1000)) $(((300 + r) % 1000)))
    sleep "$sleep_s"
    what="at a random moment ($sleep_s s)"
  else
    # The first moment (after 0.3 s) an accounting is seen being written, else at 4 s.
    sleep 0.3
    what="at 4 s, no accounting seen"
    deadline=$(($(now_ms) + 3700))
    while (($(now_ms) < deadline)); do
      if accounting; then
        what="inside an accounting's transaction"
        inside=$((inside + 1))
        break
      fi
    done
  fi
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  killed=$((killed + 1))
  echo "kill $killed: $what"
  run_septad "${septad_args[@]}"
done
((killed >= 10)) || fail "only $killed kills"
((inside > 0)) || fail "no kill landed inside an accounting's transaction: the test proved less than it says"
echo "$killed kills ($inside seen inside an accounting's transaction); restarts took $((restarts_ms / killed)) ms on average"

# W accounted on every node: each GPU node's cursor past it (1 s scrapes; 10 s allowed).
accounted() {
  [[ $(sql "SELECT count(*) FROM usage_cursors WHERE accounted_until >= '$(utc $((window + 60)))'") -ge 8 ]]
}
wait_for "every GPU node accounted past W" 10 accounted

# --- the end state ----------------------------------------------------------------
wstart=$(utc "$window") wend=$(utc $((window + 60)))
# SQL: every GPU of the inventory (8 GPU nodes, 56 GPUs) has exactly 60 s of capacity in W; per minute and
# GPU, the pool's reserved seconds equal what its holders were billed; per tenant, 60 s per GPU held.
check_sql() {
  local out
  out=$(sql "SELECT count(*), count(*) FILTER (WHERE abs(capacity_gpu_seconds - 60) > 1e-6)
             FROM usage_pool_minutes WHERE minute = '$wstart'")
  [[ $out == "56|0" ]] || fail "W's pool: (GPUs, GPUs whose capacity is not 60 s) = $out, want 56|0"
  out=$(sql "SELECT count(*) FROM usage_pool_minutes p FULL JOIN
               (SELECT minute, node, gpu_uuid, sum(allocated_gpu_seconds) AS billed FROM usage_minutes
                GROUP BY 1, 2, 3) m USING (minute, node, gpu_uuid)
             WHERE abs(coalesce(p.reserved_gpu_seconds, 0) - coalesce(m.billed, 0)) > 1e-6
                OR coalesce(p.reserved_gpu_seconds, 0) > coalesce(p.capacity_gpu_seconds, 0) + 1e-6
                OR p.capacity_gpu_seconds > 60 + 1e-6")
  [[ $out == 0 ]] || fail "$out GPU-minutes where the pool's reserved seconds are not what was billed, or over capacity"
  out=$(sql "SELECT tenant, count(DISTINCT gpu_uuid), round(sum(allocated_gpu_seconds)::numeric, 6)
             FROM usage_minutes WHERE minute = '$wstart' GROUP BY tenant ORDER BY tenant")
  [[ $out == $'acme|1|60.000000\nbeta|2|120.000000\ngamma|1|60.000000' ]] ||
    fail "W billed (tenant|GPUs|seconds; gamma sleeps keeping its GPU): $out"
  # No duplicated row (the key forbids it; counted anyway), and the hours are the sum of the minutes.
  out=$(sql "SELECT count(*) - count(DISTINCT (minute, tenant, vcluster, node, gpu_uuid, gi_id)) FROM usage_minutes")
  [[ $out == 0 ]] || fail "$out duplicated minute rows"
  out=$(sql "SELECT count(*) FROM usage_hours h FULL JOIN
               (SELECT date_trunc('hour', minute, 'UTC') AS hour, tenant, vcluster, tier, model, mig_profile,
                       sum(allocated_gpu_seconds) AS a, sum(measured_gpu_seconds) AS m, sum(used_gpu_seconds) AS u,
                       sum(samples) AS s
                FROM usage_minutes GROUP BY 1, 2, 3, 4, 5, 6) m USING (hour, tenant, vcluster, tier, model, mig_profile)
             WHERE h.hour IS NULL OR m.hour IS NULL OR abs(h.allocated_gpu_seconds - m.a) > 1e-6
                OR abs(h.measured_gpu_seconds - m.m) > 1e-6 OR abs(h.used_gpu_seconds - m.u) > 1e-6 OR h.samples <> m.s")
  [[ $out == 0 ]] || fail "$out hour rows that are not the sum of their minutes"
  out=$(sql "SELECT count(*) FROM usage_pool_hours h FULL JOIN
               (SELECT date_trunc('hour', minute, 'UTC') AS hour, model, sum(capacity_gpu_seconds) AS c,
                       sum(reserved_gpu_seconds) AS r FROM usage_pool_minutes GROUP BY 1, 2) m USING (hour, model)
             WHERE h.hour IS NULL OR m.hour IS NULL OR abs(h.capacity_gpu_seconds - m.c) > 1e-6
                OR abs(h.reserved_gpu_seconds - m.r) > 1e-6")
  [[ $out == 0 ]] || fail "$out pool hour rows that are not the sum of their minutes"
}
check_sql

# Through the API: each tenant's report of W, and the platform's.
for t in acme beta; do
  [[ $(api GET "/v1/tenants/$t/usage?start=$wstart&end=$wend") == 200 ]] || fail "$t's usage: $(reply)"
  python3 - "$dir/reply" "${gpus[$t]}" "${duty[$t]}" <<'PY' || fail "$t's usage of W: $(reply)"
import json, sys
r = json.load(open(sys.argv[1]))
gpus, duty = int(sys.argv[2]), int(sys.argv[3]) / 100
close = lambda a, b, tol=1e-9: abs(a - b) <= tol * max(1.0, abs(b))
t = r["total"]
assert r["resolution"] == "minute", r
assert close(t["allocated_gpu_hours"], gpus / 60, 1e-6), t          # held the whole minute: billed it once
assert 0.3 < t["coverage"] <= 1 + 1e-9, t                            # restarts leave gaps unmeasured, not unbilled
assert close(t["efficiency"], duty), t                                # used / measured: the duty cycle, exactly
assert close(t["used_gpu_hours"], duty * t["coverage"] * t["allocated_gpu_hours"]), t
assert close(t["waste_gpu_hours"], t["measured_gpu_hours"] - t["used_gpu_hours"]), t
print(f"{sys.argv[2]} GPU(s) at {duty:.0%}: allocated {t['allocated_gpu_hours'] * 3600:.6f} GPU-s, "
      f"coverage {t['coverage']:.3f}, used/allocated {t['used_gpu_hours'] / t['allocated_gpu_hours']:.4f}")
PY
done
[[ $(api GET "/v1/usage?start=$wstart&end=$wend&group_by=tenant") == 200 ]] || fail "the platform's usage: $(reply)"
python3 - "$dir/reply" <<'PY' || fail "the platform's usage of W: $(reply)"
import json, sys
r = json.load(open(sys.argv[1]))
tenants = {i["tenant"]: i["allocated_gpu_hours"] for i in r["usage"]["items"]}
[pool] = r["pool"]
assert set(tenants) == {"acme", "beta", "gamma"}, tenants
assert abs(pool["capacity_gpu_hours"] - 56 / 60) < 1e-9, pool                      # every GPU's minute, once
assert abs(sum(tenants.values()) + pool["unreserved_gpu_hours"] - pool["capacity_gpu_hours"]) < 1e-9, (tenants, pool)
PY
# The hoarder: put to sleep once, through the kills; the busy never flagged.
sleeping() { [[ $(api GET /v1/tenants/gamma/vclusters/train) == 200 && $(json 'r["state"]') == SLEEPING ]]; }
wait_for "gamma/train put to sleep" 30 sleeping
[[ $(json '" ".join(c["status"] + " " + c.get("reason", "") for c in r.get("conditions", []) if c["type"] == "Hoarding")') == \
  "False PutToSleep" ]] || fail "gamma's Hoarding condition says why it sleeps: $(reply)"
out=$(sql "SELECT resource, count(*) FROM audit_log WHERE action = 'vcluster.sleep_idle' GROUP BY 1")
[[ $out == "tenants/gamma/vclusters/train|1" ]] || fail "slept once, and only gamma (resource|records): $out"
for t in acme beta; do
  [[ $(api GET "/v1/tenants/$t/vclusters/train") == 200 ]] || fail "$t/train: $(reply)"
  [[ $(json '[c for c in r.get("conditions", []) if c["type"] == "Hoarding"]') == "[]" ]] ||
    fail "$t/train, busy, never flagged: $(reply)"
done
echo "PASS: $killed kills in $(($(now_ms) - begun_run)) ms; W billed once, exactly as held"
