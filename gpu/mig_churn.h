// MIG under churn (shared/docs/MIG-BENCH.md §3-§5): a discrete-event
// simulator of pods arriving and leaving on a cluster of MIG GPUs, each pod
// asking for one MIG shape (or k whole GPUs as k 7g instances on one node),
// admitted in loss or queue mode by a pluggable policy. It enforces the
// physical rules of re-partitioning: a whole-GPU re-layout (R-GPU) needs
// every instance of the GPU unused, makes the GPU unusable until it is done
// and, under the GPU operator's mig-manager, pauses binds on the whole node;
// a per-instance change (R-GI) destroys and creates free instances only, the
// running ones untouched, each created instance running pods after a delay.
// A policy may drain running pods (they wait again and restart from the
// beginning: no checkpoint).
// Pure: randomness comes from the seed, time is simulated, and decision times
// are measured only through an optional clock the caller injects.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/mig_geometry.h"

namespace septa::gpu {

// The model-independent MIG shapes of MIG-BENCH §3 (`+me` excluded).
enum MigShape : int { k1g = 0, k1gDoubleMemory, k2g, k3g, k4g, k7g, kMigShapeCount };
inline constexpr std::array<int, kMigShapeCount> kShapeCompute = {1, 1, 2, 3, 4, 7};
inline constexpr std::array<int, kMigShapeCount> kShapeMemory = {1, 2, 2, 4, 4, 8};
const char* MigShapeName(int shape);

// The profile index of `shape` on `model` (exact compute and memory slices,
// no `+me`), -1 if the model has none; and the shape of a profile, -1 if none.
int ShapeProfile(const GpuModel& model, int shape);
int ProfileShape(const MigProfile& profile);

// Mapping M1 (MIG-BENCH §4): the smallest shape with compute g/7 >= f and
// memory m/8 >= f, f = gpu_milli / 1000.
int ShapeForMilli(int gpu_milli);

// One GPU pod of an openb pod list, as the churn workload needs it.
struct ChurnTracePod {
  int num_gpu = 0;
  int gpu_milli = 0;             // per GPU
  std::uint32_t model_mask = 0;  // bit per ChurnCluster model; 0 = any
  double created_s = 0;          // creation_time
  double lifetime_s = 0;         // deletion - creation
};

// Parses an openb pod list (columns name,cpu_milli,memory_mib,num_gpu,
// gpu_milli,gpu_spec,...,creation_time,deletion_time); keeps GPU pods.
// gpu_spec goes through MIG-BENCH's fixed table (T4/P100/V100M16/A10 ->
// A100-40GB, V100M32 -> A100-80GB, G2 -> H100-80GB, G3 -> H200) onto the
// bits of `models` (canonical names).
Result<std::vector<ChurnTracePod>> ParseChurnTrace(std::string_view text, std::string_view source,
                                                   const std::vector<std::string>& models);

// One arriving pod: `gpus` = 1 with any shape, or k > 1 with k 7g instances on one node.
struct ChurnPod {
  int shape = k7g;
  int gpus = 1;
  std::uint32_t model_mask = 0;  // 0 = any model
  double lifetime_s = 0;
  double created_s = 0;  // in the trace (W2 replays its gaps); 0 for synthetic pods
  int ComputeSlices() const { return kShapeCompute[shape] * gpus; }
  int ShapeClass() const;  // 0 = 1g-2g, 1 = 3g-4g, 2 = 7g, 3 = multi-GPU
};

// The workload of W1 (openb-churn, M1): trace pods with lifetimes floored at
// `min_lifetime_s` and, when `max_lifetime_s` > 0, capped there.
std::vector<ChurnPod> ChurnWorkloadM1(const std::vector<ChurnTracePod>& trace, double min_lifetime_s = 60,
                                      double max_lifetime_s = 0);

// W3 synthetic mixes (MIG-BENCH §5, our own distributions) over
// {1g, 2g, 3g, 4g, 7g}: "uniform"; "small-heavy" 50/25/15/7/3 %; "large-heavy"
// 10/15/25/25/25 %; exponential lifetimes with mean 1 h. `count` pods drawn
// with `seed`; InvalidArgument for another name.
Result<std::vector<ChurnPod>> SyntheticWorkload(std::string_view mix, int count, std::uint64_t seed);

// The cluster: nodes of 8 GPUs of one model each.
struct ChurnCluster {
  std::vector<const GpuModel*> models;  // at most 32
  std::vector<int> node_model;          // per node: index into models
  int gpus_per_node = 8;
  int Gpus() const { return static_cast<int>(node_model.size()) * gpus_per_node; }
};

// mix-256 × scale (MIG-BENCH §5): 8 A100-40GB + 8 A100-80GB + 12 H100-80GB +
// 4 H200 nodes per scale unit (scale 5 = mix-1280).
Result<ChurnCluster> MixCluster(const Catalog& catalog, int scale);
// mix-6208 (MIG-BENCH §5, openb's scale): 194 + 194 + 291 + 97 nodes of the
// same four models, interleaved like MixCluster's.
Result<ChurnCluster> Mix6208Cluster(const Catalog& catalog);
std::vector<std::string> MixModelNames();

// --- simulator state, as policies see it ---
struct ChurnInstance {
  int profile = 0;  // index into the GPU model's mig_profiles
  int start = 0;
  int pod = -1;         // the pod using it, -1 = free
  double ready_at = 0;  // R-GI: created then; a pod bound before starts then
};

struct ChurnGpu {
  int node = 0;
  int model = 0;  // index into ChurnCluster::models
  std::vector<ChurnInstance> instances;
  double busy_until = 0;  // re-layout in progress until then
  int used_instances = 0;
  int used_memory_slices = 0;
};

struct ChurnNode {
  int model = 0;
  std::vector<int> gpus;
  double paused_until = 0;  // no binds on the node until then
  int used_memory_slices = 0;
};

// A placement: per GPU of the pod, the instance (index into the GPU's layout
// after the decision's changes, i.e. into a change's `layout`).
struct ChurnSlot {
  int gpu = 0;
  int instance = 0;
};
// A change of one GPU's instances to `layout`.
//  - R-GPU (per_instance false): the GPU is re-laid out as a whole; every
//    instance must be unused (after the decision's drains). The GPU is
//    unusable for RelayoutCost::gpu_busy_s.
//  - R-GI (per_instance true): every used instance that is not drained must
//    be in `layout` at its profile and start; free instances of `layout`
//    that exist already are kept, the others are created (running pods after
//    RelayoutCost::instance_s), free ones not in `layout` destroyed.
struct ChurnRelayout {
  int gpu = 0;
  MigLayout layout;
  bool per_instance = false;
};
struct ChurnDecision {
  std::vector<ChurnRelayout> relayouts;
  std::vector<ChurnSlot> slots;  // empty = accepted without a slot (the fluid bound)
  bool planned = false;          // a re-layout plan was computed (its time counts as plan time)
  // Running pods evicted first (ids as in ChurnInstance::pod): their work so
  // far is lost and they wait again, tried at once after the decision (queue
  // mode), or are placed again at once with per-instance changes at most
  // (loss mode); one never placed again is dropped.
  std::vector<int> drains;

