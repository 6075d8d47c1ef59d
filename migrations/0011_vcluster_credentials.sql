-- Tenant credentials of the virtual clusters (services/core/credential_service.h):
-- one row per client certificate issued, never its private key, which is
-- returned once. The virtual clusters' CA keys (virtual_control_planes.
-- ca_private_key) are from now on stored wrapped under the key-encryption key
-- (services/vault/key_encryption.h); rows written in clear before are wrapped
-- by septad's start-time pass (vault::RewrapStoredKeys), since SQL never
-- holds the key-encryption key.
COMMENT ON COLUMN virtual_control_planes.ca_private_key IS
  'kek1:<kek id>:<base64 AES-256-GCM>, or PEM in rows written before 0011 until septad re-wraps them';

CREATE TABLE vcluster_credentials (
  tenant      text COLLATE "C" NOT NULL,
  vcluster    text COLLATE "C" NOT NULL,
  -- The certificate's serial number, lower-case hex as openssl prints it.
  serial      text COLLATE "C" NOT NULL CONSTRAINT vcluster_credentials_serial_hex CHECK (serial ~ '^[0-9a-f]{16,40}$'),
  common_name text NOT NULL,
  groups      text[] NOT NULL,
  role        text NOT NULL CONSTRAINT vcluster_credentials_role_known CHECK (role IN ('admin', 'edit', 'view')),
  issued_by   text NOT NULL,  -- the principal that asked ("tenant:acme", "admin")
  issue_time  timestamptz NOT NULL,
  expire_time timestamptz NOT NULL,
  revoke_time timestamptz,
  CONSTRAINT vcluster_credentials_pkey PRIMARY KEY (tenant, vcluster, serial),
  CONSTRAINT vcluster_credentials_lifetime CHECK (expire_time > issue_time),
  CONSTRAINT vcluster_credentials_vcluster_fkey FOREIGN KEY (tenant, vcluster)
    REFERENCES virtual_clusters (tenant, name) ON DELETE CASCADE
);
