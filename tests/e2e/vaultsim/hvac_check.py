#!/usr/bin/python3
"""Drives septa-vaultsim through hvac's ordinary calls and checks what Vault would answer.

Usage: hvac_check.py <path to septa-vaultsim>. Needs Debian's python3-hvac and python3-cryptography
(run with /usr/bin/python3). Exits non-zero on the first failed check.
"""
import base64
import datetime
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time

import hvac
import hvac.exceptions as hx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

checks = 0


def check(condition, what):
    global checks
    if not condition:
        raise AssertionError(what)
    checks += 1


def expect(exception, what, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except exception:
        check(True, what)
        return
    except Exception as e:  # noqa: BLE001 -- report what was raised instead
        raise AssertionError(f"{what}: expected {exception.__name__}, got {type(e).__name__}: {e}")
    raise AssertionError(f"{what}: expected {exception.__name__}, nothing raised")


def service_account_jwt(namespace, name):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    claims = {"iss": "kubernetes/serviceaccount", "sub": f"system:serviceaccount:{namespace}:{name}",
              "kubernetes.io/serviceaccount/namespace": namespace,
              "kubernetes.io/serviceaccount/service-account.name": name}
    return part({"alg": "RS256", "typ": "JWT"}) + "." + part(claims) + ".c2lnbmF0dXJl"


def health_code(client, **kwargs):
    """hvac gives a dict for a 200 and the Response otherwise."""
    reply = client.sys.read_health_status(**kwargs)
    return 200 if isinstance(reply, dict) else reply.status_code


def run(url, root_token):  # noqa: C901 -- one scenario, in order
    root = hvac.Client(url=url, token=root_token)
    check(root.is_authenticated(), "the root token authenticates")
    check(not hvac.Client(url=url, token="hvs.wrong").is_authenticated(), "a wrong token does not")

    # Health and seal.
    check(health_code(root, method="GET") == 200, "health: 200 when active")
    check(health_code(root, method="HEAD") == 200, "health HEAD: 200 when active")
    check(root.sys.is_sealed() is False, "is_sealed: false")

    # Mounts.
    root.sys.enable_secrets_engine(backend_type="pki", path="pki", config={"max_lease_ttl": "87600h"})
    root.sys.enable_secrets_engine(backend_type="kv", path="secret", options={"version": "2"})
    mounts = root.sys.list_mounted_secrets_engines()
    check(mounts["data"]["pki/"]["type"] == "pki", "pki/ is listed")
    check(mounts["secret/"]["options"]["version"] == "2", "secret/ is kv v2 (top-level copy of the table)")
    expect(hx.InvalidRequest, "enabling a mount twice is 400", root.sys.enable_secrets_engine,
           backend_type="pki", path="pki")

    # Policies.
    root.sys.create_or_update_policy(name="issuer", policy='''
path "pki/issue/tenant" { capabilities = ["create", "update"] }
path "pki/revoke" { capabilities = ["update"] }
path "secret/data/acme/*" { capabilities = ["create", "read", "update"] }
path "secret/data/acme/private" { capabilities = ["deny"] }
path "secret/metadata/+/shared" { capabilities = ["list"] }
''')
    check("issuer" in root.sys.list_policies()["data"]["policies"], "the policy is listed")
    check('pki/issue/tenant' in root.sys.read_policy("issuer")["data"]["rules"], "the policy text reads back")
    expect(hx.InvalidRequest, "a malformed policy is 400", root.sys.create_or_update_policy,
           name="broken", policy='path "x" { capabilities = ["fly"] }')

    # Tokens.
    created = root.auth.token.create(policies=["issuer"], ttl="1h", renewable=True)
    child_token = created["auth"]["client_token"]
    check(created["auth"]["lease_duration"] == 3600, "token create: lease_duration of the ttl")
    check(set(created["auth"]["policies"]) == {"default", "issuer"}, "token create: policies plus default")
    child = hvac.Client(url=url, token=child_token)
    me = child.auth.token.lookup_self()["data"]
    check(me["ttl"] <= 3600 and me["ttl"] > 3500 and me["renewable"], "lookup_self: ttl and renewable")
    renewed = child.auth.token.renew_self(increment="2h")
    check(renewed["auth"]["lease_duration"] == 7200, "renew_self: the increment becomes the ttl")

    # PKI as root, then issuance through the child's policy.
    ca = root.secrets.pki.generate_root(type="internal", common_name="Septa Test Root",
                                        extra_params={"ttl": "87600h"}, mount_point="pki")
    check("BEGIN CERTIFICATE" in ca["data"]["certificate"], "generate_root returns the CA")
    check("private_key" not in ca["data"], "generate_root internal keeps the key")
    root.secrets.pki.create_or_update_role("tenant", {
        "allow_any_name": True, "organization": "tenant:acme", "max_ttl": "24h", "ttl": "1h",
        "client_flag": True, "server_flag": False, "key_type": "ec", "key_bits": 256, "generate_lease": True,
    }, mount_point="pki")
    issued = child.secrets.pki.generate_certificate("tenant", "alice", extra_params={"ttl": "48h"},
                                                    mount_point="pki")
    data = issued["data"]
    check(issued["warnings"] and "maxTTL" in issued["warnings"][0], "a ttl over max_ttl warns")
    cert = x509.load_pem_x509_certificate(data["certificate"].encode())
    check(cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice", "issued CN")
    check([a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["tenant:acme"],
          "issued O is the role's organization")
    lifetime = cert.not_valid_after - cert.not_valid_before
    check(lifetime <= datetime.timedelta(hours=24, minutes=1), f"the ttl is capped at max_ttl (got {lifetime})")
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    check(ExtendedKeyUsageOID.CLIENT_AUTH in eku and ExtendedKeyUsageOID.SERVER_AUTH not in eku,
          "client_flag only: clientAuth and no serverAuth")
    check(data["private_key_type"] == "ec" and "PRIVATE KEY" in data["private_key"], "the private key is returned")
    check(isinstance(data["expiration"], int), "expiration is a Unix time number")
    check(data["ca_chain"] and data["issuing_ca"] == ca["data"]["certificate"], "issuing_ca and ca_chain")
    serial = data["serial_number"]
    check(len(serial.split(":")) >= 8, "serial in Vault's colon form")
    ca_cert = x509.load_pem_x509_certificate(data["issuing_ca"].encode())
    ca_cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
    check(True, "the certificate verifies against issuing_ca")

    # sign: a CSR of the caller's own key; the role still sets the O.
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, "carol"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
    ])).sign(key, hashes.SHA256())
    signed_leaf = root.secrets.pki.sign_certificate(
        "tenant", csr.public_bytes(serialization.Encoding.PEM).decode(), "carol", mount_point="pki")["data"]
    carol = x509.load_pem_x509_certificate(signed_leaf["certificate"].encode())
    check(carol.public_key().public_numbers() == key.public_key().public_numbers(), "sign certifies the CSR's key")
    check([a.value for a in carol.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["tenant:acme"],
          "sign: the O is the role's, not the CSR's")
    check("private_key" not in signed_leaf, "sign returns no private key")

    # Leases (the role has generate_lease).
    lease_id = issued["lease_id"]
    check(lease_id.startswith("pki/issue/tenant/"), "issue with generate_lease returns a lease")
    lease = root.sys.read_lease(lease_id)["data"]
    check(lease["id"] == lease_id and lease["ttl"] > 0 and lease["renewable"] is False, "read_lease")
    expect(hx.InvalidRequest, "renew_lease of a PKI lease: not renewable", root.sys.renew_lease, lease_id)

    # Revocation and the CRL.
    revoked = child.secrets.pki.revoke_certificate(serial, mount_point="pki")
    check(revoked["data"]["revocation_time"] > 0, "revoke_certificate: revocation_time")
    crl = x509.load_pem_x509_crl(root.secrets.pki.read_crl(mount_point="pki").encode())
    check(crl.get_revoked_certificate_by_serial_number(cert.serial_number) is not None, "the CRL lists the serial")
    second = root.secrets.pki.generate_certificate("tenant", "bob", mount_point="pki")
    root.sys.revoke_lease(second["lease_id"])
    crl = x509.load_pem_x509_crl(root.secrets.pki.read_crl(mount_point="pki").encode())
    bob = x509.load_pem_x509_certificate(second["data"]["certificate"].encode())
    check(crl.get_revoked_certificate_by_serial_number(bob.serial_number) is not None,
          "revoke_lease revokes the certificate")
    expect(hx.InvalidRequest, "read_lease after revoke_lease", root.sys.read_lease, second["lease_id"])
    check(len(root.secrets.pki.list_certificates(mount_point="pki")["data"]["keys"]) >= 3, "list_certificates (LIST)")
    check(root.secrets.pki.read_certificate(serial, mount_point="pki")["data"]["revocation_time"] > 0,
          "read_certificate shows the revocation")

    # Intermediate CA signed by the root.
    root.sys.enable_secrets_engine(backend_type="pki", path="pki_int")
    csr = root.secrets.pki.generate_intermediate("internal", "Septa Test Intermediate", mount_point="pki_int")
    signed = root.secrets.pki.sign_intermediate(csr["data"]["csr"], "Septa Test Intermediate",
                                                extra_params={"ttl": "43800h"}, mount_point="pki")
    # As with Vault, the chain the intermediate's certificates carry is the bundle given to set-signed.
    root.secrets.pki.set_signed_intermediate(signed["data"]["certificate"] + "\n" + signed["data"]["issuing_ca"],
                                             mount_point="pki_int")
    root.secrets.pki.create_or_update_role("web", {"allowed_domains": ["example.com"], "allow_subdomains": True},
                                           mount_point="pki_int")
    leaf = root.secrets.pki.generate_certificate("web", "api.example.com", mount_point="pki_int")["data"]
    check(len(leaf["ca_chain"]) == 2, "the intermediate's ca_chain has the root")
    expect(hx.InvalidRequest, "a name outside allowed_domains is 400", root.secrets.pki.generate_certificate,
           "web", "api.evil.com", mount_point="pki_int")

    # Policy enforcement.
    expect(hx.Forbidden, "no capability: permission denied", child.secrets.pki.generate_root,
           type="internal", common_name="x", mount_point="pki")
    child.secrets.kv.v2.create_or_update_secret(path="acme/db", secret={"password": "s3cret"}, mount_point="secret")
    read = child.secrets.kv.v2.read_secret_version(path="acme/db", mount_point="secret")
    check(read["data"]["data"]["password"] == "s3cret" and read["data"]["metadata"]["version"] == 1, "kv v2 read")
    expect(hx.Forbidden, "deny wins over a glob", child.secrets.kv.v2.create_or_update_secret,
           path="acme/private", secret={"a": "b"}, mount_point="secret")
    expect(hx.Forbidden, "outside the glob: denied", child.secrets.kv.v2.read_secret_version,
           path="other/db", mount_point="secret")
    root.secrets.kv.v2.create_or_update_secret(path="team1/shared/x", secret={"a": 1}, mount_point="secret")
    check(child.secrets.kv.v2.list_secrets(path="team1/shared", mount_point="secret")["data"]["keys"] == ["x"],
          "a + segment grants list")
    expect(hx.InvalidPath, "a missing secret is 404", root.secrets.kv.v2.read_secret_version,
           path="nothing/here", mount_point="secret")

    # AppRole.
    root.sys.enable_auth_method("approle")
    check("approle/" in root.sys.list_auth_methods()["data"], "approle/ is listed")
    root.auth.approle.create_or_update_approle("septad", token_policies=["issuer"], token_ttl="20m")
    role_id = root.auth.approle.read_role_id("septad")["data"]["role_id"]
    secret = root.auth.approle.generate_secret_id("septad")["data"]
    check(secret["secret_id"] and secret["secret_id_accessor"], "generate_secret_id")
    app = hvac.Client(url=url)
    login = app.auth.approle.login(role_id=role_id, secret_id=secret["secret_id"])
    check(login["auth"]["lease_duration"] == 1200 and "issuer" in login["auth"]["policies"], "approle login")
    check(app.is_authenticated(), "the AppRole token authenticates")
    expect(hx.InvalidRequest, "a wrong secret_id is 400", hvac.Client(url=url).auth.approle.login,
           role_id=role_id, secret_id="wrong")

    # Kubernetes auth.
    root.sys.enable_auth_method("kubernetes")
    root.auth.kubernetes.configure(kubernetes_host="https://kubernetes.default.svc")
    root.auth.kubernetes.create_role("tenant-acme", bound_service_account_names=["builder"],
                                     bound_service_account_namespaces=["acme"], policies=["issuer"], ttl="15m")
    kube = hvac.Client(url=url)
    kube_login = kube.auth.kubernetes.login("tenant-acme", service_account_jwt("acme", "builder"))
    check(kube_login["auth"]["metadata"]["service_account_namespace"] == "acme", "kubernetes login")
    check(kube_login["auth"]["lease_duration"] == 900, "kubernetes role ttl")
    expect(hx.Forbidden, "a service account of another namespace is refused", hvac.Client(url=url).auth.kubernetes.login,
           "tenant-acme", service_account_jwt("other", "builder"))

    # Faults: sealed (VaultDown), standby, rate limit (RateLimitExceeded).
    def faults(**f):
        root.adapter.put("/v1/sys/vaultsim/faults", json=f)
    faults(sealed=True)
    check(root.sys.is_sealed() is True, "is_sealed: true")
    check(health_code(root, method="GET") == 503, "health: 503 sealed")
    check(health_code(root, method="GET", sealed_code=200) == 200, "health: sealedcode")
    expect(hx.VaultDown, "sealed: VaultDown", root.auth.token.lookup_self)
    root.sys.submit_unseal_key("any-key")
    check(root.sys.is_sealed() is False, "submit_unseal_key unseals")
    faults(standby=True)
    check(health_code(root, method="GET") == 429, "health: 429 standby")
    check(health_code(root, method="GET", standby_ok=True) == 200, "health: standbyok")
    faults(standby=False, uninitialized=True)
    check(health_code(root, method="GET") == 501, "health: 501 uninitialised")
    faults(uninitialized=False, rate_limit_next=1)
    expect(hx.RateLimitExceeded, "rate limited: RateLimitExceeded", root.auth.token.lookup_self)
    check(root.auth.token.lookup_self()["data"]["policies"] == ["root"], "after the rate limit: served again")

    faults(delay_ms=200)
    started = time.monotonic()
    check(root.auth.token.lookup_self()["data"]["policies"] == ["root"], "a delayed request is answered")
    check(time.monotonic() - started >= 0.2, "the delay fault holds the reply")
    faults(delay_ms=0)

    # Namespaces (an Enterprise feature) are refused; an unsupported verb is 405.
    expect(hx.InvalidRequest, "X-Vault-Namespace is refused", hvac.Client(url=url, token=root_token,
                                                                          namespace="team").auth.token.lookup_self)
    expect(hx.UnexpectedError, "an unsupported operation is 405", root.adapter.delete, "/v1/auth/token/lookup-self")
    expect(hx.InvalidRequest, "a body that is not JSON is 400", root.adapter.post, "/v1/sys/policies/acl/x",
           data="{not json")

    # Missing paths and revoked tokens.
    expect(hx.InvalidPath, "an unknown path is 404", root.adapter.get, "/v1/pki/nothing/here")
    check(root.read("pki/nothing/here") is None, "Client.read: None for a 404")
    child.auth.token.revoke_self()
    check(not child.is_authenticated(), "revoke_self: the token is gone")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        token_file = os.path.join(tmp, "root-token")
        proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--root-token-file", token_file],
                                stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline().strip()  # "septa-vaultsim: serving http://127.0.0.1:<port>"
            if "serving " not in line:
                raise AssertionError(f"septa-vaultsim did not start: {line!r}")
            url = line.split("serving ", 1)[1]
            with open(token_file) as f:
                run(url, f.read().strip())
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(f"vaultsim.hvac: {checks} checks passed (hvac {importlib.metadata.version('hvac')})")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"vaultsim.hvac: FAILED after {checks} checks: {e}", file=sys.stderr)
        sys.exit(1)
