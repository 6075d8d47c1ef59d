#include "services/cmd/septa-bench/commands.h"
namespace septa::bench {
void AddMicroCommand(CLI::App& app, int& exit_code) {}
}  // namespace septa::bench
