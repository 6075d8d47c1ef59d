// septactl: the admin CLI over septad's gRPC API. The commands live in
// services/cli; this shell hands over argv, the environment and stdin, and
// Ctrl-C to septactl login while it waits for the approval.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <stop_token>
#include <thread>

#include "services/cli/run.h"

namespace {

// Ctrl-C ends septactl as always, except once login asked to catch it:
// then the handler writes a byte to a pipe (what a handler may do) and a
// thread reading it requests the stop login's wait watches.
std::atomic<bool> catching{false};
int interrupt_pipe[2] = {-1, -1};

extern "C" void OnInterrupt(int) {
  if (catching.load()) {
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(interrupt_pipe[1], &byte, 1);
    return;
  }
  std::signal(SIGINT, SIG_DFL);
  std::raise(SIGINT);
}

std::stop_token CatchInterrupt() {
  static std::stop_source source;
  static const bool started = [] {
    if (::pipe(interrupt_pipe) != 0) return false;
    std::thread([] {
      char byte = 0;
      while (::read(interrupt_pipe[0], &byte, 1) < 0) {
      }
      source.request_stop();
      std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends septactl at once
    }).detach();
    catching = true;
    std::signal(SIGINT, OnInterrupt);
    return true;
  }();
  return started ? source.get_token() : std::stop_token();
}

}  // namespace

int main(int argc, char** argv) {
  septa::cli::Environment env;
  if (const char* home = std::getenv("HOME")) env.home = home;
  if (const char* token = std::getenv("SEPTA_TOKEN")) env.septa_token = token;
  env.in = &std::cin;
  env.variable = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  env.catch_interrupt = CatchInterrupt;
  return septa::cli::RunSeptactl({argv + 1, argv + argc}, env, std::cout, std::cerr);
}
