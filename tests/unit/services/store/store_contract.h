// The contract of core::Store / core::Tx (services/core/store.h), run against
// every implementation: store_contract_fake_test.cc (FakeStore) and
// store_contract_pg_test.cc (PgStore on the test run's PostgreSQL).
//
// An implementation plugs in with an environment type:
//   struct Env { Status SetUp(); core::Store& store(); };
// and INSTANTIATE_TYPED_TEST_SUITE_P(<name>, StoreContract, ::testing::Types<Env>).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "common/text.h"
#include "services/core/store.h"

namespace septa::core::contract {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Instants with sub-microsecond parts: stores keep microseconds.
inline TimePoint At(std::int64_t seconds, std::int64_t nanos = 0) {
  return TimePoint(std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos));
}
inline TimePoint AtMicros(std::int64_t seconds, std::int64_t nanos) {
  return TimePoint(std::chrono::seconds(seconds) + std::chrono::microseconds(nanos / 1000));
}

inline Tenant MakeTenant(std::string name, std::string tier = "shared") {
  Tenant t;
  t.name = std::move(name);
  t.display_name = "Tenant " + t.name;
  t.trust_tier = std::move(tier);
  t.create_time = At(1'800'000'000);
  t.update_time = t.create_time;
  t.version = 1;
  return t;
}

inline std::string Hex64(char c) { return std::string(64, c); }

inline ApiToken MakeToken(std::string id, std::string principal, char secret, TimePoint created) {
  ApiToken t;
  t.id = std::move(id);
  t.principal = std::move(principal);
  t.role = Role::kOwner;
  t.secret_hash = Hex64(secret);
  t.description = "ci";
  t.create_time = created;
  return t;
}

inline std::vector<std::string> Names(const std::vector<Tenant>& tenants) {
  std::vector<std::string> names;
  for (const auto& t : tenants) names.push_back(t.name);
  return names;
}

template <typename Env>
class StoreContract : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status ready = env_.SetUp();
    ASSERT_TRUE(ready.ok()) << ready.ToString();
  }
  Store& store() { return env_.store(); }

  Status Write(const std::function<Status(Tx&)>& body) { return store().Transact(TxMode::kReadWrite, body); }

  template <typename T>
  Result<T> Read(const std::function<Result<T>(Tx&)>& read) {
    std::optional<Result<T>> result;
    const Status st = store().Transact(TxMode::kReadOnly, [&](Tx& tx) {
      result = read(tx);
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return *result;
  }
  Result<Tenant> GetTenant(const std::string& name) {
    return Read<Tenant>([&](Tx& tx) { return tx.Tenants().Get(name); });
  }
  Status Insert(const Tenant& t) {
    return Write([&](Tx& tx) { return tx.Tenants().Insert(t); });
  }
  Result<std::vector<Tenant>> List(const TenantQuery& q) {
    return Read<std::vector<Tenant>>([&](Tx& tx) { return tx.Tenants().List(q); });
  }

  Env env_;
};

TYPED_TEST_SUITE_P(StoreContract);

TYPED_TEST_P(StoreContract, IsReady) { EXPECT_TRUE(this->store().Ready().ok()); }

TYPED_TEST_P(StoreContract, HoldsTheFourDefaultTrustTiers) {
  auto tiers = this->template Read<std::vector<TrustTier>>([](Tx& tx) { return tx.TrustTiers().List(); });
  ASSERT_TRUE(tiers.ok()) << tiers.status().ToString();
  std::vector<std::string> rows;
  for (const auto& t : *tiers) {
    rows.push_back(t.name + " " + std::to_string(static_cast<int>(t.gpu_sharing)) + " " + t.runtime_class + " " +
                   std::to_string(t.credential_ttl_max_seconds));
  }
  EXPECT_THAT(rows, ElementsAre("dedicated 2 kata-qemu-nvidia-gpu 3600", "exclusive 3 kata-qemu-nvidia-gpu 900",
                                "isolated 1 nvidia 28800", "shared 0 nvidia 86400"));
  // The API limits' defaults of migrations/0017_api_limits.sql, every member set.
  std::vector<tenancy::ApiLimits> limits;
  for (const auto& t : *tiers) limits.push_back(t.api_limits);
  EXPECT_THAT(limits,
              ElementsAre(tenancy::ApiLimits{20000, 256 << 20, 200, 64}, tenancy::ApiLimits{20000, 256 << 20, 200, 64},
                          tenancy::ApiLimits{10000, 128 << 20, 100, 32}, tenancy::ApiLimits{5000, 64 << 20, 100, 32}));
  auto isolated = this->template Read<TrustTier>([](Tx& tx) { return tx.TrustTiers().Get("isolated"); });
  ASSERT_TRUE(isolated.ok());
  EXPECT_EQ(isolated->gpu_sharing, gpu::Tier::kIsolated);
  EXPECT_EQ(isolated->display_name, "Isolated");
  EXPECT_FALSE(isolated->co_tenancy.empty());
  auto missing = this->template Read<TrustTier>([](Tx& tx) { return tx.TrustTiers().Get("gold"); });
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

inline TrustTier MakeTier(std::string name) {
  TrustTier t;
  t.name = std::move(name);
  t.display_name = "Gold";
  t.description = "whole GPUs, audited";
  t.gpu_sharing = gpu::Tier::kDedicated;
  t.co_tenancy = "other gold tenants on the same node";
  t.runtime_class = "kata-qemu-nvidia-gpu";
  t.credential_ttl_max_seconds = 7200;
  t.create_time = At(1'800'000'000, 123'456'789);
  t.update_time = At(1'800'000'100, 999);
  t.api_limits = {100, 1 << 20, 10, 4};
  t.version = 1;
  return t;
}

TYPED_TEST_P(StoreContract, TrustTiersRoundTripAndChangeOnlyAtTheExpectedVersion) {
  const TrustTier gold = MakeTier("gold");
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TrustTiers().Insert(gold); }).ok());
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TrustTiers().Insert(gold); }).code(), Code::kAlreadyExists);
  auto got = this->template Read<TrustTier>([](Tx& tx) { return tx.TrustTiers().Get("gold"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  TrustTier expected = gold;
  expected.create_time = AtMicros(1'800'000'000, 123'456'789);
  expected.update_time = AtMicros(1'800'000'100, 999);
  EXPECT_EQ(got->name, expected.name);
  EXPECT_EQ(got->display_name, expected.display_name);
  EXPECT_EQ(got->description, expected.description);
  EXPECT_EQ(got->gpu_sharing, expected.gpu_sharing);
  EXPECT_EQ(got->co_tenancy, expected.co_tenancy);
  EXPECT_EQ(got->runtime_class, expected.runtime_class);
  EXPECT_EQ(got->credential_ttl_max_seconds, expected.credential_ttl_max_seconds);
  EXPECT_EQ(got->create_time, expected.create_time);
  EXPECT_EQ(got->update_time, expected.update_time);
  EXPECT_EQ(got->api_limits, expected.api_limits);
  EXPECT_EQ(got->version, 1);

  TrustTier next = *got;
  next.gpu_sharing = gpu::Tier::kIsolated;
  next.credential_ttl_max_seconds = 600;
  next.create_time = At(1);  // immutable: ignored
  next.version = 2;
  const Status stale = this->Write([&](Tx& tx) { return tx.TrustTiers().Update(next, 5); });
  EXPECT_EQ(stale.code(), Code::kAborted) << stale.ToString();
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TrustTiers().Update(next, 1); }).ok());
  got = this->template Read<TrustTier>([](Tx& tx) { return tx.TrustTiers().Get("gold"); });
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->gpu_sharing, gpu::Tier::kIsolated);
  EXPECT_EQ(got->credential_ttl_max_seconds, 600);
  EXPECT_EQ(got->create_time, expected.create_time);
  EXPECT_EQ(got->version, 2);

  // In use by a tenant: not deleted; then at the expected version only.
  ASSERT_TRUE(this->Insert(MakeTenant("acme", "gold")).ok());
  const Status in_use = this->Write([](Tx& tx) { return tx.TrustTiers().Delete("gold", 2); });
  EXPECT_EQ(in_use.code(), Code::kFailedPrecondition) << in_use.ToString();
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tenants().Delete("acme", 1); }).ok());
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.TrustTiers().Delete("gold", 1); }).code(), Code::kAborted);
  EXPECT_TRUE(this->Write([](Tx& tx) { return tx.TrustTiers().Delete("gold", 2); }).ok());
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.TrustTiers().Delete("gold", 2); }).code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContract, ABadTrustTierRowIsRefusedNamingTheField) {
  TrustTier bad = MakeTier("Not A Label");
  Status st = this->Write([&](Tx& tx) { return tx.TrustTiers().Insert(bad); });
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  ASSERT_FALSE(st.violations().empty()) << st.ToString();
  EXPECT_EQ(st.violations()[0].field, "name");
  bad = MakeTier("gold");
  bad.credential_ttl_max_seconds = 0;
  st = this->Write([&](Tx& tx) { return tx.TrustTiers().Insert(bad); });
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  ASSERT_FALSE(st.violations().empty()) << st.ToString();
  EXPECT_EQ(st.violations()[0].field, "credential_ttl_max");
}

