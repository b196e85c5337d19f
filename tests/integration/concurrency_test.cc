// Sixteen query streams run while another client streams pose updates. Every answer names the
// scene version it was computed against; the updater records the full body states of every
// version it produced (each acknowledged batch makes version + 1), so each answer is checked
// against the in-process engine built from exactly that state: same hit ids in the same order,
// values within 1e-4 relative.

#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "gtest/gtest.h"
#include "integration/reference.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakePose;
using client::MakeVec3;

constexpr int kBodies = 200;
constexpr int kStaticBodies = 20;
constexpr int kUpdateBatches = 200;
constexpr int kMovesPerBatch = 40;
constexpr int kQueryThreads = 16;
constexpr int kBatchesPerThread = 60;
constexpr int kQueriesPerBatch = 12;
constexpr float kWorld = 20.0f;
constexpr uint32_t kSeed = 20261123;

float Uniform(std::mt19937& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}

v1::Vec3 RandomPoint(std::mt19937& rng, float extent) {
  return MakeVec3(Uniform(rng, -extent, extent), Uniform(rng, -extent, extent),
                  Uniform(rng, -extent, extent));
}

v1::Vec3 RandomDirection(std::mt19937& rng) {
  for (;;) {
    v1::Vec3 d = RandomPoint(rng, 1);
    float length2 = d.x() * d.x() + d.y() * d.y() + d.z() * d.z();
    if (length2 > 0.01f && length2 <= 1) return d;
  }
}

v1::Quat RandomRotation(std::mt19937& rng) {
  return client::MakeQuatFromAxisAngle(RandomDirection(rng), Uniform(rng, -3.1f, 3.1f));
}

v1::Shape RandomShape(std::mt19937& rng) {
  switch (rng() % 3) {
    case 0:
      return client::MakeSphere(Uniform(rng, 0.2f, 1.5f));
    case 1:
      return client::MakeBox(Uniform(rng, 0.1f, 1.5f), Uniform(rng, 0.1f, 1.5f),
                             Uniform(rng, 0.1f, 1.5f));
    default:
      return client::MakeCapsule(Uniform(rng, 0.1f, 1.0f), Uniform(rng, 0.0f, 1.5f));
  }
}

std::vector<v1::Body> InitialBodies(std::mt19937& rng) {
  std::vector<v1::Body> bodies;
  for (int i = 0; i < kBodies; ++i) {
    v1::Pose pose = MakePose(RandomPoint(rng, kWorld), RandomRotation(rng));
    v1::Body body = i < kStaticBodies ? client::MakeStaticBody(i + 1, RandomShape(rng), pose)
                                      : client::MakeBody(i + 1, RandomShape(rng), pose);
    body.set_category(1u << (rng() % 3));
    if (rng() % 4 == 0) body.set_mask(~2u);
    bodies.push_back(body);
  }
  return bodies;
}

v1::Query RandomQuery(std::mt19937& rng, uint64_t request_id) {
  v1::Mode modes[] = {v1::MODE_CLOSEST, v1::MODE_ANY, v1::MODE_ALL};
  v1::Mode mode = modes[rng() % 3];
  uint32_t max_hits = rng() % 4 == 0 ? 1 + rng() % 5 : 0;
  v1::Query query;
  switch (rng() % 5) {
    case 0:
      query =
          client::MakeRaycastQuery(request_id,
                                   client::MakeRaycast(RandomPoint(rng, kWorld * 1.2f),
                                                       RandomDirection(rng), Uniform(rng, 5, 60)),
                                   mode, max_hits);
      break;
    case 1:
      query = client::MakeSphereCastQuery(
          request_id,
          client::MakeSphereCast(RandomPoint(rng, kWorld * 1.2f), RandomDirection(rng),
                                 Uniform(rng, 5, 40), Uniform(rng, 0, 1.5f)),
          mode, max_hits);
      break;
    case 2:
      query = client::MakeOverlapQuery(
          request_id,
          client::MakeOverlap(RandomShape(rng),
                              MakePose(RandomPoint(rng, kWorld), RandomRotation(rng))),
          mode, /*detail=*/rng() % 2 == 0, max_hits);
      break;
    case 3:
      query = client::MakePointQuery(
          request_id, client::MakePoint(RandomPoint(rng, kWorld), Uniform(rng, 0, 4)), mode,
          max_hits);
      break;
    default: {
      v1::Vec3 lo = RandomPoint(rng, kWorld);
      query = client::MakeAabbQuery(
          request_id,
          client::MakeRegion(lo, MakeVec3(lo.x() + Uniform(rng, 0, 8), lo.y() + Uniform(rng, 0, 8),
                                          lo.z() + Uniform(rng, 0, 8))),
          mode, max_hits);
    }
  }
  if (rng() % 5 == 0) {
    std::vector<uint64_t> excluded = {1 + rng() % kBodies, 1 + rng() % kBodies};
    *query.mutable_filter() =
        client::MakeFilter(rng() % 2 == 0 ? ~0u : 2u, rng() % 2 == 0 ? ~0u : 5u, excluded);
  }
  return query;
}

// The body states of each version the updater produced.
class VersionLog {
 public:
  void Record(uint64_t version, const std::vector<v1::Body>& bodies) {
    absl::MutexLock lock(&mu_);
    states_[version] = bodies;
  }
  const std::vector<v1::Body>* Find(uint64_t version) const {
    absl::MutexLock lock(&mu_);
    auto it = states_.find(version);
    return it == states_.end() ? nullptr : &it->second;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return states_.size();
  }

