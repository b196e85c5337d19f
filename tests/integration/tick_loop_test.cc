// A game server's tick loop over the real server: an UpdateStream reuses its last batch as parsed
// for the next one (up to 2 MiB), so every batch must still be applied exactly as sent, whatever
// came before it (more moves, fewer, none, a batch past the kept size); and a QueryStream batch
// sent before the update whose version it waits for (min_version) is converted at once and
// answered against that update, with its per-query errors.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "google/protobuf/arena.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeVec3;

constexpr char kScene[] = "ticks";
constexpr uint64_t kBodies = 12000;

// Where body `id` is after a batch numbered `round` moved it (distinct per round and body).
v1::Vec3 PositionAt(uint64_t id, int round) {
  return MakeVec3(static_cast<float>(id % 100) * 3.0f, static_cast<float>(round) * 5.0f,
                  static_cast<float>(id / 100) * 3.0f);
}

// A batch moving bodies `first`..`last` (each `repeat` times, the last to round `round`'s
// position) in column form.
v1::UpdateBatch Moves(uint64_t first, uint64_t last, int round, int repeat = 1) {
  v1::UpdateBatch batch;
  batch.set_scene(kScene);
  for (int r = 0; r < repeat; ++r) {
    const int at = r + 1 == repeat ? round : round + 1000;
    for (uint64_t id = first; id <= last; ++id) {
      const v1::Vec3 p = PositionAt(id, at);
      batch.mutable_moves()->add_ids(id);
      for (float value : {p.x(), p.y(), p.z(), 0.0f, 0.0f, 0.0f, 1.0f}) {
        batch.mutable_moves()->add_poses(value);
      }
    }
  }
  return batch;
}

// Checks that body i is at PositionAt(i, want_round[i]) for every body.
void ExpectPositions(client::Client& client, const std::vector<int>& want_round,
                     const std::string& when) {
  auto bodies = client.GetBodies(kScene);
  ASSERT_TRUE(IsOk(bodies)) << when;
  int wrong = 0;
  for (const v1::Body& body : BodiesOf(*bodies)) {
    if (body.id() < 1 || body.id() > kBodies) continue;
    const v1::Vec3 want = PositionAt(body.id(), want_round[body.id()]);
    const v1::Vec3& got = body.pose().position();
    if (got.x() != want.x() || got.y() != want.y() || got.z() != want.z()) {
      if (++wrong <= 3) {
        ADD_FAILURE() << when << ": body " << body.id() << " at (" << got.x() << ", " << got.y()
                      << ", " << got.z() << "), want round " << want_round[body.id()];
      }
    }
  }
  EXPECT_EQ(wrong, 0) << when;
}

TEST(TickLoop, EveryLargeBatchIsAppliedAsSentWhateverCameBeforeIt) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  options.set_max_bodies(kBodies + 10);
  ASSERT_TRUE(IsOk(client->CreateScene(kScene, options)));
  std::vector<v1::Body> bodies;
  for (uint64_t id = 1; id <= kBodies; ++id) {
    bodies.push_back(MakeBody(id, client::MakeSphere(0.5f), MakePose(PositionAt(id, 0))));
  }
  ASSERT_TRUE(IsOk(client->UpsertBodies(kScene, bodies)));
  std::vector<int> want(kBodies + 1, 0);

  auto writer = client->OpenUpdateStream(kScene, 0);
  ASSERT_TRUE(IsOk(writer));
  // Between two batches of `writer`, another stream moves every body elsewhere: a batch that
  // applied any move of the one before it again would put bodies back where that one left them.
  auto other = client->OpenUpdateStream(kScene, 0);
  ASSERT_TRUE(IsOk(other));
  uint64_t version = 0;
  int elsewhere = 100;
  auto apply = [&](v1::UpdateBatch batch, const std::string& what) {
    auto ack = (*writer)->Apply(std::move(batch));
    ASSERT_TRUE(IsOk(ack)) << what;
    ASSERT_FALSE(ack->has_error()) << what << ": " << ack->error().message();
    EXPECT_GT(ack->version(), version) << what;
    version = ack->version();
  };
  auto move_elsewhere = [&] {
    ++elsewhere;
    auto ack = (*other)->Apply(Moves(1, kBodies, elsewhere));
    ASSERT_TRUE(IsOk(ack));
    ASSERT_FALSE(ack->has_error()) << ack->error().message();
    for (uint64_t id = 1; id <= kBodies; ++id) want[id] = elsewhere;
  };
  // Some bodies, then a batch with no moves at all, only an op: nothing of the first batch's
  // moves may be applied again.
  apply(Moves(100, 2099, 1), "2,000 bodies");
  for (uint64_t id = 100; id <= 2099; ++id) want[id] = 1;
  ExpectPositions(*client, want, "after 2,000 bodies");
  move_elsewhere();
  {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    *batch.add_ops() = client::MakeSetFilterOp(7, 2, 3);
    apply(batch, "an op and no moves");
    ExpectPositions(*client, want, "after an op and no moves");
    move_elsewhere();
  }
  // Every body, twice in a row (the second reuses what the first was parsed into).
  for (int round = 2; round <= 3; ++round) {
    apply(Moves(1, kBodies, round), "all bodies");
    for (uint64_t id = 1; id <= kBodies; ++id) want[id] = round;
    ExpectPositions(*client, want, "after all bodies, round " + std::to_string(round));
    move_elsewhere();
  }
  // Fewer moves than the kept columns hold: only these bodies move.
  apply(Moves(100, 2099, 4), "2,000 bodies");
  for (uint64_t id = 100; id <= 2099; ++id) want[id] = 4;
  ExpectPositions(*client, want, "after 2,000 bodies again");
  move_elsewhere();
  // Past the kept size (every body three times: about 36,000 moves, over 2 MiB as parsed), then
  // a small batch after it.
  apply(Moves(1, kBodies, 5, 3), "every body three times");
  for (uint64_t id = 1; id <= kBodies; ++id) want[id] = 5;
  ExpectPositions(*client, want, "after every body three times");
  move_elsewhere();
  apply(Moves(5, 9, 6), "5 bodies");
  for (uint64_t id = 5; id <= 9; ++id) want[id] = 6;
  ExpectPositions(*client, want, "after 5 bodies");
  move_elsewhere();
  // A rejected batch after all that (a NaN pose): its ack names the field, nothing moves.
  {
    v1::UpdateBatch bad = Moves(1, 3, 7);
    bad.mutable_moves()->add_poses(std::numeric_limits<float>::quiet_NaN());
    auto ack = (*writer)->Apply(bad);
    ASSERT_TRUE(IsOk(ack));
    EXPECT_TRUE(ack->has_error());
    EXPECT_NE(ack->error().message().find("moves"), std::string::npos) << ack->error().message();
  }
  ExpectPositions(*client, want, "after a rejected batch");
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  EXPECT_TRUE(IsOk((*other)->Finish()));
}

