#!/usr/bin/env bash
# People sign in to the portal, end to end against a real OpenID provider
# (idp/: panva's oidc-provider, OpenID Certified, on loopback) with a
# cookie-keeping fetch as the browser (idp/portal_sign_in.mjs; the portal's
# pages in headless Chromium: web/e2e/sso.test.mjs):
#  - the authorization code flow with PKCE through septad's start and
#    callback opens a session cookie that acts as alice's memberships
#    (GET /v1/caller, a tenant she is a member of, one she is not; a write
#    without the CSRF token refused);
#  - attacks: a return_to off the portal (400, no redirect), the same
#    callback replayed (expired, no session), another browser's callback
#    (browser_mismatch), a made-up state (expired), a code stolen from
#    one sign-in brought in another (the provider refuses its PKCE
#    verifier: refused); the provider down at the callback
#    and at the start (provider_unavailable);
#  - renewal: a group removed at the provider ends what it gave when the
#    session's ID token expires; the provider down then leaves the session
#    its identity;
#  - signing out: the session ends, its refresh token is revoked at the
#    provider, and the provider's logout URL is given;
#  - no token of the provider in septad's log.
set -euo pipefail
septad=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../septad/septad_lib.sh"
source "$here/oidc_lib.sh"

id_token_ttl=15
idp_config=$(cat <<JSON
{"ttl": {"IdToken": $id_token_ttl},
 "clients": [
   {"client_id": "portal", "client_secret": "portal-secret", "application_type": "native",
    "grant_types": ["authorization_code", "refresh_token"], "refresh_tokens": "always",
    "redirect_uris": ["http://127.0.0.1/v1/sessions/oidc/callback"],
    "post_logout_redirect_uris": ["http://127.0.0.1/"]}],
 "users": [
   {"id": "alice", "email": "alice@acme.test", "groups": ["platform", "gpu-users"], "password": "wonderland"}]}
JSON
)
start_idp idp "$idp_config"
issuer=$idp_issuer
printf 'portal-secret\n' >"$dir/portal-secret"
cat >"$dir/septad.yaml" <<YAML
oidc_issuers:
  - issuer: $issuer
    audience: septa
    client_id: portal
    client_secret_file: $dir/portal-secret
    name: Acme SSO
    username_claim: email
    groups_claim: groups
YAML
start --config "$dir/septad.yaml" --provisioner=false
token=$(cat "$dir/data/admin.token")
base=http://127.0.0.1:$http_port
for t in acme beta; do
  [[ $(api POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"shared\"}") == 201 ]] || fail "create tenant $t: $(reply)"
done
[[ $(api POST /v1/tenants/acme/members '{"member":"group:platform","role":"editor"}') == 201 ]] || fail "member: $(reply)"
[[ $(api POST /v1/tenants/beta/members '{"member":"group:gpu-users","role":"viewer"}') == 201 ]] || fail "member: $(reply)"

# portal_sign_in [ARGS...]: the driver's JSON line.
portal_sign_in() {
  node "$here/idp/portal_sign_in.mjs" --septad "$base" --issuer "$issuer" --login alice --password wonderland "$@" \
    2>>"$dir/portal_sign_in.log" || fail "the sign-in driver failed: $(cat "$dir/portal_sign_in.log")"
}
field_of() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
# as_cookie COOKIE METHOD PATH [EXTRA CURL ARGS...]: the HTTP status; the body in $dir/reply.
as_cookie() {
  local cookie=$1 method=$2 path=$3; shift 3
  curl -s -o "$dir/reply" -D "$dir/headers" -w '%{http_code}' -X "$method" -H "Cookie: septa_session=$cookie" "$@" \
    "$base$path"
}

# The sign-in page's list.
[[ $(curl -s -o "$dir/reply" -w '%{http_code}' "$base/v1/sessions/providers") == 200 ]] || fail "providers: $(reply)"
[[ $(json 'r["providers"][0]["name"]') == "Acme SSO" && $(json 'r["providers"][0]["issuer"]') == "$issuer" ]] ||
  fail "providers: $(reply)"

