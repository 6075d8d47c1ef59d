-- Leases: which septad replica acts on which shard of a controller's keys
-- (services/reconcile/shard_leases.h; store::PgLeaseStore). A lease is taken
-- and renewed by one compare-and-set statement each, so two replicas never
-- both hold one. Instants come from the replicas' injected clocks, as
-- integer microseconds through septa_ts(), never from now().
CREATE TABLE leases (
  name         text COLLATE "C" PRIMARY KEY
               CONSTRAINT leases_name_format CHECK (name <> '' AND length(name) <= 200),
  -- NULL once released: free for anyone at once.
  holder       text COLLATE "C"
               CONSTRAINT leases_holder_format CHECK (holder <> '' AND length(holder) <= 200),
  acquire_time timestamptz NOT NULL,  -- when the current holder took it
  expire_time  timestamptz NOT NULL,  -- free for others from this instant on
  generation   bigint NOT NULL DEFAULT 1
               CONSTRAINT leases_generation_positive CHECK (generation >= 1),  -- +1 per change of holder
  renewals     bigint NOT NULL DEFAULT 0
               CONSTRAINT leases_renewals_not_negative CHECK (renewals >= 0)  -- by the current holder
);