  // A placement on existing instances, nothing else changed.
  static ChurnDecision At(std::vector<ChurnSlot> slots) {
    ChurnDecision d;
    d.slots = std::move(slots);
    return d;
  }
};

// How a policy's changes cost (MIG-BENCH §3 defaults: t_gi 5 s, t_dp 30 s, t_node 120 s).
struct RelayoutCost {
  double gpu_busy_s = 0;    // R-GPU: the GPU is unusable this long
  double node_pause_s = 0;  // any change: 0 = no node pause; else binds on the node blocked this long
  double instance_s = 0;    // R-GI: a created instance runs pods after this long
};

class ChurnState {
 public:
  const ChurnCluster& cluster() const { return *cluster_; }
  const GpuModel& ModelOf(int gpu) const { return *cluster_->models[gpus_[gpu].model]; }
  const std::vector<ChurnGpu>& gpus() const { return gpus_; }
  const std::vector<ChurnNode>& nodes() const { return nodes_; }
  double now() const { return now_; }
  // The profile index of `shape` on cluster model `model`, -1 if none.
  int ProfileOf(int model, int shape) const { return profile_of_[model][shape]; }
  // Binds possible now on the GPU (its node not paused, no re-layout running).
  bool Usable(int gpu) const;
  bool Idle(int gpu) const { return gpus_[gpu].used_instances == 0; }
  bool ModelAllowed(const ChurnPod& pod, int model) const {
    return pod.model_mask == 0 || ((pod.model_mask >> model) & 1u);
  }
  // Usable free instances of (model, profile) in the cluster: a fast "cannot fit".
  int FreeUsable(int model, int profile) const;
  // Arrivals so far (the warm-up included).
  int arrivals() const { return arrivals_; }
  int node_pauses_total() const { return node_pauses_total_; }
  // Every pod so far, by the id in ChurnInstance::pod.
  const ChurnPod& pod(int id) const { return pods_[id]; }
  // When the pod's current run started (or starts: its instance's creation or
  // its node's pause may still delay it).
  double started(int id) const { return started_[id]; }

