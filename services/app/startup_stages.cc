#include "services/app/startup_stages.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace septa::app {

namespace {

long long MillisSince(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

StartupStages::~StartupStages() { StopAll(); }

Status StartupStages::Run(std::string_view name, const std::function<Result<StopFn>()>& start) {
  const auto started = std::chrono::steady_clock::now();
  auto stop = start();
  if (!stop.ok()) {
    spdlog::error("stage {}: failed after {} ms: {}", name, MillisSince(started), stop.status().ToString());
    return Status(stop.status().code(), "stage " + std::string(name) + ": " + stop.status().message(),
                  stop.status().violations());
  }
  started_.push_back({std::string(name), *std::move(stop)});
  spdlog::info("stage {}: started in {} ms", name, MillisSince(started));
  return Status::Ok();
}

Status StartupStages::Run(std::string_view name, const std::function<Status()>& start, StopFn stop) {
  return Run(name, [&]() -> Result<StopFn> {
    if (Status st = start(); !st.ok()) {
      if (stop) stop();
      return st;
    }
    return std::move(stop);
  });
}

void StartupStages::StopAll() {
  while (!started_.empty()) {
    // Off the list before it runs: a stop that throws or re-enters is not run twice.
    Started stage = std::move(started_.back());
    started_.pop_back();
    const auto stopping = std::chrono::steady_clock::now();
    if (stage.stop) stage.stop();
    spdlog::info("stage {}: stopped in {} ms", stage.name, MillisSince(stopping));
  }
}

std::vector<std::string> StartupStages::Running() const {
  std::vector<std::string> names;
  for (const Started& stage : started_) names.push_back(stage.name);
  return names;
}

}  // namespace septa::app