# An open redirect is refused at the start, before any provider is asked.
for bad in https://evil.example/ //evil.example/x; do
  status=$(curl -s -o "$dir/reply" -D "$dir/headers" -w '%{http_code}' -G "$base/v1/sessions/oidc/start" \
    --data-urlencode "issuer=$issuer" --data-urlencode "return_to=$bad")
  [[ $status == 400 ]] || fail "return_to $bad: $status $(reply)"
  grep -qi '^location:' "$dir/headers" && fail "return_to $bad redirected"
  [[ $(json 'r["message"]') == return_to:* ]] || fail "the refusal names no return_to: $(reply)"
done

# alice signs in and lands where she began.
signed=$(portal_sign_in --return-to /t/acme/vclusters)
[[ $(field_of "$signed" status) == 303 && $(field_of "$signed" location) == /t/acme/vclusters ]] ||
  fail "sign-in: $signed"
session=$(field_of "$signed" session)
[[ $session == septa_person_* ]] || fail "no person's session cookie: $signed"
[[ $(as_cookie "$session" GET /v1/sessions/current) == 200 ]] || fail "current: $(reply)"
[[ $(json 'r["kind"]') == person && $(json 'r["person"]["user"]') == alice@acme.test ]] || fail "current: $(reply)"
csrf=$(json 'r["csrf_token"]')
[[ $(as_cookie "$session" GET /v1/caller) == 200 ]] || fail "caller: $(reply)"
[[ $(json '[m["tenant"] for m in r["memberships"]]') == '["acme", "beta"]' ]] || fail "memberships: $(reply)"
[[ $(as_cookie "$session" GET /v1/tenants/acme) == 200 ]] || fail "acme: $(reply)"
[[ $(as_cookie "$session" GET /v1/tenants/beta) == 200 ]] || fail "beta: $(reply)"
# A write from another site (no CSRF token) is refused, a write of her own page allowed.
body='{"labels":{"team":"ml"}}'
[[ $(as_cookie "$session" PATCH /v1/tenants/acme -H 'Content-Type: application/json' -d "$body") == 403 ]] ||
  fail "a write without Origin and CSRF token: $(reply)"

# The same callback again (a replayed code) opens nothing.
callback=$(field_of "$signed" callback)
replay=$(curl -s -o /dev/null -D - -H "Cookie: septa_sign_in=$(field_of "$signed" binding)" "$callback")
grep -qi '^location: /sign-in?sign_in_error=expired' <<<"$replay" || fail "replayed callback: $replay"
grep -qi '^set-cookie: septa_session=septa' <<<"$replay" && fail "a replayed callback opened a session"
# Another browser's callback (the attacker's code in the victim's browser).
other=$(portal_sign_in --binding not-this-browsers)
[[ $(field_of "$other" location) == "/sign-in?sign_in_error=browser_mismatch" && -z $(field_of "$other" session) ]] ||
  fail "another browser's callback: $other"
made_up=$(curl -s -o /dev/null -D - "$base/v1/sessions/oidc/callback?code=x&state=made-up")
grep -qi '^location: /sign-in?sign_in_error=expired' <<<"$made_up" || fail "made-up state: $made_up"
# A code stolen from one sign-in, brought to septad in another (the
# thief's own state and browser): redeemed with the thief's PKCE verifier,
# which the provider refuses.
victim=$(portal_sign_in --no-callback)
thief=$(portal_sign_in --no-callback)
stolen_code=$(python3 -c 'import sys,urllib.parse as u; print(u.parse_qs(u.urlparse(sys.argv[1]).query)["code"][0])' \
  "$(field_of "$victim" callback)")
thief_state=$(python3 -c 'import sys,urllib.parse as u; print(u.parse_qs(u.urlparse(sys.argv[1]).query)["state"][0])' \
  "$(field_of "$thief" callback)")
swapped=$(curl -s -o /dev/null -D - -H "Cookie: septa_sign_in=$(field_of "$thief" binding)" \
  "$base/v1/sessions/oidc/callback?code=$stolen_code&state=$thief_state")
grep -qi '^location: /sign-in?sign_in_error=refused' <<<"$swapped" || fail "a stolen code with another verifier: $swapped"
grep -qi '^set-cookie: septa_session=septa' <<<"$swapped" && fail "a stolen code opened a session"
grep -q "refused (refused): the token endpoint refused the authorization code" "$log" ||
  fail "the provider's refusal of the verifier is not in the log"
