-- Septa's first schema: trust tiers (seeded with DESIGN.md's defaults),
-- tenants, API tokens, the audit log and idempotency keys. Constraints live
-- here so that a faulty application still cannot store a bad row.
-- Applied by services/store/migration_runner.cc in one transaction.

-- Needed by later migrations: MIG slice reservations use an exclusion
-- constraint (EXCLUDE USING gist ... WITH &&) per GPU.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- The store passes instants as integer microseconds since the Unix epoch;
-- these two keep the conversion exact (no floating point on the way).
CREATE FUNCTION septa_ts(micros bigint) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT timestamptz 'epoch' + micros * interval '1 microsecond' $$;

CREATE FUNCTION septa_micros(ts timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (extract(epoch FROM ts) * 1000000)::bigint $$;

-- Names and ids sort bytewise (COLLATE "C") whatever the database's
-- locale, so keyset pagination agrees with the application's ordering.
CREATE TABLE trust_tiers (
  name                       text COLLATE "C" PRIMARY KEY
                             CONSTRAINT trust_tiers_name_format
                             CHECK (name ~ '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' AND length(name) <= 40),
  display_name               text NOT NULL DEFAULT '',
  description                text NOT NULL DEFAULT '',
  gpu_sharing                text NOT NULL
                             CONSTRAINT trust_tiers_gpu_sharing_known
                             CHECK (gpu_sharing IN ('fractional', 'mig', 'whole-gpu', 'whole-node')),
  co_tenancy                 text NOT NULL,
  runtime_class              text NOT NULL,
  credential_ttl_max_seconds bigint NOT NULL
                             CONSTRAINT trust_tiers_credential_ttl_positive
                             CHECK (credential_ttl_max_seconds > 0),
  create_time                timestamptz NOT NULL DEFAULT now(),
  update_time                timestamptz NOT NULL DEFAULT now()
);

-- DESIGN.md section 2: the weaker the trust, the stronger the isolation.
-- Admins may edit these rows or add tiers.
INSERT INTO trust_tiers (name, display_name, description, gpu_sharing, co_tenancy,
                         runtime_class, credential_ttl_max_seconds) VALUES
  ('shared', 'Shared', 'One team, trusted: fractional, time-sliced GPUs.',
   'fractional', 'other shared tenants on the same GPU', 'nvidia', 86400),
  ('isolated', 'Isolated', 'Internal teams with competing priorities: MIG slices.',
   'mig', 'other tenants'' MIG slices on the same GPU, never a time-sliced share', 'nvidia', 28800),
  ('dedicated', 'Dedicated', 'Paying customers with SLAs: whole GPUs.',
   'whole-gpu', 'other tenants'' whole GPUs on the same node', 'kata-qemu-nvidia-gpu', 3600),
  ('exclusive', 'Exclusive', 'Regulated or adversarial: whole nodes.',
   'whole-node', 'nobody on the node', 'kata-qemu-nvidia-gpu', 900);

CREATE TABLE tenants (
  name         text COLLATE "C" PRIMARY KEY
               CONSTRAINT tenants_name_format
               CHECK (name ~ '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' AND length(name) <= 40),
  display_name text NOT NULL DEFAULT '',
  trust_tier   text COLLATE "C" NOT NULL CONSTRAINT tenants_trust_tier_fkey REFERENCES trust_tiers (name),
  labels       jsonb NOT NULL DEFAULT '{}'
               CONSTRAINT tenants_labels_object CHECK (jsonb_typeof(labels) = 'object'),
  state        text NOT NULL
               CONSTRAINT tenants_state_known CHECK (state IN ('active', 'suspended')),
  create_time  timestamptz NOT NULL,
  update_time  timestamptz NOT NULL,
  version      bigint NOT NULL CONSTRAINT tenants_version_positive CHECK (version > 0)
);
CREATE INDEX tenants_trust_tier ON tenants (trust_tier, name);
CREATE INDEX tenants_labels ON tenants USING gin (labels jsonb_path_ops);

CREATE TABLE api_tokens (
  id          text COLLATE "C" PRIMARY KEY
              CONSTRAINT api_tokens_id_format CHECK (id ~ '^[0-9a-f]{8,64}$'),
  principal   text NOT NULL
              CONSTRAINT api_tokens_principal_format
              CHECK (principal = 'admin' OR principal ~ '^tenant:[a-z0-9]([-a-z0-9]*[a-z0-9])?$'),
  role        text NOT NULL CONSTRAINT api_tokens_role_known CHECK (role IN ('owner', 'viewer')),
  -- SHA-256 of the secret, lower-case hex; the secret itself is never stored.
  secret_hash text NOT NULL CONSTRAINT api_tokens_secret_hash_key UNIQUE
              CONSTRAINT api_tokens_secret_hash_format CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  description text NOT NULL DEFAULT '',
  create_time timestamptz NOT NULL,
  expire_time timestamptz,
  revoke_time timestamptz
);
CREATE INDEX api_tokens_principal ON api_tokens (principal, create_time, id);

CREATE TABLE audit_log (
  id          bigserial PRIMARY KEY,
  time        timestamptz NOT NULL,
  principal   text NOT NULL,
  action      text NOT NULL CONSTRAINT audit_log_action_present CHECK (action <> ''),
  resource    text NOT NULL,
  old_etag    text NOT NULL DEFAULT '',
  new_etag    text NOT NULL DEFAULT '',
  request_id  text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_resource_time ON audit_log (resource, time DESC, id DESC);
CREATE INDEX audit_log_time ON audit_log (time DESC, id DESC);

CREATE TABLE idempotency_keys (
  principal    text NOT NULL,
  key          text NOT NULL CONSTRAINT idempotency_keys_key_present CHECK (key <> ''),
  request_hash text NOT NULL,
  resource     text NOT NULL,
  create_time  timestamptz NOT NULL,
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_create_time ON idempotency_keys (create_time);
