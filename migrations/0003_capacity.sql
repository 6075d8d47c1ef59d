-- GPU capacity: the host cluster's inventory (nodes, GPUs, MIG layouts),
-- tenants' virtual clusters, and the reservations that hold concrete GPU
-- capacity for them. DESIGN.md section 3, "No GPU is ever booked twice": the
-- rules below hold even against a faulty application, because every one of
-- them is a constraint of this schema or a trigger that maintains a
-- constrained row.

-- The inventory: what the inventory controller last observed of each node.
-- A node that went away is kept with health 'Gone' while anything is
-- reserved on it; deleting it is refused (node_holds / gpu_holds below).
CREATE TABLE inventory_nodes (
  -- Kubernetes node names are DNS-1123 subdomains.
  name             text COLLATE "C" PRIMARY KEY
                   CONSTRAINT inventory_nodes_name_format
                   CHECK (name ~ '^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$' AND length(name) <= 253),
  health           text NOT NULL
                   CONSTRAINT inventory_nodes_health_known CHECK (health IN ('Ready', 'NotReady', 'Gone')),
  cpu_milli        bigint NOT NULL CONSTRAINT inventory_nodes_cpu_milli_nonnegative CHECK (cpu_milli >= 0),
  memory_mib       bigint NOT NULL CONSTRAINT inventory_nodes_memory_mib_nonnegative CHECK (memory_mib >= 0),
  labels           jsonb NOT NULL DEFAULT '{}'
                   CONSTRAINT inventory_nodes_labels_object CHECK (jsonb_typeof(labels) = 'object'),
  -- [{"key": ..., "value": ..., "effect": ...}, ...]
  taints           jsonb NOT NULL DEFAULT '[]'
                   CONSTRAINT inventory_nodes_taints_array CHECK (jsonb_typeof(taints) = 'array'),
  -- The node's nvidia.com/mig.config label (a mig-parted layout name) and
  -- nvidia.com/mig.config.state as the GPU operator reports it.
  mig_config       text NOT NULL DEFAULT '',
  mig_config_state text NOT NULL DEFAULT ''
                   CONSTRAINT inventory_nodes_mig_config_state_known
                   CHECK (mig_config_state IN ('', 'pending', 'rebooting', 'success', 'failed')),
  observe_time     timestamptz NOT NULL
);

CREATE TABLE inventory_gpus (
  node        text COLLATE "C" NOT NULL
              CONSTRAINT inventory_gpus_node_fkey REFERENCES inventory_nodes (name) ON DELETE CASCADE,
  index       integer NOT NULL CONSTRAINT inventory_gpus_index_nonnegative CHECK (index >= 0),
  model       text NOT NULL CONSTRAINT inventory_gpus_model_present CHECK (model <> ''),  -- catalog canonical name
  uuid        text NOT NULL DEFAULT '',
  mig_enabled boolean NOT NULL,
  CONSTRAINT inventory_gpus_pkey PRIMARY KEY (node, index)
);

-- The GPU instances of a MIG-enabled GPU's current layout. `profile` is the
-- index of the profile in the catalog entry of the GPU's model, as
-- gpu::MigInstance carries it.
CREATE TABLE inventory_mig_instances (
  node    text COLLATE "C" NOT NULL,
  gpu     integer NOT NULL,
  profile integer NOT NULL CONSTRAINT inventory_mig_instances_profile_nonnegative CHECK (profile >= 0),
  start   integer NOT NULL CONSTRAINT inventory_mig_instances_start_nonnegative CHECK (start >= 0),
  CONSTRAINT inventory_mig_instances_pkey PRIMARY KEY (node, gpu, start),
  CONSTRAINT inventory_mig_instances_gpu_fkey FOREIGN KEY (node, gpu)
    REFERENCES inventory_gpus (node, index) ON DELETE CASCADE
);

