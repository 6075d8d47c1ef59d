-- GitOps apply sets (services/core/apply_service.h): a set is named by its
-- owner — a tenant's sets (tenant = its name) hold only that tenant's
-- virtual clusters, the platform's (tenant = '') anything an admin
-- declares. A member row says which set declared an object and which of
-- its fields (the paths the document set): the database is the set's
-- inventory, so nothing is found by labels or scans, and an object belongs
-- to at most one set (the primary key). Objects made through the portal,
-- REST or septactl's imperative commands have no row and are never pruned.
-- A member row outlives an object deleted outside its set: the set still
-- declares it, and its next apply makes it again.
CREATE TABLE apply_sets (
  tenant     text COLLATE "C" NOT NULL,  -- '' for a platform set
  name       text COLLATE "C" NOT NULL
             CONSTRAINT apply_sets_name_dns_label CHECK (name ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
  -- Moves by one with every apply that changed something; a no-op apply
  -- leaves it (and everything else) as it was.
  revision   bigint NOT NULL CONSTRAINT apply_sets_revision_positive CHECK (revision > 0),
  source     text NOT NULL,  -- repository, commit, path: what the pipeline said
  applied_by text NOT NULL,  -- the principal ("admin", "tenant:acme")
  apply_time timestamptz NOT NULL,
  CONSTRAINT apply_sets_pkey PRIMARY KEY (tenant, name)
);

CREATE TABLE apply_set_members (
  kind       text NOT NULL
             CONSTRAINT apply_set_members_kind_known CHECK (kind IN ('TrustTier', 'Tenant', 'VirtualCluster')),
  resource   text COLLATE "C" NOT NULL,  -- "tenants/acme/vclusters/train"
  set_tenant text COLLATE "C" NOT NULL,
  set_name   text COLLATE "C" NOT NULL,
  declared   text[] NOT NULL,  -- the owned paths; empty: every writable field
  CONSTRAINT apply_set_members_pkey PRIMARY KEY (kind, resource),
  CONSTRAINT apply_set_members_set_fkey FOREIGN KEY (set_tenant, set_name)
    REFERENCES apply_sets (tenant, name) ON DELETE CASCADE
);
CREATE INDEX apply_set_members_by_set ON apply_set_members (set_tenant, set_name, kind, resource);