 private:
  friend class ChurnSimulator;
  const ChurnCluster* cluster_ = nullptr;
  std::vector<ChurnPod> pods_;
  std::vector<double> started_;
  std::vector<ChurnGpu> gpus_;
  std::vector<ChurnNode> nodes_;
  std::vector<std::array<int, kMigShapeCount>> profile_of_;
  std::vector<std::vector<int>> free_count_;  // [model][profile]: free instances (usable or not)
  double now_ = 0;
  int arrivals_ = 0;
  int node_pauses_total_ = 0;
};

class ChurnPolicy {
 public:
  virtual ~ChurnPolicy() = default;
  virtual std::string name() const = 0;
  // Every GPU's layout at time 0 (default: the model's stock all-balanced).
  virtual MigLayout InitialLayout(const ChurnState& state, int gpu);
  virtual RelayoutCost Cost() const { return {}; }
  // Where the pod goes now, or nullopt. `may_relayout`: the simulator allows
  // re-layouts in this call (it limits them to one attempt per event).
  virtual std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool may_relayout) = 0;
  // Queue mode: batch planners re-lay out GPUs for the waiting pods.
  virtual std::vector<ChurnRelayout> Plan(const ChurnState& /*state*/,
                                          const std::vector<const ChurnPod*>& /*waiting*/) {
    return {};
  }
  // When the policy wants Plan called again (batch windows), if at all.
  virtual std::optional<double> WakeAt() const { return std::nullopt; }
  // The pod left its instances: it ended, or it was drained.
  virtual void OnDepart(const ChurnPod& /*pod*/) {}
  // Whether a pod's instances are destroyed when it leaves them (R-GI
  // policies that create one per pod: HAMi v2.10, DRA); else they stay, free.
  virtual bool DestroysFreedInstances() const { return false; }
};

// The workload's demand profile: per shape, its share of compute-slice × lifetime
// (multi-GPU pods count as 7g). Policies that size layouts offline use it.
std::array<double, kMigShapeCount> SliceTimeShares(const std::vector<ChurnPod>& workload);

