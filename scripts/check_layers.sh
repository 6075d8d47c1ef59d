#!/usr/bin/env bash
# Fails when an #include breaks the dependency rule of DESIGN.md:
#  - gpu/, tenancy/ and common/ are pure: standard library, common/, each
#    other (tenancy may use gpu), header-only parsers, GLPK (an LP solver,
#    pure computation) and nettle (hashing, for tenancy/host's names); no
#    sockets, SQL, threads, clocks, RPC or logging.
#  - tenancy/host/ (rendering of host objects) and tenancy/sync/ (the
#    syncer's translation, which uses host names and settings) build on the
#    tenancy model; the model never includes them.
#  - libpqxx only in services/store/; grpc only in api/, services/grpc/,
#    services/cli/, services/cmd/ and tests; nothing outside services/, tests/ and fuzz/ includes
#    services/; services/core never includes a transport or the store.
#  - test doubles (tests/support/) are for tests only: no production folder includes them.
#  - kubesim (services/kubesim/) is started by services/app and commands only, and serves the
#    simulated virtual control planes (services/vcp/); the client library, the controllers and the
#    control planes on a real host (services/hostcp/) and the syncer (services/syncer/) never include it.
#  - vaultsim (services/vaultsim/, a Vault-compatible test server) is started by commands and tests
#    only: no production folder includes it, septad's wiring neither.
#  - the transports (services/rest/, services/grpc/) name no RPC or message of septa.v1: they
#    serve API v1's table (services/apiv1/api.h), and per-RPC code lives in services/apiv1/.
set -uo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
fail=0

violations() {  # $1 = folders, $2 = extended regex of forbidden include lines, $3 = sub-folder names to skip
  local dirs=() d excludes=()
  for d in $1; do [[ -d $d ]] && dirs+=("$d"); done
  ((${#dirs[@]})) || return 0
  for d in ${3:-}; do excludes+=(--exclude-dir="$d"); done
  grep -rnE --include='*.h' --include='*.cc' --include='*.cpp' "${excludes[@]}" "$2" "${dirs[@]}"
}

check() {  # $1 = rule text, $2 = folders, $3 = regex, $4 = sub-folder names to skip (optional)
  local out
  out=$(violations "$2" "$3" "${4:-}")
  if [[ -n $out ]]; then
    echo "layering: $1"
    echo "$out" | sed 's/^/  /'
    fail=1
  fi
}

pure_forbidden='^\s*#\s*include\s*[<"](boost/|pqxx|grpc|google/|spdlog|fmt/|prometheus|openssl/|sys/socket|netinet/|arpa/|unistd\.h|thread>|future>|fstream>|services/|api/)'
check "pure libraries must not do I/O, threads or RPC" "gpu tenancy common" "$pure_forbidden"
check "pure libraries take no clock: time is passed in" "gpu tenancy" '^\s*#\s*include\s*"common/clock\.h"'
check "tenancy/ may not be included by gpu/" "gpu" '^\s*#\s*include\s*"tenancy/'
check "the tenancy model does not depend on rendering (tenancy/host/) or the syncer (tenancy/sync/)" "tenancy" '^\s*#\s*include\s*"tenancy/(host|sync)/' "host sync"
check "host rendering does not depend on the syncer's translation" "tenancy/host" '^\s*#\s*include\s*"tenancy/sync/'
check "libpqxx belongs to services/store/ only" "gpu tenancy common api services/core services/rest services/grpc services/kube services/kubesim services/vcp services/hostcp services/syncer services/vault services/vaultsim services/reconcile services/cmd" '^\s*#\s*include\s*<pqxx'
check "gRPC belongs to api/, services/grpc/ and services/cmd/" "gpu tenancy common services/core services/store services/rest services/kube services/kubesim services/vcp services/hostcp services/syncer services/vault services/vaultsim services/reconcile" '^\s*#\s*include\s*<grpc'
check "services/core must not reach into a transport or the store" "services/core" '^\s*#\s*include\s*"services/(rest|grpc|store|cmd)/'
check "transports must not include each other" "services/rest" '^\s*#\s*include\s*"services/grpc/'
check "transports must not include each other" "services/grpc" '^\s*#\s*include\s*"services/rest/'
check "the simulator is not a dependency: only septad's wiring (services/app) and commands start it" "gpu tenancy common services/core services/store services/rest services/grpc services/kube services/reconcile services/hostcp services/syncer services/base services/vault services/vaultsim" '^\s*#\s*include\s*"services/kubesim/'
check "the Vault test server is not a dependency: only commands and tests start it" "gpu tenancy common api services" '^\s*#\s*include\s*"services/vaultsim/' "cmd vaultsim"
check "test doubles (tests/support/) are for tests only" "gpu tenancy common api services" '^\s*#\s*include\s*"tests/'

# The transports hold no per-RPC code: they serve the table of API v1's RPCs
# (services/apiv1/api.h), so no RPC, service or top-level message of the API
# (http.proto's option messages aside) is named in them.
api_names=$(grep -ohE '^(message|service) \w+|^\s*rpc \w+' $(ls api/proto/septa/v1/*.proto | grep -v '/http\.proto$') |
  awk '{print $2}' | sort -u | paste -sd'|')
if [[ -n $api_names ]]; then
  out=$(grep -rnwE --include='*.h' --include='*.cc' "$api_names" services/rest services/grpc)
  if [[ -n $out ]]; then
    echo "layering: services/rest and services/grpc name an RPC or message of septa.v1; per-RPC code belongs in services/apiv1/*_rpcs.cc"
    echo "$out" | sed 's/^/  /'
    fail=1
  fi
fi

if ((fail)); then exit 1; fi
echo "layering: ok"
