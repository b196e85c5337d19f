// Every rpc of the service once, against the real server, with the answers checked: scenes and
// their counters, bodies as stored, unary and streamed queries against the in-process engine,
// update stream acks and deduplication, the query batcher of the client library.

#include <memory>
#include <vector>

#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "gtest/gtest.h"
#include "integration/reference.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeBox;
using client::MakeCapsule;
using client::MakePose;
using client::MakeQuatFromAxisAngle;
using client::MakeSphere;
using client::MakeVec3;

// Three bodies of the three shapes along x at height 5; the capsule is static.
std::vector<v1::Body> ArenaBodies() {
  v1::Body box =
      MakeBody(2, MakeBox(1, 1, 1),
               MakePose(MakeVec3(3, 0, 5), MakeQuatFromAxisAngle(MakeVec3(0, 0, 1), 0.5f)));
  box.set_category(2);
  box.set_user_data(42);
  return {MakeBody(1, MakeSphere(0.5f), MakePose(MakeVec3(0, 0, 5))), box,
          client::MakeStaticBody(3, MakeCapsule(0.5f, 1), MakePose(MakeVec3(-3, 0, 5)))};
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(ApiTest, ScenesAreCreatedListedDescribedAndDeleted) {
  auto empty = client_->ListScenes();
  ASSERT_TRUE(IsOk(empty));
  EXPECT_TRUE(empty->empty());

  v1::SceneOptions options;
  options.set_fat_margin(0.25f);
  options.set_max_bodies(100);
  options.set_durability(v1::DURABILITY_PERIODIC);
  auto arena = client_->CreateScene("arena", options);
  ASSERT_TRUE(IsOk(arena));
  EXPECT_EQ(arena->name(), "arena");
  EXPECT_FLOAT_EQ(arena->options().fat_margin(), 0.25f);
  EXPECT_EQ(arena->options().max_bodies(), 100u);
  EXPECT_EQ(arena->options().durability(), v1::DURABILITY_PERIODIC);
  EXPECT_EQ(arena->stats().version(), 0u);
  EXPECT_EQ(arena->stats().body_count(), 0u);

  // Defaults are filled in and the durability resolved to the server's (always).
  auto other = client_->CreateScene("b-other");
  ASSERT_TRUE(IsOk(other));
  EXPECT_FLOAT_EQ(other->options().fat_margin(), 0.1f);
  EXPECT_EQ(other->options().max_bodies(), 1000000u);
  EXPECT_EQ(other->options().durability(), v1::DURABILITY_ALWAYS);

  auto listed = client_->ListScenes();
  ASSERT_TRUE(IsOk(listed));
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name(), "arena");
  EXPECT_EQ((*listed)[1].name(), "b-other");

  auto got = client_->GetScene("arena");
  ASSERT_TRUE(IsOk(got));
  EXPECT_EQ(got->options().max_bodies(), 100u);

  ASSERT_TRUE(IsOk(client_->DeleteScene("b-other")));
  EXPECT_TRUE(
      HasError(client_->GetScene("b-other").status(), absl::StatusCode::kNotFound, "scene"));
  listed = client_->ListScenes();
  ASSERT_TRUE(IsOk(listed));
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name(), "arena");
}

