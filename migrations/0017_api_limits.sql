-- Bounds on each virtual cluster's Kubernetes API as septad serves it
-- (tenancy/api_limits.h, docs/ARCHITECTURE.md "The virtual control plane"):
-- stored objects, their bytes (JSON text), open watches and requests in
-- flight. Each trust tier has defaults; an admin may override any of them
-- per virtual cluster (NULL: the tier's default). 0 allows none.
--
-- Defaults: septad holds every loaded virtual cluster in memory, at about
-- 4.3 times its objects' JSON (docs/BENCHMARKS.md), and every watch from
-- resourceVersion 0 buffers all the objects it watches, so the byte and
-- watch bounds are the memory one tenant may take; a working cluster with
-- its operators stays far below them. Numbers and reasons in ARCHITECTURE.
ALTER TABLE trust_tiers
  ADD COLUMN api_limits_objects            bigint NOT NULL DEFAULT 5000
             CONSTRAINT trust_tiers_api_limits_objects_nonnegative CHECK (api_limits_objects >= 0),
  ADD COLUMN api_limits_object_bytes       bigint NOT NULL DEFAULT 67108864
             CONSTRAINT trust_tiers_api_limits_object_bytes_nonnegative CHECK (api_limits_object_bytes >= 0),
  ADD COLUMN api_limits_watches            bigint NOT NULL DEFAULT 100
             CONSTRAINT trust_tiers_api_limits_watches_nonnegative CHECK (api_limits_watches >= 0),
  ADD COLUMN api_limits_requests_in_flight bigint NOT NULL DEFAULT 32
             CONSTRAINT trust_tiers_api_limits_requests_in_flight_nonnegative
             CHECK (api_limits_requests_in_flight >= 0);

-- shared keeps the column defaults: 5,000 objects, 64 MiB, 100 watches, 32 requests.
UPDATE trust_tiers SET api_limits_objects = 10000, api_limits_object_bytes = 134217728 WHERE name = 'isolated';
UPDATE trust_tiers SET api_limits_objects = 20000, api_limits_object_bytes = 268435456, api_limits_watches = 200,
                       api_limits_requests_in_flight = 64
 WHERE name IN ('dedicated', 'exclusive');

ALTER TABLE virtual_clusters
  ADD COLUMN api_limits_objects            bigint
             CONSTRAINT virtual_clusters_api_limits_objects_nonnegative CHECK (api_limits_objects >= 0),
  ADD COLUMN api_limits_object_bytes       bigint
             CONSTRAINT virtual_clusters_api_limits_object_bytes_nonnegative CHECK (api_limits_object_bytes >= 0),
  ADD COLUMN api_limits_watches            bigint
             CONSTRAINT virtual_clusters_api_limits_watches_nonnegative CHECK (api_limits_watches >= 0),
  ADD COLUMN api_limits_requests_in_flight bigint
             CONSTRAINT virtual_clusters_api_limits_requests_in_flight_nonnegative
             CHECK (api_limits_requests_in_flight >= 0);