# The provider down at the callback: said so.
down=$(portal_sign_in --provider-down)
curl -s -X POST "$issuer/_test/up" >/dev/null
[[ $(field_of "$down" location) == "/sign-in?sign_in_error=provider_unavailable" ]] || fail "provider down: $down"
# ... and at the start of a sign-in, before the browser is sent to it.
curl -s -X POST -H 'Content-Type: application/json' -d '{"mode":"503"}' "$issuer/_test/down" >/dev/null
at_start=$(curl -s -o /dev/null -D - -G "$base/v1/sessions/oidc/start" --data-urlencode "issuer=$issuer")
curl -s -X POST "$issuer/_test/up" >/dev/null
grep -qi '^location: /sign-in?sign_in_error=provider_unavailable' <<<"$at_start" || fail "provider down at start: $at_start"

# A group removed at the provider ends what it gave at the session's renewal.
# A fresh sign-in first, so its ID token has its whole lifetime ahead
# however long the checks above took.
signed=$(portal_sign_in)
session=$(field_of "$signed" session)
[[ $(as_cookie "$session" GET /v1/sessions/current) == 200 ]] || fail "current: $(reply)"
csrf=$(json 'r["csrf_token"]')
curl -s -X POST -H 'Content-Type: application/json' -d '{"groups":["gpu-users"]}' \
  "$issuer/_test/users/alice/groups" >/dev/null
[[ $(as_cookie "$session" GET /v1/tenants/acme) == 200 ]] || fail "acme before the renewal: $(reply)"
sleep $((id_token_ttl + 1))
[[ $(as_cookie "$session" GET /v1/tenants/acme) == 404 ]] || fail "acme after the renewal: $(reply)"
[[ $(as_cookie "$session" GET /v1/tenants/beta) == 200 ]] || fail "beta after the renewal: $(reply)"
[[ $(as_cookie "$session" GET /v1/sessions/current) == 200 && $(json 'r["person"]["groups"]') == '["gpu-users"]' ]] ||
  fail "groups after the renewal: $(reply)"
# The provider down when the renewed identity expires: the session lives on with it.
curl -s -X POST -H 'Content-Type: application/json' -d '{"mode":"503"}' "$issuer/_test/down" >/dev/null
sleep $((id_token_ttl + 1))
[[ $(as_cookie "$session" GET /v1/tenants/beta) == 200 ]] || fail "beta with the provider down: $(reply)"
grep -q "could not be renewed at $issuer" "$log" || fail "no renewal failure logged"
curl -s -X POST "$issuer/_test/up" >/dev/null

# Signing out: the session ends here and at the provider.
curl -s -X POST "$issuer/_test/requests/reset" >/dev/null
[[ $(as_cookie "$session" DELETE /v1/sessions/current -H "Origin: $base" -H "X-Septa-CSRF: $csrf") == 200 ]] ||
  fail "sign out: $(reply)"
end_session=$(json 'r["end_session_url"]')
[[ $end_session == "$issuer/session/end?"*id_token_hint=*post_logout_redirect_uri=http%3A%2F%2F127.0.0.1%3A$http_port%2F* ]] ||
  fail "end_session_url: $end_session"
grep -qi '^set-cookie: septa_session=;' "$dir/headers" || fail "the cookie was not cleared: $(cat "$dir/headers")"
[[ $(as_cookie "$session" GET /v1/sessions/current) == 401 ]] || fail "a signed-out session: $(reply)"
[[ $(curl -s "$issuer/_test/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("/token/revocation", 0))') == 1 ]] ||
  fail "the refresh token was not revoked at the provider: $(curl -s "$issuer/_test/requests")"

# No token of the provider's (JWTs begin eyJ) or session secret in the log.
grep -q 'eyJ' "$log" && fail "a JWT in septad's log"
grep -qF "$session" "$log" && fail "the session cookie in septad's log"
echo "PASS portal_sign_in_e2e: SSO sign-in, attacks, renewal and sign-out (septad ready in ${ready_ms} ms)"
