// Use cases wired on the in-memory FakeStore with a fake clock and seeded
// randomness.
#pragma once

#include <gtest/gtest.h>

#include "services/core/tenant_service.h"
#include "services/core/tier_service.h"
#include "services/core/token_service.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_store.h"
#include "tests/support/seeded_random.h"

namespace septa::core {

class CoreTest : public ::testing::Test {
 protected:
  CoreTest()
      : authenticator(store, clock, std::chrono::seconds(5)),
        tenants(store, clock, authenticator, gpu::Catalog::Default()),
        tiers(store, clock, authenticator),
        tokens(store, clock, random, authenticator) {}

  static RequestContext Admin(Role role = Role::kOwner) {
    RequestContext ctx;
    ctx.principal.admin = true;
    ctx.principal.role = role;
    ctx.request_id = "req-admin";
    return ctx;
  }
  static RequestContext TenantCtx(const std::string& tenant, Role role = Role::kOwner) {
    RequestContext ctx;
    ctx.principal.tenant = tenant;
    ctx.principal.role = role;
    ctx.request_id = "req-" + tenant;
    return ctx;
  }
  static Tenant Draft(const std::string& name, const std::string& tier = "shared") {
    Tenant t;
    t.name = name;
    t.trust_tier = tier;
    return t;
  }
  Tenant MustCreate(const std::string& name, const std::string& tier = "shared",
                    std::map<std::string, std::string> labels = {}) {
    Tenant draft = Draft(name, tier);
    draft.labels = std::move(labels);
    auto created = tenants.Create(Admin(), draft, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : Tenant{};
  }
  std::vector<AuditRecord> Audit(const std::string& resource = "") {
    std::vector<AuditRecord> out;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                auto rows = tx.Audit().List(resource, 1000);
                                SEPTA_RETURN_IF_ERROR(rows);
                                out = *rows;
                                return Status::Ok();
                              })
                    .ok());
    return out;
  }

  FakeStore store;
  FakeClock clock;
  SeededRandom random{42};
  Authenticator authenticator;
  TenantService tenants;
  TrustTierService tiers;
  TokenService tokens;
};

}  // namespace septa::core
