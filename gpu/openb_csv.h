// The openb trace files (Alibaba cluster-trace-gpu-v2023): node lists
// `sn,cpu_milli,memory_mib,gpu,model` and pod lists
// `name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]`. Parsers take
// the text and a source name; every error names file, line and column.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"

namespace septa::gpu {

struct OpenbNode {
  std::string name;
  int cpu_milli = 0;
  int memory_mib = 0;
  int gpu_count = 0;
  std::string model;  // catalog canonical name; empty for CPU-only nodes
};

struct OpenbPod {
  std::string name;
  int cpu_milli = 0;
  int memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;                  // per GPU
  std::vector<std::string> gpu_spec;  // acceptable models; empty = any
};

Result<std::vector<OpenbNode>> ParseOpenbNodes(std::string_view text, std::string_view source, const Catalog& catalog);
Result<std::vector<OpenbPod>> ParseOpenbPods(std::string_view text, std::string_view source, const Catalog& catalog);

}  // namespace septa::gpu