TYPED_TEST_P(StoreContract, TenantRoundTripsAtMicrosecondPrecision) {
  Tenant t = MakeTenant("acme", "isolated");
  t.labels = {{"team", "ml"}, {"cost-center", "42"}};
  t.state = TenantState::kSuspended;
  t.create_time = At(1'800'000'000, 123'456'789);
  t.update_time = At(1'800'000'100, 999);
  t.version = 7;
  ASSERT_TRUE(this->Insert(t).ok());
  auto got = this->GetTenant("acme");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "acme");
  EXPECT_EQ(got->display_name, "Tenant acme");
  EXPECT_EQ(got->trust_tier, "isolated");
  EXPECT_EQ(got->labels, t.labels);
  EXPECT_EQ(got->state, TenantState::kSuspended);
  EXPECT_EQ(got->create_time, AtMicros(1'800'000'000, 123'456'789));
  EXPECT_EQ(got->update_time, AtMicros(1'800'000'100, 999));
  EXPECT_EQ(got->version, 7);
}

TYPED_TEST_P(StoreContract, MissingTenantIsNotFound) {
  EXPECT_EQ(this->GetTenant("nobody").status().code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContract, DuplicateTenantIsAlreadyExists) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  EXPECT_EQ(this->Insert(MakeTenant("acme", "dedicated")).code(), Code::kAlreadyExists);
  EXPECT_EQ(this->GetTenant("acme")->trust_tier, "shared");
}

TYPED_TEST_P(StoreContract, UnknownTrustTierIsAnInvalidField) {
  const Status st = this->Insert(MakeTenant("acme", "gold"));
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_THAT(st.violations(), ElementsAre(FieldViolation{"trust_tier", "no such trust tier"}));
}

TYPED_TEST_P(StoreContract, TenantNamesMustBeShortDnsLabels) {
  for (const std::string& bad :
       std::vector<std::string>{"", "Acme", "-acme", "acme-", "ac_me", "ac.me", std::string(41, 'a')}) {
    const Status st = this->Insert(MakeTenant(bad));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << "\"" << bad << "\"";
    ASSERT_EQ(st.violations().size(), 1u) << "\"" << bad << "\"";
    EXPECT_EQ(st.violations()[0].field, "name");
  }
  for (const std::string& good : std::vector<std::string>{"a", "7", "a-1", "team-ml-prod", std::string(40, 'z')}) {
    EXPECT_TRUE(this->Insert(MakeTenant(good)).ok()) << good;
  }
}

TYPED_TEST_P(StoreContract, AFailedWriteLeavesTheTransactionUsable) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  const Status st = this->Write([](Tx& tx) {
    EXPECT_EQ(tx.Tenants().Insert(MakeTenant("acme")).code(), Code::kAlreadyExists);
    EXPECT_EQ(tx.Tenants().Insert(MakeTenant("other", "gold")).code(), Code::kInvalidArgument);
    return tx.Tenants().Insert(MakeTenant("globex"));
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(this->GetTenant("globex").ok());
  EXPECT_EQ(this->GetTenant("other").status().code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContract, AFailedBodyChangesNothing) {
  const Status st = this->Write([](Tx& tx) {
    SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(MakeTenant("acme")));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append({0, At(1), "admin", "tenant.create", "tenants/acme", "", "1", "r1"}));
    EXPECT_TRUE(tx.Tenants().Get("acme").ok());  // visible inside the transaction
    return FailedPrecondition("changed my mind");
  });
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_EQ(st.message(), "changed my mind");
  EXPECT_EQ(this->GetTenant("acme").status().code(), Code::kNotFound);
  auto audit = this->template Read<std::vector<AuditRecord>>([](Tx& tx) { return tx.Audit().List("", 10); });
  ASSERT_TRUE(audit.ok());
  EXPECT_THAT(*audit, IsEmpty());
}

// validate_only's transaction: the body writes and reads its writes, its
// status is the answer, and nothing is kept.
TYPED_TEST_P(StoreContract, ADryRunSucceedsAndKeepsNothing) {
  bool saw_own_write = false;
  const Status st = this->store().Transact(TxMode::kDryRun, [&](Tx& tx) {
    SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(MakeTenant("acme")));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append({0, At(1), "admin", "tenant.create", "tenants/acme", "", "1", "r1"}));
    saw_own_write = tx.Tenants().Get("acme").ok();
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(saw_own_write);
  EXPECT_EQ(this->GetTenant("acme").status().code(), Code::kNotFound);
  auto audit = this->template Read<std::vector<AuditRecord>>([](Tx& tx) { return tx.Audit().List("", 10); });
  ASSERT_TRUE(audit.ok());
  EXPECT_THAT(*audit, IsEmpty());
  // A refusal is the body's, as in a real write.
  const Status refused = this->store().Transact(TxMode::kDryRun, [](Tx& tx) {
    SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(MakeTenant("acme")));
    return tx.Tenants().Insert(MakeTenant("acme"));
  });
  EXPECT_EQ(refused.code(), Code::kAlreadyExists) << refused.ToString();
}

TYPED_TEST_P(StoreContract, ReadOnlyTransactionsRefuseWrites) {
  const Status st = this->store().Transact(TxMode::kReadOnly, [](Tx& tx) {
    EXPECT_EQ(tx.Tenants().Insert(MakeTenant("acme")).code(), Code::kFailedPrecondition);
    EXPECT_EQ(tx.Audit().Append({0, At(1), "admin", "x", "y", "", "", ""}).code(), Code::kFailedPrecondition);
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(this->GetTenant("acme").status().code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContract, UpdateTenantRequiresTheExpectedVersion) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  Tenant next = MakeTenant("acme", "dedicated");
  next.labels = {{"team", "infra"}};
  next.display_name = "ACME";
  next.create_time = At(1);  // ignored: the creation time is immutable
  next.update_time = At(1'800'000'500);
  next.version = 2;
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tenants().Update(next, 5); }).code(), Code::kAborted);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.Tenants().Update(next, 1); }).ok());
  auto got = this->GetTenant("acme");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->trust_tier, "dedicated");
  EXPECT_EQ(got->display_name, "ACME");
  EXPECT_EQ(got->labels, next.labels);
  EXPECT_EQ(got->create_time, At(1'800'000'000));
  EXPECT_EQ(got->update_time, At(1'800'000'500));
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tenants().Update(next, 1); }).code(), Code::kAborted);

  Tenant bad_tier = next;
  bad_tier.trust_tier = "gold";
  bad_tier.version = 3;
  const Status st = this->Write([&](Tx& tx) { return tx.Tenants().Update(bad_tier, 2); });
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_THAT(st.violations(), ElementsAre(FieldViolation{"trust_tier", "no such trust tier"}));
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tenants().Update(MakeTenant("nobody"), 1); }).code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContract, DeleteTenantRequiresTheExpectedVersion) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.Tenants().Delete("acme", 2); }).code(), Code::kAborted);
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.Tenants().Delete("nobody", 1); }).code(), Code::kNotFound);
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tenants().Delete("acme", 1); }).ok());
  EXPECT_EQ(this->GetTenant("acme").status().code(), Code::kNotFound);
}

TYPED_TEST_P(StoreContract, TenantQuotaIsUnlimitedUntilSetAndRoundTrips) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  auto fresh = this->GetTenant("acme");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->quota, tenancy::TenantQuota{});  // every field absent: no limit

  Tenant limited = MakeTenant("globex");
  limited.quota = {4000, std::nullopt, 0, 150'000, 1};  // 0 allows none: absent and 0 are kept apart
  ASSERT_TRUE(this->Insert(limited).ok());
  EXPECT_EQ(this->GetTenant("globex")->quota, limited.quota);
  TenantQuery all;
  auto listed = this->List(all);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1].quota, limited.quota);

  Tenant lowered = *fresh;
  lowered.quota.gpu_milli = 1'000'000'000;
  lowered.quota.vclusters = 0;
  lowered.version = 2;
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.Tenants().Update(lowered, 1); }).ok());
  EXPECT_EQ(this->GetTenant("acme")->quota, lowered.quota);
  Tenant unlimited = lowered;
  unlimited.quota = {};
  unlimited.version = 3;
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.Tenants().Update(unlimited, 2); }).ok());
  EXPECT_EQ(this->GetTenant("acme")->quota, tenancy::TenantQuota{});
}

TYPED_TEST_P(StoreContract, NegativeTenantQuotasAreRefusedNamingTheField) {
  const std::pair<const char*, std::optional<std::int64_t> tenancy::TenantQuota::*> fields[] = {
      {"quota.gpu_milli", &tenancy::TenantQuota::gpu_milli},   {"quota.cpu_milli", &tenancy::TenantQuota::cpu_milli},
      {"quota.memory_mib", &tenancy::TenantQuota::memory_mib}, {"quota.pods", &tenancy::TenantQuota::pods},
      {"quota.vclusters", &tenancy::TenantQuota::vclusters},
  };
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  for (const auto& [field, member] : fields) {
    Tenant bad = MakeTenant("globex");
    bad.quota.*member = -1;
    const Status inserted = this->Insert(bad);
    EXPECT_EQ(inserted.code(), Code::kInvalidArgument) << field;
    EXPECT_THAT(inserted.violations(), ElementsAre(FieldViolation{field, "must not be negative"}));
    Tenant update = MakeTenant("acme");
    update.quota.*member = -1;
    update.version = 2;
    const Status updated = this->Write([&](Tx& tx) { return tx.Tenants().Update(update, 1); });
    EXPECT_THAT(updated.violations(), ElementsAre(FieldViolation{field, "must not be negative"}));
  }
  EXPECT_EQ(this->GetTenant("globex").status().code(), Code::kNotFound);
  EXPECT_EQ(this->GetTenant("acme")->version, 1);
}

TYPED_TEST_P(StoreContract, ListTenantsFiltersAndPaginatesByName) {
  for (const char* name : {"delta", "alpha", "charlie", "bravo", "echo"}) {
    Tenant t = MakeTenant(name, std::string(name) < "c" ? "isolated" : "shared");
    t.labels = {{"team", std::string(name) == "echo" ? "infra" : "ml"}, {"env", "prod"}};
    ASSERT_TRUE(this->Insert(t).ok());
  }
  TenantQuery page;
  page.limit = 2;
  auto first = this->List(page);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_THAT(Names(*first), ElementsAre("alpha", "bravo"));
  page.after_name = "bravo";
  EXPECT_THAT(Names(*this->List(page)), ElementsAre("charlie", "delta"));
  page.after_name = "delta";
  EXPECT_THAT(Names(*this->List(page)), ElementsAre("echo"));

  TenantQuery by_tier;
  by_tier.trust_tier = "isolated";
  EXPECT_THAT(Names(*this->List(by_tier)), ElementsAre("alpha", "bravo"));
  TenantQuery by_labels;
  by_labels.labels = {{"team", "ml"}, {"env", "prod"}};
  EXPECT_THAT(Names(*this->List(by_labels)), ElementsAre("alpha", "bravo", "charlie", "delta"));
  by_labels.labels = {{"team", "infra"}};
  EXPECT_THAT(Names(*this->List(by_labels)), ElementsAre("echo"));
  by_labels.labels = {{"team", "infra"}, {"env", "dev"}};
  EXPECT_THAT(Names(*this->List(by_labels)), IsEmpty());

  TenantQuery no_rows;
  no_rows.limit = 0;
  EXPECT_EQ(this->List(no_rows).status().code(), Code::kInvalidArgument);
}

