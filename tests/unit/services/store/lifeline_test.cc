// Lifeline: the command runs when the process that holds the lifeline dies
// (here a forked child that SIGKILLs itself), and never when it is released.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

// What lets a septad started right after a kill -9 wait until its killed
// predecessor's PostgreSQL has stopped (issue 9 #2).
TEST(Lifeline, HoldsTheGivenDescriptorUntilTheCommandHasFinished) {
  const fs::path dir = Scratch("held");
  const fs::path lock_path = dir / "lock", started = dir / "started", go = dir / "go";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(3);
    auto lifeline = Lifeline::Start(
        {"/bin/sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done", "sh", started, go}, dir, fd);
    if (!lifeline.ok()) _exit(3);
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child could not start its lifeline (exit " << WEXITSTATUS(status) << ")";
  ASSERT_TRUE(AppearsWithin(started, std::chrono::seconds(5)));

  const int fd = open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_NE(flock(fd, LOCK_EX | LOCK_NB), 0) << "the lock was free while the command still ran";
  std::ofstream(go).put('\n');
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool locked = false;
  while (!(locked = flock(fd, LOCK_EX | LOCK_NB) == 0) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(locked) << "the lock stayed held after the command finished";
  close(fd);
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

TEST(Lifeline, AnEmptyCommandIsRefused) { EXPECT_EQ(Lifeline::Start({}, "/").status().code(), Code::kInvalidArgument); }

}  // namespace
}  // namespace septa::store
