-- API tokens declared in the platform's apply sets (GitOps; services/core/
-- token_declaration_kind.h): what a declaration says — the principal, the
-- role, the lifetime and the Secret the secret goes to — never the secret.
-- The token delivery controller (services/reconcile/token_delivery_controller.h)
-- mints the token (a row of api_tokens, which keeps only its hash), writes
-- the secret to the sink, then records it here; pending_token_id is a
-- token minted and not yet recorded as delivered, which the next delivery
-- revokes. A change of the declaration (an insert, or a new version) is told
-- on channel septa_token_declarations with the declaration's name.
CREATE TABLE token_declarations (
  name              text COLLATE "C" PRIMARY KEY
                    CONSTRAINT token_declarations_name_dns_label CHECK (name ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
  principal         text NOT NULL
                    CONSTRAINT token_declarations_principal_format CHECK (principal ~ '^(admin|tenant:[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$'),
  role              text NOT NULL CONSTRAINT token_declarations_role_known CHECK (role IN ('owner', 'viewer')),
  ttl_seconds       bigint NOT NULL CONSTRAINT token_declarations_ttl_not_negative CHECK (ttl_seconds >= 0),
  sink_namespace    text NOT NULL CONSTRAINT token_declarations_sink_namespace_present CHECK (sink_namespace <> ''),
  sink_name         text NOT NULL CONSTRAINT token_declarations_sink_name_present CHECK (sink_name <> ''),
  sink_key          text NOT NULL CONSTRAINT token_declarations_sink_key_present CHECK (sink_key <> ''),
  version           bigint NOT NULL CONSTRAINT token_declarations_version_positive CHECK (version > 0),
  create_time       timestamptz NOT NULL,
  update_time       timestamptz NOT NULL,
  token_id          text NOT NULL DEFAULT '',
  token_expire_time timestamptz,
  token_version     bigint NOT NULL DEFAULT 0,
  pending_token_id  text NOT NULL DEFAULT '',
  deliveries        bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION septa_notify_token_declarations() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('septa_token_declarations', NEW.name);
  RETURN NEW;
END;
$$;

CREATE TRIGGER token_declarations_insert_notify
  AFTER INSERT ON token_declarations
  FOR EACH ROW EXECUTE FUNCTION septa_notify_token_declarations();
CREATE TRIGGER token_declarations_version_notify
  AFTER UPDATE ON token_declarations
  FOR EACH ROW WHEN (OLD.version <> NEW.version) EXECUTE FUNCTION septa_notify_token_declarations();

-- Apply sets may hold them.
ALTER TABLE apply_set_members DROP CONSTRAINT apply_set_members_kind_known;
ALTER TABLE apply_set_members ADD CONSTRAINT apply_set_members_kind_known
  CHECK (kind IN ('TrustTier', 'Tenant', 'VirtualCluster', 'ApiToken'));
