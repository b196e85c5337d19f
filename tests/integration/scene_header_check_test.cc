// The server's x-collide-scene check, against the real collide-server process through the raw
// generated stub (metadata set explicitly, independent of what the clients send): every rpc that
// names a scene and every stream batch is refused when the header names another scene, with
// nothing applied; a matching or absent header is served; ListScenes is not checked.

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

constexpr char kMismatch[] = R"(scene: "b" does not match the x-collide-scene header "a")";

class SceneHeaderCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    stub_ = v1::Collide::NewStub(
        grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args));
    // Scenes "a" and "b", with one sphere each.
    for (const char* scene : {"a", "b"}) {
      v1::CreateSceneRequest create;
      create.set_scene(scene);
      v1::CreateSceneResponse created;
      ASSERT_TRUE(stub_->CreateScene(Context(scene).get(), create, &created).ok());
      v1::WriteResponse written;
      ASSERT_TRUE(stub_->UpsertBodies(Context(scene).get(), Upsert(scene, 1), &written).ok());
    }
  }

  // A context with a deadline and, unless null, the x-collide-scene header `header`.
  static std::unique_ptr<grpc::ClientContext> Context(const char* header) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (header != nullptr) context->AddMetadata("x-collide-scene", header);
    return context;
  }

  static v1::UpsertBodiesRequest Upsert(const std::string& scene, uint64_t id) {
    v1::UpsertBodiesRequest request;
    request.set_scene(scene);
    v1::Body* body = request.add_bodies();
    body->set_id(id);
    body->mutable_shape()->mutable_sphere()->set_radius(1);
    body->mutable_pose()->mutable_position()->set_x(static_cast<float>(3 * id));
    return request;
  }

  // The version of `scene` (read without a header).
  uint64_t Version(const std::string& scene) {
    v1::GetSceneRequest request;
    request.set_scene(scene);
    v1::GetSceneResponse response;
    grpc::Status status = stub_->GetScene(Context(nullptr).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.scene().stats().version();
  }

  // True when scene `name` exists.
  bool Exists(const std::string& name) {
    v1::ListScenesResponse list;
    EXPECT_TRUE(stub_->ListScenes(Context(nullptr).get(), v1::ListScenesRequest(), &list).ok());
    for (const v1::SceneInfo& scene : list.scenes()) {
      if (scene.name() == name) return true;
    }
    return false;
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

::testing::AssertionResult IsMismatch(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
      status.error_message() == kMismatch) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "code " << status.error_code() << ": " << status.error_message();
}

::testing::AssertionResult IsMismatch(const v1::Error& error) {
  if (error.code() == grpc::StatusCode::INVALID_ARGUMENT && error.message() == kMismatch) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "code " << error.code() << ": " << error.message();
}

v1::Raycast RayAlongX() {
  v1::Raycast ray;
  ray.mutable_origin()->set_x(-10);
  ray.mutable_direction()->set_x(1);
  ray.set_max_distance(100);
  return ray;
}

// A ball of radius 0.5 swept along the same line.
v1::SphereCast CastAlongX() {
  v1::SphereCast cast;
  cast.mutable_origin()->set_x(-10);
  cast.mutable_direction()->set_x(1);
  cast.set_max_distance(100);
  cast.set_radius(0.5f);
  return cast;
}

TEST_F(SceneHeaderCheckTest,
       EveryUnaryRpcNamingASceneRefusesAHeaderNamingAnotherAndChangesNothing) {
  const uint64_t version_b = Version("b");

  v1::CreateSceneRequest create;
  v1::CreateSceneResponse created;
  create.set_scene("b");
  EXPECT_TRUE(IsMismatch(stub_->CreateScene(Context("a").get(), create, &created)));

  v1::GetSceneRequest get_scene;
  get_scene.set_scene("b");
  v1::GetSceneResponse scene_info;
  EXPECT_TRUE(IsMismatch(stub_->GetScene(Context("a").get(), get_scene, &scene_info)));

  v1::WriteResponse written;
  EXPECT_TRUE(IsMismatch(stub_->UpsertBodies(Context("a").get(), Upsert("b", 2), &written)));

  v1::RemoveBodiesRequest remove;
  remove.set_scene("b");
  remove.add_ids(1);
  EXPECT_TRUE(IsMismatch(stub_->RemoveBodies(Context("a").get(), remove, &written)));

  v1::GetBodiesRequest get_bodies;
  get_bodies.set_scene("b");
  v1::GetBodiesResponse bodies;
  EXPECT_TRUE(IsMismatch(stub_->GetBodies(Context("a").get(), get_bodies, &bodies)));

  v1::QueryResponse answer;
  v1::RaycastRequest raycast;
  raycast.set_scene("b");
  *raycast.mutable_ray() = RayAlongX();
  EXPECT_TRUE(IsMismatch(stub_->Raycast(Context("a").get(), raycast, &answer)));

  v1::SphereCastRequest sphere_cast;
  sphere_cast.set_scene("b");
  *sphere_cast.mutable_cast() = CastAlongX();
  EXPECT_TRUE(IsMismatch(stub_->SphereCast(Context("a").get(), sphere_cast, &answer)));

  v1::OverlapRequest overlap;
  overlap.set_scene("b");
  overlap.mutable_overlap()->mutable_shape()->mutable_sphere()->set_radius(2);
  EXPECT_TRUE(IsMismatch(stub_->Overlap(Context("a").get(), overlap, &answer)));

  v1::DeleteSceneRequest remove_scene;
  remove_scene.set_scene("b");
  v1::DeleteSceneResponse removed;
  EXPECT_TRUE(IsMismatch(stub_->DeleteScene(Context("a").get(), remove_scene, &removed)));

  // Nothing happened to "b" (still there, same version, body 1 still in it).
  EXPECT_TRUE(Exists("b"));
  EXPECT_EQ(Version("b"), version_b);
  ASSERT_TRUE(stub_->GetBodies(Context("b").get(), get_bodies, &bodies).ok());
  ASSERT_EQ(bodies.bodies_size(), 1);
  EXPECT_EQ(bodies.bodies(0).id(), 1u);
}

TEST_F(SceneHeaderCheckTest, AMatchingOrAbsentHeaderIsServedByEveryRpc) {
  for (const char* header : {"b", static_cast<const char*>(nullptr)}) {
    SCOPED_TRACE(header == nullptr ? "no header" : header);
    v1::WriteResponse written;
    ASSERT_TRUE(stub_->UpsertBodies(Context(header).get(), Upsert("b", 2), &written).ok());
    v1::GetSceneRequest get_scene;
    get_scene.set_scene("b");
    v1::GetSceneResponse scene_info;
    ASSERT_TRUE(stub_->GetScene(Context(header).get(), get_scene, &scene_info).ok());
    EXPECT_EQ(scene_info.scene().stats().version(), written.version());
    v1::GetBodiesRequest get_bodies;
    get_bodies.set_scene("b");
    v1::GetBodiesResponse bodies;
    ASSERT_TRUE(stub_->GetBodies(Context(header).get(), get_bodies, &bodies).ok());
    EXPECT_EQ(bodies.bodies_size(), 2);

    // The ray along x from -10 meets the spheres at x = 3 and x = 6 (radius 1): the closest at
    // distance 12.
    v1::RaycastRequest raycast;
    raycast.set_scene("b");
    *raycast.mutable_ray() = RayAlongX();
    v1::QueryResponse answer;
    ASSERT_TRUE(stub_->Raycast(Context(header).get(), raycast, &answer).ok());
    ASSERT_EQ(answer.hits_size(), 1);
    EXPECT_EQ(answer.hits(0).body_id(), 1u);
    EXPECT_NEAR(answer.hits(0).distance(), 12.0, 1e-4);
    v1::SphereCastRequest sphere_cast;
    sphere_cast.set_scene("b");
    *sphere_cast.mutable_cast() = CastAlongX();
    ASSERT_TRUE(stub_->SphereCast(Context(header).get(), sphere_cast, &answer).ok());
    ASSERT_EQ(answer.hits_size(), 1);
    EXPECT_NEAR(answer.hits(0).distance(), 11.5, 1e-4);
    v1::OverlapRequest overlap;
    overlap.set_scene("b");
    overlap.mutable_overlap()->mutable_shape()->mutable_sphere()->set_radius(0.5f);
    overlap.mutable_overlap()->mutable_pose()->mutable_position()->set_x(6);
    ASSERT_TRUE(stub_->Overlap(Context(header).get(), overlap, &answer).ok());
    ASSERT_EQ(answer.hits_size(), 1);
    EXPECT_EQ(answer.hits(0).body_id(), 2u);

    v1::RemoveBodiesRequest remove;
    remove.set_scene("b");
    remove.add_ids(2);
    ASSERT_TRUE(stub_->RemoveBodies(Context(header).get(), remove, &written).ok());

    v1::CreateSceneRequest create;
    create.set_scene("b");
    v1::CreateSceneResponse created;
    v1::DeleteSceneRequest remove_scene;
    remove_scene.set_scene("b");
    v1::DeleteSceneResponse removed;
    ASSERT_TRUE(stub_->DeleteScene(Context(header).get(), remove_scene, &removed).ok());
    EXPECT_FALSE(Exists("b"));
    ASSERT_TRUE(stub_->CreateScene(Context(header).get(), create, &created).ok());
    ASSERT_TRUE(stub_->UpsertBodies(Context(header).get(), Upsert("b", 1), &written).ok());
  }
}

TEST_F(SceneHeaderCheckTest, ListScenesIgnoresTheHeader) {
  v1::ListScenesResponse list;
  ASSERT_TRUE(stub_->ListScenes(Context("nonexistent").get(), v1::ListScenesRequest(), &list).ok());
  ASSERT_EQ(list.scenes_size(), 2);
  EXPECT_EQ(list.scenes(0).name(), "a");
  EXPECT_EQ(list.scenes(1).name(), "b");
}

TEST_F(SceneHeaderCheckTest, AnUpdateStreamBatchForAnotherSceneGetsAnErrorAndTheStreamGoesOn) {
  const uint64_t version_a = Version("a");
  const uint64_t version_b = Version("b");
  auto context = Context("a");
  auto stream = stub_->UpdateStream(context.get());
  // Three batches moving body 1: for "a", for "b" (refused), for "a" again.
  const char* scenes[] = {"a", "b", "a"};
  for (int i = 0; i < 3; ++i) {
    v1::UpdateBatch batch;
    batch.set_scene(scenes[i]);
    batch.set_client_sequence(static_cast<uint64_t>(i + 1));
    v1::SetPose* set_pose = batch.add_ops()->mutable_set_pose();
    set_pose->set_id(1);
    set_pose->mutable_pose()->mutable_position()->set_y(static_cast<float>(i + 1));
    ASSERT_TRUE(stream->Write(batch));
  }
  ASSERT_TRUE(stream->WritesDone());
  v1::UpdateAck acks[3];
  for (v1::UpdateAck& ack : acks) ASSERT_TRUE(stream->Read(&ack));
  v1::UpdateAck extra;
  EXPECT_FALSE(stream->Read(&extra));
  grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();

  EXPECT_FALSE(acks[0].has_error()) << acks[0].error().message();
  EXPECT_EQ(acks[0].version(), version_a + 1);
  EXPECT_EQ(acks[1].client_sequence(), 2u);
  EXPECT_TRUE(IsMismatch(acks[1].error()));
  EXPECT_FALSE(acks[2].has_error()) << acks[2].error().message();
  EXPECT_EQ(acks[2].version(), version_a + 2);
  EXPECT_EQ(Version("a"), version_a + 2);
  EXPECT_EQ(Version("b"), version_b);
}

TEST_F(SceneHeaderCheckTest, AQueryStreamBatchForAnotherSceneGetsAnErrorAndTheStreamGoesOn) {
  auto context = Context("a");
  auto stream = stub_->QueryStream(context.get());
  const char* scenes[] = {"a", "b", "a"};
  for (int i = 0; i < 3; ++i) {
    v1::QueryBatch batch;
    batch.set_scene(scenes[i]);
    v1::Query* query = batch.add_queries();
    query->set_request_id(static_cast<uint64_t>(i + 1));
    *query->mutable_raycast() = RayAlongX();
    ASSERT_TRUE(stream->Write(batch));
    v1::QueryBatchResult result;
    ASSERT_TRUE(stream->Read(&result));
    if (i == 1) {
      EXPECT_TRUE(IsMismatch(result.error()));
      EXPECT_EQ(result.results_size(), 0);
    } else {
      EXPECT_FALSE(result.has_error()) << result.error().message();
      ASSERT_EQ(result.results_size(), 1);
      EXPECT_EQ(result.results(0).request_id(), static_cast<uint64_t>(i + 1));
      ASSERT_EQ(result.results(0).hits_size(), 1);
      EXPECT_NEAR(result.results(0).hits(0).distance(), 12.0, 1e-4);
    }
  }
  ASSERT_TRUE(stream->WritesDone());
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(SceneHeaderCheckTest, StreamsWithoutTheHeaderServeBatchesForAnyScene) {
  auto context = Context(nullptr);
  auto stream = stub_->QueryStream(context.get());
  for (const char* scene : {"a", "b"}) {
    v1::QueryBatch batch;
    batch.set_scene(scene);
    *batch.add_queries()->mutable_raycast() = RayAlongX();
    ASSERT_TRUE(stream->Write(batch));
    v1::QueryBatchResult result;
    ASSERT_TRUE(stream->Read(&result));
    EXPECT_FALSE(result.has_error()) << scene << ": " << result.error().message();
    ASSERT_EQ(result.results_size(), 1);
    EXPECT_EQ(result.results(0).hits_size(), 1) << scene;
  }
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace collide::integration