TYPED_TEST_P(StoreContract, TokensRoundTripAndStayUnique) {
  ApiToken token = MakeToken("0123456789abcdef", "tenant:acme", 'a', At(1'800'000'000, 1'500));
  token.role = Role::kViewer;
  token.expire_time = At(1'800'003'600);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.Tokens().Insert(token); }).ok());
  auto got = this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("0123456789abcdef"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->principal, "tenant:acme");
  EXPECT_EQ(got->role, Role::kViewer);
  EXPECT_EQ(got->secret_hash, Hex64('a'));
  EXPECT_EQ(got->description, "ci");
  EXPECT_EQ(got->create_time, AtMicros(1'800'000'000, 1'500));
  EXPECT_EQ(got->expire_time, At(1'800'003'600));
  EXPECT_EQ(got->revoke_time, std::nullopt);

  ApiToken same_id = MakeToken("0123456789abcdef", "admin", 'b', At(1));
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tokens().Insert(same_id); }).code(), Code::kAlreadyExists);
  ApiToken same_secret = MakeToken("fedcba9876543210", "admin", 'a', At(1));
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tokens().Insert(same_secret); }).code(), Code::kAlreadyExists);
  EXPECT_EQ(this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("99999999"); }).status().code(),
            Code::kNotFound);
}

TYPED_TEST_P(StoreContract, TokensStoreOnlyAWellFormedHash) {
  ApiToken token = MakeToken("0123456789abcdef", "admin", 'a', At(1));
  token.secret_hash = "the-secret-itself";
  const Status st = this->Write([&](Tx& tx) { return tx.Tokens().Insert(token); });
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  ASSERT_EQ(st.violations().size(), 1u);
  EXPECT_EQ(st.violations()[0].field, "secret_hash");

  ApiToken bad_principal = MakeToken("0123456789abcdef", "bob", 'a', At(1));
  const Status principal = this->Write([&](Tx& tx) { return tx.Tokens().Insert(bad_principal); });
  EXPECT_EQ(principal.code(), Code::kInvalidArgument);
  ASSERT_EQ(principal.violations().size(), 1u);
  EXPECT_EQ(principal.violations()[0].field, "principal");
}

TYPED_TEST_P(StoreContract, TokensListInCreationOrderAndRevoke) {
  const Status inserted = this->Write([](Tx& tx) {
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(MakeToken("cccccccc", "tenant:acme", 'c', At(300))));
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(MakeToken("bbbbbbbb", "tenant:acme", 'b', At(100))));
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(MakeToken("aaaaaaaa", "tenant:acme", 'a', At(300))));
    return tx.Tokens().Insert(MakeToken("dddddddd", "admin", 'd', At(200)));
  });
  ASSERT_TRUE(inserted.ok()) << inserted.ToString();
  auto ids = [&](const std::string& principal) {
    std::vector<std::string> out;
    auto tokens = this->template Read<std::vector<ApiToken>>([&](Tx& tx) { return tx.Tokens().List(principal); });
    EXPECT_TRUE(tokens.ok());
    if (tokens.ok()) {
      for (const auto& t : *tokens) out.push_back(t.id + (t.revoke_time ? "-" : "+"));
    }
    return out;
  };
  EXPECT_THAT(ids("tenant:acme"), ElementsAre("bbbbbbbb+", "aaaaaaaa+", "cccccccc+"));
  EXPECT_THAT(ids(""), ElementsAre("bbbbbbbb+", "dddddddd+", "aaaaaaaa+", "cccccccc+"));

  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().Revoke("aaaaaaaa", At(400)); }).ok());
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().Revoke("aaaaaaaa", At(500)); }).ok());
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.Tokens().Revoke("99999999", At(500)); }).code(), Code::kNotFound);
  auto revoked = this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("aaaaaaaa"); });
  EXPECT_EQ(revoked->revoke_time, At(400));  // the first revocation stands

  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().RevokeAllOf("tenant:acme", At(600)); }).ok());
  EXPECT_THAT(ids(""), ElementsAre("bbbbbbbb-", "dddddddd+", "aaaaaaaa-", "cccccccc-"));
  EXPECT_EQ(this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("aaaaaaaa"); })->revoke_time, At(400));
  EXPECT_EQ(this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("bbbbbbbb"); })->revoke_time, At(600));
  EXPECT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().RevokeAllOf("tenant:nobody", At(600)); }).ok());
}

// Sessions and sign-in codes are rows of their own kind, each made from an
// API token (migrations/0019); List gives one kind at a time.
TYPED_TEST_P(StoreContract, SessionsAreTokenRowsMadeFromAnApiToken) {
  ApiToken api = MakeToken("aaaaaaaa", "tenant:acme", 'a', At(100));
  ApiToken session = MakeToken("bbbbbbbb", "tenant:acme", 'b', At(200));
  session.kind = TokenKind::kSession;
  session.parent_id = "aaaaaaaa";
  ApiToken code = MakeToken("cccccccc", "tenant:acme", 'c', At(300));
  code.kind = TokenKind::kSignIn;
  code.parent_id = "aaaaaaaa";
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(api));
                    SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(session));
                    return tx.Tokens().Insert(code);
                  })
                  .ok());
  auto got = this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("bbbbbbbb"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->kind, TokenKind::kSession);
  EXPECT_EQ(got->parent_id, "aaaaaaaa");
  EXPECT_EQ(this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("aaaaaaaa"); })->parent_id, "");
  auto ids = [&](TokenKind kind) {
    std::vector<std::string> out;
    auto rows = this->template Read<std::vector<ApiToken>>([&](Tx& tx) { return tx.Tokens().List("", kind); });
    EXPECT_TRUE(rows.ok());
    if (rows.ok()) {
      for (const auto& t : *rows) out.push_back(t.id);
    }
    return out;
  };
  EXPECT_THAT(ids(TokenKind::kApi), ElementsAre("aaaaaaaa"));
  EXPECT_THAT(ids(TokenKind::kSession), ElementsAre("bbbbbbbb"));
  EXPECT_THAT(ids(TokenKind::kSignIn), ElementsAre("cccccccc"));

  ApiToken orphan = MakeToken("dddddddd", "tenant:acme", 'd', At(400));
  orphan.kind = TokenKind::kSession;
  const Status no_parent = this->Write([&](Tx& tx) { return tx.Tokens().Insert(orphan); });
  EXPECT_EQ(no_parent.code(), Code::kInvalidArgument) << no_parent.ToString();
  orphan.parent_id = "99999999";
  const Status unknown_parent = this->Write([&](Tx& tx) { return tx.Tokens().Insert(orphan); });
  EXPECT_EQ(unknown_parent.code(), Code::kInvalidArgument) << unknown_parent.ToString();
  ASSERT_FALSE(unknown_parent.violations().empty());
  EXPECT_EQ(unknown_parent.violations()[0].field, "parent_id");
  ApiToken api_with_parent = MakeToken("eeeeeeee", "tenant:acme", 'e', At(400));
  api_with_parent.parent_id = "aaaaaaaa";
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tokens().Insert(api_with_parent); }).code(), Code::kInvalidArgument);
}

TYPED_TEST_P(StoreContract, TokenLifetimesAreCappedFromTheirCreation) {
  const Status inserted = this->Write([](Tx& tx) {
    ApiToken forever = MakeToken("aaaaaaaa", "tenant:acme", 'a', At(100));
    ApiToken long_lived = MakeToken("bbbbbbbb", "tenant:acme", 'b', At(200));
    long_lived.expire_time = At(200 + 86'400);
    ApiToken short_lived = MakeToken("cccccccc", "tenant:acme", 'c', At(300));
    short_lived.expire_time = At(300 + 60);
    ApiToken revoked = MakeToken("dddddddd", "tenant:acme", 'd', At(400));
    revoked.revoke_time = At(450);
    ApiToken other = MakeToken("eeeeeeee", "tenant:other", 'e', At(500));
    for (const ApiToken* t : {&forever, &long_lived, &short_lived, &revoked, &other}) {
      SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(*t));
    }
    return Status::Ok();
  });
  ASSERT_TRUE(inserted.ok()) << inserted.ToString();
  ASSERT_TRUE(
      this->Write([](Tx& tx) { return tx.Tokens().CapLifetimes("tenant:acme", std::chrono::seconds(900)); }).ok());
  auto expiry = [&](const std::string& id) {
    return this->template Read<ApiToken>([&](Tx& tx) { return tx.Tokens().Get(id); })->expire_time;
  };
  EXPECT_EQ(expiry("aaaaaaaa"), At(100 + 900));
  EXPECT_EQ(expiry("bbbbbbbb"), At(200 + 900));
  EXPECT_EQ(expiry("cccccccc"), At(300 + 60)) << "already shorter than the cap";
  EXPECT_EQ(expiry("dddddddd"), std::nullopt) << "revoked tokens are left as they are";
  EXPECT_EQ(expiry("eeeeeeee"), std::nullopt) << "another principal's";
}

