// septa-bench: Septa's benchmarks. Timing lives here, never in the pure libraries.
#include <CLI/CLI.hpp>

#include "services/cmd/septa-bench/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"septa-bench: placement replay and micro-benchmarks"};
  app.require_subcommand(1);
  int exit_code = 0;
  septa::bench::AddPlacementCommand(app, exit_code);
  septa::bench::AddMicroCommand(app, exit_code);
  septa::bench::AddMigCommand(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
