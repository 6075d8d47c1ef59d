-- GPU usage (services/core/usage_store.h, docs/usage.md, issue 34): what
-- each held entity (a whole GPU, a MIG instance, a share) accrued per
-- minute; the same summed per UTC hour and day, so that reports and bills
-- never scan minutes and minutes can be deleted after a while; the
-- platform's capacity and unreserved pool; each entity's idle run; the
-- dated price table; and per node how far its usage has been accounted.
--
-- Rows are written only by the usage scraper, one node's scrape per
-- transaction, which also moves the node's cursor by compare-and-set: a
-- scrape accounted twice (another replica, a retry after a crash) finds the
-- cursor moved and adds nothing. Hours and days are added to in that same
-- transaction, so they always equal the sum of the minutes written.
--
-- No foreign key to tenants, virtual clusters or the inventory: a bill
-- outlives the tenant, the virtual cluster and the node it is for, and a
-- tenant is deleted without touching its usage. Names sort bytewise
-- (COLLATE "C"), as the application sorts them. A figure is a finite number,
-- not negative: "x < 'Infinity'" also refuses NaN, which PostgreSQL sorts
-- above every number.

CREATE TABLE usage_cursors (
  node            text COLLATE "C" PRIMARY KEY,
  accounted_until timestamptz NOT NULL  -- every sample before it is in the tables below
);

