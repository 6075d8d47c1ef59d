// Subcommands of septa-bench.
#pragma once

#include <CLI/CLI.hpp>

namespace septa::bench {

// `placement`: replays openb traces per policy (PLACEMENT-BENCH.md).
void AddPlacementCommand(CLI::App& app, int& exit_code);
// `micro`: Google Benchmark micro-benchmarks (decision time on a synthetic
// 10,000-node cluster); arguments after `--` go to Google Benchmark.
void AddMicroCommand(CLI::App& app, int& exit_code);
// `mig`: MIG placement and re-partitioning under churn (MIG-BENCH.md).
void AddMigCommand(CLI::App& app, int& exit_code);

}  // namespace septa::bench
