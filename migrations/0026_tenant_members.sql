-- Tenant members (services/core/member_service.h, docs/identity.md
-- "Members"): a user or a group of the identity providers septad trusts
-- (oidc_issuers), named exactly as the provider's username or groups claim
-- gives it, with a role in one tenant. Desired state: people's sign-in (the
-- identity issue's next step) is to read it through
-- tenant_members_by_identity, "every membership of user U or of groups G";
-- nothing grants access by it before then. A tenant's members go with it.
CREATE TABLE tenant_members (
  tenant      text COLLATE "C" NOT NULL
              CONSTRAINT tenant_members_tenant_fkey REFERENCES tenants (name) ON DELETE CASCADE,
  kind        text COLLATE "C" NOT NULL
              CONSTRAINT tenant_members_kind_known CHECK (kind IN ('user', 'group')),
  -- 1-256 bytes of one line of printable text, as common/text.h's
  -- ValidateText admits it: no C0 or C1 control, DEL, line or paragraph
  -- separator, or bidi formatting character (NUL cannot be in a text).
  name        text COLLATE "C" NOT NULL
              CONSTRAINT tenant_members_name_format
              CHECK (octet_length(name) BETWEEN 1 AND 256
                     AND name !~ '[\x01-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]'),
  role        text NOT NULL
              CONSTRAINT tenant_members_role_known CHECK (role IN ('owner', 'editor', 'viewer')),
  create_time timestamptz NOT NULL,
  update_time timestamptz NOT NULL,
  version     bigint NOT NULL CONSTRAINT tenant_members_version_positive CHECK (version > 0),
  CONSTRAINT tenant_members_pkey PRIMARY KEY (tenant, kind, name)
);
CREATE INDEX tenant_members_by_identity ON tenant_members (kind, name, tenant);
