// The server keeps scenes, bodies, versions and deduplication marks across restarts: after a
// graceful stop (SIGTERM, exit 0) and after SIGKILL right after acknowledged writes (durability
// always and periodic: both are on the operating system once acknowledged).

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "collide/v1/collide.grpc.pb.h"
#include "gtest/gtest.h"
#include "integration/reference.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeVec3;

constexpr uint64_t kClientId = 77;

// What a client can observe of the server's state.
struct Observed {
  std::vector<v1::SceneInfo> scenes;
  std::map<std::string, std::vector<v1::Body>> bodies;
};

Observed Observe(client::Client& client) {
  Observed observed;
  auto scenes = client.ListScenes();
  EXPECT_TRUE(IsOk(scenes));
  if (!scenes.ok()) return observed;
  observed.scenes = *scenes;
  for (const v1::SceneInfo& scene : *scenes) {
    auto bodies = client.GetBodies(scene.name());
    EXPECT_TRUE(IsOk(bodies));
    if (bodies.ok()) observed.bodies[scene.name()] = BodiesOf(*bodies);
  }
  return observed;
}

void ExpectSame(const Observed& after, const Observed& before) {
  ASSERT_EQ(after.scenes.size(), before.scenes.size());
  for (size_t i = 0; i < before.scenes.size(); ++i) {
    const v1::SceneInfo& a = after.scenes[i];
    const v1::SceneInfo& b = before.scenes[i];
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(a.stats().version(), b.stats().version()) << b.name();
    EXPECT_EQ(a.stats().body_count(), b.stats().body_count()) << b.name();
    EXPECT_EQ(a.stats().static_body_count(), b.stats().static_body_count()) << b.name();
    EXPECT_EQ(a.options().durability(), b.options().durability()) << b.name();
    EXPECT_EQ(a.options().max_bodies(), b.options().max_bodies()) << b.name();
    EXPECT_FLOAT_EQ(a.options().fat_margin(), b.options().fat_margin()) << b.name();
    auto it = after.bodies.find(b.name());
    ASSERT_NE(it, after.bodies.end());
    EXPECT_TRUE(SameBodies(it->second, before.bodies.at(b.name()))) << b.name();
  }
}

// Creates scenes with the given durability, bodies through unary calls and moves through an
// update stream; returns the last batch the stream sent (acknowledged).
v1::UpdateBatch Populate(client::Client& client, v1::Durability durability,
                         const std::string& prefix) {
  v1::SceneOptions options;
  options.set_durability(durability);
  options.set_fat_margin(0.3f);
  options.set_max_bodies(5000);
  EXPECT_TRUE(IsOk(client.CreateScene(prefix + "-main", options)));
  EXPECT_TRUE(IsOk(client.CreateScene(prefix + "-gone", options)));
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= 50; ++i) {
    v1::Body body = MakeBody(
        i, i % 3 == 0 ? client::MakeBox(0.5f, 1, 0.25f) : client::MakeSphere(0.5f),
        MakePose(MakeVec3(i, 0, 0), client::MakeQuatFromAxisAngle(MakeVec3(0, 1, 0), 0.1f * i)));
    body.set_user_data(1000 + i);
    if (i % 10 == 0) body.set_kind(v1::BODY_KIND_STATIC);
    if (i % 7 == 0) body.set_category(4);
    bodies.push_back(body);
  }
  EXPECT_TRUE(IsOk(client.UpsertBodies(prefix + "-main", bodies)));
  EXPECT_TRUE(IsOk(client.UpsertBodies(prefix + "-gone", bodies)));
  std::vector<uint64_t> removed = {5, 6};
  EXPECT_TRUE(IsOk(client.RemoveBodies(prefix + "-main", removed)));
  EXPECT_TRUE(IsOk(client.DeleteScene(prefix + "-gone")));

  auto writer = client.OpenUpdateStream(prefix + "-main", kClientId);
  EXPECT_TRUE(IsOk(writer));
  v1::UpdateBatch last;
  if (!writer.ok()) return last;
  for (int b = 0; b < 20; ++b) {
    v1::UpdateBatch batch;
    batch.set_scene(prefix + "-main");
    for (int i = 1; i <= 50; i += 3) {
      if (i == 5 || i == 6) continue;
      client::AddMove(i, MakePose(MakeVec3(i, 0.1f * b, 0)), batch.mutable_moves());
    }
    if (b == 10) *batch.add_ops() = client::MakeSetFilterOp(2, 8, 8);
    auto ack = (*writer)->Apply(batch);
    EXPECT_TRUE(IsOk(ack));
    if (ack.ok()) {
      EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
      if (durability == v1::DURABILITY_ALWAYS) {
        EXPECT_TRUE(ack->durable());
      }
    }
    batch.set_client_id(kClientId);
    batch.set_client_sequence(ack.ok() ? ack->client_sequence() : 0);
    last = batch;
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  return last;
}

