#include "gpu/mig_churn.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <sstream>

namespace septa::gpu {

const char* MigShapeName(int shape) {
  static constexpr std::array<const char*, kMigShapeCount> kNames = {"1g", "1g-2m", "2g", "3g", "4g", "7g"};
  return shape >= 0 && shape < kMigShapeCount ? kNames[shape] : "?";
}

int ProfileShape(const MigProfile& profile) {
  for (int s = 0; s < kMigShapeCount; ++s) {
    if (!profile.media_extensions && profile.compute_slices == kShapeCompute[s] &&
        profile.memory_slices == kShapeMemory[s]) {
      return s;
    }
  }
  return -1;
}

int ShapeProfile(const GpuModel& model, int shape) {
  for (std::size_t p = 0; p < model.mig_profiles.size(); ++p) {
    if (ProfileShape(model.mig_profiles[p]) == shape) return static_cast<int>(p);
  }
  return -1;
}

int ShapeForMilli(int gpu_milli) {
  // f <= g/7 and f <= m/8, smallest shape first (1g, 1g double memory, 2g, 3g, 4g, 7g).
  for (int s = 0; s < kMigShapeCount; ++s) {
    if (gpu_milli * 7 <= kShapeCompute[s] * 1000 && gpu_milli * 8 <= kShapeMemory[s] * 1000) return s;
  }
  return k7g;
}

int ChurnPod::ShapeClass() const {
  if (gpus > 1) return 3;
  if (shape == k7g) return 2;
  return shape >= k3g ? 1 : 0;
}

namespace {

std::vector<std::string> SplitChar(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::stringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

// MIG-BENCH §5's fixed gpu_spec table.
std::string SpecModel(const std::string& spec) {
  if (spec == "T4" || spec == "P100" || spec == "V100M16" || spec == "A10") return "A100-40GB";
  if (spec == "V100M32") return "A100-80GB";
  if (spec == "G2") return "H100-80GB";
  if (spec == "G3") return "H200-141GB";
  return "";
}

}  // namespace

Result<std::vector<ChurnTracePod>> ParseChurnTrace(std::string_view text, std::string_view source,
                                                   const std::vector<std::string>& models) {
  std::stringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(std::string(source) + ": empty file");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = SplitChar(line, ',');
  auto column = [&](const char* name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int c_num = column("num_gpu"), c_milli = column("gpu_milli"), c_spec = column("gpu_spec"),
            c_create = column("creation_time"), c_delete = column("deletion_time");
  if (c_num < 0 || c_milli < 0 || c_create < 0 || c_delete < 0) {
    return InvalidArgument(std::string(source) +
                           ": line 1: needs columns num_gpu, gpu_milli, creation_time, deletion_time");
  }
  std::vector<ChurnTracePod> pods;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> f = SplitChar(line, ',');
    const int need = std::max({c_num, c_milli, c_create, c_delete, c_spec});
    if (static_cast<int>(f.size()) <= need) {
      return InvalidArgument(std::string(source) + ": line " + std::to_string(line_no) + ": too few columns");
    }
    ChurnTracePod pod;
    try {
      pod.num_gpu = std::stoi(f[c_num]);
      pod.gpu_milli = std::stoi(f[c_milli]);
      pod.created_s = f[c_create].empty() ? 0 : std::stod(f[c_create]);
      const double deleted = f[c_delete].empty() ? pod.created_s : std::stod(f[c_delete]);
      pod.lifetime_s = std::max(0.0, deleted - pod.created_s);
    } catch (const std::exception&) {
      return InvalidArgument(std::string(source) + ": line " + std::to_string(line_no) + ": not a number");
    }
    if (pod.num_gpu <= 0 || pod.gpu_milli <= 0) continue;
    if (c_spec >= 0 && !f[c_spec].empty()) {
      for (const std::string& spec : SplitChar(f[c_spec], '|')) {
        const std::string model = SpecModel(spec);
        auto it = std::find(models.begin(), models.end(), model);
        if (it != models.end()) pod.model_mask |= 1u << (it - models.begin());
      }
      if (pod.model_mask == 0) {
        return InvalidArgument(std::string(source) + ": line " + std::to_string(line_no) + ": gpu_spec \"" + f[c_spec] +
                               "\" maps to no model of the cluster");
      }
    }
    pods.push_back(pod);
  }
  return pods;
}

std::vector<ChurnPod> ChurnWorkloadM1(const std::vector<ChurnTracePod>& trace, double min_lifetime_s,
                                      double max_lifetime_s) {
  std::vector<ChurnPod> out;
  out.reserve(trace.size());
  for (const ChurnTracePod& t : trace) {
    ChurnPod pod;
    pod.gpus = t.num_gpu;
    pod.shape = t.num_gpu > 1 ? k7g : ShapeForMilli(t.gpu_milli);
    pod.model_mask = t.model_mask;
    pod.created_s = t.created_s;
    pod.lifetime_s = std::max(min_lifetime_s, t.lifetime_s);
    if (max_lifetime_s > 0) pod.lifetime_s = std::min(pod.lifetime_s, max_lifetime_s);
    out.push_back(pod);
  }
  return out;
}

Result<std::vector<ChurnPod>> SyntheticWorkload(std::string_view mix, int count, std::uint64_t seed) {
  constexpr std::array<int, 5> kShapes = {k1g, k2g, k3g, k4g, k7g};
  std::array<double, 5> weights = {};
  if (mix == "uniform") {
    weights = {1, 1, 1, 1, 1};
  } else if (mix == "small-heavy") {
    weights = {50, 25, 15, 7, 3};
  } else if (mix == "large-heavy") {
    weights = {10, 15, 25, 25, 25};
  } else {
    return InvalidArgument("unknown synthetic mix \"" + std::string(mix) + "\" (uniform, small-heavy or large-heavy)");
  }
  double total = 0;
  for (double w : weights) total += w;
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); };
  std::vector<ChurnPod> pods;
  for (int i = 0; i < count; ++i) {
    double at = uniform() * total;
    std::size_t k = 0;
    while (k + 1 < weights.size() && at >= weights[k]) at -= weights[k++];
    ChurnPod pod;
    pod.shape = kShapes[k];
    pod.lifetime_s = -std::log(1.0 - uniform()) * 3600.0;
    pods.push_back(pod);
  }
  return pods;
}

