# M6: `kubectl create token --duration 87600h` gave a 10-year token that
# outlived the certificate that minted it and the tier's credential cap.
# The virtual control plane now caps TokenRequest by the tier's
# credential_ttl_max_seconds, as kube-apiserver's
# --service-account-max-token-expiration does: shortened, with a warning.

m6_lifetime() {  # TOKEN: exp - iat of the JWT
  python3 -c '
import base64, json, sys
payload = sys.argv[1].split(".")[1]
claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
print(claims["exp"] - claims["iat"])' "$1"
}

hostile_case() {
  tenant oscar shared  # a 24 h cap
  vcluster oscar o1 '{"shared":{"milli_gpu":100}}'
  vk oscar o1 create serviceaccount ci >/dev/null || fail "create the service account"
  local sa_token lifetime
  sa_token=$(vk oscar o1 create token ci --duration 87600h 2>"$dir/m6.err") || fail "create token: $(cat "$dir/m6.err")"
  grep -q 'requested expiration of 315360000 seconds shortened to 86400 seconds' "$dir/m6.err" ||
    fail "no warning that the token was shortened: $(cat "$dir/m6.err")"
  lifetime=$(m6_lifetime "$sa_token")
  [[ $lifetime == 86400 ]] || fail "the token lives $lifetime s, not the shared tier's 86400"
  # It authenticates (as a service account without rights: 403, not 401).
  local endpoint status
  endpoint=$(vk oscar o1 config view --minify -o 'jsonpath={.clusters[0].cluster.server}')
  status=$(curl -sk -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $sa_token" \
    "$endpoint/api/v1/namespaces/default/secrets")
  [[ $status == 403 ]] || fail "the capped token got $status listing secrets"
  [[ $(api DELETE /v1/tenants/oscar/vclusters/o1) == 200 ]] || fail "delete o1: $(reply)"
}
