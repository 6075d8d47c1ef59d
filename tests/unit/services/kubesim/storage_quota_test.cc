// Storage's quota on objects and bytes (the virtual control planes'
// api_limits): the rules on their own; through the virtual clusters'
// listener in tests/unit/services/vcp/api_limits_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/kubesim/storage.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;

json ConfigMap(const std::string& name, std::size_t bytes) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"data", {{"v", std::string(bytes, 'x')}}}};
}

// Records what reached the journal: a refused write must not.
class RecordingJournal final : public StorageJournal {
 public:
  Status Record(const std::string&, const std::string&, const std::string& name, std::uint64_t,
                const std::string* text) override {
    recorded.push_back((text ? "put " : "delete ") + name);
    return Status::Ok();
  }
  std::vector<std::string> recorded;
};

class StorageQuotaTest : public ::testing::Test {
 protected:
  void SetUp() override { storage_.SetJournal(&journal_); }

  ApiResult<ObjectPtr> Put(const json& object) {
    const std::string name = object["metadata"]["name"];
    return storage_.Mutate("configmaps", "default", name, [&](const json*) -> ApiResult<Mutation> {
      return Mutation{Mutation::Kind::kPut, object};
    });
  }
  ApiResult<ObjectPtr> Delete(const std::string& name) {
    return storage_.Mutate("configmaps", "default", name, [](const json*) -> ApiResult<Mutation> {
      return Mutation{Mutation::Kind::kDelete, {}};
    });
  }
  // The text the storage holds for an object, as it counts it.
  std::uint64_t Size(const std::string& name) {
    return storage_.List("configmaps", "default", nullptr, 0, "").texts.at(Index(name))->size();
  }
  std::size_t Index(const std::string& name) {
    auto listed = storage_.List("configmaps", "default", nullptr, 0, "");
    for (std::size_t i = 0; i < listed.items.size(); ++i)
      if ((*listed.items[i])["metadata"]["name"] == name) return i;
    return listed.items.size();
  }

  RecordingJournal journal_;
  Storage storage_;
};

TEST_F(StorageQuotaTest, ACreatePastTheObjectCountIsRefusedAsAResourceQuotaRefusesIt) {
  ASSERT_TRUE(Put(ConfigMap("a", 10)).ok());
  ASSERT_TRUE(Put(ConfigMap("b", 10)).ok());
  storage_.SetQuota({.objects = 2});
  auto refused = Put(ConfigMap("c", 10));
  ASSERT_FALSE(refused.ok());
  const ApiError& e = refused.error();
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_EQ(e.message,
            "configmaps \"c\" is forbidden: exceeded quota: api_limits, requested: objects=1, used: objects=2, "
            "limited: objects=2");
  EXPECT_EQ(e.name, "c");
  EXPECT_EQ(e.kind, "configmaps");
  // Nothing of it anywhere: not journaled, not stored, the usage as before.
  EXPECT_THAT(journal_.recorded, ::testing::ElementsAre("put a", "put b"));
  EXPECT_EQ(storage_.Get("configmaps", "default", "c"), nullptr);
  EXPECT_EQ(storage_.usage().objects, 2u);
  // Updates of what is there pass; a delete makes room.
  ASSERT_TRUE(Put(ConfigMap("a", 20)).ok());
  ASSERT_TRUE(Delete("b").ok());
  EXPECT_TRUE(Put(ConfigMap("c", 10)).ok());
}

TEST_F(StorageQuotaTest, AWriteThatGrowsTheBytesPastTheQuotaIsRefusedOneThatDoesNotPasses) {
  ASSERT_TRUE(Put(ConfigMap("a", 100)).ok());
  const std::uint64_t a = Size("a");
  EXPECT_EQ(storage_.usage(), (StorageUsage{1, a}));
  storage_.SetQuota({.bytes = a + 50});
  auto big = Put(ConfigMap("b", 100));  // about as big as "a"
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message,
              ::testing::MatchesRegex("configmaps \"b\" is forbidden: exceeded quota: api_limits, requested: "
                                      "object_bytes=[0-9]+, used: object_bytes=" +
                                      std::to_string(a) + ", limited: object_bytes=" + std::to_string(a + 50)));
  // Growing "a" by more than 50 bytes: refused; by 10: passes; shrinking always.
  EXPECT_FALSE(Put(ConfigMap("a", 200)).ok());
  EXPECT_TRUE(Put(ConfigMap("a", 110)).ok());
  EXPECT_TRUE(Put(ConfigMap("a", 1)).ok());
  // Lowered below the usage: nothing is taken away, a shrink still passes, a growth does not.
  storage_.SetQuota({.bytes = 10});
  EXPECT_TRUE(Put(ConfigMap("a", 0)).ok());
  EXPECT_FALSE(Put(ConfigMap("a", 1)).ok());
  EXPECT_EQ(storage_.usage(), (StorageUsage{1, Size("a")}));
}

TEST_F(StorageQuotaTest, AnObjectBeingDeletedMayGrowAndBothExcessesAreNamed) {
  ASSERT_TRUE(Put(ConfigMap("a", 10)).ok());
  const std::uint64_t limit = Size("a");
  storage_.SetQuota({.objects = 1, .bytes = limit});
  json terminating = ConfigMap("a", 10);
  terminating["metadata"]["deletionTimestamp"] = "2026-11-28T00:00:00Z";
  terminating["metadata"]["finalizers"] = json::array({"example.com/wait"});
  EXPECT_TRUE(Put(terminating).ok());
  const std::uint64_t used = Size("a");
  auto both = Put(ConfigMap("b", 10));
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message,
              ::testing::MatchesRegex("configmaps \"b\" is forbidden: exceeded quota: api_limits, requested: "
                                      "object_bytes=[0-9]+,objects=1, used: object_bytes=" +
                                      std::to_string(used) +
                                      ",objects=1, limited: object_bytes=" + std::to_string(limit) + ",objects=1"));
  EXPECT_GT(used, limit) << "the terminating update grew past the limit";
}

TEST_F(StorageQuotaTest, UsageFollowsRestoreConvergeAndDroppedTypes) {
  storage_.SetJournal(nullptr);
  storage_.Restore("configmaps", "default", "a", ConfigMap("a", 5), "12345678");
  storage_.Restore("secrets", "default", "s", {{"metadata", {{"name", "s"}}}}, "1234");
  EXPECT_EQ(storage_.usage(), (StorageUsage{2, 12}));
  const std::uint64_t at = storage_.current_resource_version();
  json b = ConfigMap("b", 1);
  b["metadata"]["resourceVersion"] = "9";
  ASSERT_TRUE(storage_.Converge({{"configmaps", "default", "b", b, "123"}}, 9, at));
  EXPECT_EQ(storage_.usage(), (StorageUsage{1, 3}));
  storage_.DropType("configmaps");
  EXPECT_EQ(storage_.usage(), (StorageUsage{0, 0}));
}

}  // namespace
}  // namespace septa::kubesim