std::vector<std::string> MixModelNames() { return {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB"}; }

namespace {

// Nodes of the four mix models, `units` rounds of `per_unit` nodes each,
// each round in model order, so that node order does not group a model.
Result<ChurnCluster> MixOf(const Catalog& catalog, const std::array<int, 4>& per_unit, int units) {
  ChurnCluster cluster;
  const std::vector<std::string> names = MixModelNames();
  for (std::size_t m = 0; m < names.size(); ++m) {
    const GpuModel* model = catalog.Find(names[m]);
    if (model == nullptr || !model->mig_capable) return InvalidArgument("catalog lacks MIG model " + names[m]);
    cluster.models.push_back(model);
  }
  for (int unit = 0; unit < units; ++unit) {
    for (std::size_t m = 0; m < per_unit.size(); ++m) {
      for (int n = 0; n < per_unit[m]; ++n) cluster.node_model.push_back(static_cast<int>(m));
    }
  }
  return cluster;
}

}  // namespace

Result<ChurnCluster> MixCluster(const Catalog& catalog, int scale) {
  if (scale < 1) return InvalidArgument("cluster scale must be at least 1");
  return MixOf(catalog, {8, 8, 12, 4}, scale);
}

Result<ChurnCluster> Mix6208Cluster(const Catalog& catalog) {
  // 97 rounds of 2 + 2 + 3 + 1 nodes: 194 + 194 + 291 + 97.
  return MixOf(catalog, {2, 2, 3, 1}, 97);
}

std::array<double, kMigShapeCount> SliceTimeShares(const std::vector<ChurnPod>& workload) {
  std::array<double, kMigShapeCount> shares = {};
  double total = 0;
  for (const ChurnPod& p : workload) {
    const double w = p.ComputeSlices() * p.lifetime_s;
    shares[p.shape] += w;
    total += w;
  }
  if (total > 0) {
    for (double& s : shares) s /= total;
  }
  return shares;
}

bool ChurnState::Usable(int gpu) const {
  const ChurnGpu& g = gpus_[gpu];
  return g.busy_until <= now_ && nodes_[g.node].paused_until <= now_;
}

int ChurnState::FreeUsable(int model, int profile) const {
  if (profile < 0) return 0;
  return free_count_[model][profile];
}

MigLayout ChurnPolicy::InitialLayout(const ChurnState& state, int gpu) {
  const GpuModel& model = state.ModelOf(gpu);
  std::vector<int> counts(model.mig_profiles.size(), 0);
  for (const std::string& name : model.balanced_layout) {
    const int p = model.ProfileIndex(name);
    if (p >= 0) ++counts[p];
  }
  auto layout = PlaceCounts(model, counts);
  return layout.ok() ? std::move(layout).value() : MigLayout{};
}

// --- the simulator ---

class ChurnSimulator {
 public:
  ChurnSimulator(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload, ChurnPolicy& policy,
                 const ChurnConfig& config)
      : workload_(workload), policy_(policy), config_(config), rng_(config.seed) {
    state_.cluster_ = &cluster;
    for (const GpuModel* model : cluster.models) {
      std::array<int, kMigShapeCount> of{};
      for (int s = 0; s < kMigShapeCount; ++s) of[s] = ShapeProfile(*model, s);
      state_.profile_of_.push_back(of);
      state_.free_count_.emplace_back(model->mig_profiles.size(), 0);
    }
    for (std::size_t n = 0; n < cluster.node_model.size(); ++n) {
      ChurnNode node;
      node.model = cluster.node_model[n];
      for (int g = 0; g < cluster.gpus_per_node; ++g) {
        node.gpus.push_back(static_cast<int>(state_.gpus_.size()));
        ChurnGpu gpu;
        gpu.node = static_cast<int>(n);
        gpu.model = node.model;
        state_.gpus_.push_back(gpu);
        capacity_slices_ += 7;
      }
      state_.nodes_.push_back(std::move(node));
    }
    for (std::size_t g = 0; g < state_.gpus_.size(); ++g) {
      SetLayout(static_cast<int>(g), policy_.InitialLayout(state_, static_cast<int>(g)));
    }
    double mean_work = 0;
    for (const ChurnPod& p : workload_) mean_work += p.ComputeSlices() * p.lifetime_s;
    mean_work /= std::max<std::size_t>(1, workload_.size());
    rate_ = mean_work > 0 ? config_.load * capacity_slices_ / mean_work : 0;
    if (config_.replay) StartReplay();
  }

  ChurnResult Run() {
    result_.policy = policy_.name();
    if (workload_.empty() || rate_ <= 0) return result_;
    Prefill();
    if (config_.prefill) {
      for (const ChurnPod& p : workload_) warmup_until_ = std::max(warmup_until_, p.lifetime_s);
    }
    Push(NextGap(), kArrival, -1);
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      if (result_.arrivals >= config_.measured && e.t > last_arrival_ + config_.max_wait_s) break;
      if (measuring_) {
        active_integral_ += active_gpus_ * (e.t - state_.now_);
        measured_time_ += e.t - state_.now_;
      }
      state_.now_ = e.t;
      switch (e.type) {
        case kArrival:
          Arrive();
          if (result_.arrivals < config_.measured) Push(state_.now_ + NextGap(), kArrival, -1);
          break;
        case kDepart:
          if (pods_[e.id].run == e.run) Release(e.id);
          break;
        case kTimeout: Timeout(e.id); break;
        default: break;  // kRetry, kWake: only the retry below
      }
      if (config_.queue && e.type != kArrival && e.type != kTimeout) RetryWaiting();
    }
    result_.sim_end_s = state_.now_;
    result_.active_gpus = measured_time_ > 0 ? active_integral_ / measured_time_ : 0;
    return result_;
  }

 private:
  enum EventType { kArrival, kDepart, kRetry, kTimeout, kWake };
  struct Event {
    double t = 0;
    std::uint64_t seq = 0;
    int type = 0;
    int id = 0;
    int run = 0;  // kDepart: the run of the pod it ends (a drained pod's old end is void)
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  // What the simulator keeps per pod beside ChurnState's pod and start.
  struct Live {
    double arrival = 0;
    bool measured = false;
    bool waiting = false;
    bool admitted = false;  // placed once (a drained pod waits again, admitted)
    bool undersized = false;
    int run = 0;          // placements so far
    double deadline = 0;  // waiting: given up then
    std::vector<ChurnSlot> slots;
  };

  void Push(double t, int type, int id, int run = 0) { events_.push(Event{t, seq_++, type, id, run}); }

  double Uniform() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }

  // W2: the workload by creation time, a seeded start, and the compression
  // that makes the mean gap 1 / rate (the trace's span over its gaps).
  void StartReplay() {
    replay_order_.resize(workload_.size());
    std::iota(replay_order_.begin(), replay_order_.end(), std::size_t{0});
    std::stable_sort(replay_order_.begin(), replay_order_.end(),
                     [&](std::size_t a, std::size_t b) { return workload_[a].created_s < workload_[b].created_s; });
    if (replay_order_.empty() || rate_ <= 0) return;
    replay_next_ = static_cast<std::size_t>(rng_() % replay_order_.size());
    const double span = workload_[replay_order_.back()].created_s - workload_[replay_order_.front()].created_s;
    // Seconds of simulated time per trace second; a trace created all at once
    // is spaced evenly.
    replay_scale_ = span > 0 ? static_cast<double>(replay_order_.size() - 1) / (rate_ * span) : 0;
  }

  // The gap to the next arrival: the trace's (compressed) in replay, the
  // mean gap across its end and before the first; else exponential.
  double NextGap() {
    if (!config_.replay) return -std::log(1.0 - Uniform()) / rate_;
    const bool across = !replay_started_ || replay_next_ == 0 || replay_scale_ == 0;
    replay_started_ = true;
    if (across) return 1.0 / rate_;
    return (workload_[replay_order_[replay_next_]].created_s - workload_[replay_order_[replay_next_ - 1]].created_s) *
           replay_scale_;
  }

  // The workload pod arriving now.
  std::size_t NextPick() {
    if (!config_.replay) return static_cast<std::size_t>(rng_() % workload_.size());
    const std::size_t pick = replay_order_[replay_next_];
    replay_next_ = (replay_next_ + 1) % replay_order_.size();
    return pick;
  }

  int NewPod(const ChurnPod& pod, bool measured) {
    state_.pods_.push_back(pod);
    state_.started_.push_back(0);
    pods_.push_back(Live{state_.now_, measured, false, false, false, 0, 0, {}});
    return static_cast<int>(pods_.size()) - 1;
  }

  const MigProfile& ProfileOn(const ChurnGpu& g, const ChurnInstance& inst) const {
    return state_.cluster_->models[g.model]->mig_profiles[inst.profile];
  }

  void SetLayout(int gpu, const MigLayout& layout) {
    ChurnGpu& g = state_.gpus_[gpu];
    for (const ChurnInstance& inst : g.instances) {
      if (inst.pod < 0) --state_.free_count_[g.model][inst.profile];
    }
    g.instances.clear();
    for (const MigInstance& inst : layout) {
      g.instances.push_back(ChurnInstance{inst.profile, inst.start, -1, 0});
      ++state_.free_count_[g.model][inst.profile];
    }
  }

  // The pod's slot on `gpu` follows its instance from index `from` to `to`.
  void MoveSlot(int pod, int gpu, int from, int to) {
    for (ChurnSlot& s : pods_[pod].slots) {
      if (s.gpu == gpu && s.instance == from) s.instance = to;
    }
  }

  // An R-GI change: used instances move to their index in `layout` (their
  // pods' slots follow), free ones present in both are kept, the rest of
  // `layout` is created and the free ones it lacks destroyed. Returns the
  // instances created plus destroyed.
  int ChangeInstances(int gpu, const MigLayout& layout, double ready_at) {
    ChurnGpu& g = state_.gpus_[gpu];
    std::vector<ChurnInstance> old = std::move(g.instances);
    std::vector<bool> taken(old.size(), false);
    g.instances.clear();
    int changes = 0;
    for (const MigInstance& want : layout) {
      std::size_t k = 0;
      while (k < old.size() && (taken[k] || old[k].profile != want.profile || old[k].start != want.start)) ++k;
      if (k == old.size()) {
        g.instances.push_back(ChurnInstance{want.profile, want.start, -1, ready_at});
        ++state_.free_count_[g.model][want.profile];
        ++changes;
        continue;
      }
      taken[k] = true;
      g.instances.push_back(old[k]);
      if (old[k].pod >= 0) MoveSlot(old[k].pod, gpu, static_cast<int>(k), static_cast<int>(g.instances.size()) - 1);
    }
    for (std::size_t k = 0; k < old.size(); ++k) {
      if (taken[k]) continue;
      --state_.free_count_[g.model][old[k].profile];  // Valid() let only free ones go
      ++changes;
    }
    return changes;
  }

  // Measuring starts after `warmup` arrivals and once every pod present at
  // time 0 has left (the longest lifetime has passed).
  bool Measuring() const { return measuring_; }

  std::optional<ChurnDecision> TimedPlace(const ChurnPod& pod, bool may_relayout) {
    const std::int64_t t0 = config_.clock_ns ? config_.clock_ns() : 0;
    std::optional<ChurnDecision> d = policy_.Place(state_, pod, may_relayout);
    if (config_.clock_ns && Measuring()) {
      const double us = static_cast<double>(config_.clock_ns() - t0) / 1000.0;
      (d && d->planned ? result_.plan_us : result_.decision_us).push_back(us);
    }
    return d;
  }

  static bool Contains(const std::vector<int>& ids, int id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  }

  // Whether the decision holds as a whole, checked before anything changes:
  // drains name distinct running pods; each GPU is changed once, to a valid
  // layout; an R-GPU re-layout's GPU runs nothing once the drains are done;
  // an R-GI change keeps every instance still used; a slot is a free
  // instance after the changes, one per GPU of the pod (`pod_gpus`; 0 = no
  // slot expected).
  bool Valid(const ChurnDecision& d, int pod_gpus) const {
    const int n_gpus = static_cast<int>(state_.gpus_.size());
    for (std::size_t i = 0; i < d.drains.size(); ++i) {
      const int id = d.drains[i];
      if (id < 0 || id >= static_cast<int>(pods_.size()) || pods_[id].slots.empty()) return false;
      if (std::find(d.drains.begin(), d.drains.begin() + static_cast<long>(i), id) !=
          d.drains.begin() + static_cast<long>(i)) {
        return false;
      }
    }
    auto still_used = [&](const ChurnInstance& inst) { return inst.pod >= 0 && !Contains(d.drains, inst.pod); };
    std::set<int> changed;
    for (const ChurnRelayout& r : d.relayouts) {
      if (r.gpu < 0 || r.gpu >= n_gpus || !changed.insert(r.gpu).second) return false;
      const ChurnGpu& g = state_.gpus_[r.gpu];
      if (!ValidateLayout(*state_.cluster_->models[g.model], r.layout).ok()) return false;
      for (const ChurnInstance& inst : g.instances) {
        if (!still_used(inst)) continue;
        if (!r.per_instance) return false;
        if (std::find(r.layout.begin(), r.layout.end(), MigInstance{inst.profile, inst.start}) == r.layout.end()) {
          return false;
        }
      }
    }
    if (d.slots.empty()) return true;
    if (static_cast<int>(d.slots.size()) != pod_gpus) return false;
    std::set<int> slot_gpus;
    for (const ChurnSlot& s : d.slots) {
      if (s.gpu < 0 || s.gpu >= n_gpus || !slot_gpus.insert(s.gpu).second) return false;
      const ChurnGpu& g = state_.gpus_[s.gpu];
      auto change =
          std::find_if(d.relayouts.begin(), d.relayouts.end(), [&](const ChurnRelayout& r) { return r.gpu == s.gpu; });
      if (change == d.relayouts.end()) {
        if (s.instance < 0 || s.instance >= static_cast<int>(g.instances.size()) ||
            still_used(g.instances[s.instance])) {
          return false;
        }
        continue;
      }
      if (s.instance < 0 || s.instance >= static_cast<int>(change->layout.size())) return false;
      const MigInstance& want = change->layout[s.instance];
      for (const ChurnInstance& inst : g.instances) {
        if (still_used(inst) && inst.profile == want.profile && inst.start == want.start) return false;
      }
    }
    return true;
  }

  // Frees the pod's instances, or destroys them when the policy says so.
  void Release(int id) {
    Live& live = pods_[id];
    const std::vector<ChurnSlot> slots = std::move(live.slots);
    live.slots.clear();
    for (const ChurnSlot& s : slots) {
      ChurnGpu& g = state_.gpus_[s.gpu];
      ChurnInstance& inst = g.instances[s.instance];
      inst.pod = -1;
      ++state_.free_count_[g.model][inst.profile];
      const int mem = ProfileOn(g, inst).memory_slices;
      if (--g.used_instances == 0) --active_gpus_;
      g.used_memory_slices -= mem;
      state_.nodes_[g.node].used_memory_slices -= mem;
      if (policy_.DestroysFreedInstances()) Destroy(s.gpu, s.instance);
    }
    policy_.OnDepart(state_.pods_[id]);
  }

  // Removes a free instance; the pods on the GPU's later instances follow
  // their instance's new index.
  void Destroy(int gpu, int instance) {
    ChurnGpu& g = state_.gpus_[gpu];
    --state_.free_count_[g.model][g.instances[instance].profile];
    g.instances.erase(g.instances.begin() + instance);
    for (int i = instance; i < static_cast<int>(g.instances.size()); ++i) {
      if (g.instances[i].pod >= 0) MoveSlot(g.instances[i].pod, gpu, i + 1, i);
    }
    if (Measuring()) {
      ++result_.relayouts;
      ++result_.gi_changes;
    }
  }

  // Evicts a running pod: its work so far is lost; it waits again from the
  // start of the queue (queue mode) or is re-placed after the decision (loss).
  void Drain(int id) {
    Live& live = pods_[id];
    const ChurnPod& pod = state_.pods_[id];
    Release(id);
    ++live.run;
    if (live.measured) {
      ++result_.drains;
      result_.lost_gpu_hours += pod.ComputeSlices() / 7.0 * std::max(0.0, state_.now_ - state_.started_[id]) / 3600.0;
    }
    live.waiting = true;
    live.deadline = state_.now_ + config_.max_wait_s;
    waiting_.push_front(id);
    if (config_.queue) Push(live.deadline, kTimeout, id);
  }

  // Adds a measured pod to the accepted ones (`sign` 1), or takes it off (-1).
  void CountAccepted(int id, int sign) {
    const ChurnPod& pod = state_.pods_[id];
    result_.accepted += sign;
    result_.undersized += pods_[id].undersized ? sign : 0;
    result_.accepted_slices += sign * pod.ComputeSlices();
    result_.class_accepted[pod.ShapeClass()] += sign;
    result_.gpu_hours += sign * pod.ComputeSlices() / 7.0 * pod.lifetime_s / 3600.0;
  }

  // Counts a drained pod that never ran again out of the accepted ones.
  void Drop(int id) {
    Live& live = pods_[id];
    live.waiting = false;
    waiting_.remove(id);
    if (!live.measured) return;
    ++result_.dropped;
    CountAccepted(id, -1);
  }

  // Applies the changes of a valid decision (drains first).
  void ApplyChanges(const ChurnDecision& d) {
    for (int id : d.drains) Drain(id);
    const RelayoutCost cost = policy_.Cost();
    std::set<int> paused;
    for (const ChurnRelayout& r : d.relayouts) {
      ChurnGpu& g = state_.gpus_[r.gpu];
      int changes = 0;
      if (r.per_instance) {
        changes = ChangeInstances(r.gpu, r.layout, state_.now_ + cost.instance_s);
      } else {
        changes = static_cast<int>(g.instances.size() + r.layout.size());
        SetLayout(r.gpu, r.layout);
        g.busy_until = std::max(g.busy_until, state_.now_ + cost.gpu_busy_s);
        if (cost.gpu_busy_s > 0) Push(g.busy_until, kRetry, -1);
      }
      if (Measuring()) {
        ++result_.relayouts;
        result_.gi_changes += changes;
      }
      if (cost.node_pause_s > 0 && paused.insert(g.node).second) {
        ChurnNode& node = state_.nodes_[g.node];
        node.paused_until = std::max(node.paused_until, state_.now_ + cost.node_pause_s);
        Push(node.paused_until, kRetry, -1);
        ++state_.node_pauses_total_;
        if (Measuring()) ++result_.node_pauses;
      }
    }
  }

  // Applies a decision for pod `id`; false (and nothing changed) when it is not valid.
  bool Apply(int id, const ChurnDecision& d) {
    if (!Valid(d, state_.pods_[id].gpus) || Contains(d.drains, id)) return false;
    ApplyChanges(d);
    Bind(id, d.slots);
    if (!config_.queue) {
      // Loss mode: the drained pods are placed again now — with per-instance
      // changes at most, no re-layout and no drain — or dropped.
      for (int drained : d.drains) {
        std::optional<ChurnDecision> again = policy_.Place(state_, state_.pods_[drained], false);
        const bool plain = again && again->drains.empty() &&
                           std::all_of(again->relayouts.begin(), again->relayouts.end(),
                                       [](const ChurnRelayout& r) { return r.per_instance; });
        if (!plain || !Valid(*again, state_.pods_[drained].gpus)) {
          Drop(drained);
          continue;
        }
        waiting_.remove(drained);
        ApplyChanges(*again);
        Bind(drained, again->slots);
      }
    }
    return true;
  }

  void Bind(int id, const std::vector<ChurnSlot>& slots) {
    Live& live = pods_[id];
    const ChurnPod& pod = state_.pods_[id];
    double start = state_.now_;
    bool undersized = false;
    for (const ChurnSlot& s : slots) {
      ChurnGpu& g = state_.gpus_[s.gpu];
      ChurnInstance& inst = g.instances[s.instance];
      undersized |= ProfileOn(g, inst).compute_slices < kShapeCompute[pod.shape];
      inst.pod = id;
      --state_.free_count_[g.model][inst.profile];
      const int mem = ProfileOn(g, inst).memory_slices;
      if (g.used_instances++ == 0) ++active_gpus_;
      g.used_memory_slices += mem;
      state_.nodes_[g.node].used_memory_slices += mem;
      start = std::max({start, g.busy_until, state_.nodes_[g.node].paused_until, inst.ready_at});
    }
    live.slots = slots;
    live.waiting = false;
    state_.started_[id] = start;
    Push(start + pod.lifetime_s, kDepart, id, live.run);
    if (live.admitted) return;  // a drained pod placed again: counted once
    live.admitted = true;
    live.undersized = undersized;
    if (live.measured) {
      CountAccepted(id, 1);
      result_.waits_s.push_back(start - live.arrival);
    }
  }

  void Arrive() {
    ++state_.arrivals_;
    if (!measuring_ && state_.arrivals_ > config_.warmup && state_.now_ >= warmup_until_) measuring_ = true;
    const int id = NewPod(workload_[NextPick()], Measuring());
    last_arrival_ = state_.now_;
    const ChurnPod& pod = state_.pods_[id];
    if (pods_[id].measured) {
      ++result_.arrivals;
      result_.offered_slices += pod.ComputeSlices();
      ++result_.class_offered[pod.ShapeClass()];
    }
    std::optional<ChurnDecision> d = TimedPlace(pod, true);
    if (d && Apply(id, *d)) {
      // The pods it drained try again at once, before another arrival takes their room.
      if (config_.queue && !d->drains.empty()) RetryWaiting();
      return;
    }
    if (config_.queue) {
      Live& live = pods_[id];
      live.waiting = true;
      live.deadline = state_.now_ + config_.max_wait_s;
      waiting_.push_back(id);
      Push(live.deadline, kTimeout, id);
      PlanForWaiting();
    }
  }

  // Starts from the steady state of the offered load (M/G/inf): round(rate ×
  // E[lifetime]) pods present at time 0, drawn in proportion to their
  // lifetimes, each with a uniform share of its lifetime left. openb's lifetimes
  // are so heavy-tailed (the longest 1 % of pods carry 90 % of the pod-seconds)
  // that a warm-up of arrivals alone never reaches the stated load. Loss
  // admission, never measured.
  void Prefill() {
    if (!config_.prefill) return;
    std::vector<double> cumulative;
    double sum = 0;
    for (const ChurnPod& p : workload_) cumulative.push_back(sum += p.lifetime_s);
    const double mean_lifetime = sum / static_cast<double>(workload_.size());
    const auto count = static_cast<long>(std::lround(rate_ * mean_lifetime));
    for (long k = 0; k < count; ++k) {
      const double at = Uniform() * sum;
      const auto pick =
          static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), at) - cumulative.begin());
      ChurnPod pod = workload_[std::min(pick, workload_.size() - 1)];
      pod.lifetime_s = std::max(1.0, Uniform() * pod.lifetime_s);
      const int id = NewPod(pod, false);
      std::optional<ChurnDecision> d = policy_.Place(state_, state_.pods_[id], true);
      if (d) Apply(id, *d);
    }
  }

  void Timeout(int id) {
    Live& live = pods_[id];
    if (!live.waiting || state_.now_ < live.deadline) return;
    if (live.admitted) {
      Drop(id);
      return;
    }
    live.waiting = false;
    waiting_.remove(id);
  }

  // Queue mode: every waiting pod is tried again (FIFO, a shape that failed is
  // not tried again in the same round); one re-layout attempt per round.
  void RetryWaiting() {
    std::set<std::uint64_t> failed;
    bool relayout_tried = false;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      const int id = *it;
      const ChurnPod& pod = state_.pods_[id];
      const std::uint64_t key = static_cast<std::uint64_t>(pod.shape) | static_cast<std::uint64_t>(pod.gpus) << 8 |
                                static_cast<std::uint64_t>(pod.model_mask) << 32;
      if (failed.count(key)) {
        ++it;
        continue;
      }
      std::optional<ChurnDecision> d = TimedPlace(pod, !relayout_tried);
      relayout_tried = true;
      // A decision may drain pods onto the queue: step past this pod first.
      ++it;
      if (!d || !Apply(id, *d)) failed.insert(key);
      else waiting_.remove(id);
    }
    PlanForWaiting();
  }

  void PlanForWaiting() {
    std::vector<const ChurnPod*> waiting;
    for (int id : waiting_) waiting.push_back(&state_.pods_[id]);
    const std::int64_t t0 = config_.clock_ns ? config_.clock_ns() : 0;
    ChurnDecision plan;
    plan.relayouts = policy_.Plan(state_, waiting);
    if (!plan.relayouts.empty()) {
      if (config_.clock_ns && Measuring()) {
        result_.plan_us.push_back(static_cast<double>(config_.clock_ns() - t0) / 1000.0);
      }
      if (Valid(plan, 0)) ApplyChanges(plan);
    }
    if (auto wake = policy_.WakeAt(); wake && *wake > state_.now_ && *wake != last_wake_) {
      last_wake_ = *wake;
      Push(*wake, kWake, -1);
    }
  }

  const std::vector<ChurnPod>& workload_;
  ChurnPolicy& policy_;
  ChurnConfig config_;
  std::mt19937_64 rng_;
  std::vector<std::size_t> replay_order_;  // W2: workload indices by creation time
  std::size_t replay_next_ = 0;            // the next arrival's position in it
  double replay_scale_ = 0;
  bool replay_started_ = false;
  ChurnState state_;
  ChurnResult result_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  std::vector<Live> pods_;
  std::list<int> waiting_;
  double rate_ = 0;
  double capacity_slices_ = 0;
  double last_arrival_ = 0;
  double last_wake_ = -1;
  double warmup_until_ = 0;
  bool measuring_ = false;
  int active_gpus_ = 0;
  double active_integral_ = 0;
  double measured_time_ = 0;
};

ChurnResult RunChurn(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload, ChurnPolicy& policy,
                     const ChurnConfig& config) {
  ChurnSimulator sim(cluster, workload, policy, config);
  return sim.Run();
}

}  // namespace septa::gpu
