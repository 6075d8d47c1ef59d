#include "services/app/replica_id.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "services/base/file.h"
#include "tests/support/seeded_random.h"

namespace septa::app {
namespace {

namespace fs = std::filesystem;

class ReplicaIdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("septa-replica-id-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  SeededRandom random_{7};
};

TEST_F(ReplicaIdTest, MadeOnceAndKeptInTheDataDirectory) {
  auto first = ResolveReplicaId("", dir_.string(), random_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  EXPECT_TRUE(first->starts_with(std::string(host.data()) + "-")) << *first;
  EXPECT_EQ(first->size(), std::string(host.data()).size() + 9) << *first;
  auto kept = base::ReadFile(dir_ / "replica_id");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, *first + "\n");
  auto again = ResolveReplicaId("", dir_.string(), random_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first) << "stable across restarts";
}

TEST_F(ReplicaIdTest, EachDataDirectoryIsAReplica) {
  fs::create_directories(dir_ / "other");
  auto one = ResolveReplicaId("", dir_.string(), random_);
  auto other = ResolveReplicaId("", (dir_ / "other").string(), random_);
  ASSERT_TRUE(one.ok() && other.ok());
  EXPECT_NE(*one, *other);
}

TEST_F(ReplicaIdTest, TheConfiguredOneWinsAndNothingIsWritten) {
  auto id = ResolveReplicaId("septa-0", dir_.string(), random_);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "septa-0");
  EXPECT_FALSE(fs::exists(dir_ / "replica_id"));
}

TEST_F(ReplicaIdTest, AnEmptyFileIsAnErrorNamingIt) {
  std::ofstream(dir_ / "replica_id") << "\n";
  auto id = ResolveReplicaId("", dir_.string(), random_);
  ASSERT_FALSE(id.ok());
  ASSERT_EQ(id.status().violations().size(), 1u);
  EXPECT_EQ(id.status().violations()[0].field, "replica_id");
  EXPECT_NE(id.status().message().find((dir_ / "replica_id").string() + " is empty"), std::string::npos);
}

TEST_F(ReplicaIdTest, NoRandomnessNoId) {
  ExhaustedRandom exhausted;
  auto id = ResolveReplicaId("", dir_.string(), exhausted);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), Code::kUnavailable);
  EXPECT_FALSE(fs::exists(dir_ / "replica_id"));
}

}  // namespace
}  // namespace septa::app
