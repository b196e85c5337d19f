// Interest management at MMO scale (issue 31): the reference workload is 10,000 bodies on the
// core bench's random walk (the reference shapes in a cube of side 120, every body moved by
// (u - .5, u - .5, u - .5) per batch), 1,000 observers attached to the first 1,000 bodies, enter
// radius 30, leave radius 35, at most the 64 nearest, 60 batches per second of all moves.
//
// Three measurements per run, the runs alternating them:
// - latency: the batches applied to a Scene at 60 per second, the observers as an interest
//   stream (InterestWatcher) on a WatchDispatcher of one worker thread, as the server runs them;
//   from each batch's Apply returning to its update being queued for the stream (the hub's copy
//   of the batch, the mirror's positions, every observer's delta): p50 and p99. The updates'
//   bytes as the server encodes them (InterestResponse) give the bytes per tick.
// - against a brute force: the same batches applied in process to a mirror and an InterestSet
//   (what the worker does per batch), and, in the same run, every observer's set recomputed from
//   every body (the same rules, interest_rules.h) with its delta; the sets are compared after
//   every batch (any difference aborts), and the ratio of the times is reported.
// - ingest: the same batches back to back through Scene::Apply, without and with the interest
//   stream attached (dispatched): moves per CPU second of the writer's thread (what an
//   UpdateStream's acks wait for), as collide-bench-watch measures it, and of the whole process
//   until every batch was evaluated.
//
// Ends with a table `figure value`.
//
//   collide-bench-interest [--bodies N] [--observers M] [--batches B] [--runs R] [--quick]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "collide/v1/collide.pb.h"
#include "scene/scene.h"
#include "server/convert/interest_convert.h"
#include "watch/interest_rules.h"
#include "watch/interest_set.h"
#include "watch/interest_watcher.h"
#include "watch/scene_mirror.h"
#include "watch/watch_dispatcher.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int bodies = 10000;
  int observers = 1000;
  int batches = 600;
  int runs = 3;
  float side = 120.0f;
  float enter = 30.0f;
  float leave = 35.0f;
  uint32_t nearest = 64;
  double hz = 60.0;
};

double CpuSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The random walk: the reference scene's bodies, then one step per body per batch.
class Walk {
 public:
  explicit Walk(const Options& o) : rng_(42) {
    const ReferenceScene ref = MakeReferenceScene(o.bodies, o.side, 0, 0);
    shapes_ = ref.shapes;
    poses_ = ref.poses;
  }
  UpdateBatch Create() const {
    UpdateBatch batch;
    for (size_t i = 0; i < poses_.size(); ++i) {
      batch.ops.push_back(UpsertOp(BodyDesc{.id = i + 1, .shape = shapes_[i], .pose = poses_[i]}));
    }
    return batch;
  }
  // The next batch: every body one step (u - .5 per axis, drawn x, y, z as the reference does).
  void Next(UpdateBatch* batch) {
    batch->ops.resize(poses_.size());
    for (size_t i = 0; i < poses_.size(); ++i) {
      const float x = uniform_(rng_);
      const float y = uniform_(rng_);
      const float z = uniform_(rng_);
      poses_[i].position += Vec3{x - 0.5f, y - 0.5f, z - 0.5f};
      batch->ops[i] = SetPoseOp(i + 1, poses_[i]);
    }
  }

 private:
  std::mt19937 rng_;
  std::uniform_real_distribution<float> uniform_{0.0f, 1.0f};
  std::vector<Shape> shapes_;
  std::vector<Pose> poses_;
};

std::vector<ObserverSpec> Observers(const Options& o) {
  std::vector<ObserverSpec> out;
  for (int i = 0; i < o.observers; ++i) {
    ObserverSpec spec;
    spec.id = static_cast<uint64_t>(i + 1);
    spec.attached_to = static_cast<uint64_t>(i + 1);
    spec.enter_radius = o.enter;
    spec.leave_radius = o.leave;
    spec.max_relevant = o.nearest;
    out.push_back(spec);
  }
  return out;
}

// Copies every applied batch's records (the hub's input).
class Recorder final : public SceneObserver {
 public:
  void OnApplied(const AppliedBatch& batch, const SceneView&) override {
    changes.assign(batch.changes.begin(), batch.changes.end());
  }
  void OnDeleted() override {}
  std::vector<BodyChange> changes;
};

