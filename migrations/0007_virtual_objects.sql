-- The simulated virtual control planes (services/vcp): each virtual cluster's
-- Kubernetes API is served by septad from an in-memory object store that is
-- written through to these tables, so a restart loses no object. Not tied to
-- virtual_clusters by a foreign key: the provisioner removes a control plane
-- through its port, and lists them to find orphans after a crash.
CREATE TABLE virtual_control_planes (
  tenant           text COLLATE "C" NOT NULL,
  vcluster         text COLLATE "C" NOT NULL,
  ca_certificate   text NOT NULL,
  -- In clear for now; encrypting it at rest belongs to the credentials issue.
  ca_private_key   text NOT NULL,
  -- The highest resource version given out, deletes included.
  resource_version bigint NOT NULL DEFAULT 0 CONSTRAINT virtual_control_planes_rv_nonnegative
                   CHECK (resource_version >= 0),
  CONSTRAINT virtual_control_planes_pkey PRIMARY KEY (tenant, vcluster)
);

CREATE TABLE virtual_objects (
  tenant           text COLLATE "C" NOT NULL,
  vcluster         text COLLATE "C" NOT NULL,
  type_key         text COLLATE "C" NOT NULL,  -- "pods", "deployments.apps"
  namespace        text COLLATE "C" NOT NULL,  -- '' for cluster-scoped objects
  name             text COLLATE "C" NOT NULL,
  resource_version bigint NOT NULL,
  -- The object's JSON text exactly as served (text, not jsonb: byte for byte).
  body             text NOT NULL,
  CONSTRAINT virtual_objects_pkey PRIMARY KEY (tenant, vcluster, type_key, namespace, name),
  CONSTRAINT virtual_objects_control_plane_fkey FOREIGN KEY (tenant, vcluster)
    REFERENCES virtual_control_planes (tenant, vcluster) ON DELETE CASCADE
);

-- Admin bearer tokens of a virtual cluster, by SHA-256 digest.
CREATE TABLE virtual_control_plane_tokens (
  tenant       text COLLATE "C" NOT NULL,
  vcluster     text COLLATE "C" NOT NULL,
  token_sha256 text COLLATE "C" NOT NULL CONSTRAINT virtual_control_plane_tokens_sha256_hex
               CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
  CONSTRAINT virtual_control_plane_tokens_pkey PRIMARY KEY (tenant, vcluster, token_sha256),
  CONSTRAINT virtual_control_plane_tokens_control_plane_fkey FOREIGN KEY (tenant, vcluster)
    REFERENCES virtual_control_planes (tenant, vcluster) ON DELETE CASCADE
);

-- The CA of the one listener all virtual control planes share (one row).
CREATE TABLE virtual_control_plane_listener (
  singleton      boolean PRIMARY KEY DEFAULT true CONSTRAINT virtual_control_plane_listener_one_row CHECK (singleton),
  ca_certificate text NOT NULL,
  ca_private_key text NOT NULL
);