-- One row per entity and minute (its start); a later scrape of the same
-- minute adds its GPU-seconds and cost and keeps the largest activity and
-- memory. tier, model, mig_profile and weight are the first scrape's: an
-- entity is one held thing.
CREATE TABLE usage_minutes (
  minute                timestamptz NOT NULL,
  tenant                text COLLATE "C" NOT NULL,
  vcluster              text COLLATE "C" NOT NULL,
  node                  text COLLATE "C" NOT NULL,
  gpu_uuid              text COLLATE "C" NOT NULL,
  -- The GPU-instance id of a MIG instance as DCGM labels it; -1 for a
  -- whole GPU or a share (never NULL: it is part of the key).
  gi_id                 integer NOT NULL DEFAULT -1 CONSTRAINT usage_minutes_gi_id_range CHECK (gi_id >= -1),
  tier                  text COLLATE "C" NOT NULL
                        CONSTRAINT usage_minutes_tier_known
                        CHECK (tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  model                 text COLLATE "C" NOT NULL,  -- the catalog's name
  mig_profile           text COLLATE "C" NOT NULL DEFAULT '',  -- '' unless a MIG instance
  weight                double precision NOT NULL
                        CONSTRAINT usage_minutes_weight_nonnegative CHECK (weight >= 0 AND weight < 'Infinity'),
  allocated_gpu_seconds double precision NOT NULL
                        CONSTRAINT usage_minutes_allocated_gpu_seconds_nonnegative
                        CHECK (allocated_gpu_seconds >= 0 AND allocated_gpu_seconds < 'Infinity'),
  measured_gpu_seconds  double precision NOT NULL
                        CONSTRAINT usage_minutes_measured_gpu_seconds_nonnegative
                        CHECK (measured_gpu_seconds >= 0 AND measured_gpu_seconds < 'Infinity'),
  used_gpu_seconds      double precision NOT NULL
                        CONSTRAINT usage_minutes_used_gpu_seconds_nonnegative
                        CHECK (used_gpu_seconds >= 0 AND used_gpu_seconds < 'Infinity'),
  waste_gpu_seconds     double precision NOT NULL
                        CONSTRAINT usage_minutes_waste_gpu_seconds_nonnegative
                        CHECK (waste_gpu_seconds >= 0 AND waste_gpu_seconds < 'Infinity'),
  -- In the platform's currency, at the rate in force when accrued: a later
  -- price never changes a past minute.
  cost                  double precision NOT NULL
                        CONSTRAINT usage_minutes_cost_nonnegative CHECK (cost >= 0 AND cost < 'Infinity'),
  activity_max          double precision NOT NULL
                        CONSTRAINT usage_minutes_activity_max_nonnegative
                        CHECK (activity_max >= 0 AND activity_max < 'Infinity'),
  reserved_memory_mib   double precision NOT NULL
                        CONSTRAINT usage_minutes_reserved_memory_mib_nonnegative
                        CHECK (reserved_memory_mib >= 0 AND reserved_memory_mib < 'Infinity'),
  -- The largest FB_USED sampled; NULL when the exporter showed none.
  used_memory_mib       double precision
                        CONSTRAINT usage_minutes_used_memory_mib_nonnegative
                        CHECK (used_memory_mib >= 0 AND used_memory_mib < 'Infinity'),
  samples               integer NOT NULL CONSTRAINT usage_minutes_samples_nonnegative CHECK (samples >= 0),
  -- Minute first: retention deletes the oldest minutes through it.
  CONSTRAINT usage_minutes_pkey PRIMARY KEY (minute, tenant, vcluster, node, gpu_uuid, gi_id)
);
-- A tenant's report at minute resolution.
CREATE INDEX usage_minutes_by_tenant ON usage_minutes (tenant, minute);

-- The minutes summed per UTC hour and day (date_trunc(..., 'UTC')) and per
-- what a report groups by; the figures only grow from checked minutes, so
-- one constraint per table guards them.
CREATE TABLE usage_hours (
  hour                  timestamptz NOT NULL,
  tenant                text COLLATE "C" NOT NULL,
  vcluster              text COLLATE "C" NOT NULL,
  tier                  text COLLATE "C" NOT NULL
                        CONSTRAINT usage_hours_tier_known CHECK (tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  model                 text COLLATE "C" NOT NULL,
  mig_profile           text COLLATE "C" NOT NULL DEFAULT '',
  allocated_gpu_seconds double precision NOT NULL,
  measured_gpu_seconds  double precision NOT NULL,
  used_gpu_seconds      double precision NOT NULL,
  waste_gpu_seconds     double precision NOT NULL,
  cost                  double precision NOT NULL,
  reserved_memory_mib   double precision NOT NULL,  -- the largest of the hour's minutes
  used_memory_mib       double precision,           -- the largest; NULL when none was sampled
  samples               bigint NOT NULL,
  CONSTRAINT usage_hours_figures_nonnegative
    CHECK (allocated_gpu_seconds >= 0 AND measured_gpu_seconds >= 0 AND used_gpu_seconds >= 0
           AND waste_gpu_seconds >= 0 AND cost >= 0 AND reserved_memory_mib >= 0 AND used_memory_mib >= 0
           AND samples >= 0),
  CONSTRAINT usage_hours_pkey PRIMARY KEY (hour, tenant, vcluster, tier, model, mig_profile)
);
CREATE INDEX usage_hours_by_tenant ON usage_hours (tenant, hour);

CREATE TABLE usage_days (
  day                   timestamptz NOT NULL,
  tenant                text COLLATE "C" NOT NULL,
  vcluster              text COLLATE "C" NOT NULL,
  tier                  text COLLATE "C" NOT NULL
                        CONSTRAINT usage_days_tier_known CHECK (tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  model                 text COLLATE "C" NOT NULL,
  mig_profile           text COLLATE "C" NOT NULL DEFAULT '',
  allocated_gpu_seconds double precision NOT NULL,
  measured_gpu_seconds  double precision NOT NULL,
  used_gpu_seconds      double precision NOT NULL,
  waste_gpu_seconds     double precision NOT NULL,
  cost                  double precision NOT NULL,
  reserved_memory_mib   double precision NOT NULL,
  used_memory_mib       double precision,
  samples               bigint NOT NULL,
  CONSTRAINT usage_days_figures_nonnegative
    CHECK (allocated_gpu_seconds >= 0 AND measured_gpu_seconds >= 0 AND used_gpu_seconds >= 0
           AND waste_gpu_seconds >= 0 AND cost >= 0 AND reserved_memory_mib >= 0 AND used_memory_mib >= 0
           AND samples >= 0),
  CONSTRAINT usage_days_pkey PRIMARY KEY (day, tenant, vcluster, tier, model, mig_profile)
);
CREATE INDEX usage_days_by_tenant ON usage_days (tenant, day);

-- The platform's GPUs per minute: capacity, what reservations held of it
-- and what the device measured, held or not. The unreserved pool is
-- capacity - reserved. Hours and days are per model: the pool report asks
-- for no finer grain, and a node's GPUs come and go.
CREATE TABLE usage_pool_minutes (
  minute               timestamptz NOT NULL,
  node                 text COLLATE "C" NOT NULL,
  gpu_uuid             text COLLATE "C" NOT NULL,
  model                text COLLATE "C" NOT NULL,
  capacity_gpu_seconds double precision NOT NULL
                       CONSTRAINT usage_pool_minutes_capacity_gpu_seconds_nonnegative
                       CHECK (capacity_gpu_seconds >= 0 AND capacity_gpu_seconds < 'Infinity'),
  reserved_gpu_seconds double precision NOT NULL
                       CONSTRAINT usage_pool_minutes_reserved_gpu_seconds_nonnegative
                       CHECK (reserved_gpu_seconds >= 0 AND reserved_gpu_seconds < 'Infinity'),
  used_gpu_seconds     double precision NOT NULL
                       CONSTRAINT usage_pool_minutes_used_gpu_seconds_nonnegative
                       CHECK (used_gpu_seconds >= 0 AND used_gpu_seconds < 'Infinity'),
  CONSTRAINT usage_pool_minutes_pkey PRIMARY KEY (minute, node, gpu_uuid)
);

CREATE TABLE usage_pool_hours (
  hour                 timestamptz NOT NULL,
  model                text COLLATE "C" NOT NULL,
  capacity_gpu_seconds double precision NOT NULL,
  reserved_gpu_seconds double precision NOT NULL,
  used_gpu_seconds     double precision NOT NULL,
  CONSTRAINT usage_pool_hours_figures_nonnegative
    CHECK (capacity_gpu_seconds >= 0 AND reserved_gpu_seconds >= 0 AND used_gpu_seconds >= 0),
  CONSTRAINT usage_pool_hours_pkey PRIMARY KEY (hour, model)
);

CREATE TABLE usage_pool_days (
  day                  timestamptz NOT NULL,
  model                text COLLATE "C" NOT NULL,
  capacity_gpu_seconds double precision NOT NULL,
  reserved_gpu_seconds double precision NOT NULL,
  used_gpu_seconds     double precision NOT NULL,
  CONSTRAINT usage_pool_days_figures_nonnegative
    CHECK (capacity_gpu_seconds >= 0 AND reserved_gpu_seconds >= 0 AND used_gpu_seconds >= 0),
  CONSTRAINT usage_pool_days_pkey PRIMARY KEY (day, model)
);

-- Each entity's idle run (Run:ai's rule, tenancy/usage/idle_run.h), carried
-- from one scrape to the next: a scrape replaces all of its node's rows, so
-- an entity no longer held drops out with the next scrape of its node.
CREATE TABLE usage_idle (
  tenant                 text COLLATE "C" NOT NULL,
  vcluster               text COLLATE "C" NOT NULL,
  node                   text COLLATE "C" NOT NULL,
  gpu_uuid               text COLLATE "C" NOT NULL,
  gi_id                  integer NOT NULL DEFAULT -1 CONSTRAINT usage_idle_gi_id_range CHECK (gi_id >= -1),
  tier                   text COLLATE "C" NOT NULL
                         CONSTRAINT usage_idle_tier_known CHECK (tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  window_start           timestamptz NOT NULL,  -- the 30 s window being sampled
  window_activity_max    double precision NOT NULL
                         CONSTRAINT usage_idle_window_activity_max_nonnegative
                         CHECK (window_activity_max >= 0 AND window_activity_max < 'Infinity'),
  window_used_memory_mib double precision
                         CONSTRAINT usage_idle_window_used_memory_mib_nonnegative
                         CHECK (window_used_memory_mib >= 0 AND window_used_memory_mib < 'Infinity'),
  -- Completed idle windows in a row before window_start.
  idle_ms                bigint NOT NULL CONSTRAINT usage_idle_idle_ms_nonnegative CHECK (idle_ms >= 0),
  holding_memory         boolean NOT NULL,
  updated                timestamptz NOT NULL,
  CONSTRAINT usage_idle_pkey PRIMARY KEY (tenant, vcluster, node, gpu_uuid, gi_id)
);
-- A scrape replaces its node's rows.
CREATE INDEX usage_idle_by_node ON usage_idle (node);

-- Rates per GPU-hour of held capacity, each in force from valid_from until
-- the next row of the same key. A row is never changed or deleted: past
-- bills were priced at it (a new rate is a new row).
CREATE TABLE gpu_prices (
  model        text COLLATE "C" NOT NULL,
  tier         text COLLATE "C" NOT NULL
               CONSTRAINT gpu_prices_tier_known CHECK (tier IN ('shared', 'isolated', 'dedicated', 'exclusive')),
  mig_profile  text COLLATE "C" NOT NULL DEFAULT '',  -- '' for every profile
  per_gpu_hour double precision NOT NULL
               CONSTRAINT gpu_prices_per_gpu_hour_nonnegative CHECK (per_gpu_hour >= 0 AND per_gpu_hour < 'Infinity'),
  valid_from   timestamptz NOT NULL,
  CONSTRAINT gpu_prices_pkey PRIMARY KEY (model, tier, mig_profile, valid_from)
);