// Live tokens are counted where they are stored; the dead (revoked or
// expired) are deleted once dead long enough, with the sessions made from
// them, and a batch at a time.
TYPED_TEST_P(StoreContract, LiveTokensAreCountedAndTheLongDeadDeleted) {
  const Status inserted = this->Write([](Tx& tx) {
    ApiToken forever = MakeToken("aaaaaaaa", "tenant:acme", 'a', At(100));
    ApiToken expired_long_ago = MakeToken("bbbbbbbb", "tenant:acme", 'b', At(100));
    expired_long_ago.expire_time = At(200);
    ApiToken revoked_long_ago = MakeToken("cccccccc", "tenant:acme", 'c', At(100));
    revoked_long_ago.revoke_time = At(300);
    revoked_long_ago.expire_time = At(5'000);
    ApiToken expired_lately = MakeToken("dddddddd", "tenant:acme", 'd', At(100));
    expired_lately.expire_time = At(1'500);
    ApiToken live = MakeToken("eeeeeeee", "tenant:acme", 'e', At(100));
    live.expire_time = At(5'000);
    ApiToken other = MakeToken("ffffffff", "tenant:other", 'f', At(100));
    other.apply_sets = {"prod", "staging"};
    ApiToken session_of_dead = MakeToken("aaaa0001", "tenant:acme", '1', At(150));
    session_of_dead.kind = TokenKind::kSession;
    session_of_dead.parent_id = "cccccccc";
    session_of_dead.expire_time = At(5'000);  // alive by itself, dead by its parent
    ApiToken dead_session_of_live = MakeToken("aaaa0002", "tenant:acme", '2', At(150));
    dead_session_of_live.kind = TokenKind::kSession;
    dead_session_of_live.parent_id = "eeeeeeee";
    dead_session_of_live.expire_time = At(400);
    ApiToken live_session = MakeToken("aaaa0003", "tenant:acme", '3', At(150));
    live_session.kind = TokenKind::kSession;
    live_session.parent_id = "eeeeeeee";
    live_session.expire_time = At(5'000);
    for (const ApiToken* t : {&forever, &expired_long_ago, &revoked_long_ago, &expired_lately, &live, &other,
                              &session_of_dead, &dead_session_of_live, &live_session}) {
      SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(*t));
    }
    return Status::Ok();
  });
  ASSERT_TRUE(inserted.ok()) << inserted.ToString();
  auto live = [&](const std::string& principal, TimePoint now) {
    return *this->template Read<int>([&](Tx& tx) { return tx.Tokens().CountLive(principal, now); });
  };
  EXPECT_EQ(live("tenant:acme", At(1'000)), 3) << "forever, expired lately (not yet), live; sessions not counted";
  EXPECT_EQ(live("tenant:acme", At(2'000)), 2);
  EXPECT_EQ(live("tenant:other", At(2'000)), 1);
  EXPECT_EQ(live("tenant:nobody", At(2'000)), 0);
  auto scoped = this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("ffffffff"); });
  ASSERT_TRUE(scoped.ok());
  EXPECT_EQ(scoped->apply_sets, (std::vector<std::string>{"prod", "staging"})) << "a token's scope round-trips";
  EXPECT_TRUE(this->template Read<ApiToken>([](Tx& tx) { return tx.Tokens().Get("aaaaaaaa"); })->apply_sets.empty());

  auto ids = [&] {
    std::vector<std::string> out;
    for (TokenKind kind : {TokenKind::kApi, TokenKind::kSession}) {
      auto rows = this->template Read<std::vector<ApiToken>>([&](Tx& tx) { return tx.Tokens().List("", kind); });
      for (const ApiToken& t : *rows) out.push_back(t.id);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Tokens().DeleteDead(At(1'000), 1).status(); }).code(), Code::kOk);
  EXPECT_EQ(ids(), (std::vector<std::string>{"aaaa0003", "aaaaaaaa", "cccccccc", "dddddddd", "eeeeeeee", "ffffffff"}))
      << "one dead API token a batch (the first by id), every dead session and those of the dead";
  int deleted = 0;
  ASSERT_TRUE(this->Write([&](Tx& tx) -> Status {
                    SEPTA_ASSIGN_OR_RETURN(deleted, tx.Tokens().DeleteDead(At(1'000), 100));
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(ids(), (std::vector<std::string>{"aaaa0003", "aaaaaaaa", "dddddddd", "eeeeeeee", "ffffffff"}))
      << "a token dead lately, the never-expiring and the live stay";
}

TYPED_TEST_P(StoreContract, AuditIsNewestFirstWithAssignedIds) {
  const Status appended = this->Write([](Tx& tx) {
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append({0, At(10), "admin", "tenant.create", "tenants/a", "", "1", "r1"}));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append({0, At(20), "admin", "tenant.create", "tenants/b", "", "1", "r2"}));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append({0, At(20), "admin", "tenant.update", "tenants/a", "1", "2", "r3"}));
    return tx.Audit().Append({0, At(30, 700), "tenant:a", "token.revoke", "tokens/ab", "1", "", "r4", "portal",
                              "vcluster.update changed capacity; reason: incident 7"});
  });
  ASSERT_TRUE(appended.ok()) << appended.ToString();
  auto all = this->template Read<std::vector<AuditRecord>>([](Tx& tx) { return tx.Audit().List("", 3); });
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].request_id, "r4");
  EXPECT_EQ((*all)[1].request_id, "r3");  // same time as r2, appended later
  EXPECT_EQ((*all)[2].request_id, "r2");
  EXPECT_GT((*all)[0].id, (*all)[1].id);
  EXPECT_GT((*all)[1].id, (*all)[2].id);
  EXPECT_EQ((*all)[0].principal, "tenant:a");
  EXPECT_EQ((*all)[0].action, "token.revoke");
  EXPECT_EQ((*all)[0].resource, "tokens/ab");
  EXPECT_EQ((*all)[0].old_etag, "1");
  EXPECT_EQ((*all)[0].new_etag, "");
  EXPECT_EQ((*all)[0].time, At(30));
  EXPECT_EQ((*all)[0].surface, "portal");
  EXPECT_EQ((*all)[0].detail, "vcluster.update changed capacity; reason: incident 7");
  EXPECT_EQ((*all)[1].surface, "");

  auto of_a = this->template Read<std::vector<AuditRecord>>([](Tx& tx) { return tx.Audit().List("tenants/a", 10); });
  ASSERT_TRUE(of_a.ok());
  ASSERT_EQ(of_a->size(), 2u);
  EXPECT_EQ((*of_a)[0].request_id, "r3");
  EXPECT_EQ((*of_a)[1].request_id, "r1");
  EXPECT_EQ(
      this->template Read<std::vector<AuditRecord>>([](Tx& tx) { return tx.Audit().List("", 0); }).status().code(),
      Code::kInvalidArgument);
}

TYPED_TEST_P(StoreContract, IdempotencyKeysAreUniquePerPrincipal) {
  EXPECT_EQ(this->template Read<IdempotencyRecord>([](Tx& tx) { return tx.Idempotency().Get("admin", "k1"); })
                .status()
                .code(),
            Code::kNotFound);
  const IdempotencyRecord record{"admin", "k1", Hex64('e'), "tenants/acme", At(5, 1'999)};
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.Idempotency().Insert(record); }).ok());
  auto got = this->template Read<IdempotencyRecord>([](Tx& tx) { return tx.Idempotency().Get("admin", "k1"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->request_hash, Hex64('e'));
  EXPECT_EQ(got->resource, "tenants/acme");
  EXPECT_EQ(got->create_time, AtMicros(5, 1'999));
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.Idempotency().Insert(record); }).code(), Code::kAlreadyExists);
  IdempotencyRecord other_principal = record;
  other_principal.principal = "tenant:acme";
  EXPECT_TRUE(this->Write([&](Tx& tx) { return tx.Idempotency().Insert(other_principal); }).ok());
}

TYPED_TEST_P(StoreContract, IdempotencyKeysAreDeletedOneByOneOrOldestFirst) {
  for (int i = 0; i < 5; ++i) {
    const IdempotencyRecord r{"admin", "k" + std::to_string(i), Hex64('e'), "tenants/t" + std::to_string(i),
                              At(10 + 4 - i)};  // k4 is the oldest, k0 the newest
    ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.Idempotency().Insert(r); }).ok());
  }
  auto exists = [&](const std::string& key) {
    return this->template Read<IdempotencyRecord>([&](Tx& tx) { return tx.Idempotency().Get("admin", key); }).ok();
  };
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Idempotency().Delete("admin", "k2"); }).ok());
  EXPECT_FALSE(exists("k2"));
  EXPECT_TRUE(this->Write([](Tx& tx) { return tx.Idempotency().Delete("admin", "k2"); }).ok()) << "already gone";
  EXPECT_TRUE(this->Write([](Tx& tx) { return tx.Idempotency().Delete("tenant:x", "k1"); }).ok());
  EXPECT_TRUE(exists("k1")) << "another principal's key of the same name";

  auto delete_before = [&](TimePoint cutoff, int limit) {
    int deleted = -1;
    EXPECT_TRUE(this->Write([&](Tx& tx) -> Status {
                      auto n = tx.Idempotency().DeleteBefore(cutoff, limit);
                      SEPTA_RETURN_IF_ERROR(n);
                      deleted = *n;
                      return Status::Ok();
                    })
                    .ok());
    return deleted;
  };
  // Before At(13): k4 (At(10)) and k3 (At(11)); k1 (At(13)) is not strictly before.
  EXPECT_EQ(delete_before(At(13), 1), 1);
  EXPECT_FALSE(exists("k4")) << "the oldest goes first";
  EXPECT_TRUE(exists("k3"));
  EXPECT_EQ(delete_before(At(13), 100), 1);
  EXPECT_FALSE(exists("k3"));
  EXPECT_TRUE(exists("k1"));
  EXPECT_TRUE(exists("k0"));
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.Idempotency().DeleteBefore(At(99), 0).status(); }).code(),
            Code::kInvalidArgument);
}

// Caches of every replica learn of committed revocations (PgStore: NOTIFY).
TYPED_TEST_P(StoreContract, CommittedRevocationsAreToldToTheWatcher) {
  for (const char* id : {"0000000000000000", "1111111111111111", "2222222222222222"}) {
    ASSERT_TRUE(
        this->Write([&](Tx& tx) { return tx.Tokens().Insert(MakeToken(id, "tenant:acme", id[0], At(1))); }).ok());
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> told;
  this->store().WatchRevocations([&](const Revocation& r) {
    if (r.token_id.empty() && r.principal.empty()) return;  // "start over": allowed at any time
    std::lock_guard lock(mu);
    told.push_back(r.token_id.empty() ? "principal " + r.principal : "token " + r.token_id);
    cv.notify_all();
  });
  EXPECT_EQ(this->Write([](Tx& tx) -> Status {
                  SEPTA_RETURN_IF_ERROR(tx.Tokens().Revoke("0000000000000000", At(2)));
                  return Aborted("changed my mind");
                })
                .code(),
            Code::kAborted);
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().Revoke("1111111111111111", At(3)); }).ok());
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().RevokeAllOf("tenant:acme", At(4)); }).ok());
  ASSERT_TRUE(
      this->Write([](Tx& tx) { return tx.Tokens().CapLifetimes("tenant:other", std::chrono::seconds(60)); }).ok());
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return told.size() >= 3; })) << told.size();
    EXPECT_THAT(told, ElementsAre("token 1111111111111111", "principal tenant:acme", "principal tenant:other"))
        << "nothing from the rollback";
  }
  this->store().WatchRevocations(nullptr);
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tokens().Revoke("2222222222222222", At(5)); }).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::lock_guard lock(mu);
  EXPECT_EQ(told.size(), 3u) << "told after the watcher was removed";
}

// The revocations a store tells its watcher ("token <id>" or "principal
// <principal>"; a "start over" left out), watched from construction to
// destruction.
class RevocationsTold {
 public:
  explicit RevocationsTold(Store& store) : store_(store) {
    store_.WatchRevocations([this](const Revocation& r) {
      if (r.token_id.empty() && r.principal.empty()) return;  // "start over": allowed at any time
      std::lock_guard lock(mu_);
      told_.push_back(r.token_id.empty() ? "principal " + r.principal : "token " + r.token_id);
      cv_.notify_all();
    });
  }
  ~RevocationsTold() { store_.WatchRevocations(nullptr); }

