-- People's portal sessions (services/core/person_session.h, docs/identity.md
-- "The portal"): a person signs in to the portal by the authorization code
-- flow with PKCE at one of oidc_issuers, and septad keeps
-- * person_sign_ins: each sign-in under way, from the redirect to the
--   provider until its callback takes it (once: DELETE ... RETURNING), for
--   minutes; keyed by the SHA-256 of the `state` sent to the provider, so a
--   leaked table names no state a callback could present;
-- * person_sessions: each session, the identity its latest ID token named
--   and the provider's refresh token that renews it, changed only at its
--   `version` (two replicas renewing one session at once: one wins, the
--   other reads the winner's).
-- Apart from api_tokens: a person's session has no API token to be made
-- from (migrations/0019's parent_id), and holds what a token has not.
--
-- A session's end (its revocation, or the deletion of a session not
-- revoked) is told to every replica, only if the transaction commits, on
-- septa_revocations as "token:<id>" (the payload of
-- services/store/revocation_listener.h that an API token's revocation
-- sends): each replica drops the session from its cache at once, so a
-- signed-out session is refused everywhere at the next request. A revoked
-- session's later deletion was told at its revocation; a listener that was
-- not connected starts its cache over instead.

-- 1-256 bytes of one line of printable text each, as
-- tenant_members_name_format admits a name (what the identity provider's
-- username and groups claims must be: services/oidc/claims.h).
CREATE FUNCTION septa_member_names(names text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(bool_and(coalesce(octet_length(name) BETWEEN 1 AND 256
                                    AND name !~ '[\x01-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]',
                                    false)),
                  true)
  FROM unnest(names) AS name
$$;

CREATE TABLE person_sign_ins (
  state_hash    text COLLATE "C" NOT NULL
                CONSTRAINT person_sign_ins_state_hash_format CHECK (state_hash ~ '^[0-9a-f]{64}$'),
  issuer        text NOT NULL
                CONSTRAINT person_sign_ins_issuer_length CHECK (octet_length(issuer) BETWEEN 1 AND 2048),
  -- SHA-256 of the cookie set on the browser that began it.
  browser_hash  text NOT NULL
                CONSTRAINT person_sign_ins_browser_hash_format CHECK (browser_hash ~ '^[0-9a-f]{64}$'),
  -- RFC 7636 section 4.1.
  code_verifier text NOT NULL
                CONSTRAINT person_sign_ins_code_verifier_format CHECK (code_verifier ~ '^[A-Za-z0-9._~-]{43,128}$'),
  nonce         text NOT NULL
                CONSTRAINT person_sign_ins_nonce_length CHECK (octet_length(nonce) BETWEEN 1 AND 256),
  -- A path of the portal, never another site.
  return_to     text NOT NULL
                CONSTRAINT person_sign_ins_return_to_path
                CHECK (return_to ~ '^/' AND octet_length(return_to) <= 2048),
  -- The address it was begun from (a bound per address).
  client        text COLLATE "C" NOT NULL
                CONSTRAINT person_sign_ins_client_length CHECK (octet_length(client) <= 64),
  create_time   timestamptz NOT NULL,
  expire_time   timestamptz NOT NULL,
  CONSTRAINT person_sign_ins_pkey PRIMARY KEY (state_hash),
  CONSTRAINT person_sign_ins_lifetime CHECK (expire_time > create_time)
);
-- CountSignIns (the unexpired) and DeleteDead (the expired).
CREATE INDEX person_sign_ins_expire_time ON person_sign_ins (expire_time);
-- CountSignInsFrom.
CREATE INDEX person_sign_ins_client ON person_sign_ins (client, expire_time);

CREATE TABLE person_sessions (
  id                   text COLLATE "C" NOT NULL
                       CONSTRAINT person_sessions_id_format CHECK (id ~ '^[0-9a-f]{16}$'),
  -- SHA-256 of the cookie's secret; the secret itself is never stored.
  secret_hash          text NOT NULL
                       CONSTRAINT person_sessions_secret_hash_format CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  issuer               text COLLATE "C" NOT NULL
                       CONSTRAINT person_sessions_issuer_length CHECK (octet_length(issuer) BETWEEN 1 AND 2048),
  username             text COLLATE "C" NOT NULL
                       CONSTRAINT person_sessions_username_format CHECK (septa_member_names(ARRAY[username])),
  -- Sorted and unique (the application's order, kept as given).
  groups               text[] NOT NULL
                       CONSTRAINT person_sessions_groups_format
                       CHECK (cardinality(groups) <= 1000 AND septa_member_names(groups)),
  -- The latest ID token's "exp": the identity is renewed after it.
  identity_expire_time timestamptz NOT NULL,
  -- The latest ID token (services/oidc/jws.h: at most 64 KiB): the
  -- id_token_hint of the sign-out.
  id_token             text NOT NULL
                       CONSTRAINT person_sessions_id_token_length CHECK (octet_length(id_token) BETWEEN 1 AND 65536),
  -- '': the provider issued none.
  refresh_token        text NOT NULL DEFAULT ''
                       CONSTRAINT person_sessions_refresh_token_length CHECK (octet_length(refresh_token) <= 65536),
  version              bigint NOT NULL CONSTRAINT person_sessions_version_nonnegative CHECK (version >= 0),
  create_time          timestamptz NOT NULL,
  expire_time          timestamptz NOT NULL,
  revoke_time          timestamptz,
  CONSTRAINT person_sessions_pkey PRIMARY KEY (id),
  CONSTRAINT person_sessions_lifetime CHECK (expire_time > create_time)
);
-- ListLive: a person's unrevoked sessions in creation order.
CREATE INDEX person_sessions_live ON person_sessions (issuer, username, create_time, id) WHERE revoke_time IS NULL;

CREATE FUNCTION septa_notify_person_session_end() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.revoke_time IS NULL THEN
      PERFORM pg_notify('septa_revocations', 'token:' || OLD.id);
    END IF;
  ELSIF OLD.revoke_time IS NULL AND NEW.revoke_time IS NOT NULL THEN
    PERFORM pg_notify('septa_revocations', 'token:' || NEW.id);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER person_sessions_notify
  AFTER UPDATE OF revoke_time OR DELETE ON person_sessions
  FOR EACH ROW
  EXECUTE FUNCTION septa_notify_person_session_end();