TEST_F(ApiTest, BodiesAreStoredReadBackAndRemoved) {
  ASSERT_TRUE(IsOk(client_->CreateScene("arena")));
  std::vector<v1::Body> bodies = ArenaBodies();
  // Sent out of order; read back sorted by id.
  std::vector<v1::Body> shuffled = {bodies[2], bodies[0], bodies[1]};
  auto write = client_->UpsertBodies("arena", shuffled);
  ASSERT_TRUE(IsOk(write));
  EXPECT_EQ(write->version(), 1u);
  EXPECT_TRUE(write->durable());  // The server's default durability is always.

  auto scene = client_->GetScene("arena");
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().version(), 1u);
  EXPECT_EQ(scene->stats().body_count(), 3u);
  EXPECT_EQ(scene->stats().static_body_count(), 1u);
  EXPECT_GT(scene->stats().memory_bytes(), 0u);

  auto all = client_->GetBodies("arena");
  ASSERT_TRUE(IsOk(all));
  EXPECT_EQ(all->version(), 1u);
  EXPECT_TRUE(SameBodies(BodiesOf(*all), bodies));
  EXPECT_EQ(all->missing_ids_size(), 0);

  // In the order asked, with the missing ids listed.
  std::vector<uint64_t> ids = {3, 99, 1};
  auto some = client_->GetBodies("arena", ids);
  ASSERT_TRUE(IsOk(some));
  EXPECT_TRUE(SameBodies(BodiesOf(*some), {bodies[2], bodies[0]}));
  ASSERT_EQ(some->missing_ids_size(), 1);
  EXPECT_EQ(some->missing_ids(0), 99u);

  // An upsert of an existing id replaces every property.
  v1::Body moved = MakeBody(1, MakeBox(0.5f, 0.5f, 0.5f), MakePose(MakeVec3(0, 0, 6)));
  write = client_->UpsertBodies("arena", std::vector<v1::Body>{moved});
  ASSERT_TRUE(IsOk(write));
  EXPECT_EQ(write->version(), 2u);
  std::vector<uint64_t> one = {1};
  some = client_->GetBodies("arena", one);
  ASSERT_TRUE(IsOk(some));
  EXPECT_TRUE(SameBodies(BodiesOf(*some), {moved}));

  std::vector<uint64_t> remove = {2, 3};
  write = client_->RemoveBodies("arena", remove);
  ASSERT_TRUE(IsOk(write));
  EXPECT_EQ(write->version(), 3u);
  all = client_->GetBodies("arena");
  ASSERT_TRUE(IsOk(all));
  EXPECT_TRUE(SameBodies(BodiesOf(*all), {moved}));
  scene = client_->GetScene("arena");
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().body_count(), 1u);
  EXPECT_EQ(scene->stats().static_body_count(), 0u);
}

