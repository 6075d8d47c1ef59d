// septad's start-up as an ordered list of stages, each started by a
// function that returns its stop, and one owner that stops the started
// stages in reverse order: on a start that fails midway and on shutdown
// alike, so there is one teardown order to keep right, not two. userver's
// components, torn down in reverse by the framework, are the model; this
// is its minimum: typed, no registry, no lookup by name.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa::app {

// Undoes what a stage's start did. Called at most once; may be empty (a
// stage with nothing to stop).
using StopFn = std::function<void()>;

class StartupStages {
 public:
  StartupStages() = default;
  ~StartupStages();  // StopAll()
  StartupStages(const StartupStages&) = delete;
  StartupStages& operator=(const StartupStages&) = delete;

  // Runs `start` and keeps its stop for StopAll. A failed start has stopped
  // whatever it started itself (its objects are left to the stages' stops
  // or destructors) and is returned with the stage named: "stage <name>:
  // <message>", code and field violations kept. Logs the stage's name and
  // how long it took.
  Status Run(std::string_view name, const std::function<Result<StopFn>()>& start);
  // The same with the stop given up front: it also runs when `start` fails,
  // to undo a partial start, so it must cope with any prefix of the start
  // having run (reset what was made, stop what was started).
  Status Run(std::string_view name, const std::function<Status()>& start, StopFn stop);

  // Stops the started stages, last started first, each once, logging each
  // stage's name and how long it took to stop. Idempotent: a second call
  // (and the destructor after it) stops nothing.
  void StopAll();

  // The stages started and not yet stopped, in start order.
  std::vector<std::string> Running() const;

 private:
  struct Started {
    std::string name;
    StopFn stop;
  };
  std::vector<Started> started_;
};

}  // namespace septa::app