// Every observer's set from every body, as a game server's loop would compute it without an
// index: the bodies in flat arrays (kept from the change records, untimed), each observer
// scanning all of them with the same rules, its nearest chosen by partial selection.
class BruteForce {
 public:
  BruteForce(std::vector<ObserverSpec> specs) : specs_(std::move(specs)) {
    for (const ObserverSpec& s : specs_) rules_.push_back(RulesOf(s));
    sets_.resize(specs_.size());
  }
  void Track(const std::vector<BodyChange>& changes) {
    for (const BodyChange& c : changes) {
      const size_t i = c.id - 1;
      if (i >= ids_.size()) {
        ids_.resize(i + 1);
        pos_.resize(i + 1);
        category_.resize(i + 1);
        mask_.resize(i + 1);
        rotation_.resize(i + 1);
      }
      ids_[i] = c.id;
      pos_[i] = c.after->pose.position;
      rotation_[i] = c.after->pose.rotation;
      category_[i] = c.after->category;
      mask_[i] = c.after->mask;
    }
  }
  // Recomputes every set; returns the number of ids in the deltas.
  size_t Evaluate() {
    size_t delta_ids = 0;
    for (size_t k = 0; k < specs_.size(); ++k) {
      const ObserverSpec& spec = specs_[k];
      Body host;
      const size_t h = *spec.attached_to - 1;
      host.pose = Pose{rotation_[h], pos_[h]};
      const ObserverFrame frame = FrameOf(spec, rules_[k], &host);
      std::vector<uint64_t>& before = sets_[k];
      candidates_.clear();
      for (size_t i = 0; i < ids_.size(); ++i) {
        if (ids_[i] == *spec.attached_to) continue;
        if (!Accepts(spec, category_[i], mask_[i])) continue;
        const float d2 = InterestDistance2(frame.position, pos_[i]);
        if (!Eligible(rules_[k], frame, pos_[i], d2,
                      [&] { return std::binary_search(before.begin(), before.end(), ids_[i]); })) {
          continue;
        }
        candidates_.push_back({d2, ids_[i]});
      }
      if (candidates_.size() > spec.max_relevant) {
        std::nth_element(candidates_.begin(), candidates_.begin() + (spec.max_relevant - 1),
                         candidates_.end());
        candidates_.resize(spec.max_relevant);
      }
      next_.clear();
      for (const auto& [d2, id] : candidates_) next_.push_back(id);
      std::sort(next_.begin(), next_.end());
      diff_.clear();
      std::set_symmetric_difference(before.begin(), before.end(), next_.begin(), next_.end(),
                                    std::back_inserter(diff_));
      delta_ids += diff_.size();
      before.swap(next_);
    }
    return delta_ids;
  }
  const std::vector<uint64_t>& set(size_t k) const { return sets_[k]; }

 private:
  std::vector<ObserverSpec> specs_;
  std::vector<ObserverRules> rules_;
  std::vector<uint64_t> ids_;
  std::vector<Vec3> pos_;
  std::vector<Quat> rotation_;
  std::vector<uint32_t> category_, mask_;
  std::vector<std::vector<uint64_t>> sets_;
  std::vector<std::pair<float, uint64_t>> candidates_;
  std::vector<uint64_t> next_, diff_;
};

struct Results {
  std::vector<double> latency_ms;
  double bytes_per_tick = 0.0;
  double interest_ms = 0.0;  // median per batch, in process
  double brute_ms = 0.0;
  double writer_ratio = 0.0;
  double total_ratio = 0.0;
  int resyncs = 0;
};

// The in-process comparison: the mirror and InterestSet against the brute force, batch by batch.
void CompareWithBruteForce(const Options& o, int batches, Results* r) {
  Walk walk(o);
  Scene scene("bench", SceneOptions{});
  Recorder recorder;
  if (!scene.AddObserver(&recorder, [](const SceneView&) {}).ok()) std::abort();
  const UpdateBatch create = walk.Create();
  if (!scene.Apply(create).ok()) std::abort();
  SceneMirror mirror(SceneMirror::Parts{.world = false, .grid = true});
  mirror.Capture(scene);
  const std::vector<ObserverSpec> specs = Observers(o);
  InterestSet set;
  std::vector<InterestSet::Change> changes;
  for (const ObserverSpec& s : specs) changes.push_back({.id = s.id, .spec = s});
  InterestUpdate update;
  if (!set.ApplyChanges(changes, mirror, &update)) std::abort();
  BruteForce brute(specs);
  brute.Track(recorder.changes);
  brute.Evaluate();
  std::vector<double> interest_ms, brute_ms;
  UpdateBatch batch;
  for (int b = 0; b < batches; ++b) {
    walk.Next(&batch);
    if (!scene.Apply(batch).ok()) std::abort();
    update = InterestUpdate{};
    const Clock::time_point t0 = Clock::now();
    mirror.Apply(recorder.changes, scene.version(), scene.tick());
    if (!set.Apply(AppliedBatch{.changes = recorder.changes}, mirror, &update)) std::abort();
    const Clock::time_point t1 = Clock::now();
    brute.Track(recorder.changes);
    const Clock::time_point t2 = Clock::now();
    const size_t brute_ids = brute.Evaluate();
    const Clock::time_point t3 = Clock::now();
    interest_ms.push_back(Ms(t1 - t0));
    brute_ms.push_back(Ms(t3 - t2));
    // The same sets, the same deltas.
    if (brute_ids != update.ids.size()) {
      std::fprintf(stderr, "batch %d: %zu delta ids by brute force, %zu by the sets\n", b,
                   brute_ids, update.ids.size());
      std::abort();
    }
    for (size_t k = 0; k < specs.size(); ++k) {
      if (*set.SetOf(specs[k].id) != brute.set(k)) {
        std::fprintf(stderr, "batch %d: observer %llu differs from the brute force\n", b,
                     static_cast<unsigned long long>(specs[k].id));
        std::abort();
      }
    }
  }
  r->interest_ms = Median(interest_ms);
  r->brute_ms = Median(brute_ms);
  scene.RemoveObserver(&recorder);
}