  // Every revocation told, once the last told is `last` (a sentinel written
  // after everything the test looks at: once it is told, nothing else is on
  // its way); nullopt after 5 s without it.
  std::optional<std::vector<std::string>> Until(const std::string& last) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return !told_.empty() && told_.back() == last; })) {
      return std::nullopt;
    }
    return told_;
  }

 private:
  Store& store_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> told_;
};

// A change of a tenant's state is told as a revocation of its tokens, so
// that every replica reads their tenant's state again at the next request
// (PgStore: the trigger of migrations/0015); other changes are not.
TYPED_TEST_P(StoreContract, ATenantsChangeOfStateIsToldToTheWatcher) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  RevocationsTold told(this->store());
  auto change = [&](std::int64_t version, TenantState state, const std::string& display_name) {
    Tenant next = MakeTenant("acme");
    next.state = state;
    next.display_name = display_name;
    next.version = version + 1;
    return this->Write([&](Tx& tx) { return tx.Tenants().Update(next, version); });
  };
  ASSERT_TRUE(change(1, TenantState::kActive, "renamed").ok());
  ASSERT_TRUE(change(2, TenantState::kSuspended, "renamed").ok());
  ASSERT_TRUE(change(3, TenantState::kSuspended, "renamed again").ok());
  ASSERT_TRUE(change(4, TenantState::kActive, "renamed again").ok());
  // Told after everything above: once it is, nothing else is on its way.
  ASSERT_TRUE(
      this->Write([](Tx& tx) { return tx.Tokens().CapLifetimes("tenant:sentinel", std::chrono::seconds(60)); }).ok());
  const auto principals = told.Until("principal tenant:sentinel");
  ASSERT_TRUE(principals.has_value()) << "the sentinel was not told within 5 s";
  EXPECT_THAT(*principals, ElementsAre("principal tenant:acme", "principal tenant:acme", "principal tenant:sentinel"))
      << "told for the suspension and the resumption only";
}

TYPED_TEST_P(StoreContract, ConcurrentReadModifyWriteLosesNoUpdate) {
  ASSERT_TRUE(this->Insert(MakeTenant("counter")).ok());
  constexpr int kThreads = 4, kIncrements = 10;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < kIncrements; ++n) {
        const Status st = this->Write([](Tx& tx) {
          auto current = tx.Tenants().Get("counter");
          SEPTA_RETURN_IF_ERROR(current);
          Tenant next = *current;
          const int count = next.labels.count("n") ? std::stoi(next.labels["n"]) : 0;
          next.labels["n"] = std::to_string(count + 1);
          next.version = current->version + 1;
          return tx.Tenants().Update(next, current->version);
        });
        if (!st.ok()) failures[i] = st;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) EXPECT_TRUE(f.ok()) << f.ToString();
  auto counter = this->GetTenant("counter");
  ASSERT_TRUE(counter.ok());
  EXPECT_EQ(counter->labels.at("n"), std::to_string(kThreads * kIncrements));
  EXPECT_EQ(counter->version, 1 + kThreads * kIncrements);
}

// Apply sets (migrations/0020_apply_sets.sql, 0021): sets round-trip with
// their policy and are replaced by their (tenant, name); an object is in at
// most one set, moved by PutMember, with its intent (any bytes); members
// need their set and go with it; rows are checked.
TYPED_TEST_P(StoreContract, ApplySetsHoldEachObjectOnceAndGoWithTheirMembers) {
  const ApplySet platform{.tenant = "",
                          .name = "prod",
                          .revision = 1,
                          .source = "git@x:p@abc",
                          .applied_by = "admin",
                          .apply_time = At(1'800'000'000, 123'456'000),
                          .on_drift = DriftPolicy::kLock,
                          .protected_kinds = {"VirtualCluster"}};
  const ApplySet acme{.tenant = "acme",
                      .name = "prod",
                      .revision = 4,
                      .source = "",
                      .applied_by = "tenant:acme",
                      .apply_time = At(1'800'000'001)};
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    SEPTA_RETURN_IF_ERROR(tx.ApplySets().Put(platform));
                    return tx.ApplySets().Put(acme);
                  })
                  .ok());
  auto got = this->template Read<std::optional<ApplySet>>([](Tx& tx) { return tx.ApplySets().Get("", "prod"); });
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->source, platform.source);
  EXPECT_EQ((*got)->apply_time, platform.apply_time);
  EXPECT_EQ((*got)->on_drift, DriftPolicy::kLock);
  EXPECT_EQ((*got)->protected_kinds, platform.protected_kinds);
  auto missing =
      this->template Read<std::optional<ApplySet>>([](Tx& tx) { return tx.ApplySets().Get("beta", "prod"); });
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  ApplySet bumped = platform;
  bumped.revision = 2;
  bumped.on_drift = DriftPolicy::kRevert;
  bumped.protected_kinds = {};
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.ApplySets().Put(bumped); }).ok());
  got = this->template Read<std::optional<ApplySet>>([](Tx& tx) { return tx.ApplySets().Get("", "prod"); });
  EXPECT_EQ((*got)->revision, 2);
  EXPECT_EQ((*got)->on_drift, DriftPolicy::kRevert);
  EXPECT_TRUE((*got)->protected_kinds.empty());
  auto all = this->template Read<std::vector<ApplySet>>([](Tx& tx) { return tx.ApplySets().ListAll(); });
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].tenant, "") << "by (tenant, name)";
  EXPECT_EQ((*all)[1].tenant, "acme");
  auto listed = this->template Read<std::vector<ApplySet>>([](Tx& tx) { return tx.ApplySets().List("acme"); });
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u) << "one owner's sets only";
  EXPECT_EQ((*listed)[0].revision, 4);

  const ApplySetMember vc{.kind = "VirtualCluster",
                          .resource = "tenants/acme/vclusters/train",
                          .set_tenant = "",
                          .set_name = "prod",
                          .declared = {"capacity", "quota.pods"},
                          .intent = std::string("\x0a\x00\xff intent", 10)};
  const ApplySetMember tenant{.kind = "Tenant", .resource = "tenants/acme", .set_tenant = "", .set_name = "prod"};
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.ApplySets().PutMembers({vc, tenant}); }).ok());
  auto members = [&](const std::string& set_tenant) {
    auto rows = this->template Read<std::vector<ApplySetMember>>(
        [&](Tx& tx) { return tx.ApplySets().Members(set_tenant, "prod"); });
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<ApplySetMember>{};
  };
  EXPECT_EQ(members(""), (std::vector<ApplySetMember>{tenant, vc})) << "ordered by (kind, resource)";

  // Moving the cluster to acme's set takes it out of the platform's.
  ApplySetMember moved = vc;
  moved.set_tenant = "acme";
  moved.declared = {};
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.ApplySets().PutMembers({moved}); }).ok());
  EXPECT_EQ(members(""), std::vector<ApplySetMember>{tenant});
  EXPECT_EQ(members("acme"), std::vector<ApplySetMember>{moved});
  auto of = this->template Read<std::optional<ApplySetMember>>(
      [&](Tx& tx) { return tx.ApplySets().MemberOf("VirtualCluster", vc.resource); });
  ASSERT_TRUE(of.ok() && of->has_value());
  EXPECT_EQ(**of, moved);

  // Checked rows.
  auto put = [&](const ApplySetMember& m) {
    return this->Write([&](Tx& tx) { return tx.ApplySets().PutMembers({m}); });
  };
  ApplySetMember orphan = tenant;
  orphan.set_name = "nope";
  EXPECT_EQ(put(orphan).code(), Code::kNotFound);
  ApplySetMember odd = tenant;
  odd.kind = "Secret";
  EXPECT_EQ(put(odd).code(), Code::kInvalidArgument);
  ApplySet bad = platform;
  bad.name = "Not_A_Label";
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.ApplySets().Put(bad); }).code(), Code::kInvalidArgument);

  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.ApplySets().DeleteMember("Tenant", "tenants/acme"); }).ok());
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.ApplySets().DeleteMember("Tenant", "tenants/acme"); }).ok())
      << "deleting what is gone is OK";
  EXPECT_TRUE(members("").empty());
  EXPECT_TRUE(this->Write([&](Tx& tx) { return tx.ApplySets().NoteDrift("acme", "prod", "rest"); }).ok());
}

// API tokens declared in Git (migrations/0022): a declaration round-trips
// with its delivery, changes only at its version, is unique by name and
// checked; List is by name.
TYPED_TEST_P(StoreContract, TokenDeclarationsRoundTripAndChangeOnlyAtTheirVersion) {
  const TokenDeclaration ci{.name = "ci",
                            .principal = "tenant:acme",
                            .role = Role::kOwner,
                            .ttl_seconds = 7200,
                            .sink = {.ns = "ci", .name = "septa-ci", .key = "token"},
                            .version = 1,
                            .create_time = At(1'800'000'000, 5'000),
                            .update_time = At(1'800'000'000, 5'000)};
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TokenDeclarations().Insert(ci); }).ok());
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TokenDeclarations().Insert(ci); }).code(), Code::kAlreadyExists);
  TokenDeclaration admin = ci;
  admin.name = "admin-ci";
  admin.principal = "admin";
  admin.role = Role::kViewer;
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TokenDeclarations().Insert(admin); }).ok());

  TokenDeclaration delivered = ci;
  delivered.token_id = "0123456789abcdef";
  delivered.token_expire_time = At(1'800'007'200);
  delivered.token_version = 1;
  delivered.deliveries = 1;
  delivered.update_time = At(1'800'000'100);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TokenDeclarations().Update(delivered, 1); }).ok());
  auto got =
      this->template Read<std::optional<TokenDeclaration>>([](Tx& tx) { return tx.TokenDeclarations().Get("ci"); });
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->token_id, "0123456789abcdef");
  EXPECT_EQ((*got)->token_expire_time, At(1'800'007'200));
  EXPECT_EQ((*got)->sink, ci.sink);
  EXPECT_EQ((*got)->role, Role::kOwner);
  EXPECT_EQ((*got)->ttl_seconds, 7200);
  EXPECT_EQ((*got)->create_time, ci.create_time);
  EXPECT_EQ((*got)->update_time, At(1'800'000'100));
  EXPECT_EQ((*got)->deliveries, 1);

  TokenDeclaration stale = delivered;
  stale.version = 3;
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TokenDeclarations().Update(stale, 2); }).code(), Code::kAborted);
  TokenDeclaration bad = ci;
  bad.name = "Not_A_Label";
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TokenDeclarations().Insert(bad); }).code(), Code::kInvalidArgument);

  auto all = this->template Read<std::vector<TokenDeclaration>>([](Tx& tx) { return tx.TokenDeclarations().List(); });
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "admin-ci");
  EXPECT_EQ((*all)[0].principal, "admin");
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.TokenDeclarations().Delete("ci"); }).ok());
  got = this->template Read<std::optional<TokenDeclaration>>([](Tx& tx) { return tx.TokenDeclarations().Get("ci"); });
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

