// Tenant use cases, shared by REST and gRPC.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gpu/catalog.h"
#include "services/core/auth.h"
#include "services/core/idempotency.h"
#include "services/core/model.h"
#include "services/core/store.h"
#include "services/core/tenant_kind.h"
#include "tenancy/quota.h"

namespace septa::core {

struct ListTenantsParams {
  int page_size = 0;  // 0: default
  std::string page_token;
  std::string filter;
};

struct TenantPage {
  std::vector<Tenant> tenants;
  std::string next_page_token;  // empty on the last page
};

// A tenant as GetTenant shows it.
struct TenantView {
  Tenant tenant;
  // What its virtual clusters count against its quota; only for a tenant
  // that has one (reading it costs a query per virtual cluster).
  std::optional<tenancy::TenantUsage> quota_usage;
};

// A tenant's quota and what its virtual clusters count against it.
struct TenantQuotaView {
  std::string tenant;
  tenancy::TenantQuota quota;  // unset members: unlimited
  tenancy::TenantUsage usage;
};

class TenantService {
 public:
  // `catalog`: the GPU models that GPU-equivalents are counted on.
  // `authenticator` forgets a tenant's tokens once a change of its state or
  // tier, or its deletion, commits: at once in this process (other replicas
  // are told by the store's NOTIFY).
  TenantService(Store& store, const Clock& clock, Authenticator& authenticator, const gpu::Catalog& catalog,
                std::chrono::milliseconds idempotency_ttl = kDefaultIdempotencyTtl)
      : store_(store),
        clock_(clock),
        authenticator_(authenticator),
        catalog_(catalog),
        idempotency_ttl_(idempotency_ttl) {}

  // Admins only. With an idempotency key, a retry of the same request within
  // the key's time to live returns the tenant it created, and the key with
  // another request is refused; after that the key is free again.
  Result<Tenant> Create(const RequestContext& ctx, const Tenant& draft, std::string_view idempotency_key);
  Result<TenantView> Get(const RequestContext& ctx, const std::string& name);
  // Its quota and usage, read in one transaction, whether or not it has a quota.
  Result<TenantQuotaView> GetQuota(const RequestContext& ctx, const std::string& name);
  Result<TenantPage> List(const RequestContext& ctx, const ListTenantsParams& params);
  // `if_match`, when not empty, must equal the current etag. trust_tier,
  // state and quota: admins only. A quota below what the tenant holds is
  // allowed: nothing is taken away, later creates and resizes are refused.
  // SUSPENDED takes effect from the tenant's next request (TenantState).
  Result<Tenant> Update(const RequestContext& ctx, const std::string& name, const TenantUpdate& update,
                        std::string_view if_match);
  // Admins only; revokes the tenant's API tokens in the same transaction.
  Status Delete(const RequestContext& ctx, const std::string& name, std::string_view if_match);

 private:
  Store& store_;
  const Clock& clock_;
  Authenticator& authenticator_;
  const gpu::Catalog& catalog_;
  std::chrono::milliseconds idempotency_ttl_;
  TenantKind kind_;
};

}  // namespace septa::core
