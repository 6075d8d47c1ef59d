# Shared by the identity end-to-end scripts (sourced after
# ../septad/septad_lib.sh, whose $dir, fail and cleanup it uses): the test
# OpenID provider (idp/idp.mjs) installed, started and stopped with the rest.
bash "$(dirname "${BASH_SOURCE[0]}")/idp/ensure.sh"
idp_pids=()
stop_idps() { for p in "${idp_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; cleanup; }
trap stop_idps EXIT

# start_idp NAME CONFIG-JSON: a provider on loopback; sets ${NAME}_issuer.
start_idp() {
  local name=$1 line fd
  printf '%s\n' "$2" >"$dir/$name.json"
  exec {fd}< <(node "$(dirname "${BASH_SOURCE[0]}")/idp/idp.mjs" --config "$dir/$name.json" 2>"$dir/$name.log")
  read -r -t 30 line <&"$fd" || fail "the identity provider $name did not start: $(cat "$dir/$name.log")"
  idp_pids+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$line")")
  printf -v "${name}_issuer" '%s' "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["issuer"])' "$line")"
}
