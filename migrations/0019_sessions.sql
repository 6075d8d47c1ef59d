-- The portal's sign-in (services/core/session_service.h): a browser session
-- and a one-time sign-in code are rows of api_tokens, so that they are
-- verified, cached, revoked and told to every replica exactly as API tokens
-- are. Each is made from an API token (parent_id) and lives no longer than
-- it: revoking or expiring the parent ends them. Only kind 'api' is a bearer
-- token; a session is accepted only as the portal's cookie, a sign-in code
-- only once, by POST /v1/sessions.
ALTER TABLE api_tokens
  ADD COLUMN kind text NOT NULL DEFAULT 'api'
             CONSTRAINT api_tokens_kind_known CHECK (kind IN ('api', 'session', 'sign_in')),
  ADD COLUMN parent_id text COLLATE "C"
             CONSTRAINT api_tokens_parent_fkey REFERENCES api_tokens (id),
  ADD CONSTRAINT api_tokens_parent_by_kind CHECK ((kind = 'api') = (parent_id IS NULL));
-- Live sessions and codes of one principal are counted at every sign-in.
CREATE INDEX api_tokens_principal_kind ON api_tokens (principal, kind) WHERE revoke_time IS NULL;
