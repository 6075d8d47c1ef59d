// The packing bound: the bin-packing LP on known instances, its input checks,
// and the recorder that collects a run's fractional pods per GPU.
#include "gpu/packing_bound.h"

#include <gtest/gtest.h>

namespace septa::gpu {
namespace {

double MinGpus(const std::map<int, int>& counts) {
  Result<double> r = MinGpusForFractions(counts);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : -1;
}

TEST(MinGpusForFractions, PairsThatFillAGpuNeedOneEach) {
  EXPECT_DOUBLE_EQ(MinGpus({{500, 4}}), 2.0);
  EXPECT_DOUBLE_EQ(MinGpus({{600, 2}, {400, 2}}), 2.0);
  EXPECT_DOUBLE_EQ(MinGpus({{300, 3}}), 1.0);
  EXPECT_DOUBLE_EQ(MinGpus({}), 0.0);
}

TEST(MinGpusForFractions, PodsThatCannotShareNeedAGpuEach) {
  EXPECT_DOUBLE_EQ(MinGpus({{700, 3}}), 3.0);
  EXPECT_DOUBLE_EQ(MinGpus({{810, 5}, {470, 1}}), 6.0);
}

TEST(MinGpusForFractions, TheBestMixOfConfigurationsWins) {
  // 650+320 and 470+470 pair; a first-fit in arrival order would not.
  EXPECT_DOUBLE_EQ(MinGpus({{650, 2}, {320, 2}, {470, 4}}), 4.0);
  // Small pods fill the 190 beside 810s: 4 x (810 + 190).
  EXPECT_DOUBLE_EQ(MinGpus({{810, 4}, {190, 4}}), 4.0);
}

TEST(MinGpusForFractions, IsTheLpRelaxationSoItMayBeFractional) {
  // Three 500s: one and a half GPUs in the relaxation (two in integers).
  EXPECT_DOUBLE_EQ(MinGpus({{500, 3}}), 1.5);
}

TEST(MinGpusForFractions, RefusesSizesOutsideAGpu) {
  EXPECT_EQ(MinGpusForFractions({{1000, 1}}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MinGpusForFractions({{0, 1}}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MinGpusForFractions({{300, -1}}).status().code(), Code::kInvalidArgument);
}

ClusterState TwoNodes() {
  ClusterState c;
  c.model_names = {"T4"};
  for (int i = 0; i < 2; ++i) {
    NodeState n;
    n.cpu_free = 64000;
    n.mem_free = 262144;
    n.gpu_count = 2;
    for (int g = 0; g < 2; ++g) n.gpu_free[g] = kMilliPerGpu;
    c.names.push_back(i == 0 ? "a" : "b");
    c.capacity.push_back(n);
    c.nodes.push_back(n);
    c.total_gpu_milli += 2 * kMilliPerGpu;
  }
  return c;
}

PodShape Pod(int num_gpu, int milli) {
  PodShape p;
  p.cpu_milli = 1000;
  p.num_gpu = static_cast<std::int16_t>(num_gpu);
  p.gpu_milli = static_cast<std::int16_t>(milli);
  return p;
}

TEST(GpuContentsRecorder, CollectsFractionsPerGpuAndFailedWholeGpuPods) {
  GpuContentsRecorder recorder(TwoNodes());
  recorder.Record(Pod(1, 500), GpuPick{0, 0b01});
  recorder.Record(Pod(1, 300), GpuPick{1, 0b10});
  recorder.Record(Pod(1, 500), GpuPick{1, 0b01});
  recorder.Record(Pod(1, 1000), GpuPick{0, 0b10});  // whole GPU: not a fraction
  recorder.Record(Pod(1, 1000), GpuPick{});         // failed whole-GPU pod
  recorder.Record(Pod(2, 1000), GpuPick{});         // failed, but asks for two
  recorder.Record(Pod(1, 200), GpuPick{});          // failed fraction
  EXPECT_EQ(recorder.FractionalGpus(), 3);
  EXPECT_EQ(recorder.FractionCounts(), (std::map<int, int>{{300, 1}, {500, 2}}));
  EXPECT_EQ(recorder.failed_whole_gpu_pods(), 1);

  Result<PackingBound> bound = ComputePackingBound(recorder);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  EXPECT_EQ(bound->fractional_gpus, 3);
  // 500+300 once and half of 500+500 in the relaxation (two GPUs in integers).
  EXPECT_DOUBLE_EQ(bound->packed_gpus, 1.5);
  EXPECT_DOUBLE_EQ(bound->RecoverableGpus(), 1.0);  // 1.5 freed, but only one whole-GPU pod failed
}

TEST(PackingBound, RecoverableGpusAreLimitedByWhatFailed) {
  PackingBound b{.fractional_gpus = 10, .packed_gpus = 7.5, .failed_whole_gpu_pods = 2};
  EXPECT_DOUBLE_EQ(b.RecoverableGpus(), 2.0);
  b.failed_whole_gpu_pods = 100;
  EXPECT_DOUBLE_EQ(b.RecoverableGpus(), 2.5);
}

}  // namespace
}  // namespace septa::gpu
