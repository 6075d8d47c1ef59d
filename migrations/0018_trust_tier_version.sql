-- Trust tiers become writable through the API (services/core/trust_tier_kind.h):
-- a version for writes conditional on what was read, as tenants and virtual
-- clusters have. A tier still in use by a tenant cannot be deleted
-- (tenants_trust_tier_fkey, 0001).
ALTER TABLE trust_tiers
  ADD COLUMN version bigint NOT NULL DEFAULT 1
             CONSTRAINT trust_tiers_version_positive CHECK (version > 0);
