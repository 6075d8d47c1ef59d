// Lifeline: the command runs when the process that holds the lifeline dies
// (here a forked child that SIGKILLs itself), and never when it is released.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "services/store/subprocess.h"

namespace septa::store {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  fs::path dir = fs::path(testing::TempDir()) / ("lifeline-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool AppearsWithin(const fs::path& path, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fs::exists(path);
}

TEST(Lifeline, RunsTheCommandWhenItsHolderIsKilled) {
  const fs::path dir = Scratch("killed");
  const fs::path marker = dir / "ran";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lifeline = Lifeline::Start({"/usr/bin/touch", marker.string()}, dir);
    if (!lifeline.ok()) _exit(3);
    raise(SIGKILL);  // no destructor, no release: only the kernel closes the pipe
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child could not start its lifeline (exit " << WEXITSTATUS(status) << ")";
  EXPECT_TRUE(AppearsWithin(marker, std::chrono::seconds(5)));
  fs::remove_all(dir);
}

TEST(Lifeline, ReleasingItRunsNothing) {
  const fs::path dir = Scratch("released");
  const fs::path marker = dir / "ran";
  {
    auto lifeline = Lifeline::Start({"/usr/bin/touch", marker.string()}, dir);
    ASSERT_TRUE(lifeline.ok()) << lifeline.status().ToString();
  }
  EXPECT_FALSE(AppearsWithin(marker, std::chrono::milliseconds(300)));
  fs::remove_all(dir);
}

TEST(Lifeline, AnEmptyCommandIsRefused) {
  EXPECT_EQ(Lifeline::Start({}, "/").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace septa::store
