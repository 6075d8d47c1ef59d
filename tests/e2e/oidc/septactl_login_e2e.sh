#!/usr/bin/env bash
# septactl login / logout end to end against a real OpenID provider (idp/:
# panva's oidc-provider, OpenID Certified, on loopback), septactl's public
# client allowed the device code and refresh token grants:
#  - login: septactl prints the verification URI and the user code, a
#    "person" (approve_device.mjs, plain fetch with cookies) enters the code,
#    confirms and signs in; septactl exits 0 and the config file is mode
#    0600 with the login's refresh token and ID token (its iss, aud, sub).
#  - refresh: the provider's ID tokens live 20 s, within septactl's 30 s
#    margin, so `septactl auth token` refreshes at once: a new ID token, the
#    rotated refresh token written back (still 0600), the provider counting
#    the refresh at /token.
#  - the file made readable by others is refused, naming chmod 600.
#  - logout revokes the refresh token at the provider (which then refuses it)
#    and removes the login; the rest of the file stays.
#  - a denied approval, a provider that answers 503, one that is not there,
#    one whose discovery document is 2 MiB, one that names another issuer,
#    and Ctrl-C while waiting: each a clear error and the file untouched.
set -euo pipefail
septactl=$1
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/idp/ensure.sh"

dir=$(mktemp -d /tmp/septactl-login-e2e.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$dir"/*.err "$dir"/*.log; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}
export HOME=$dir/home  # nothing of the user's own config is read or written
mkdir -p "$HOME"
unset SEPTA_TOKEN SEPTA_TENANT

# The provider: septactl's public client; ID tokens for 20 s.
cat >"$dir/idp.json" <<'JSON'
{"ttl": {"IdToken": 20, "RefreshToken": 600},
 "clients": [{"client_id": "septactl", "token_endpoint_auth_method": "none",
              "grant_types": ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"]}],
 "users": [{"id": "alice", "email": "alice@acme.test", "name": "Alice", "groups": ["platform"], "password": "pw"}]}
JSON
exec {idp_fd}< <(node "$here/idp/idp.mjs" --config "$dir/idp.json" 2>"$dir/idp.log")
read -r -t 30 line <&"$idp_fd" || fail "the identity provider did not start"
pids+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$line")")
issuer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["issuer"])' "$line")

control() { curl -sf -H 'content-type: application/json' -d "${2:-{\}}" "$issuer/_test/$1" >/dev/null; }
token_requests() { curl -sf "$issuer/_test/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("/token", 0))'; }
# login_value CONFIG KEY: the login block's value of KEY.
login_value() { sed -n "s/^  $2: \"\(.*\)\"$/\1/p" "$1"; }
# claim JWT EXPRESSION: a Python expression over the JWT's claims (`c`).
claim() {
  python3 -c 'import base64,json,sys; p=sys.argv[1].split(".")[1]; c=json.loads(base64.urlsafe_b64decode(p+"="*(-len(p)%4))); print(eval(sys.argv[2]))' "$1" "$2"
}

# start_login NAME CONFIG [septactl args...]: septactl login in the background; sets $login_pid.
start_login() {
  local name=$1 config=$2
  shift 2
  "$septactl" --config "$config" login --issuer "$issuer" --client-id septactl --max-wait 60s "$@" \
    >"$dir/$name.out" 2>"$dir/$name.err" &
  login_pid=$!
}
# wait_for_code NAME: waits (at most 30 s) for septactl's "Open URI and enter code CODE"; sets $uri and $code.
wait_for_code() {
  local line deadline=$((SECONDS + 30))
  until line=$(grep -m1 '^Open .* and enter code ' "$dir/$1.err"); do
    kill -0 "$login_pid" 2>/dev/null || fail "septactl login ($1) exited before printing the code"
    ((SECONDS < deadline)) || fail "septactl login ($1) printed no code in 30 s"
    sleep 0.1
  done
  uri=$(sed -E 's/^Open (.*) and enter code .*/\1/' <<<"$line")
  code=$(sed -E 's/.* and enter code (.*)$/\1/' <<<"$line")
}

# --- Sign in by the device flow.
config=$dir/septa/config.yaml
mkdir -p "$dir/septa"
printf 'server: "127.0.0.1:1"\n' >"$config"
start_login ok "$config"
wait_for_code ok
[[ $uri == "$issuer/device" && $code =~ ^[A-Z]{4}-[A-Z]{4}$ ]] || fail "the verification URI and user code: $uri $code"
grep -q "user_code=$code" "$dir/ok.err" || fail "the verification_uri_complete is shown too"
grep -q 'The code expires in 10m' "$dir/ok.err" || fail "the code's expiry is shown"
node "$here/approve_device.mjs" "$uri" "$code" alice pw approve >"$dir/approve.log" 2>&1 || fail "the approval failed"
wait "$login_pid" || fail "septactl login exited $? after the approval"
grep -q "Signed in to $issuer as alice@acme.test" "$dir/ok.out" || fail "login says who signed in: $(cat "$dir/ok.out")"
[[ $(stat -c %a "$config") == 600 ]] || fail "the config file is mode 0600, not $(stat -c %a "$config")"
grep -q '^server: "127.0.0.1:1"$' "$config" || fail "the file's other keys stay: $(cat "$config")"
rt1=$(login_value "$config" refresh_token)
id1=$(login_value "$config" id_token)
[[ -n $rt1 && -n $id1 ]] || fail "the config file holds a refresh token and an ID token: $(cat "$config")"
[[ $(claim "$id1" 'c["iss"]') == "$issuer" && $(claim "$id1" 'c["aud"]') == septactl && $(claim "$id1" 'c["sub"]') == alice ]] ||
  fail "the ID token is alice's for septactl from the provider"
[[ $(claim "$id1" 'c["groups"]') == "['platform']" ]] || fail "with the groups scope: $(claim "$id1" 'c')"
[[ $(login_value "$config" issuer) == "$issuer" && $(login_value "$config" client_id) == septactl ]] ||
  fail "the login names its issuer and client"

# --- The ID token expires within 30 s: septactl refreshes it before use.
before=$(token_requests)
id2=$("$septactl" --config "$config" auth token 2>"$dir/token.err") || fail "auth token: $(cat "$dir/token.err")"
rt2=$(login_value "$config" refresh_token)
[[ $(token_requests) == $((before + 1)) ]] || fail "one refresh at the token endpoint"
[[ -n $rt2 && $rt2 != "$rt1" ]] || fail "the rotated refresh token is written back"
[[ $(login_value "$config" id_token) == "$id2" ]] || fail "the refreshed ID token is written back"
[[ $(claim "$id2" 'c["sub"]') == alice && $(claim "$id2" 'c["aud"]') == septactl ]] || fail "auth token prints alice's ID token"
(($(claim "$id2" 'c["exp"]') >= $(claim "$id1" 'c["exp"]'))) || fail "a newer ID token"
[[ $(stat -c %a "$config") == 600 ]] || fail "still mode 0600 after the refresh"
ls -A "$dir/septa" | grep -qv -e '^config.yaml$' -e '^config.yaml.lock$' && fail "no temporary file is left: $(ls -A "$dir/septa")"

# A command to septad: with the login's (refreshed) ID token as the bearer;
# nothing listens at 127.0.0.1:1, so it fails there, past the credential.
if "$septactl" --config "$config" --timeout 2s tenant list >/dev/null 2>"$dir/call.err"; then fail "no septad there"; fi
grep -q '127.0.0.1:1' "$dir/call.err" || fail "the call went to septad: $(cat "$dir/call.err")"
rt3=$(login_value "$config" refresh_token)
[[ $rt3 != "$rt2" ]] || fail "the call refreshed the ID token first"

# --- Readable by others: refused, naming chmod 600.
chmod 644 "$config"
if "$septactl" --config "$config" auth token >/dev/null 2>"$dir/mode.err"; then fail "a 0644 file with a refresh token is refused"; fi
grep -q "holds a refresh token but its mode is 0644.*chmod 600 $config" "$dir/mode.err" || fail "naming chmod 600: $(cat "$dir/mode.err")"
chmod 600 "$config"

# --- Logout: revoked at the provider, removed from the file.
"$septactl" --config "$config" logout >"$dir/logout.out" 2>"$dir/logout.err" || fail "logout: $(cat "$dir/logout.err")"
grep -q "Revoked the refresh token at $issuer" "$dir/logout.out" || fail "logout says it revoked: $(cat "$dir/logout.out")"
grep -q 'login:' "$config" && fail "the login is removed: $(cat "$config")"
grep -q '^server: "127.0.0.1:1"$' "$config" || fail "the rest stays"
status=$(curl -s -o "$dir/refused.json" -w '%{http_code}' -d grant_type=refresh_token -d "refresh_token=$rt3" -d client_id=septactl "$issuer/token")
[[ $status == 400 ]] && grep -q invalid_grant "$dir/refused.json" || fail "the provider refuses the revoked refresh token: $status $(cat "$dir/refused.json")"
if "$septactl" --config "$config" auth token >/dev/null 2>"$dir/out.err"; then fail "signed out"; fi
grep -q 'not signed in' "$dir/out.err" || fail "auth token says not signed in: $(cat "$dir/out.err")"

# --- Failures leave the file as it was.
unchanged() { [[ $(sha256sum <"$config") == "$1" ]] || fail "$2: the config file changed: $(cat "$config")"; }
sum=$(sha256sum <"$config")

start_login deny "$config"
wait_for_code deny
node "$here/approve_device.mjs" "$uri" "$code" alice pw deny >"$dir/deny.log" 2>&1 || fail "the denial failed"
if wait "$login_pid"; then fail "a denied login fails"; fi
grep -q 'PERMISSION_DENIED: the sign-in was denied at the identity provider' "$dir/deny.err" || fail "saying so: $(cat "$dir/deny.err")"
unchanged "$sum" "denied"

start_login interrupt "$config"
wait_for_code interrupt
kill -INT "$login_pid"
if wait "$login_pid"; then fail "an interrupted login fails"; fi
grep -q 'CANCELLED: interrupted: nothing was signed in' "$dir/interrupt.err" || fail "Ctrl-C: $(cat "$dir/interrupt.err")"
unchanged "$sum" "Ctrl-C"

control down '{"mode":"503"}'
if "$septactl" --config "$config" login --issuer "$issuer" --client-id septactl 2>"$dir/down.err"; then fail "login with the provider down"; fi
control up
grep -q "UNAVAILABLE: discovery at $issuer/.well-known/openid-configuration answered HTTP 503" "$dir/down.err" ||
  fail "the provider down: $(cat "$dir/down.err")"
unchanged "$sum" "provider 503"

gone=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if "$septactl" --config "$config" login --issuer "http://127.0.0.1:$gone" --client-id septactl 2>"$dir/gone.err"; then fail "no provider"; fi
grep -q "UNAVAILABLE: GET http://127.0.0.1:$gone/.well-known/openid-configuration" "$dir/gone.err" || fail "no provider: $(cat "$dir/gone.err")"
unchanged "$sum" "no provider"

if "$septactl" --config "$config" login --issuer "$issuer/" --client-id septactl 2>"$dir/other.err"; then fail "another issuer"; fi
grep -q "names the issuer \"$issuer\", not \"$issuer/\"" "$dir/other.err" || fail "another issuer: $(cat "$dir/other.err")"

exec {big_fd}< <(python3 -c '
import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"{\"issuer\":\"" + b"x" * (2 << 20) + b"\"}"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        try: self.wfile.write(body)
        except OSError: pass
    def log_message(self, *args): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], os.getpid(), flush=True)
s.serve_forever()' 2>"$dir/big.log")
read -r -t 10 big_port big_pid <&"$big_fd" || fail "the 2 MiB server did not start"
pids+=("$big_pid")
if "$septactl" --config "$config" login --issuer "http://127.0.0.1:$big_port" --client-id septactl 2>"$dir/big.err"; then
  fail "a 2 MiB discovery document"
fi
grep -q 'the answer is longer than 1024 KiB' "$dir/big.err" || fail "a 2 MiB answer is refused: $(cat "$dir/big.err")"
unchanged "$sum" "2 MiB"
echo "PASS"
