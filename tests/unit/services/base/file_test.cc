#include "services/base/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace septa::base {
namespace {

namespace fs = std::filesystem;

class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("septa_read_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReadFileTest, ReadsEveryByte) {
  const std::string bytes = std::string("a\0b\n", 4) + std::string(200'000, 'x');
  std::ofstream(dir_ / "f", std::ios::binary) << bytes;
  auto text = ReadFile(dir_ / "f");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, bytes);
  std::ofstream(dir_ / "empty");
  EXPECT_EQ(*ReadFile(dir_ / "empty"), "");
}

TEST_F(ReadFileTest, ErrorsNameThePathAndTheReason) {
  auto missing = ReadFile(dir_ / "absent");
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "cannot read " + (dir_ / "absent").string() + ": No such file or directory");
  auto directory = ReadFile(dir_);
  EXPECT_EQ(directory.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(directory.status().message(), "cannot read " + dir_.string() + ": Is a directory");
}

}  // namespace
}  // namespace septa::base
