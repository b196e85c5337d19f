// Hit order on ties over the real server: four identical unrotated boxes in a scene with
// fat_margin 0, hit at one distance by a ray that the tree's slab test of their shared (tight)
// leaf box enters an ulp after the narrow phase's distance. The answer follows the (distance, id)
// rule: MODE_CLOSEST is body 1, MODE_ALL with max_hits 2 is [1, 2], for the ray, a sphere cast
// of radius 0 and a small radius, one by one and in one QueryStream batch.

#include <memory>
#include <vector>

#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeBox;
using client::MakePose;
using client::MakeVec3;

constexpr char kScene[] = "ties";

v1::Vec3 Origin() { return MakeVec3(18.593395f, -1.0467601f, 23.088812f); }
v1::Vec3 Direction() { return MakeVec3(15.375594f, 7.128633f, -8.937269f); }

std::vector<uint64_t> Ids(const google::protobuf::RepeatedPtrField<v1::Hit>& hits) {
  std::vector<uint64_t> ids;
  for (const v1::Hit& hit : hits) ids.push_back(hit.body_id());
  return ids;
}

class HitOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
    v1::SceneOptions options;
    options.set_fat_margin(0.0f);
    auto scene = client_->CreateScene(kScene, options);
    ASSERT_TRUE(IsOk(scene));
    ASSERT_EQ(scene->options().fat_margin(), 0.0f);
    std::vector<v1::Body> bodies;
    for (uint64_t id = 1; id <= 4; ++id) {
      bodies.push_back(MakeBody(id, MakeBox(0.59842348f, 2.978003f, 2.5868423f),
                                MakePose(MakeVec3(33.757797f, 5.6454325f, 14.229436f))));
    }
    ASSERT_TRUE(IsOk(client_->UpsertBodies(kScene, bodies)));
  }

  // The answer of a ray (radius < 0) or sphere cast in `mode`.
  std::vector<uint64_t> Cast(float radius, v1::Mode mode, uint32_t max_hits) {
    absl::StatusOr<v1::QueryResponse> response;
    if (radius < 0.0f) {
      v1::RaycastRequest ray;
      ray.set_scene(kScene);
      *ray.mutable_ray() = client::MakeRaycast(Origin(), Direction(), 100.0f);
      ray.set_mode(mode);
      ray.set_max_hits(max_hits);
      response = client_->Raycast(ray);
    } else {
      v1::SphereCastRequest cast;
      cast.set_scene(kScene);
      *cast.mutable_cast() = client::MakeSphereCast(Origin(), Direction(), 100.0f, radius);
      cast.set_mode(mode);
      cast.set_max_hits(max_hits);
      response = client_->SphereCast(cast);
    }
    EXPECT_TRUE(IsOk(response));
    if (!response.ok()) return {};
    if (mode == v1::MODE_ALL) {
      EXPECT_TRUE(response->truncated());
    }
    return Ids(response->hits());
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
};

// Radius -1 stands for the ray cast itself.
constexpr float kRadii[] = {-1.0f, 0.0f, 1e-3f, 0.01f};

TEST_F(HitOrderTest, TiedBoxesComeBackByIdOneByOne) {
  for (float radius : kRadii) {
    SCOPED_TRACE(::testing::Message() << "radius " << radius << " (-1: the ray cast)");
    EXPECT_EQ(Cast(radius, v1::MODE_CLOSEST, 0), (std::vector<uint64_t>{1}));
    EXPECT_EQ(Cast(radius, v1::MODE_ALL, 2), (std::vector<uint64_t>{1, 2}));
  }
}

TEST_F(HitOrderTest, TiedBoxesComeBackByIdInOneStreamedBatch) {
  // Casts next to each other in a batch run interleaved on the server.
  v1::QueryBatch batch;
  batch.set_scene(kScene);
  uint64_t request_id = 0;
  for (float radius : kRadii) {
    for (v1::Mode mode : {v1::MODE_CLOSEST, v1::MODE_ALL}) {
      const uint32_t max_hits = mode == v1::MODE_ALL ? 2 : 0;
      if (radius < 0.0f) {
        *batch.add_queries() = client::MakeRaycastQuery(
            ++request_id, client::MakeRaycast(Origin(), Direction(), 100.0f), mode, max_hits);
      } else {
        *batch.add_queries() = client::MakeSphereCastQuery(
            ++request_id, client::MakeSphereCast(Origin(), Direction(), 100.0f, radius), mode,
            max_hits);
      }
    }
  }
  auto stream = client_->OpenQueryStream(kScene);
  ASSERT_TRUE(IsOk(stream));
  auto answer = (*stream)->Run(batch);
  ASSERT_TRUE(IsOk(answer));
  ASSERT_EQ(answer->results_size(), batch.queries_size());
  for (int i = 0; i < answer->results_size(); ++i) {
    const v1::QueryResult& result = answer->results(i);
    SCOPED_TRACE(::testing::Message() << "request " << result.request_id());
    EXPECT_EQ(result.request_id(), batch.queries(i).request_id());
    if (batch.queries(i).mode() == v1::MODE_ALL) {
      EXPECT_EQ(Ids(result.hits()), (std::vector<uint64_t>{1, 2}));
      EXPECT_TRUE(result.truncated());
    } else {
      EXPECT_EQ(Ids(result.hits()), (std::vector<uint64_t>{1}));
    }
  }
  EXPECT_TRUE(IsOk((*stream)->Finish()));
}

}  // namespace
}  // namespace collide::integration
