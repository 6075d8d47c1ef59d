// The exposition lines quoted verbatim in ../shared/docs/USAGE-FACTS.md §1.6
// (the exporter's README, its render test, NVIDIA's MIG docs line, a render
// of the HEAD template from the exporter's MIG test fixture): the golden
// input of the parser's and the normaliser's tests.
#pragma once

#include <string_view>

namespace septa::test {

inline constexpr std::string_view kUsageFactsLines =
    R"(DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",container="",namespace="",pod=""} 139
TEST_METRIC{gpu="0",UUID="GPU-00000000-0000-0000-0000-000000000000",pci_bus_id="",device="nvidia0",modelName="NVIDIA T400 4GB",hostname="testhost"} 42
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",device="nvidia0",GPU_I_PROFILE="1g.5gb",GPU_I_ID="13",Hostname="ub20-a100-k8s"} 0.995687
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-be839661-c0f5-7452-284b-b875666df60c",pci_bus_id="00000000:1B:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="1g.10gb",GPU_I_ID="11",hostname="localhost",DCGM_FI_DRIVER_VERSION="580.159.04",container="ollama",namespace="testing",pod="ollama-76f687f4cd-xcvvp"} 4190
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-21c6d9d7-46cd-7e91-99c3-7b6a06a3faea",pci_bus_id="00000000:43:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",hostname="localhost",DCGM_FI_DRIVER_VERSION="580.159.04",container="main",namespace="dev",pod="web-x-default-x-dev"} 0.486
)";

}  // namespace septa::test