inline TenantMember MakeMember(std::string tenant, MemberKind kind, std::string name, MemberRole role) {
  return {.tenant = std::move(tenant),
          .kind = kind,
          .name = std::move(name),
          .role = role,
          .create_time = At(1'800'000'000, 7'001),
          .update_time = At(1'800'000'000, 7'001),
          .version = 1};
}

inline std::vector<std::string> MemberRows(const std::vector<TenantMember>& members) {
  std::vector<std::string> rows;
  for (const auto& m : members) {
    rows.push_back(m.tenant + " " + MemberText(m) + " " + std::string(MemberRoleName(m.role)));
  }
  return rows;
}

// Tenant members (migrations/0026): a member round-trips, is unique in its
// tenant, needs the tenant, changes and goes only at its version; List is
// by (kind, name) as bytes; a name is 1-256 bytes of printable text.
TYPED_TEST_P(StoreContract, TenantMembersRoundTripAndChangeOnlyAtTheirVersion) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  const TenantMember alice = MakeMember("acme", MemberKind::kUser, "alice@acme.test", MemberRole::kOwner);
  const TenantMember ml = MakeMember("acme", MemberKind::kGroup, "/eng/ml team", MemberRole::kEditor);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TenantMembers().Insert(alice); }).ok());
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TenantMembers().Insert(ml); }).ok());
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TenantMembers().Insert(alice); }).code(), Code::kAlreadyExists);
  // The same name as a group is another member.
  TenantMember alice_group = alice;
  alice_group.kind = MemberKind::kGroup;
  alice_group.role = MemberRole::kViewer;
  EXPECT_TRUE(this->Write([&](Tx& tx) { return tx.TenantMembers().Insert(alice_group); }).ok());
  TenantMember elsewhere = alice;
  elsewhere.tenant = "nowhere";
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TenantMembers().Insert(elsewhere); }).code(), Code::kNotFound);

  auto got = this->template Read<TenantMember>(
      [](Tx& tx) { return tx.TenantMembers().Get("acme", MemberKind::kUser, "alice@acme.test"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  TenantMember stored = alice;
  stored.create_time = AtMicros(1'800'000'000, 7'001);
  stored.update_time = stored.create_time;
  EXPECT_EQ(*got, stored);
  EXPECT_EQ(this->template Read<TenantMember>(
                    [](Tx& tx) { return tx.TenantMembers().Get("acme", MemberKind::kGroup, "alice"); })
                .status()
                .code(),
            Code::kNotFound);
  auto listed = this->template Read<std::vector<TenantMember>>([](Tx& tx) { return tx.TenantMembers().List("acme"); });
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_THAT(MemberRows(*listed), ElementsAre("acme group:/eng/ml team editor", "acme group:alice@acme.test viewer",
                                               "acme user:alice@acme.test owner"));

  TenantMember demoted = alice;
  demoted.role = MemberRole::kViewer;
  demoted.version = 2;
  demoted.update_time = At(1'800'000'100);
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.TenantMembers().Update(demoted, 2); }).code(), Code::kAborted);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TenantMembers().Update(demoted, 1); }).ok());
  got = this->template Read<TenantMember>(
      [](Tx& tx) { return tx.TenantMembers().Get("acme", MemberKind::kUser, "alice@acme.test"); });
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->role, MemberRole::kViewer);
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->create_time, stored.create_time);
  EXPECT_EQ(got->update_time, At(1'800'000'100));

  EXPECT_EQ(
      this->Write([](Tx& tx) { return tx.TenantMembers().Delete("acme", MemberKind::kUser, "alice@acme.test", 1); })
          .code(),
      Code::kAborted);
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.TenantMembers().Delete("acme", MemberKind::kUser, "bob", 1); }).code(),
            Code::kNotFound);
  ASSERT_TRUE(
      this->Write([](Tx& tx) { return tx.TenantMembers().Delete("acme", MemberKind::kUser, "alice@acme.test", 2); })
          .ok());
  listed = this->template Read<std::vector<TenantMember>>([](Tx& tx) { return tx.TenantMembers().List("acme"); });
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);

  // The name: 1-256 bytes, printable, one line (UTF-8 beyond ASCII is printable).
  for (const std::string& name : {std::string(256, 'a'), std::string("zoë"), std::string("CN=Ops, O=Acme")}) {
    EXPECT_TRUE(this->Write([&](Tx& tx) {
                      return tx.TenantMembers().Insert(
                          MakeMember("acme", MemberKind::kUser, name, MemberRole::kViewer));
                    })
                    .ok())
        << name;
  }
  for (const std::string& name : {std::string(), std::string(257, 'a'), std::string("two\nlines"),
                                  std::string("bell\a"), std::string("del\x7f"), std::string("rtl\u202eevil")}) {
    const Status refused = this->Write([&](Tx& tx) {
      return tx.TenantMembers().Insert(MakeMember("acme", MemberKind::kGroup, name, MemberRole::kViewer));
    });
    EXPECT_EQ(refused.code(), Code::kInvalidArgument) << EscapeControlCharacters(name);
    ASSERT_EQ(refused.violations().size(), 1u) << refused.ToString();
    EXPECT_EQ(refused.violations()[0].field, "name");
  }
}

// What sign-in asks (ListFor): a user's and its groups' memberships in every
// tenant, by (tenant, kind, name); a user and a group of one name are
// different members; a tenant's deletion takes its members.
TYPED_TEST_P(StoreContract, TenantMembersAreFoundByUserOrGroupInEveryTenantAndGoWithTheirTenant) {
  for (const char* tenant : {"acme", "beta", "gamma"}) ASSERT_TRUE(this->Insert(MakeTenant(tenant)).ok());
  const std::vector<TenantMember> members = {
      MakeMember("acme", MemberKind::kUser, "alice", MemberRole::kOwner),
      MakeMember("acme", MemberKind::kGroup, "ml", MemberRole::kEditor),
      MakeMember("acme", MemberKind::kGroup, "ops", MemberRole::kViewer),
      MakeMember("beta", MemberKind::kGroup, "ml", MemberRole::kViewer),
      MakeMember("beta", MemberKind::kUser, "alice", MemberRole::kEditor),
      MakeMember("gamma", MemberKind::kUser, "bob", MemberRole::kOwner),
      MakeMember("gamma", MemberKind::kGroup, "alice", MemberRole::kOwner),
  };
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    for (const TenantMember& m : members) SEPTA_RETURN_IF_ERROR(tx.TenantMembers().Insert(m));
                    return Status::Ok();
                  })
                  .ok());
  const auto list_for = [&](const std::string& user, const std::vector<std::string>& groups) {
    auto found = this->template Read<std::vector<TenantMember>>(
        [&](Tx& tx) { return tx.TenantMembers().ListFor(user, groups); });
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    return found.ok() ? MemberRows(*found) : std::vector<std::string>{"error"};
  };
  EXPECT_THAT(list_for("alice", {"ml"}), ElementsAre("acme group:ml editor", "acme user:alice owner",
                                                     "beta group:ml viewer", "beta user:alice editor"));
  EXPECT_THAT(list_for("bob", {}), ElementsAre("gamma user:bob owner"));
  // Names no member can have are asked about as any other, and match nothing.
  EXPECT_THAT(list_for("", {"ops", "nope", "two\nml", "\xff", std::string("m\0l", 3), std::string(300, 'g')}),
              ElementsAre("acme group:ops viewer"));
  EXPECT_THAT(list_for("carol", {}), IsEmpty());

  std::vector<std::string> groups(kMaxMemberGroups, "g");
  groups.back() = "ops";
  EXPECT_THAT(list_for("", groups), ElementsAre("acme group:ops viewer"));
  groups.push_back("ml");
  const auto too_many = this->template Read<std::vector<TenantMember>>(
      [&](Tx& tx) { return tx.TenantMembers().ListFor("alice", groups); });
  EXPECT_EQ(too_many.status().code(), Code::kInvalidArgument);

  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tenants().Delete("beta", 1); }).ok());
  EXPECT_THAT(list_for("alice", {"ml"}), ElementsAre("acme group:ml editor", "acme user:alice owner"));
  auto beta = this->template Read<std::vector<TenantMember>>([](Tx& tx) { return tx.TenantMembers().List("beta"); });
  ASSERT_TRUE(beta.ok());
  EXPECT_THAT(*beta, IsEmpty());
}

// A change of a tenant's members is told as its principal's, so that every
// replica reads people's memberships again at their next request (PgStore:
// the trigger of migrations/0027); a write that rolls back is not.
TYPED_TEST_P(StoreContract, AChangeOfATenantsMembersIsToldToTheWatcher) {
  ASSERT_TRUE(this->Insert(MakeTenant("acme")).ok());
  RevocationsTold told(this->store());
  TenantMember alice = MakeMember("acme", MemberKind::kUser, "alice@acme.test", MemberRole::kOwner);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TenantMembers().Insert(alice); }).ok());
  EXPECT_EQ(this->Write([&](Tx& tx) -> Status {
                  TenantMember bob = MakeMember("acme", MemberKind::kUser, "bob@acme.test", MemberRole::kOwner);
                  SEPTA_RETURN_IF_ERROR(tx.TenantMembers().Insert(bob));
                  return Aborted("changed my mind");
                })
                .code(),
            Code::kAborted);
  TenantMember viewer = alice;
  viewer.role = MemberRole::kViewer;
  viewer.version = alice.version + 1;
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.TenantMembers().Update(viewer, alice.version); }).ok());
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    return tx.TenantMembers().Delete("acme", MemberKind::kUser, "alice@acme.test", viewer.version);
                  })
                  .ok());
  ASSERT_TRUE(
      this->Write([](Tx& tx) { return tx.Tokens().CapLifetimes("tenant:sentinel", std::chrono::seconds(60)); }).ok());
  const auto principals = told.Until("principal tenant:sentinel");
  ASSERT_TRUE(principals.has_value()) << "the sentinel was not told within 5 s";
  EXPECT_THAT(*principals, ElementsAre("principal tenant:acme", "principal tenant:acme", "principal tenant:acme",
                                       "principal tenant:sentinel"))
      << "told for the insert, the update and the delete; nothing from the rollback";
}