TEST_F(ApiTest, UnaryQueriesMatchTheInProcessEngine) {
  ASSERT_TRUE(IsOk(client_->CreateScene("arena")));
  std::vector<v1::Body> bodies = ArenaBodies();
  ASSERT_TRUE(IsOk(client_->UpsertBodies("arena", bodies)));
  ReferenceWorld world(bodies);

  v1::RaycastRequest ray;
  ray.set_scene("arena");
  *ray.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, 2), 100);
  auto hit = client_->Raycast(ray);
  ASSERT_TRUE(IsOk(hit));
  EXPECT_EQ(hit->version(), 1u);
  ASSERT_EQ(hit->hits_size(), 1);
  EXPECT_EQ(hit->hits(0).body_id(), 1u);
  EXPECT_NEAR(hit->hits(0).distance(), 4.5f, 1e-5f);
  EXPECT_NEAR(hit->hits(0).normal().z(), -1.0f, 1e-5f);
  EXPECT_TRUE(ResponseMatches(AsQuery(ray), *hit, world));

  // Along x through all three bodies, every hit, then filtered.
  *ray.mutable_ray() = client::MakeRaycast(MakeVec3(-10, 0, 5), MakeVec3(1, 0, 0), 100);
  ray.set_mode(v1::MODE_ALL);
  auto all = client_->Raycast(ray);
  ASSERT_TRUE(IsOk(all));
  ASSERT_EQ(all->hits_size(), 3);
  EXPECT_TRUE(ResponseMatches(AsQuery(ray), *all, world));
  ray.set_max_hits(2);
  auto truncated = client_->Raycast(ray);
  ASSERT_TRUE(IsOk(truncated));
  EXPECT_EQ(truncated->hits_size(), 2);
  EXPECT_TRUE(truncated->truncated());
  EXPECT_TRUE(ResponseMatches(AsQuery(ray), *truncated, world));
  ray.set_max_hits(0);
  std::vector<uint64_t> excluded = {3};
  *ray.mutable_filter() = client::MakeFilter(~0u, ~2u, excluded);  // Not the box (category 2).
  auto filtered = client_->Raycast(ray);
  ASSERT_TRUE(IsOk(filtered));
  ASSERT_EQ(filtered->hits_size(), 1);
  EXPECT_EQ(filtered->hits(0).body_id(), 1u);
  EXPECT_TRUE(ResponseMatches(AsQuery(ray), *filtered, world));

  v1::SphereCastRequest cast;
  cast.set_scene("arena");
  *cast.mutable_cast() = client::MakeSphereCast(MakeVec3(3, 0, 0), MakeVec3(0, 0, 1), 50, 0.25f);
  auto swept = client_->SphereCast(cast);
  ASSERT_TRUE(IsOk(swept));
  ASSERT_EQ(swept->hits_size(), 1);
  EXPECT_EQ(swept->hits(0).body_id(), 2u);
  EXPECT_TRUE(ResponseMatches(AsQuery(cast), *swept, world));

  v1::OverlapRequest overlap;
  overlap.set_scene("arena");
  *overlap.mutable_overlap() = client::MakeOverlap(MakeSphere(2), MakePose(MakeVec3(1.5f, 0, 5)));
  overlap.set_mode(v1::MODE_ALL);
  overlap.set_detail(true);
  auto touching = client_->Overlap(overlap);
  ASSERT_TRUE(IsOk(touching));
  ASSERT_EQ(touching->hits_size(), 2);
  EXPECT_EQ(touching->hits(0).body_id(), 1u);
  EXPECT_EQ(touching->hits(1).body_id(), 2u);
  EXPECT_TRUE(ResponseMatches(AsQuery(overlap), *touching, world));
}

TEST_F(ApiTest, CastsStartingInsideHitAtDistanceZero) {
  ASSERT_TRUE(IsOk(client_->CreateScene("arena")));
  std::vector<v1::Body> bodies = ArenaBodies();
  ASSERT_TRUE(IsOk(client_->UpsertBodies("arena", bodies)));
  ReferenceWorld world(bodies);

  // A ray from inside the ball: distance 0, normal = -direction; also with max_distance 0.
  for (float max_distance : {10.0f, 0.0f}) {
    v1::RaycastRequest ray;
    ray.set_scene("arena");
    *ray.mutable_ray() = client::MakeRaycast(MakeVec3(0.1f, 0, 5), MakeVec3(2, 0, 0), max_distance);
    auto hit = client_->Raycast(ray);
    ASSERT_TRUE(IsOk(hit));
    ASSERT_EQ(hit->hits_size(), 1);
    EXPECT_EQ(hit->hits(0).body_id(), 1u);
    EXPECT_EQ(hit->hits(0).distance(), 0.0f);
    EXPECT_TRUE(hit->hits(0).start_overlapping());
    EXPECT_NEAR(hit->hits(0).normal().x(), -1.0f, 1e-6f);
    EXPECT_TRUE(ResponseMatches(AsQuery(ray), *hit, world));
  }

  // A sphere cast that starts overlapping the box: distance 0 and the separating direction.
  v1::SphereCastRequest cast;
  cast.set_scene("arena");
  *cast.mutable_cast() = client::MakeSphereCast(MakeVec3(1.8f, 0, 5), MakeVec3(0, 1, 0), 5, 0.5f);
  auto swept = client_->SphereCast(cast);
  ASSERT_TRUE(IsOk(swept));
  ASSERT_EQ(swept->hits_size(), 1);
  EXPECT_EQ(swept->hits(0).body_id(), 2u);
  EXPECT_EQ(swept->hits(0).distance(), 0.0f);
  EXPECT_TRUE(swept->hits(0).start_overlapping());
  EXPECT_TRUE(ResponseMatches(AsQuery(cast), *swept, world));

  // Nothing within reach: no hits, not an error.
  v1::RaycastRequest miss;
  miss.set_scene("arena");
  *miss.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, -1), 100);
  auto none = client_->Raycast(miss);
  ASSERT_TRUE(IsOk(none));
  EXPECT_EQ(none->hits_size(), 0);
  EXPECT_EQ(none->version(), 1u);
}

