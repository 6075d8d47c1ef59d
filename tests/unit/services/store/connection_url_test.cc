#include "services/store/connection_url.h"

#include <gtest/gtest.h>

namespace septa::store {
namespace {

TEST(ConnectionUrl, UnixSocketUrlPercentEncodesThePath) {
  EXPECT_EQ(UnixSocketUrl("/var/lib/my septa/run", 5432, "septa", "septa"),
            "postgresql:///septa?host=%2Fvar%2Flib%2Fmy%20septa%2Frun&port=5432&user=septa");
}

TEST(ConnectionUrl, WithDatabaseReplacesOnlyTheDatabase) {
  EXPECT_EQ(*WithDatabase("postgresql:///septa?host=%2Frun&user=septa", "t1"),
            "postgresql:///t1?host=%2Frun&user=septa");
  EXPECT_EQ(*WithDatabase("postgres://u:p@db.example:5433/prod?sslmode=require", "t1"),
            "postgres://u:p@db.example:5433/t1?sslmode=require");
  EXPECT_EQ(*WithDatabase("postgresql://db.example", "t1"), "postgresql://db.example/t1");
  EXPECT_EQ(WithDatabase("host=/run dbname=septa", "t1").status().code(), Code::kInvalidArgument);
}

TEST(ConnectionUrl, WithConnectTimeoutRoundsUpToWholeSecondsAndAtLeastTwo) {
  using std::chrono::milliseconds;
  EXPECT_EQ(WithConnectTimeout("postgresql://db/septa", milliseconds(5000)), "postgresql://db/septa?connect_timeout=5");
  EXPECT_EQ(WithConnectTimeout("postgresql://db/septa", milliseconds(5001)), "postgresql://db/septa?connect_timeout=6");
  EXPECT_EQ(WithConnectTimeout("postgresql://db/septa", milliseconds(300)), "postgresql://db/septa?connect_timeout=2");
  EXPECT_EQ(WithConnectTimeout("postgresql://db/septa?connect_timeout=9", milliseconds(300)),
            "postgresql://db/septa?connect_timeout=9");
}

TEST(ConnectionUrl, WithDefaultParameterKeepsTheUrlsOwnSetting) {
  EXPECT_EQ(WithDefaultParameter("postgresql://db/septa", "connect_timeout", "5"),
            "postgresql://db/septa?connect_timeout=5");
  EXPECT_EQ(WithDefaultParameter("postgresql:///septa?host=%2Frun", "connect_timeout", "5"),
            "postgresql:///septa?host=%2Frun&connect_timeout=5");
  EXPECT_EQ(WithDefaultParameter("postgresql://db/septa?connect_timeout=9", "connect_timeout", "5"),
            "postgresql://db/septa?connect_timeout=9");
  EXPECT_EQ(WithDefaultParameter("postgresql://db/septa?sslmode=require&connect_timeout=9", "connect_timeout", "5"),
            "postgresql://db/septa?sslmode=require&connect_timeout=9");
  EXPECT_EQ(WithDefaultParameter("host=/run dbname=septa", "connect_timeout", "5"),
            "host=/run dbname=septa connect_timeout=5");
  EXPECT_EQ(WithDefaultParameter("host=/run connect_timeout=9", "connect_timeout", "5"), "host=/run connect_timeout=9");
}

TEST(ConnectionUrl, RedactPasswordHidesOnlyThePassword) {
  EXPECT_EQ(RedactPassword("postgresql://septa:s3cret@db:5432/septa"), "postgresql://septa:***@db:5432/septa");
  EXPECT_EQ(RedactPassword("postgresql://septa@db/septa"), "postgresql://septa@db/septa");
  EXPECT_EQ(RedactPassword("postgresql:///septa?host=%2Frun"), "postgresql:///septa?host=%2Frun");
}

}  // namespace
}  // namespace septa::store