// P0: fixed layouts from the visible trace's mix (balanced / 4g+3g / 3g×2 / 7g GPUs), never re-laid out.
std::unique_ptr<ChurnPolicy> MakeStaticPolicy(const std::array<double, kMigShapeCount>& shares);
// P1: HAMi templates (≤ v2.9).
std::unique_ptr<ChurnPolicy> MakeHamiTemplatesPolicy(double t_gi_s);
// P3: nos's batch planner; `per_instance` false = the R-GPU variant (only
// idle GPUs are re-laid out), true = nos as it is (R-GI: mig-agent changes the
// free devices of GPUs that run pods too).
std::unique_ptr<ChurnPolicy> MakeNosPolicy(double t_gi_s, double t_dp_s, bool per_instance);
// P2: HAMi v2.10 dynamic MIG, R-GI: per pod the smallest-memory allowlisted
// profile (1g, 2g, 3g, 7g) holding the pod's memory, on HAMi's binpack node and
// spread GPU; its instance is created at bind (`t_gi_s`) and destroyed when the
// pod ends. No instance at time 0.
std::unique_ptr<ChurnPolicy> MakeHamiDynamicPolicy(double t_gi_s);
// P4: NVIDIA DRA driver DynamicMIG, R-GI: the pod's exact profile at the first
// free placement in the driver's device order (GPU, then start) on the least
// allocated node; created at prepare (`t_gi_s`), destroyed on release. No
// instance at time 0.
std::unique_ptr<ChurnPolicy> MakeDraPolicy(double t_gi_s);
// P7: Septa, R-GPU through nvidia.com/mig.config with the product's planner
// (gpu::PlanMigLayouts); `pauses_per_1000` caps node pauses per 1,000 arrivals.
std::unique_ptr<ChurnPolicy> MakeSeptaPolicy(const std::array<double, kMigShapeCount>& shares, double t_node_s,
                                             double pauses_per_1000);
// P5: FGD-MIG, FGD (ATC '23) carried to MIG slices, R-GI (t_gi until a
// created instance runs): a single-GPU pod takes the (GPU, start), on an
// existing free instance of its profile or where one can be created (free
// instances destroyed lazily), that least increases the GPU's expected
// unusable free slices under the `shares` mix; k-GPU pods k idle GPUs of one node.
std::unique_ptr<ChurnPolicy> MakeFgdMigPolicy(const std::array<double, kMigShapeCount>& shares, double t_gi_s);
// P6: GRMU-style, R-GI: quota-limited baskets (>= 3g / < 3g, quotas from
// `shares`), best fit, intra-GPU repack of free instances, then drains of at
// most `drain_budget_fraction` of the accepted pods, only when the drained
// pods can be placed again at once.
std::unique_ptr<ChurnPolicy> MakeGrmuPolicy(const std::array<double, kMigShapeCount>& shares, double t_gi_s,
                                            double drain_budget_fraction = 0.01);
// B1: the fluid bound (capacity in compute and memory slices, placement ignored).
std::unique_ptr<ChurnPolicy> MakeFluidBound();
// B2: free repack — admit iff the running pods plus the new one fit the
// cluster's GPUs under some layouts: the cutting-stock integer program over
// the maximal layouts' shape counts (GLPK), admitted iff its optimum is at
// most the GPU count. Models, gpu_spec and the one-node rule of multi-GPU
// pods are ignored: looser, never tighter. Greedy admission, so not a strict
// bound (MIG-BENCH).
std::unique_ptr<ChurnPolicy> MakeRepackBound();
// B2's question: how many whole GPUs hold `demand` instances per shape — the
// cutting-stock program min Σ x_p s.t. Σ_p n_s(p) x_p ≥ d_s, x_p ∈ ℕ, over the
// shape counts p of `model`'s maximal layouts. One program, re-solved per
// demand (GLPK, warm-started).
class RepackProgram {
 public:
  explicit RepackProgram(const GpuModel& model);
  ~RepackProgram();
  RepackProgram(const RepackProgram&) = delete;
  RepackProgram& operator=(const RepackProgram&) = delete;

  // Whether `demand` fits `limit` GPUs: exactly the integer optimum ≤ limit.
  bool Fits(const std::array<int, kMigShapeCount>& demand, int limit);
  // The integer optimum; -1 if GLPK finds none.
  int Gpus(const std::array<int, kMigShapeCount>& demand);

 private:
  struct Glpk;
  std::unique_ptr<Glpk> glpk_;
};