TEST(TickLoop, QueriesSentBeforeTheirUpdateAreAnsweredAgainstIt) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client->CreateScene(kScene, options)));
  // One sphere, far off the ray's line until the update moves it onto it.
  const std::vector<v1::Body> sphere = {
      MakeBody(1, client::MakeSphere(1.0f), MakePose(MakeVec3(0, 50, 10)))};
  auto created = client->UpsertBodies(kScene, sphere);
  ASSERT_TRUE(IsOk(created));
  auto info = client->GetScene(kScene);
  ASSERT_TRUE(IsOk(info));
  const uint64_t before = info->stats().version();

  auto queries = client->OpenQueryStream(kScene);
  ASSERT_TRUE(IsOk(queries));
  auto writer = client->OpenUpdateStream(kScene, 0);
  ASSERT_TRUE(IsOk(writer));
  google::protobuf::Arena arena;
  for (int tick = 1; tick <= 3; ++tick) {
    v1::QueryBatch batch;
    batch.set_scene(kScene);
    batch.set_min_version(before + static_cast<uint64_t>(tick));
    // Along +z from the origin: hits the sphere only once it sits at (0, 0, 10 * tick).
    *batch.add_queries() =
        client::MakeRaycastQuery(1, client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, 1), 100));
    // Rejected by conversion, before the wait: its error comes with the answer.
    *batch.add_queries() = client::MakeRaycastQuery(
        2, client::MakeRaycast(MakeVec3(0, 0, 0),
                               MakeVec3(std::numeric_limits<float>::quiet_NaN(), 0, 1), 100));
    ASSERT_TRUE(IsOk((*queries)->Send(batch))) << tick;

    v1::UpdateBatch update;
    update.set_scene(kScene);
    *update.add_ops() =
        client::MakeSetPoseOp(1, MakePose(MakeVec3(0, 0, 10.0f * static_cast<float>(tick))));
    auto ack = (*writer)->Apply(update);
    ASSERT_TRUE(IsOk(ack)) << tick;
    ASSERT_FALSE(ack->has_error()) << tick;

    arena.Reset();
    auto* answer = google::protobuf::Arena::CreateMessage<v1::QueryBatchResult>(&arena);
    ASSERT_TRUE(IsOk((*queries)->Read(answer))) << tick;
    ASSERT_TRUE(IsOk(client::BatchStatus(*answer))) << tick;
    EXPECT_GE(answer->version(), ack->version()) << tick;
    ASSERT_EQ(answer->results_size(), 2) << tick;
    EXPECT_TRUE(IsOk(client::ResultStatus(answer->results(0)))) << tick;
    ASSERT_EQ(answer->results(0).hits_size(), 1) << tick;
    EXPECT_EQ(answer->results(0).hits(0).body_id(), 1u) << tick;
    EXPECT_NEAR(answer->results(0).hits(0).distance(), 10.0f * static_cast<float>(tick) - 1.0f,
                1e-3f)
        << tick;
    EXPECT_TRUE(HasError(client::ResultStatus(answer->results(1)),
                         absl::StatusCode::kInvalidArgument, "queries[1]"))
        << tick << ": " << client::ResultStatus(answer->results(1));
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  EXPECT_TRUE(IsOk((*queries)->Finish()));
}

}  // namespace
}  // namespace collide::integration