-- A tenant's virtual clusters. A tenant cannot be deleted while it owns any.
CREATE TABLE virtual_clusters (
  tenant                  text COLLATE "C" NOT NULL
                          CONSTRAINT virtual_clusters_tenant_fkey REFERENCES tenants (name) ON DELETE RESTRICT,
  name                    text COLLATE "C" NOT NULL
                          CONSTRAINT virtual_clusters_name_format
                          CHECK (name ~ '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' AND length(name) <= 40),
  display_name            text NOT NULL DEFAULT '',
  -- The capacity asked for: its tier, and the tier's part as JSON
  -- ({"milli_gpu", "gpu_memory_mib"} | {"mig": [{"profile", "count", "model"}]}
  -- | {"model", "count"}); tenancy/ validates it.
  capacity_tier           text NOT NULL
                          CONSTRAINT virtual_clusters_capacity_tier_known
                          CHECK (capacity_tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  capacity                jsonb NOT NULL
                          CONSTRAINT virtual_clusters_capacity_object CHECK (jsonb_typeof(capacity) = 'object'),
  -- Limits on the workloads; 0 = none.
  quota_cpu_milli         bigint NOT NULL DEFAULT 0
                          CONSTRAINT virtual_clusters_quota_cpu_milli_nonnegative CHECK (quota_cpu_milli >= 0),
  quota_memory_mib        bigint NOT NULL DEFAULT 0
                          CONSTRAINT virtual_clusters_quota_memory_mib_nonnegative CHECK (quota_memory_mib >= 0),
  quota_pods              bigint NOT NULL DEFAULT 0
                          CONSTRAINT virtual_clusters_quota_pods_nonnegative CHECK (quota_pods >= 0),
  queue_priority          integer NOT NULL,
  queue_over_quota_weight integer NOT NULL
                          CONSTRAINT virtual_clusters_queue_over_quota_weight_nonnegative
                          CHECK (queue_over_quota_weight >= 0),
  state                   text NOT NULL
                          CONSTRAINT virtual_clusters_state_known
                          CHECK (state IN ('PROVISIONING', 'READY', 'SLEEPING', 'DELETING', 'FAILED')),
  -- [{"type", "status", "reason", "message", "last_transition_time" (micros), "observed_generation"}]
  conditions              jsonb NOT NULL DEFAULT '[]'
                          CONSTRAINT virtual_clusters_conditions_array CHECK (jsonb_typeof(conditions) = 'array'),
  host_namespace          text NOT NULL DEFAULT '',
  endpoint                text NOT NULL DEFAULT '',
  generation              bigint NOT NULL CONSTRAINT virtual_clusters_generation_positive CHECK (generation > 0),
  version                 bigint NOT NULL CONSTRAINT virtual_clusters_version_positive CHECK (version > 0),
  create_time             timestamptz NOT NULL,
  update_time             timestamptz NOT NULL,
  CONSTRAINT virtual_clusters_pkey PRIMARY KEY (tenant, name)
);
CREATE INDEX virtual_clusters_state ON virtual_clusters (state, tenant, name);

-- Reservations. A virtual cluster holds at most one; its rows say which
-- capacity it holds, one table per kind of capacity, each kind legal only in
-- its tier (the rows' generated `tier` is part of their key to the header).
-- A reservation cannot go before its virtual cluster does, and its rows go
-- with it. `releasing`: the virtual cluster is being deleted and the capacity
-- is still held until nothing of the tenant runs on it.
CREATE TABLE reservations (
  tenant    text COLLATE "C" NOT NULL,
  vcluster  text COLLATE "C" NOT NULL,
  tier      text NOT NULL
            CONSTRAINT reservations_tier_known CHECK (tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  releasing boolean NOT NULL DEFAULT false,
  CONSTRAINT reservations_pkey PRIMARY KEY (tenant, vcluster),
  CONSTRAINT reservations_tier_key UNIQUE (tenant, vcluster, tier),
  CONSTRAINT reservations_vcluster_fkey FOREIGN KEY (tenant, vcluster)
    REFERENCES virtual_clusters (tenant, name) ON DELETE RESTRICT
);

-- Holds: what is reserved on each node and GPU, maintained by the triggers
-- below from the reservation rows, one row per node or GPU that anything is
-- reserved on, deleted when its last holder goes. They carry the rules that
-- span several reservation tables:
--
--   * A node is held either exclusively (one whole-node reservation, nothing
--     else) or for its GPUs (any number of GPU holders): node_holds.mode, one
--     row per node; a GPU hold refers to (node, 'gpus') and a whole-node
--     reservation to (node, 'exclusive'), so neither can join the other.
--   * A GPU is held in exactly one mode: 'shared' (time-shared fractions),
--     'mig' (MIG instances) or 'whole'; each reservation row refers to
--     (node, gpu, its mode), so no share goes on a GPU with MIG instances or
--     a whole holder, and no MIG instance on a shared or whole GPU.
--   * A whole GPU has one holder (gpu_holds_whole_alone), an exclusive node
--     one (node_holds_exclusive_alone).
--   * The shares of one GPU sum to at most 1000 milli-GPU
--     (gpu_holds_shares_fit on the running sum).
--   * MIG instances on one GPU never overlap in memory slices (the exclusion
--     constraint on reservation_mig).
--   * Holds refer to the inventory: nothing is reserved on an unknown node
--     or GPU, and neither can be deleted while held (ON DELETE RESTRICT).
--
-- Concurrency: every reservation row updates its node's and GPU's hold row,
-- so two transactions reserving on one GPU meet on that row's lock and the
-- second sees the first's holders and sums. The store reserves in
-- SERIALIZABLE transactions, where such a meeting ends one of them with a
-- serialization failure; it is retried and then meets the committed rows.
CREATE TABLE node_holds (
  node    text COLLATE "C" PRIMARY KEY
          CONSTRAINT node_holds_node_fkey REFERENCES inventory_nodes (name) ON DELETE RESTRICT,
  mode    text NOT NULL CONSTRAINT node_holds_mode_known CHECK (mode IN ('gpus', 'exclusive')),
  holders integer NOT NULL CONSTRAINT node_holds_holders_nonnegative CHECK (holders >= 0),
  CONSTRAINT node_holds_mode_key UNIQUE (node, mode),
  CONSTRAINT node_holds_exclusive_alone CHECK (mode <> 'exclusive' OR holders <= 1)
);

CREATE TABLE gpu_holds (
  node      text COLLATE "C" NOT NULL,
  gpu       integer NOT NULL,
  mode      text NOT NULL CONSTRAINT gpu_holds_mode_known CHECK (mode IN ('shared', 'mig', 'whole')),
  holders   integer NOT NULL CONSTRAINT gpu_holds_holders_nonnegative CHECK (holders >= 0),
  milli_gpu integer NOT NULL DEFAULT 0  -- the sum of the GPU's shares
            CONSTRAINT gpu_holds_shares_fit CHECK (milli_gpu BETWEEN 0 AND 1000),
  node_mode text NOT NULL GENERATED ALWAYS AS ('gpus') STORED,
  CONSTRAINT gpu_holds_pkey PRIMARY KEY (node, gpu),
  CONSTRAINT gpu_holds_mode_key UNIQUE (node, gpu, mode),
  CONSTRAINT gpu_holds_whole_alone CHECK (mode <> 'whole' OR holders <= 1),
  CONSTRAINT gpu_holds_gpu_fkey FOREIGN KEY (node, gpu) REFERENCES inventory_gpus (node, index) ON DELETE RESTRICT,
  CONSTRAINT gpu_holds_node_mode_fkey FOREIGN KEY (node, node_mode) REFERENCES node_holds (node, mode)
);

-- isolated: MIG instances at fixed placements, memory slices [start, start + size).
CREATE TABLE reservation_mig (
  tenant   text COLLATE "C" NOT NULL,
  vcluster text COLLATE "C" NOT NULL,
  tier     text NOT NULL GENERATED ALWAYS AS ('isolated') STORED,
  node     text COLLATE "C" NOT NULL,
  gpu      integer NOT NULL,
  mode     text NOT NULL GENERATED ALWAYS AS ('mig') STORED,
  profile  text NOT NULL CONSTRAINT reservation_mig_profile_present CHECK (profile <> ''),
  start    integer NOT NULL,
  size     integer NOT NULL,
  slices   int4range NOT NULL GENERATED ALWAYS AS (int4range(start, start + size)) STORED,
  -- A MIG-capable GPU has 8 memory slices (A30: 4).
  CONSTRAINT reservation_mig_slices_on_gpu CHECK (start >= 0 AND size >= 1 AND start + size <= 8),
  CONSTRAINT reservation_mig_pkey PRIMARY KEY (node, gpu, start),
  CONSTRAINT reservation_mig_reservation_fkey FOREIGN KEY (tenant, vcluster, tier)
    REFERENCES reservations (tenant, vcluster, tier) ON DELETE CASCADE,
  CONSTRAINT reservation_mig_gpu_mode_fkey FOREIGN KEY (node, gpu, mode) REFERENCES gpu_holds (node, gpu, mode),
  -- Two instances on one GPU never share a memory slice, whoever holds them.
  CONSTRAINT reservation_mig_slices_overlap EXCLUDE USING gist (node WITH =, gpu WITH =, slices WITH &&)
);
CREATE INDEX reservation_mig_reservation ON reservation_mig (tenant, vcluster);

-- dedicated: whole GPUs.
CREATE TABLE reservation_gpus (
  tenant   text COLLATE "C" NOT NULL,
  vcluster text COLLATE "C" NOT NULL,
  tier     text NOT NULL GENERATED ALWAYS AS ('dedicated') STORED,
  node     text COLLATE "C" NOT NULL,
  gpu      integer NOT NULL,
  mode     text NOT NULL GENERATED ALWAYS AS ('whole') STORED,
  CONSTRAINT reservation_gpus_pkey PRIMARY KEY (node, gpu),
  CONSTRAINT reservation_gpus_reservation_fkey FOREIGN KEY (tenant, vcluster, tier)
    REFERENCES reservations (tenant, vcluster, tier) ON DELETE CASCADE,
  CONSTRAINT reservation_gpus_gpu_mode_fkey FOREIGN KEY (node, gpu, mode) REFERENCES gpu_holds (node, gpu, mode)
);
CREATE INDEX reservation_gpus_reservation ON reservation_gpus (tenant, vcluster);

-- shared: part of a milli-GPU budget on one time-shared GPU.
CREATE TABLE reservation_shares (
  tenant         text COLLATE "C" NOT NULL,
  vcluster       text COLLATE "C" NOT NULL,
  tier           text NOT NULL GENERATED ALWAYS AS ('shared') STORED,
  node           text COLLATE "C" NOT NULL,
  gpu            integer NOT NULL,
  mode           text NOT NULL GENERATED ALWAYS AS ('shared') STORED,
  milli_gpu      integer NOT NULL CONSTRAINT reservation_shares_milli_gpu_range CHECK (milli_gpu BETWEEN 1 AND 1000),
  gpu_memory_mib bigint NOT NULL
                 CONSTRAINT reservation_shares_gpu_memory_mib_nonnegative CHECK (gpu_memory_mib >= 0),
  CONSTRAINT reservation_shares_pkey PRIMARY KEY (tenant, vcluster, node, gpu),
  CONSTRAINT reservation_shares_reservation_fkey FOREIGN KEY (tenant, vcluster, tier)
    REFERENCES reservations (tenant, vcluster, tier) ON DELETE CASCADE,
  CONSTRAINT reservation_shares_gpu_mode_fkey FOREIGN KEY (node, gpu, mode) REFERENCES gpu_holds (node, gpu, mode)
);
CREATE INDEX reservation_shares_gpu ON reservation_shares (node, gpu);

-- exclusive: whole nodes.
CREATE TABLE reservation_nodes (
  tenant   text COLLATE "C" NOT NULL,
  vcluster text COLLATE "C" NOT NULL,
  tier     text NOT NULL GENERATED ALWAYS AS ('exclusive') STORED,
  node     text COLLATE "C" NOT NULL,
  mode     text NOT NULL GENERATED ALWAYS AS ('exclusive') STORED,
  CONSTRAINT reservation_nodes_pkey PRIMARY KEY (node),
  CONSTRAINT reservation_nodes_reservation_fkey FOREIGN KEY (tenant, vcluster, tier)
    REFERENCES reservations (tenant, vcluster, tier) ON DELETE CASCADE,
  CONSTRAINT reservation_nodes_node_mode_fkey FOREIGN KEY (node, mode) REFERENCES node_holds (node, mode)
);
CREATE INDEX reservation_nodes_reservation ON reservation_nodes (tenant, vcluster);

-- Taking and releasing holds. A hold row is taken (created, or its holders
-- counted up) BEFORE the reservation row is inserted, so that the row's
-- foreign key to it is checked against the mode the node or GPU is
-- actually held in; an upsert into a hold of another mode only counts up a
-- row that the failing foreign key then rolls back with the statement.

CREATE FUNCTION septa_take_node(p_node text, p_mode text) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO node_holds AS h (node, mode, holders) VALUES (p_node, p_mode, 1)
    ON CONFLICT (node) DO UPDATE SET holders = h.holders + 1;
END $$;

CREATE FUNCTION septa_release_node(p_node text) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE node_holds SET holders = holders - 1 WHERE node = p_node;
  DELETE FROM node_holds WHERE node = p_node AND holders = 0;
END $$;

-- BEFORE INSERT on reservation_mig, reservation_gpus, reservation_shares;
-- TG_ARGV[0]: the GPU mode the table's rows need.
CREATE FUNCTION septa_take_gpu() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM septa_take_node(NEW.node, 'gpus');
  INSERT INTO gpu_holds AS h (node, gpu, mode, holders) VALUES (NEW.node, NEW.gpu, TG_ARGV[0], 1)
    ON CONFLICT (node, gpu) DO UPDATE SET holders = h.holders + 1;
  RETURN NEW;
END $$;

-- AFTER DELETE on the same tables.
CREATE FUNCTION septa_release_gpu() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE gpu_holds SET holders = holders - 1 WHERE node = OLD.node AND gpu = OLD.gpu;
  DELETE FROM gpu_holds WHERE node = OLD.node AND gpu = OLD.gpu AND holders = 0;
  PERFORM septa_release_node(OLD.node);
  RETURN NULL;
END $$;

-- The running sum of a GPU's shares, AFTER the share row passed its own
-- checks (a share over 1000 is a bad row, not a full GPU).
CREATE FUNCTION septa_count_share() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE gpu_holds SET milli_gpu = milli_gpu + NEW.milli_gpu WHERE node = NEW.node AND gpu = NEW.gpu;
  ELSE
    UPDATE gpu_holds SET milli_gpu = milli_gpu - OLD.milli_gpu WHERE node = OLD.node AND gpu = OLD.gpu;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION septa_take_whole_node() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM septa_take_node(NEW.node, 'exclusive');
  RETURN NEW;
END $$;

CREATE FUNCTION septa_release_whole_node() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM septa_release_node(OLD.node);
  RETURN NULL;
END $$;

-- Reservation rows are never updated (the holds count rows, not changes):
-- a resize deletes rows and inserts others.
CREATE FUNCTION septa_reservation_row_immutable() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'reservation rows are immutable: delete the row and insert another'
    USING ERRCODE = 'integrity_constraint_violation';
END $$;

-- Holds change only through the triggers above (a direct write has trigger
-- depth 1, the guard's own), so that no statement can make a hold disagree
-- with the reservation rows it counts.
CREATE FUNCTION septa_holds_follow_reservations() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION '% is kept by the reservation tables'' triggers; write reservation rows instead', TG_TABLE_NAME
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER node_holds_guard BEFORE INSERT OR UPDATE OR DELETE ON node_holds
  FOR EACH ROW EXECUTE FUNCTION septa_holds_follow_reservations();
CREATE TRIGGER node_holds_guard_truncate BEFORE TRUNCATE ON node_holds
  FOR EACH STATEMENT EXECUTE FUNCTION septa_holds_follow_reservations();
CREATE TRIGGER gpu_holds_guard BEFORE INSERT OR UPDATE OR DELETE ON gpu_holds
  FOR EACH ROW EXECUTE FUNCTION septa_holds_follow_reservations();
CREATE TRIGGER gpu_holds_guard_truncate BEFORE TRUNCATE ON gpu_holds
  FOR EACH STATEMENT EXECUTE FUNCTION septa_holds_follow_reservations();

CREATE TRIGGER reservation_mig_take BEFORE INSERT ON reservation_mig
  FOR EACH ROW EXECUTE FUNCTION septa_take_gpu('mig');
CREATE TRIGGER reservation_mig_release AFTER DELETE ON reservation_mig
  FOR EACH ROW EXECUTE FUNCTION septa_release_gpu();
CREATE TRIGGER reservation_mig_immutable BEFORE UPDATE ON reservation_mig
  FOR EACH ROW EXECUTE FUNCTION septa_reservation_row_immutable();

CREATE TRIGGER reservation_gpus_take BEFORE INSERT ON reservation_gpus
  FOR EACH ROW EXECUTE FUNCTION septa_take_gpu('whole');
CREATE TRIGGER reservation_gpus_release AFTER DELETE ON reservation_gpus
  FOR EACH ROW EXECUTE FUNCTION septa_release_gpu();
CREATE TRIGGER reservation_gpus_immutable BEFORE UPDATE ON reservation_gpus
  FOR EACH ROW EXECUTE FUNCTION septa_reservation_row_immutable();

-- AFTER DELETE triggers fire in name order: the share leaves the sum
-- (reservation_shares_count) before the GPU's hold may go (_release).
CREATE TRIGGER reservation_shares_take BEFORE INSERT ON reservation_shares
  FOR EACH ROW EXECUTE FUNCTION septa_take_gpu('shared');
CREATE TRIGGER reservation_shares_count AFTER INSERT OR DELETE ON reservation_shares
  FOR EACH ROW EXECUTE FUNCTION septa_count_share();
CREATE TRIGGER reservation_shares_release AFTER DELETE ON reservation_shares
  FOR EACH ROW EXECUTE FUNCTION septa_release_gpu();
CREATE TRIGGER reservation_shares_immutable BEFORE UPDATE ON reservation_shares
  FOR EACH ROW EXECUTE FUNCTION septa_reservation_row_immutable();

CREATE TRIGGER reservation_nodes_take BEFORE INSERT ON reservation_nodes
  FOR EACH ROW EXECUTE FUNCTION septa_take_whole_node();
CREATE TRIGGER reservation_nodes_release AFTER DELETE ON reservation_nodes
  FOR EACH ROW EXECUTE FUNCTION septa_release_whole_node();
CREATE TRIGGER reservation_nodes_immutable BEFORE UPDATE ON reservation_nodes
  FOR EACH ROW EXECUTE FUNCTION septa_reservation_row_immutable();