struct ChurnConfig {
  double load = 1.1;  // rho
  bool queue = true;  // false = loss mode
  double max_wait_s = 300;
  int warmup = 5000;  // arrivals; with prefill, measuring also waits until the longest lifetime has passed
  int measured = 20000;
  std::uint64_t seed = 42;
  // W2 (openb-replay): arrivals in the order of the pods' creation times, at
  // their gaps compressed so that the mean rate is the load's (bursts kept),
  // from a seeded start in the trace and round again after its last pod;
  // false = W1, Poisson arrivals drawing pods uniformly.
  bool replay = false;
  // Start from the offered load's steady state (RunChurn); false = an empty cluster.
  bool prefill = true;
  // Optional monotonic clock in nanoseconds, to time decisions; none = no timing.
  std::function<std::int64_t()> clock_ns;
};

struct ChurnResult {
  std::string policy;
  int arrivals = 0;  // measured
  int accepted = 0;
  double offered_slices = 0;  // compute slices
  double accepted_slices = 0;
  std::array<int, 4> class_offered = {};
  std::array<int, 4> class_accepted = {};
  int relayouts = 0;   // GPUs changed (R-GPU re-layouts and R-GI changes)
  int gi_changes = 0;  // GPU instances created plus destroyed
  int node_pauses = 0;
  int drains = 0;
  // Drained pods never placed again: taken off `accepted` (and its slices,
  // class and GPU-hours), counted here.
  int dropped = 0;
  double lost_gpu_hours = 0;  // drained pods' work thrown away
  // Accepted pods given an instance with less compute than their shape (HAMi
  // matches memory only: a 4g pod on a 3g instance).
  int undersized = 0;
  double gpu_hours = 0;  // served: compute slices / 7 × runtime, measured pods
  // Time-mean of GPUs running at least one instance, over the measured window
  // (0 for the bounds, which place nothing).
  double active_gpus = 0;
  std::vector<double> waits_s;  // accepted measured pods
  std::vector<double> decision_us;
  std::vector<double> plan_us;
  double sim_end_s = 0;
};

// One arrival of a run: when, and the pod (its lifetime included).
struct OfflineArrival {
  double at_s = 0;
  ChurnPod pod;
};
// The arrivals RunChurn offers every policy under `config` in loss mode (they
// depend on the seed alone): for offline bounds of the same run.
std::vector<OfflineArrival> ChurnArrivals(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload,
                                          ChurnConfig config);

// B3 (MIG-BENCH §5), as its LP relaxation: over `arrivals` into an empty
// cluster, lifetimes known, the most any loss-mode admission could accept
// with free, instant re-layouts and migrations (models, gpu_spec and the
// one-node rule of multi-GPU pods ignored, like B2's): a strict upper bound on
// the acceptance of the same arrivals by every policy that gives a pod an
// instance of its shape or larger, in compute slices and in pods (each its
// own optimum).
struct OfflineBound {
  double slices = 0;
  double pods = 0;
  std::array<double, 4> class_pods = {};  // by ChurnPod::ShapeClass, in the pods optimum
};
Result<OfflineBound> SolveOfflineBound(const ChurnCluster& cluster, const std::vector<OfflineArrival>& arrivals);

// W0 fill (MIG-BENCH §5): the workload's pods, never leaving, arrive into an
// empty cluster (loss mode, the seed's sequence) until the offered compute
// slices reach 130 % of the cluster's; the share of its slices allocated when
// the offer reached 100 % and 130 %. One policy from `make_policy` per cut.
struct ChurnFill {
  int arrivals_100 = 0, arrivals_130 = 0;
  double allocated_100 = 0, allocated_130 = 0;  // accepted compute slices / the cluster's
};
Result<ChurnFill> RunFill(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload,
                          const std::function<std::unique_ptr<ChurnPolicy>()>& make_policy, std::uint64_t seed);

// Runs the workload on the cluster under `policy`. Arrivals have the mean
// rate load × (compute slices) / E[compute slices × lifetime]: Poisson, each
// drawing a workload pod uniformly with replacement, or (`replay`) the
// workload's own sequence.
ChurnResult RunChurn(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload, ChurnPolicy& policy,
                     const ChurnConfig& config);

}  // namespace septa::gpu