TEST_F(ApiTest, AllHitsDefaultToSixtyFourAndTruncate) {
  ASSERT_TRUE(IsOk(client_->CreateScene("row")));
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= 100; ++i) {
    bodies.push_back(MakeBody(i, MakeSphere(0.4f), MakePose(MakeVec3(i, 0, 0))));
  }
  ASSERT_TRUE(IsOk(client_->UpsertBodies("row", bodies)));
  ReferenceWorld world(bodies);
  v1::RaycastRequest ray;
  ray.set_scene("row");
  *ray.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 1000);
  ray.set_mode(v1::MODE_ALL);
  auto capped = client_->Raycast(ray);
  ASSERT_TRUE(IsOk(capped));
  EXPECT_EQ(capped->hits_size(), 64);
  EXPECT_TRUE(capped->truncated());
  EXPECT_EQ(capped->hits(63).body_id(), 64u);
  EXPECT_TRUE(ResponseMatches(AsQuery(ray), *capped, world));
  ray.set_max_hits(4096);  // The server's limit is allowed.
  auto all = client_->Raycast(ray);
  ASSERT_TRUE(IsOk(all));
  EXPECT_EQ(all->hits_size(), 100);
  EXPECT_FALSE(all->truncated());
  EXPECT_TRUE(ResponseMatches(AsQuery(ray), *all, world));
}

TEST_F(ApiTest, FarFromTheOriginAnswersStillMatchTheEngine) {
  ASSERT_TRUE(IsOk(client_->CreateScene("far")));
  std::vector<v1::Body> bodies;
  for (int i = 0; i < 30; ++i) {
    float x = 1e5f - 3.0f * i;
    v1::Shape shape = i % 3 == 0   ? MakeSphere(1)
                      : i % 3 == 1 ? MakeBox(1, 0.5f, 2)
                                   : MakeCapsule(0.5f, 1);
    bodies.push_back(MakeBody(i + 1, shape,
                              MakePose(MakeVec3(x, -1e5f + 0.1f * i, 5e4f),
                                       MakeQuatFromAxisAngle(MakeVec3(1, 1, 0), 0.3f * i))));
  }
  ASSERT_TRUE(IsOk(client_->UpsertBodies("far", bodies)));
  ReferenceWorld world(bodies);
  v1::QueryBatch batch;
  batch.set_scene("far");
  for (int i = 0; i < 30; ++i) {
    v1::Vec3 at = MakeVec3(1e5f - 3.0f * i + 0.2f, -1e5f + 0.1f * i - 10, 5e4f + 0.1f);
    *batch.add_queries() = client::MakeRaycastQuery(
        4 * i + 1, client::MakeRaycast(at, MakeVec3(0, 1, 0), 50), v1::MODE_ALL);
    *batch.add_queries() = client::MakeSphereCastQuery(
        4 * i + 2, client::MakeSphereCast(at, MakeVec3(0.1f, 1, 0), 50, 0.7f));
    *batch.add_queries() = client::MakeOverlapQuery(
        4 * i + 3,
        client::MakeOverlap(MakeBox(2, 2, 2), MakePose(MakeVec3(at.x(), at.y() + 10, at.z()))),
        v1::MODE_ALL, /*detail=*/true);
    *batch.add_queries() = client::MakePointQuery(
        4 * i + 4, client::MakePoint(MakeVec3(at.x(), at.y() + 8, at.z()), 3));
  }
  auto session = client_->OpenQueryStream("far");
  ASSERT_TRUE(IsOk(session));
  auto result = (*session)->Run(batch);
  ASSERT_TRUE(IsOk(result));
  ASSERT_EQ(result->results_size(), batch.queries_size());
  int hits = 0;
  for (int q = 0; q < batch.queries_size(); ++q) {
    hits += result->results(q).hits_size();
    EXPECT_TRUE(ResultMatches(batch.queries(q), result->results(q), world)) << q;
  }
  EXPECT_GT(hits, 30);
  EXPECT_TRUE(IsOk((*session)->Finish()));
}