// The stream as the server runs it, paced at o.hz: latency of each batch's update, and its bytes.
void MeasureLatency(const Options& o, int batches, Results* r) {
  Walk walk(o);
  auto scene = std::make_shared<Scene>("bench", SceneOptions{});
  if (!scene->Apply(walk.Create()).ok()) std::abort();
  WatchDispatcher dispatcher(WatchDispatcher::Options{.threads = 1});
  auto watcher =
      std::make_shared<InterestWatcher>(InterestWatcherOptions{.max_queued_events = 1u << 26});
  std::vector<ObserverSpec> specs = Observers(o);
  watcher->Submit(ObserverChanges{.upserts = specs});
  // Each queued update's time, by version (the listener runs on the worker right after queuing).
  std::vector<Clock::time_point> queued(static_cast<size_t>(batches) + 16);
  std::vector<InterestMessage> messages;
  messages.reserve(static_cast<size_t>(batches) + 16);
  Mutex mu;
  watcher->queue().SetListener([&] {
    const Clock::time_point now = Clock::now();
    InterestMessage m;
    MutexLock lock(&mu);
    while (watcher->queue().Pop(&m)) {
      if (const auto* u = std::get_if<InterestUpdate>(&m)) {
        if (u->version < queued.size()) queued[u->version] = now;
      }
      messages.push_back(std::move(m));
    }
  });
  auto attachment = dispatcher.AttachQuery(scene, watcher);
  dispatcher.WaitIdle();
  const uint64_t first_version = scene->version() + 1;
  std::vector<Clock::time_point> applied(queued.size());
  UpdateBatch batch;
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / o.hz));
  Clock::time_point next = Clock::now();
  for (int b = 0; b < batches; ++b) {
    walk.Next(&batch);
    std::this_thread::sleep_until(next);
    next += period;
    auto result = scene->Apply(batch);
    if (!result.ok()) std::abort();
    applied[result->version] = Clock::now();
  }
  dispatcher.WaitIdle();
  watcher->queue().ClearListener();
  r->resyncs = static_cast<int>(watcher->queue().overflows());
  size_t bytes = 0, updates = 0;
  for (const InterestMessage& m : messages) {
    if (!std::holds_alternative<InterestUpdate>(m)) continue;
    v1::InterestResponse response;
    InterestMessageToProto(m, &response);
    bytes += response.ByteSizeLong();
    ++updates;
  }
  for (uint64_t v = first_version; v < first_version + batches; ++v) {
    if (queued[v] == Clock::time_point{}) continue;  // a batch that changed no set
    r->latency_ms.push_back(Ms(queued[v] - applied[v]));
  }
  r->bytes_per_tick = updates > 0 ? static_cast<double>(bytes) / batches : 0.0;
}

