-- Tenant quotas (tenancy/quota.h): what an admin lets one tenant hold over
-- all its virtual clusters. NULL is no limit (every existing tenant stays
-- unlimited); 0 allows none. GPUs count as GPU-equivalents in thousandths: a
-- whole GPU 1000, a MIG instance its compute slices over its GPU's, a shared
-- fraction its milli_gpu. The use cases check a create or resize against
-- these in the reserving SERIALIZABLE transaction
-- (services/core/tenant_quota_check.h); the upper bounds are checked there too.
ALTER TABLE tenants
  ADD COLUMN quota_gpu_milli  bigint
             CONSTRAINT tenants_quota_gpu_milli_nonnegative CHECK (quota_gpu_milli >= 0),
  ADD COLUMN quota_cpu_milli  bigint
             CONSTRAINT tenants_quota_cpu_milli_nonnegative CHECK (quota_cpu_milli >= 0),
  ADD COLUMN quota_memory_mib bigint
             CONSTRAINT tenants_quota_memory_mib_nonnegative CHECK (quota_memory_mib >= 0),
  ADD COLUMN quota_pods       bigint
             CONSTRAINT tenants_quota_pods_nonnegative CHECK (quota_pods >= 0),
  ADD COLUMN quota_vclusters  bigint
             CONSTRAINT tenants_quota_vclusters_nonnegative CHECK (quota_vclusters >= 0);