TEST_F(ApiTest, UpdateStreamAcknowledgesInOrderAndDeduplicates) {
  ASSERT_TRUE(IsOk(client_->CreateScene("arena")));
  ASSERT_TRUE(IsOk(client_->UpsertBodies("arena", ArenaBodies())));
  auto writer = client_->OpenUpdateStream("arena", /*client_id=*/7);
  ASSERT_TRUE(IsOk(writer));

  v1::UpdateBatch first;
  first.set_scene("arena");
  *first.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(0, 0, 8)));
  auto ack = (*writer)->Apply(first);
  ASSERT_TRUE(IsOk(ack));
  EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
  EXPECT_EQ(ack->client_sequence(), 1u);
  EXPECT_EQ(ack->version(), 2u);
  EXPECT_TRUE(ack->durable());
  EXPECT_FALSE(ack->duplicate());

  // Pipelined: three batches sent, then three acks read in order. The column form moves two
  // bodies; ops run before moves; a filter change and an upsert ride along.
  v1::UpdateBatch second;
  second.set_scene("arena");
  client::AddMove(1, MakePose(MakeVec3(0, 0, 9)), second.mutable_moves());
  client::AddMove(2, MakePose(MakeVec3(3, 0, 9), client::MakeQuat(0, 0, 0, 1)),
                  second.mutable_moves());
  v1::UpdateBatch third;
  third.set_scene("arena");
  *third.add_ops() = client::MakeSetFilterOp(2, 4, ~0u);
  *third.add_ops() = client::MakeUpsertOp(MakeBody(4, MakeSphere(1), MakePose(MakeVec3(0, 0, 20))));
  *third.add_ops() = client::MakeSetPoseOp(4, MakePose(MakeVec3(0, 0, 21)));
  v1::UpdateBatch fourth;
  fourth.set_scene("arena");
  *fourth.add_ops() = client::MakeRemoveOp(3);
  for (const v1::UpdateBatch& batch : {second, third, fourth}) {
    ASSERT_TRUE(IsOk((*writer)->Send(batch)));
  }
  EXPECT_EQ((*writer)->pending(), 3u);
  for (uint64_t sequence = 2; sequence <= 4; ++sequence) {
    ack = (*writer)->ReadAck();
    ASSERT_TRUE(IsOk(ack));
    EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
    EXPECT_EQ(ack->client_sequence(), sequence);
    EXPECT_EQ(ack->version(), sequence + 1);
  }

  // A batch sent again under an applied sequence is acknowledged, not applied.
  v1::UpdateBatch again = second;
  again.set_client_id(7);
  again.set_client_sequence(2);
  ASSERT_TRUE(IsOk((*writer)->SendAsIs(again)));
  ack = (*writer)->ReadAck();
  ASSERT_TRUE(IsOk(ack));
  EXPECT_TRUE(ack->duplicate());
  EXPECT_EQ(ack->version(), 5u);
  // Sequences are per (client, scene): sequence 1 of the same client in another scene applies
  // (through a stream of its own: a stream is opened for one scene).
  ASSERT_TRUE(IsOk(client_->CreateScene("other")));
  auto other_writer = client_->OpenUpdateStream("other", /*client_id=*/7);
  ASSERT_TRUE(IsOk(other_writer));
  v1::UpdateBatch elsewhere;
  elsewhere.set_scene("other");
  elsewhere.set_client_id(7);
  elsewhere.set_client_sequence(1);
  *elsewhere.add_ops() =
      client::MakeUpsertOp(MakeBody(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 0))));
  ASSERT_TRUE(IsOk((*other_writer)->SendAsIs(elsewhere)));
  ack = (*other_writer)->ReadAck();
  ASSERT_TRUE(IsOk(ack));
  EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
  EXPECT_FALSE(ack->duplicate());
  EXPECT_EQ(ack->version(), 1u);
  ASSERT_TRUE(IsOk((*other_writer)->Finish()));
  ASSERT_TRUE(IsOk((*writer)->Finish()));

  auto all = client_->GetBodies("arena");
  ASSERT_TRUE(IsOk(all));
  EXPECT_EQ(all->version(), 5u);
  std::vector<v1::Body> expected = ArenaBodies();
  *expected[0].mutable_pose() = MakePose(MakeVec3(0, 0, 9));
  *expected[1].mutable_pose() = MakePose(MakeVec3(3, 0, 9));
  expected[1].set_category(4);
  expected[1].set_mask(~0u);
  expected[2] = MakeBody(4, MakeSphere(1), MakePose(MakeVec3(0, 0, 21)));
  EXPECT_TRUE(SameBodies(BodiesOf(*all), expected));
}