 private:
  mutable absl::Mutex mu_;
  std::map<uint64_t, std::vector<v1::Body>> states_ ABSL_GUARDED_BY(mu_);
};

struct Answer {
  v1::QueryBatch batch;
  v1::QueryBatchResult result;
};

TEST(ConcurrentStreams, EveryAnswerMatchesTheEngineAtTheVersionItReports) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  auto admin = (*server)->NewClient();
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_PERIODIC);
  ASSERT_TRUE(IsOk(admin->CreateScene("arena", options)));
  std::mt19937 rng(kSeed);
  std::vector<v1::Body> bodies = InitialBodies(rng);
  auto write = admin->UpsertBodies("arena", bodies);
  ASSERT_TRUE(IsOk(write));
  VersionLog log;
  log.Record(write->version(), bodies);

  // The updater: batches of moves, alternately in column form and as set_pose ops.
  absl::Status updater_status;
  std::thread updater([&] {
    std::mt19937 rng(kSeed + 1);
    auto client = (*server)->NewClient();
    auto writer = client->OpenUpdateStream("arena", /*client_id=*/1);
    if (!writer.ok()) {
      updater_status = writer.status();
      return;
    }
    std::vector<v1::Body> state = bodies;
    uint64_t version = write->version();
    for (int b = 0; b < kUpdateBatches; ++b) {
      v1::UpdateBatch batch;
      batch.set_scene("arena");
      for (int m = 0; m < kMovesPerBatch; ++m) {
        v1::Body& body = state[rng() % state.size()];
        v1::Vec3 p = body.pose().position();
        v1::Pose pose = MakePose(MakeVec3(p.x() + Uniform(rng, -1, 1), p.y() + Uniform(rng, -1, 1),
                                          p.z() + Uniform(rng, -1, 1)),
                                 RandomRotation(rng));
        if (b % 2 == 0) {
          client::AddMove(body.id(), pose, batch.mutable_moves());
        } else {
          *batch.add_ops() = client::MakeSetPoseOp(body.id(), pose);
        }
        *body.mutable_pose() = pose;
      }
      auto ack = (*writer)->Apply(batch);
      if (!ack.ok() || !client::AckStatus(*ack).ok() || ack->version() != version + 1) {
        updater_status =
            absl::InternalError(ack.ok() ? absl::StrCat("batch ", b, ": ", ack->ShortDebugString(),
                                                        " after version ", version)
                                         : ack.status().ToString());
        return;
      }
      version = ack->version();
      log.Record(version, state);
    }
    updater_status = (*writer)->Finish();
  });

  std::vector<std::vector<Answer>> answers(kQueryThreads);
  std::vector<absl::Status> reader_status(kQueryThreads);
  std::vector<std::thread> readers;
  for (int t = 0; t < kQueryThreads; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(kSeed + 100 + t);
      // A few channels, several streams on each.
      auto client = (*server)->NewClient();
      auto session = client->OpenQueryStream("arena");
      if (!session.ok()) {
        reader_status[t] = session.status();
        return;
      }
      for (int b = 0; b < kBatchesPerThread; ++b) {
        Answer answer;
        answer.batch.set_scene("arena");
        for (int q = 0; q < kQueriesPerBatch; ++q) {
          *answer.batch.add_queries() = RandomQuery(rng, b * kQueriesPerBatch + q + 1);
        }
        auto result = (*session)->Run(answer.batch);
        if (!result.ok()) {
          reader_status[t] = result.status();
          return;
        }
        answer.result = *std::move(result);
        answers[t].push_back(std::move(answer));
      }
      reader_status[t] = (*session)->Finish();
    });
  }
  updater.join();
  for (std::thread& reader : readers) reader.join();
  ASSERT_TRUE(IsOk(updater_status));
  for (int t = 0; t < kQueryThreads; ++t) ASSERT_TRUE(IsOk(reader_status[t])) << "thread " << t;

  // Every answer against the engine at its version.
  std::map<uint64_t, std::unique_ptr<ReferenceWorld>> worlds;
  std::map<uint64_t, int> answers_per_version;
  int mismatches = 0;
  for (int t = 0; t < kQueryThreads; ++t) {
    for (size_t b = 0; b < answers[t].size(); ++b) {
      const Answer& answer = answers[t][b];
      ASSERT_TRUE(IsOk(client::BatchStatus(answer.result)));
      uint64_t version = answer.result.version();
      const std::vector<v1::Body>* state = log.Find(version);
      ASSERT_NE(state, nullptr) << "thread " << t << " batch " << b << ": version " << version
                                << " was never produced";
      ++answers_per_version[version];
      std::unique_ptr<ReferenceWorld>& world = worlds[version];
      if (world == nullptr) world = std::make_unique<ReferenceWorld>(*state);
      ASSERT_EQ(answer.result.results_size(), answer.batch.queries_size());
      for (int q = 0; q < answer.batch.queries_size(); ++q) {
        ::testing::AssertionResult match =
            ResultMatches(answer.batch.queries(q), answer.result.results(q), *world);
        if (!match && ++mismatches <= 10) {
          ADD_FAILURE() << "seed " << kSeed << ", thread " << t << ", batch " << b << ", query "
                        << answer.batch.queries(q).ShortDebugString() << " at version " << version
                        << ": " << match.message();
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(log.size(), static_cast<size_t>(kUpdateBatches + 1));
  // How far the queries spread over the versions (informational: no timing is asserted).
  std::cout << "answers came from " << answers_per_version.size() << " of " << log.size()
            << " versions\n";
}

}  // namespace
}  // namespace collide::integration
