-- A token scoped to apply sets (services/core/auth.h, RequireWriter): it
-- may apply and diff only the sets named here, of its own principal, and
-- read what its principal reads; it writes nothing else, issues no token
-- and signs in to no portal. Empty: not scoped. A token exchange rule with
-- apply_sets mints such tokens for a pipeline (docs/identity.md).
ALTER TABLE api_tokens
  ADD COLUMN apply_sets text[] NOT NULL DEFAULT '{}'
             CONSTRAINT api_tokens_apply_sets_bounded CHECK (cardinality(apply_sets) <= 16);