TEST_F(ApiTest, QueryStreamAnswersEveryKindAtOneVersion) {
  ASSERT_TRUE(IsOk(client_->CreateScene("arena")));
  std::vector<v1::Body> bodies = ArenaBodies();
  ASSERT_TRUE(IsOk(client_->UpsertBodies("arena", bodies)));
  ReferenceWorld world(bodies);

  v1::QueryBatch batch;
  batch.set_scene("arena");
  *batch.add_queries() = client::MakeRaycastQuery(
      11, client::MakeRaycast(MakeVec3(-10, 0.2f, 5), MakeVec3(1, 0, 0), 30), v1::MODE_ALL);
  *batch.add_queries() = client::MakeSphereCastQuery(
      12, client::MakeSphereCast(MakeVec3(-3, 0, 0), MakeVec3(0, 0, 1), 30, 0.3f));
  *batch.add_queries() = client::MakeOverlapQuery(
      13, client::MakeOverlap(MakeBox(2, 1, 1), MakePose(MakeVec3(-1.5f, 0, 5))), v1::MODE_ALL,
      /*detail=*/true);
  *batch.add_queries() = client::MakePointQuery(14, client::MakePoint(MakeVec3(1.5f, 0, 5), 2.0f));
  *batch.add_queries() =
      client::MakeAabbQuery(15, client::MakeRegion(MakeVec3(-10, -10, 0), MakeVec3(1, 10, 10)));
  *batch.add_queries() = client::MakeRaycastQuery(
      16, client::MakeRaycast(MakeVec3(-10, 0, 5), MakeVec3(1, 0, 0), 30), v1::MODE_ANY);

  auto session = client_->OpenQueryStream("arena");
  ASSERT_TRUE(IsOk(session));
  for (int round = 0; round < 3; ++round) {
    auto result = (*session)->Run(batch);
    ASSERT_TRUE(IsOk(result));
    EXPECT_TRUE(IsOk(client::BatchStatus(*result)));
    EXPECT_EQ(result->version(), 1u);
    ASSERT_EQ(result->results_size(), batch.queries_size());
    for (int i = 0; i < batch.queries_size(); ++i) {
      EXPECT_TRUE(ResultMatches(batch.queries(i), result->results(i), world)) << "query " << i;
    }
    EXPECT_EQ(result->results(0).hits_size(), 3);
    EXPECT_EQ(result->results(4).hits_size(), 2);
  }
  EXPECT_TRUE(IsOk((*session)->Finish()));
}

}  // namespace
}  // namespace collide::integration