// After a restart: resending the last batch is a duplicate; a new one applies at version + 1.
void ExpectDeduplicationSurvived(client::Client& client, const v1::UpdateBatch& last,
                                 uint64_t version) {
  auto writer = client.OpenUpdateStream(last.scene(), kClientId, last.client_sequence() + 1);
  ASSERT_TRUE(IsOk(writer));
  ASSERT_TRUE(IsOk((*writer)->SendAsIs(last)));
  auto ack = (*writer)->ReadAck();
  ASSERT_TRUE(IsOk(ack));
  EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
  EXPECT_TRUE(ack->duplicate());
  EXPECT_EQ(ack->version(), version);
  v1::UpdateBatch next = last;
  next.clear_moves();
  *next.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(1, 5, 5)));
  ack = (*writer)->Apply(next);
  ASSERT_TRUE(IsOk(ack));
  EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
  EXPECT_FALSE(ack->duplicate());
  EXPECT_EQ(ack->version(), version + 1);
  EXPECT_TRUE(IsOk((*writer)->Finish()));
}

// A query still answers exactly after the restart.
void ExpectQueriesMatch(client::Client& client, const std::string& scene,
                        const std::vector<v1::Body>& bodies) {
  v1::RaycastRequest request;
  request.set_scene(scene);
  *request.mutable_ray() = client::MakeRaycast(MakeVec3(-5, 0.3f, 0), MakeVec3(1, 0, 0), 100);
  request.set_mode(v1::MODE_ALL);
  auto hits = client.Raycast(request);
  ASSERT_TRUE(IsOk(hits));
  EXPECT_GT(hits->hits_size(), 10);
  EXPECT_TRUE(ResponseMatches(AsQuery(request), *hits, ReferenceWorld(bodies)));
}

TEST(Restart, SigtermKeepsScenesBodiesVersionsAndDeduplication) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  Observed before;
  v1::UpdateBatch last;
  {
    auto client = (*server)->NewClient();
    last = Populate(*client, v1::DURABILITY_NONE, "none");
    Populate(*client, v1::DURABILITY_ALWAYS, "always");
    before = Observe(*client);
  }
  ASSERT_EQ(before.scenes.size(), 2u);
  auto exit_code = (*server)->Stop(SIGTERM);
  ASSERT_TRUE(IsOk(exit_code));
  EXPECT_EQ(*exit_code, 0) << (*server)->Logs();
  ASSERT_TRUE(IsOk((*server)->Restart()));
  auto client = (*server)->NewClient();
  ExpectSame(Observe(*client), before);
  ExpectQueriesMatch(*client, "none-main", before.bodies["none-main"]);
  // A graceful stop keeps even durability none.
  ExpectDeduplicationSurvived(*client, last, before.scenes[1].stats().version());
}

TEST(Restart, SigkillKeepsAcknowledgedAlwaysAndPeriodicWrites) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  Observed before;
  v1::UpdateBatch last;
  {
    auto client = (*server)->NewClient();
    Populate(*client, v1::DURABILITY_PERIODIC, "periodic");
    last = Populate(*client, v1::DURABILITY_ALWAYS, "always");
    before = Observe(*client);
  }
  auto exit_code = (*server)->Stop(SIGKILL);
  ASSERT_TRUE(IsOk(exit_code));
  EXPECT_EQ(*exit_code, 128 + SIGKILL);
  ASSERT_TRUE(IsOk((*server)->Restart()));
  auto client = (*server)->NewClient();
  ExpectSame(Observe(*client), before);
  ExpectQueriesMatch(*client, "always-main", before.bodies["always-main"]);
  ExpectDeduplicationSurvived(*client, last, before.scenes[0].stats().version());

  // And once more, killed right after the post-restart write was acknowledged.
  Observed again = Observe(*client);
  client.reset();
  ASSERT_TRUE(IsOk((*server)->Stop(SIGKILL)));
  ASSERT_TRUE(IsOk((*server)->Restart()));
  client = (*server)->NewClient();
  ExpectSame(Observe(*client), again);
}

// Under `periodic` a machine crash loses what waited for its fsync; the server measures that
// wait and GetServerStats reports it. The timer fsyncs one interval after the first write it
// covers, so the oldest record of each fsync waited at least the interval.
TEST(Restart, GetServerStatsReportsHowLongPeriodicWritesWaitedForTheirFsync) {
  constexpr int kIntervalMs = 300;
  ServerConfig config;
  config.extra_flags = {"--durability=periodic", absl::StrCat("--sync_interval_ms=", kIntervalMs)};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto client = (*server)->NewClient();
  auto stub = v1::Collide::NewStub(client->channel());
  auto stats = [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetServerStatsResponse response;
    grpc::Status status = stub->GetServerStats(&context, v1::GetServerStatsRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  };
  v1::GetServerStatsResponse before = stats();
  Populate(*client, v1::DURABILITY_DEFAULT, "periodic");
  // Poll until an fsync has covered the writes (the timer's first tick after them).
  v1::GetServerStatsResponse after = stats();
  for (int i = 0; i < 200 && after.max_sync_lag_us() < kIntervalMs * 1000; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    after = stats();
  }
  EXPECT_LE(before.max_sync_lag_us(), after.max_sync_lag_us());
  EXPECT_GE(after.max_sync_lag_us(), kIntervalMs * 1000u);
  EXPECT_GT(after.sync_lag_us(), 0u);
  EXPECT_LE(after.sync_lag_us(), after.max_sync_lag_us());
}

}  // namespace
}  // namespace collide::integration