// People's portal sessions and the sign-ins under way (migrations/0028).
inline constexpr char kPersonIssuer[] = "https://idp.example.com";

inline PendingSignIn MakeSignIn(char state, TimePoint expire_time) {
  return {.state_hash = Hex64(state),
          .issuer = kPersonIssuer,
          .browser_hash = Hex64('b'),
          .code_verifier = std::string(43, 'v') + "-._~" + std::string(1, state),
          .nonce = std::string("nonce-") + state,
          .return_to = "/tenants/acme?tab=members",
          .client = state == 'c' ? "192.0.2.7" : "2001:db8::1",
          .create_time = At(100, 1'500),
          .expire_time = expire_time};
}

inline PersonSession MakePersonSession(std::string id, std::string user, TimePoint create_time, TimePoint expire_time) {
  return {.id = std::move(id),
          .secret_hash = Hex64('5'),
          .issuer = kPersonIssuer,
          .user = std::move(user),
          .groups = {"Zeta", "alpha"},  // sorted as bytes, not as a locale would
          .identity_expire_time = At(600, 2'500),
          .id_token = "header.payload.signature",
          .refresh_token = "refresh-1",
          .version = 0,
          .create_time = create_time,
          .expire_time = expire_time};
}

// Every field, for comparing rows as stored (instants in nanoseconds).
inline std::string Nanos(TimePoint t) {
  return std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}
inline std::string SignInRow(const PendingSignIn& s) {
  return s.state_hash + " " + s.issuer + " " + s.browser_hash + " " + s.code_verifier + " " + s.nonce + " " +
         s.return_to + " " + s.client + " " + Nanos(s.create_time) + " " + Nanos(s.expire_time);
}
inline std::string PersonSessionRow(const PersonSession& s) {
  std::string groups;
  for (const std::string& group : s.groups) groups += "[" + group + "]";
  return s.id + " " + s.secret_hash + " " + s.issuer + " " + s.user + " " + groups + " " +
         Nanos(s.identity_expire_time) + " " + s.id_token + " [" + s.refresh_token + "] v" + std::to_string(s.version) +
         " " + Nanos(s.create_time) + " " + Nanos(s.expire_time) + " " + (s.revoke_time ? Nanos(*s.revoke_time) : "-");
}

// A sign-in is taken once (expired or not), its state is unique while it is
// pending, only the unexpired are counted, and a row is refused naming the
// field the table's CHECK names.
TYPED_TEST_P(StoreContract, SignInsAreTakenOnceAndCountedUntilTheyExpire) {
  const PendingSignIn a = MakeSignIn('a', At(1'000)), b = MakeSignIn('c', At(2'000, 700));
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().InsertSignIn(a));
                    return tx.PersonSessions().InsertSignIn(b);
                  })
                  .ok());
  PendingSignIn same_state = MakeSignIn('a', At(3'000));
  same_state.nonce = "another";
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.PersonSessions().InsertSignIn(same_state); }).code(),
            Code::kAlreadyExists);
  const auto count = [&](TimePoint now) {
    auto counted = this->template Read<int>([&](Tx& tx) { return tx.PersonSessions().CountSignIns(now); });
    EXPECT_TRUE(counted.ok()) << counted.status().ToString();
    return counted.ok() ? *counted : -1;
  };
  EXPECT_EQ(count(At(999)), 2);
  EXPECT_EQ(count(At(1'000)), 1) << "expired at its expire_time";
  EXPECT_EQ(count(At(2'001)), 0);
  const auto count_from = [&](const std::string& client, TimePoint now) {
    auto counted = this->template Read<int>([&](Tx& tx) { return tx.PersonSessions().CountSignInsFrom(client, now); });
    EXPECT_TRUE(counted.ok()) << counted.status().ToString();
    return counted.ok() ? *counted : -1;
  };
  EXPECT_EQ(count_from("2001:db8::1", At(999)), 1);
  EXPECT_EQ(count_from("192.0.2.7", At(999)), 1);
  EXPECT_EQ(count_from("192.0.2.7", At(2'001)), 0) << "expired";
  EXPECT_EQ(count_from("192.0.2.8", At(999)), 0);

  const auto take = [&](const std::string& state_hash) {
    std::optional<Result<PendingSignIn>> taken;
    const Status st = this->Write([&](Tx& tx) {
      taken = tx.PersonSessions().TakeSignIn(state_hash);
      return taken->status();
    });
    return st.ok() ? *taken : Result<PendingSignIn>(st);
  };
  auto taken = take(Hex64('a'));
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  PendingSignIn stored = a;
  stored.create_time = AtMicros(100, 1'500);
  EXPECT_EQ(SignInRow(*taken), SignInRow(stored));
  EXPECT_EQ(take(Hex64('a')).status().code(), Code::kNotFound) << "used once";
  EXPECT_EQ(count(At(999)), 1);
  taken = take(Hex64('c'));
  ASSERT_TRUE(taken.ok()) << "taken expired too: " << taken.status().ToString();
  EXPECT_EQ(taken->expire_time, AtMicros(2'000, 700));
  EXPECT_EQ(take(Hex64('d')).status().code(), Code::kNotFound);

  const auto refused_field = [&](const PendingSignIn& bad) {
    const Status st = this->Write([&](Tx& tx) { return tx.PersonSessions().InsertSignIn(bad); });
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    return st.violations().size() == 1 ? st.violations()[0].field : st.ToString();
  };
  PendingSignIn bad = MakeSignIn('e', At(1'000));
  bad.state_hash = "the-state-itself";
  EXPECT_EQ(refused_field(bad), "state_hash");
  bad = MakeSignIn('e', At(1'000));
  bad.code_verifier = "too-short";
  EXPECT_EQ(refused_field(bad), "code_verifier");
  bad = MakeSignIn('e', At(1'000));
  bad.return_to = "https://elsewhere.example/";
  EXPECT_EQ(refused_field(bad), "return_to");
  bad = MakeSignIn('e', At(100));
  EXPECT_EQ(refused_field(bad), "expire_time");
  EXPECT_EQ(count(At(0)), 0) << "nothing refused was kept";
}

// A session round-trips at microseconds, its id is unique, and ListLive
// gives one person's sessions neither revoked nor expired by (create_time,
// id).
TYPED_TEST_P(StoreContract, PersonSessionsRoundTripAndAreListedLiveByPerson) {
  PersonSession first = MakePersonSession("00000000000000b1", "alice@acme.test", At(100, 2'700), At(5'000));
  first.refresh_token = "";
  const std::vector<PersonSession> others = {
      MakePersonSession("00000000000000b0", "alice@acme.test", At(100, 2'700), At(5'000)),  // same time, id first
      MakePersonSession("00000000000000c9", "alice@acme.test", At(50), At(5'000)),
      [] {
        PersonSession revoked = MakePersonSession("00000000000000d0", "alice@acme.test", At(60), At(5'000));
        revoked.revoke_time = At(70);
        return revoked;
      }(),
      MakePersonSession("00000000000000d1", "alice@acme.test", At(60), At(1'000)),  // expired at 1000
      MakePersonSession("00000000000000d2", "bob@acme.test", At(60), At(5'000)),
      [] {
        PersonSession elsewhere = MakePersonSession("00000000000000d3", "alice@acme.test", At(60), At(5'000));
        elsewhere.issuer = "https://other.example.com";
        return elsewhere;
      }(),
  };
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(first));
                    for (const PersonSession& s : others) SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(s));
                    return Status::Ok();
                  })
                  .ok());
  auto got = this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000b1"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  PersonSession stored = first;
  stored.create_time = AtMicros(100, 2'700);
  stored.identity_expire_time = AtMicros(600, 2'500);
  EXPECT_EQ(PersonSessionRow(*got), PersonSessionRow(stored));
  EXPECT_EQ(this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000ff"); })
                .status()
                .code(),
            Code::kNotFound);
  PersonSession same_id = MakePersonSession("00000000000000b1", "carol@acme.test", At(200), At(5'000));
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.PersonSessions().Insert(same_id); }).code(), Code::kAlreadyExists);

  const auto live = [&](const std::string& issuer, const std::string& user, TimePoint now) {
    std::vector<std::string> ids;
    auto sessions = this->template Read<std::vector<PersonSession>>(
        [&](Tx& tx) { return tx.PersonSessions().ListLive(issuer, user, now); });
    EXPECT_TRUE(sessions.ok()) << sessions.status().ToString();
    if (sessions.ok()) {
      for (const PersonSession& s : *sessions) ids.push_back(s.id);
    }
    return ids;
  };
  EXPECT_THAT(live(kPersonIssuer, "alice@acme.test", At(999)),
              ElementsAre("00000000000000c9", "00000000000000d1", "00000000000000b0", "00000000000000b1"));
  EXPECT_THAT(live(kPersonIssuer, "alice@acme.test", At(1'000)),
              ElementsAre("00000000000000c9", "00000000000000b0", "00000000000000b1"));
  EXPECT_THAT(live(kPersonIssuer, "bob@acme.test", At(1'000)), ElementsAre("00000000000000d2"));
  EXPECT_THAT(live(kPersonIssuer, "carol@acme.test", At(1'000)), IsEmpty());

  const auto refused_field = [&](const PersonSession& bad) {
    const Status st = this->Write([&](Tx& tx) { return tx.PersonSessions().Insert(bad); });
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    return st.violations().size() == 1 ? st.violations()[0].field : st.ToString();
  };
  const PersonSession good = MakePersonSession("00000000000000e0", "dave@acme.test", At(100), At(5'000));
  PersonSession bad = good;
  bad.id = "E0";
  EXPECT_EQ(refused_field(bad), "id");
  bad = good;
  bad.user = "two\nlines";
  EXPECT_EQ(refused_field(bad), "user");
  bad = good;
  bad.groups = {"ml", "bell\a"};
  EXPECT_EQ(refused_field(bad), "groups");
  bad.groups = {"ml", "\xff"};
  EXPECT_EQ(refused_field(bad), "groups");
  bad.groups = std::vector<std::string>(kMaxMemberGroups + 1, "g");
  EXPECT_EQ(refused_field(bad), "groups");
  bad = good;
  bad.id_token = "";
  EXPECT_EQ(refused_field(bad), "id_token");
  bad = good;
  bad.version = -1;
  EXPECT_EQ(refused_field(bad), "version");
  EXPECT_EQ(this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000e0"); })
                .status()
                .code(),
            Code::kNotFound)
      << "nothing refused was kept";
  bad = good;
  bad.groups = std::vector<std::string>(kMaxMemberGroups, "g");
  EXPECT_TRUE(this->Write([&](Tx& tx) { return tx.PersonSessions().Insert(bad); }).ok()) << "as many as a token names";
}

// A renewal stores the new identity and tokens over the version read, and
// nothing else of the session.
TYPED_TEST_P(StoreContract, APersonSessionsIdentityChangesOnlyAtItsVersion) {
  const PersonSession session = MakePersonSession("00000000000000a1", "alice@acme.test", At(100), At(5'000));
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.PersonSessions().Insert(session); }).ok());
  PersonSession renewed = session;
  renewed.groups = {"Ops", "ml", "ml-admins"};
  renewed.identity_expire_time = At(1'200, 9'999);
  renewed.id_token = "header.payload2.signature2";
  renewed.refresh_token = "";  // the provider issued none this time
  renewed.expire_time = At(6'000);
  // Not the renewal's to change:
  renewed.user = "mallory@acme.test";
  renewed.secret_hash = Hex64('6');
  renewed.create_time = At(1);
  renewed.version = 41;

  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.PersonSessions().UpdateIdentity(renewed, 1); }).code(), Code::kAborted);
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.PersonSessions().UpdateIdentity(renewed, 0); }).ok());
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.PersonSessions().UpdateIdentity(renewed, 0); }).code(), Code::kAborted)
      << "a second renewal from the same version lost the race";
  auto got = this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000a1"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  PersonSession stored = session;
  stored.groups = {"Ops", "ml", "ml-admins"};
  stored.identity_expire_time = AtMicros(1'200, 9'999);
  stored.id_token = "header.payload2.signature2";
  stored.refresh_token = "";
  stored.expire_time = At(6'000);
  stored.version = 1;
  EXPECT_EQ(PersonSessionRow(*got), PersonSessionRow(stored));

  renewed.refresh_token = "refresh-2";
  renewed.groups = {};
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.PersonSessions().UpdateIdentity(renewed, 1); }).ok());
  got = this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000a1"); });
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_THAT(got->groups, IsEmpty());
  EXPECT_EQ(got->refresh_token, "refresh-2");

  renewed.id = "00000000000000a2";
  EXPECT_EQ(this->Write([&](Tx& tx) { return tx.PersonSessions().UpdateIdentity(renewed, 0); }).code(),
            Code::kNotFound);
}

// A session's end is told to every replica as a revocation of its id
// (PgStore: the trigger of migrations/0028), once: its revocation (the
// first; Revoke is idempotent) or the deletion of a session not revoked;
// nothing from a rollback.
TYPED_TEST_P(StoreContract, APersonSessionsEndIsToldToTheWatcherAsItsTokenId) {
  PersonSession revoked = MakePersonSession("00000000000000f4", "alice@acme.test", At(100), At(5'000));
  revoked.revoke_time = At(150);
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(
                        MakePersonSession("00000000000000f1", "alice@acme.test", At(100), At(5'000))));
                    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(
                        MakePersonSession("00000000000000f2", "alice@acme.test", At(100), At(5'000))));
                    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(
                        MakePersonSession("00000000000000f3", "alice@acme.test", At(100), At(200))));
                    return tx.PersonSessions().Insert(revoked);
                  })
                  .ok());
  RevocationsTold told(this->store());
  EXPECT_EQ(this->Write([](Tx& tx) -> Status {
                  SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Revoke("00000000000000f2", At(300)));
                  return Aborted("changed my mind");
                })
                .code(),
            Code::kAborted);
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.PersonSessions().Revoke("00000000000000f1", At(400)); }).ok());
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.PersonSessions().Revoke("00000000000000f1", At(500)); }).ok());
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.PersonSessions().Revoke("00000000000000ff", At(500)); }).code(),
            Code::kNotFound);
  EXPECT_EQ(this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000f1"); })
                ->revoke_time,
            At(400))
      << "the first revocation stands";
  EXPECT_EQ(this->template Read<PersonSession>([](Tx& tx) { return tx.PersonSessions().Get("00000000000000f2"); })
                ->revoke_time,
            std::nullopt)
      << "rolled back";
  // f1 (revoked), f3 (expired, not revoked) and f4 (revoked) are deleted.
  int deleted = 0;
  ASSERT_TRUE(this->Write([&](Tx& tx) -> Status {
                    SEPTA_ASSIGN_OR_RETURN(deleted, tx.PersonSessions().DeleteDead(At(1'000), At(1'000), 100));
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(deleted, 3);
  ASSERT_TRUE(
      this->Write([](Tx& tx) { return tx.Tokens().CapLifetimes("tenant:sentinel", std::chrono::seconds(60)); }).ok());
  const auto revocations = told.Until("principal tenant:sentinel");
  ASSERT_TRUE(revocations.has_value()) << "the sentinel was not told within 5 s";
  EXPECT_THAT(*revocations,
              ElementsAre("token 00000000000000f1", "token 00000000000000f3", "principal tenant:sentinel"))
      << "f1's revocation once, f3's deletion; nothing of the rollback or of a revoked session's deletion";
}

// Expired sign-ins (expired before `now`) and sessions dead (revoked or
// expired) before `dead_before` are deleted, up to `limit` of each a call.
TYPED_TEST_P(StoreContract, DeadSignInsAndPersonSessionsAreDeletedABatchAtATime) {
  const auto session = [](const std::string& id, TimePoint expire_time, std::optional<TimePoint> revoke_time) {
    PersonSession s = MakePersonSession(id, "alice@acme.test", At(100), expire_time);
    s.revoke_time = revoke_time;
    return s;
  };
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    for (const PendingSignIn& s : {MakeSignIn('1', At(150)), MakeSignIn('2', At(300)),
                                                   MakeSignIn('3', At(2'000)), MakeSignIn('4', At(5'000))}) {
                      SEPTA_RETURN_IF_ERROR(tx.PersonSessions().InsertSignIn(s));
                    }
                    for (const PersonSession& s : {
                             session("0000000000000001", At(5'000), std::nullopt),  // live
                             session("0000000000000002", At(500), std::nullopt),    // expired long ago
                             session("0000000000000003", At(5'000), At(300)),       // revoked long ago
                             session("0000000000000004", At(1'500), std::nullopt),  // expired lately
                             session("0000000000000005", At(5'000), At(1'200)),     // revoked lately
                             session("0000000000000006", At(1'000), std::nullopt),  // expired at dead_before
                         }) {
                      SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(s));
                    }
                    return Status::Ok();
                  })
                  .ok());
  const TimePoint now = At(2'000), dead_before = At(1'000);
  const auto delete_dead = [&](int limit) {
    std::optional<Result<int>> deleted;
    const Status st = this->Write([&](Tx& tx) {
      deleted = tx.PersonSessions().DeleteDead(now, dead_before, limit);
      return deleted->status();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return st.ok() ? **deleted : -1;
  };
  EXPECT_EQ(delete_dead(1), 2) << "one sign-in and one session";
  EXPECT_EQ(delete_dead(100), 2) << "the other sign-in and session";
  EXPECT_EQ(delete_dead(100), 0);

  const auto sessions_left = [&] {
    std::vector<std::string> ids;
    for (const char* id : {"0000000000000001", "0000000000000002", "0000000000000003", "0000000000000004",
                           "0000000000000005", "0000000000000006"}) {
      if (this->template Read<PersonSession>([&](Tx& tx) { return tx.PersonSessions().Get(id); }).ok()) {
        ids.push_back(id);
      }
    }
    return ids;
  };
  EXPECT_THAT(sessions_left(),
              ElementsAre("0000000000000001", "0000000000000004", "0000000000000005", "0000000000000006"));
  EXPECT_EQ(*this->template Read<int>([&](Tx& tx) { return tx.PersonSessions().CountSignIns(At(0)); }), 2)
      << "the sign-in expired at `now` and the live one stay";
  const Status no_rows =
      this->Write([&](Tx& tx) { return tx.PersonSessions().DeleteDead(now, dead_before, 0).status(); });
  EXPECT_EQ(no_rows.code(), Code::kInvalidArgument) << no_rows.ToString();
}

REGISTER_TYPED_TEST_SUITE_P(
    StoreContract, ApplySetsHoldEachObjectOnceAndGoWithTheirMembers, TenantMembersRoundTripAndChangeOnlyAtTheirVersion,
    TenantMembersAreFoundByUserOrGroupInEveryTenantAndGoWithTheirTenant,
    TokenDeclarationsRoundTripAndChangeOnlyAtTheirVersion, IsReady, HoldsTheFourDefaultTrustTiers,
    TrustTiersRoundTripAndChangeOnlyAtTheExpectedVersion, ABadTrustTierRowIsRefusedNamingTheField,
    TenantRoundTripsAtMicrosecondPrecision, MissingTenantIsNotFound, DuplicateTenantIsAlreadyExists,
    UnknownTrustTierIsAnInvalidField, TenantNamesMustBeShortDnsLabels, AFailedWriteLeavesTheTransactionUsable,
    AFailedBodyChangesNothing, ReadOnlyTransactionsRefuseWrites, UpdateTenantRequiresTheExpectedVersion,
    DeleteTenantRequiresTheExpectedVersion, TenantQuotaIsUnlimitedUntilSetAndRoundTrips,
    NegativeTenantQuotasAreRefusedNamingTheField, ListTenantsFiltersAndPaginatesByName, TokensRoundTripAndStayUnique,
    TokensStoreOnlyAWellFormedHash, TokensListInCreationOrderAndRevoke, ADryRunSucceedsAndKeepsNothing,
    SessionsAreTokenRowsMadeFromAnApiToken, TokenLifetimesAreCappedFromTheirCreation,
    LiveTokensAreCountedAndTheLongDeadDeleted, AuditIsNewestFirstWithAssignedIds, IdempotencyKeysAreUniquePerPrincipal,
    IdempotencyKeysAreDeletedOneByOneOrOldestFirst, CommittedRevocationsAreToldToTheWatcher,
    ATenantsChangeOfStateIsToldToTheWatcher, AChangeOfATenantsMembersIsToldToTheWatcher,
    ConcurrentReadModifyWriteLosesNoUpdate, SignInsAreTakenOnceAndCountedUntilTheyExpire,
    PersonSessionsRoundTripAndAreListedLiveByPerson, APersonSessionsIdentityChangesOnlyAtItsVersion,
    APersonSessionsEndIsToldToTheWatcherAsItsTokenId, DeadSignInsAndPersonSessionsAreDeletedABatchAtATime);

}  // namespace septa::core::contract