// Back-to-back batches: the writer's and the process's CPU with and without the stream.
void MeasureIngest(const Options& o, int batches, bool with_interest, double* writer_rate,
                   double* total_rate) {
  Walk walk(o);
  auto scene = std::make_shared<Scene>("bench", SceneOptions{});
  if (!scene->Apply(walk.Create()).ok()) std::abort();
  std::unique_ptr<WatchDispatcher> dispatcher;
  std::shared_ptr<InterestWatcher> watcher;
  std::unique_ptr<WatchDispatcher::Attachment> attachment;
  if (with_interest) {
    dispatcher = std::make_unique<WatchDispatcher>(WatchDispatcher::Options{.threads = 1});
    watcher =
        std::make_shared<InterestWatcher>(InterestWatcherOptions{.max_queued_events = 1u << 26});
    watcher->Submit(ObserverChanges{.upserts = Observers(o)});
    attachment = dispatcher->AttachQuery(scene, watcher);
    dispatcher->WaitIdle();
  }
  std::vector<UpdateBatch> all(static_cast<size_t>(batches));
  for (UpdateBatch& b : all) walk.Next(&b);
  const double writer_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  const double process_start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  for (const UpdateBatch& b : all) {
    if (!scene->Apply(b).ok()) std::abort();
  }
  const double writer_seconds = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - writer_start;
  if (dispatcher != nullptr) dispatcher->WaitIdle();
  const double process_seconds = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process_start;
  const double moves = static_cast<double>(batches) * o.bodies;
  *writer_rate = moves / writer_seconds;
  *total_rate = moves / process_seconds;
  if (watcher != nullptr && watcher->queue().overflows() > 0) std::abort();
}

int Main(int argc, char** argv) {
  Options o;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--bodies") && has_value) {
      o.bodies = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--observers") && has_value) {
      o.observers = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--batches") && has_value) {
      o.batches = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--runs") && has_value) {
      o.runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--bodies N] [--observers M] [--batches B] [--runs R] [--quick]\n",
                   argv[0]);
      return 2;
    }
  }
  if (quick) {
    o.batches = std::min(o.batches, 120);
    o.runs = 1;
  }
  o.observers = std::min(o.observers, o.bodies);
  std::printf(
      "reference workload: %d bodies (side %.0f, random walk), %d observers attached to bodies, "
      "enter %.0f, leave %.0f, at most %u nearest; %d batches of all moves per run at %.0f per "
      "second; %d run(s); one watch worker thread\n",
      o.bodies, o.side, o.observers, o.enter, o.leave, o.nearest, o.batches, o.hz, o.runs);
  std::vector<double> latency, bytes, interest_ms, brute_ms, ratio, writer_ratio, total_ratio;
  int resyncs = 0;
  for (int run = 0; run < o.runs; ++run) {
    Results r;
    MeasureLatency(o, o.batches, &r);
    CompareWithBruteForce(o, std::max(20, o.batches / 10), &r);
    double without_writer = 0, without_total = 0, with_writer = 0, with_total = 0;
    const int ingest_batches = std::max(20, o.batches / 5);
    MeasureIngest(o, ingest_batches, false, &without_writer, &without_total);
    MeasureIngest(o, ingest_batches, true, &with_writer, &with_total);
    latency.insert(latency.end(), r.latency_ms.begin(), r.latency_ms.end());
    bytes.push_back(r.bytes_per_tick);
    interest_ms.push_back(r.interest_ms);
    brute_ms.push_back(r.brute_ms);
    ratio.push_back(r.brute_ms / r.interest_ms);
    writer_ratio.push_back(with_writer / without_writer);
    total_ratio.push_back(with_total / without_total);
    resyncs += r.resyncs;
    std::printf(
        "run %d: update p50 %.3f ms p99 %.3f ms; in process %.3f ms per batch, brute force %.2f "
        "ms (%.1fx); %.0f bytes per tick; ingest writer %.0f / %.0f moves per CPU s, process "
        "%.0f / %.0f\n",
        run + 1, Percentile(r.latency_ms, 0.5), Percentile(r.latency_ms, 0.99), r.interest_ms,
        r.brute_ms, r.brute_ms / r.interest_ms, r.bytes_per_tick, with_writer, without_writer,
        with_total, without_total);
  }
  std::printf("%-42s %12s\n", "figure", "value");
  std::printf("%-42s %12.3f\n", "interest_update_ms_p50", Percentile(latency, 0.5));
  std::printf("%-42s %12.3f\n", "interest_update_ms_p99", Percentile(latency, 0.99));
  std::printf("%-42s %12.3f\n", "interest_in_process_ms_per_batch", Median(interest_ms));
  std::printf("%-42s %12.3f\n", "bruteforce_ms_per_batch", Median(brute_ms));
  std::printf("%-42s %12.1f\n", "interest_vs_bruteforce", Median(ratio));
  std::printf("%-42s %12.0f\n", "interest_bytes_per_tick", Median(bytes));
  std::printf("%-42s %12.2f\n", "ingest_with_interest_over_without", Median(writer_ratio));
  std::printf("%-42s %12.2f\n", "ingest_process_with_interest_over_without", Median(total_ratio));
  std::printf("%-42s %12d\n", "resyncs", resyncs);
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) { return collide::bench::Main(argc, argv); }
