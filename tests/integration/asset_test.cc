// Level geometry through the real server and the C++ client: meshes and heightfields uploaded,
// listed and deleted; bodies that place them queried (the triangle of each hit); their state
// across restarts, exports, imports and a live move; their figures in GetServerStats and
// /metrics; the client's upload retried across a restart; the limits at the upload's header.

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/asset_digest.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/scene_move.h"
#include "gtest/gtest.h"
#include "integration/metrics_scrape.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeHeightfield;
using client::MakeMesh;
using client::MakePose;
using client::MakeSphere;
using client::MakeStaticBody;
using client::MakeVec3;

// A city block: `n` x `n` closed boxes of 4 x h x 4 m on a 10 m grid (12 triangles each, the
// box at (i, j) the i x n + j-th, its triangles 12 k .. 12 k + 11).
struct MeshData {
  std::vector<float> vertices;
  std::vector<uint32_t> indices;
  client::MeshArrays arrays() const { return {vertices, indices}; }
};

MeshData Block(int n) {
  MeshData m;
  static const uint32_t kFaces[] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                    2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const float x = 10.0f * j, z = 10.0f * i, h = 5.0f + static_cast<float>((i * 7 + j) % 4);
      const uint32_t base = static_cast<uint32_t>(m.vertices.size() / 3);
      for (int c = 0; c < 8; ++c) {
        m.vertices.push_back(x + ((c == 1 || c == 2 || c == 5 || c == 6) ? 4.0f : 0.0f));
        m.vertices.push_back((c == 2 || c == 3 || c == 6 || c == 7) ? h : 0.0f);
        m.vertices.push_back(z + (c >= 4 ? 4.0f : 0.0f));
      }
      for (uint32_t f : kFaces) m.indices.push_back(base + f);
    }
  }
  return m;
}

// A gentle terrain of `n` x `n` samples 2 m apart.
std::vector<float> Heights(int n) {
  std::vector<float> h;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) h.push_back(std::sin(0.3f * i) + std::cos(0.2f * j));
  }
  return h;
}

client::HeightfieldArrays Terrain(const std::vector<float>& heights, int n) {
  return client::HeightfieldArrays{.rows = static_cast<uint64_t>(n),
                                   .columns = static_cast<uint64_t>(n),
                                   .spacing_x = 2.0f,
                                   .spacing_z = 2.0f,
                                   .heights = heights,
                                   .holes = {}};
}

// A straight-down ray at (x, 50, z).
v1::RaycastRequest Down(const std::string& scene, float x, float z, v1::Mode mode) {
  v1::RaycastRequest request;
  request.set_scene(scene);
  *request.mutable_ray() = client::MakeRaycast(MakeVec3(x, 50, z), MakeVec3(0, -1, 0), 200);
  request.set_mode(mode);
  return request;
}

// The scene "level": a 3 x 3 block (body 1) on a terrain (body 2) and a ball (body 3).
void Populate(client::Client& client) {
  ASSERT_TRUE(IsOk(client.CreateScene("level")));
  const MeshData block = Block(3);
  absl::StatusOr<v1::UploadAssetResponse> mesh =
      client.UploadMesh("level", "block", block.arrays());
  ASSERT_TRUE(IsOk(mesh));
  const std::vector<float> heights = Heights(30);
  ASSERT_TRUE(IsOk(client.UploadHeightfield("level", "terrain", Terrain(heights, 30))));
  std::vector<v1::Body> bodies = {
      MakeStaticBody(1, MakeMesh("block"), MakePose(MakeVec3(5, 0, 5))),
      MakeStaticBody(2, MakeHeightfield("terrain"), MakePose(MakeVec3(0, -3, 0))),
      MakeBody(3, MakeSphere(1), MakePose(MakeVec3(50, 10, 50)))};
  ASSERT_TRUE(IsOk(client.UpsertBodies("level", bodies)));
}

TEST(Assets, UploadedListedPlacedQueriedAndDeleted) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("level")));
  const MeshData block = Block(3);
  absl::StatusOr<v1::UploadAssetResponse> uploaded =
      client->UploadMesh("level", "block", block.arrays(), {.chunk_bytes = 100, .call = {}});
  ASSERT_TRUE(IsOk(uploaded));
  const v1::AssetInfo& info = uploaded->asset();
  EXPECT_FALSE(uploaded->already_present());
  EXPECT_EQ(info.name(), "block");
  EXPECT_EQ(info.kind(), v1::ASSET_KIND_MESH);
  EXPECT_EQ(info.triangle_count(), 9u * 12);
  EXPECT_EQ(info.mesh().vertex_count(), 9u * 8);
  EXPECT_EQ(info.sha256(), client::MeshSha256(block.vertices, block.indices));
  EXPECT_EQ(info.source_bytes(), block.vertices.size() * 4 + block.indices.size() * 4);
  EXPECT_GT(info.memory_bytes(), info.source_bytes());
  EXPECT_EQ(info.bounds().max().x(), 24.0f);
  // Sent again (a retry): nothing changes.
  absl::StatusOr<v1::UploadAssetResponse> again =
      client->UploadMesh("level", "block", block.arrays());
  ASSERT_TRUE(IsOk(again));
  EXPECT_TRUE(again->already_present());
  EXPECT_EQ(again->asset().sha256(), info.sha256());
  // Other content under the name.
  MeshData other = block;
  other.vertices[0] += 1.0f;
  EXPECT_TRUE(HasError(client->UploadMesh("level", "block", other.arrays()).status(),
                       absl::StatusCode::kAlreadyExists, "header.name: asset \"block\""));

  const std::vector<float> heights = Heights(30);
  ASSERT_TRUE(IsOk(client->UploadHeightfield("level", "terrain", Terrain(heights, 30))));
  absl::StatusOr<std::vector<v1::AssetInfo>> list = client->ListAssets("level");
  ASSERT_TRUE(IsOk(list));
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].name(), "terrain");
  EXPECT_EQ((*list)[1].heightfield().rows(), 30u);
  EXPECT_EQ((*list)[1].triangle_count(), 2u * 29 * 29);
  EXPECT_EQ((*list)[1].sha256(), client::HeightfieldSha256(30, 30, 2.0f, 2.0f, heights, {}));

  std::vector<v1::Body> bodies = {
      MakeStaticBody(1, MakeMesh("block", 0.5f), MakePose(MakeVec3(5, 0, 5))),
      MakeStaticBody(2, MakeHeightfield("terrain"), MakePose(MakeVec3(0, -3, 0)))};
  ASSERT_TRUE(IsOk(client->UpsertBodies("level", bodies)));
  absl::StatusOr<v1::GetBodiesResponse> stored = client->GetBodies("level");
  ASSERT_TRUE(IsOk(stored));
  ASSERT_EQ(stored->bodies_size(), 2);
  EXPECT_EQ(stored->bodies(0).shape().mesh().asset(), "block");
  EXPECT_EQ(stored->bodies(0).shape().mesh().scale(), 0.5f);
  EXPECT_EQ(stored->bodies(1).shape().heightfield().asset(), "terrain");

  // Down through box (0, 0) at half scale (x and z 5..7, 5 m high at scale 1: 2.5 here) onto
  // the terrain: the box's top, its bottom, the ground.
  absl::StatusOr<v1::QueryResponse> all = client->Raycast(Down("level", 6.5f, 6.7f, v1::MODE_ALL));
  ASSERT_TRUE(IsOk(all));
  ASSERT_EQ(all->hits_size(), 3);
  EXPECT_EQ(all->hits(0).body_id(), 1u);
  EXPECT_FLOAT_EQ(all->hits(0).distance(), 50.0f - 2.5f);
  ASSERT_TRUE(all->hits(0).has_triangle());
  EXPECT_TRUE(all->hits(0).triangle() == 6 || all->hits(0).triangle() == 7);
  EXPECT_FALSE(all->hits(0).back_face());
  EXPECT_EQ(all->hits(1).body_id(), 1u);
  EXPECT_TRUE(all->hits(1).back_face());
  EXPECT_EQ(all->hits(2).body_id(), 2u);
  ASSERT_TRUE(all->hits(2).has_triangle());
  // Cell (3, 3) of the terrain (2 m cells: x 6.5, z 6.7).
  EXPECT_EQ(all->hits(2).triangle() / 2, 3u * 29 + 3);

  // Stats: the scene's and the server's.
  absl::StatusOr<v1::SceneInfo> scene = client->GetScene("level");
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().asset_count(), 2u);
  EXPECT_EQ(scene->stats().asset_triangles(), 108u + 2u * 29 * 29);
  EXPECT_EQ(scene->stats().asset_bytes(), info.source_bytes() + 30u * 30 * 4);
  EXPECT_GE(scene->stats().memory_bytes(), scene->stats().asset_memory_bytes());
  absl::StatusOr<v1::GetServerStatsResponse> stats = client->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_EQ(stats->assets(), 2u);
  EXPECT_EQ(stats->asset_bytes(), scene->stats().asset_bytes());
  ASSERT_EQ(stats->scene_stats_size(), 1);
  EXPECT_EQ(stats->scene_stats(0).asset_count(), 2u);
  EXPECT_EQ(stats->scene_stats(0).asset_triangles(), scene->stats().asset_triangles());

  // Deletion: refused while a body places the asset; then done.
  EXPECT_TRUE(HasError(client->DeleteAsset("level", "block"), absl::StatusCode::kFailedPrecondition,
                       "name: asset \"block\" is used by body 1"));
  const std::vector<uint64_t> one = {1};
  ASSERT_TRUE(IsOk(client->RemoveBodies("level", one)));
  ASSERT_TRUE(IsOk(client->DeleteAsset("level", "block")));
  EXPECT_TRUE(HasError(client->DeleteAsset("level", "block"), absl::StatusCode::kNotFound,
                       "name: no asset \"block\""));
  EXPECT_TRUE(HasError(client->UpsertBodies("level", bodies).status(), absl::StatusCode::kNotFound,
                       "bodies[0].shape.mesh.asset"));
  list = client->ListAssets("level");
  ASSERT_TRUE(IsOk(list));
  EXPECT_EQ(list->size(), 1u);
}

TEST(Assets, SurviveRestartsAndAKill) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  Populate(*(*server)->NewClient());
  const v1::RaycastRequest ray = Down("level", 16, 26, v1::MODE_ALL);
  absl::StatusOr<v1::QueryResponse> before = (*server)->NewClient()->Raycast(ray);
  ASSERT_TRUE(IsOk(before));
  ASSERT_EQ(before->hits_size(), 3);
  for (int signal : {SIGKILL, SIGTERM, SIGKILL}) {
    SCOPED_TRACE(signal);
    ASSERT_TRUE(IsOk((*server)->Stop(signal)));
    ASSERT_TRUE(IsOk((*server)->Restart()));
    std::unique_ptr<client::Client> client = (*server)->NewClient();
    absl::StatusOr<v1::QueryResponse> after = client->Raycast(ray);
    ASSERT_TRUE(IsOk(after));
    ASSERT_EQ(after->hits_size(), before->hits_size());
    for (int i = 0; i < after->hits_size(); ++i) {
      EXPECT_EQ(after->hits(i).body_id(), before->hits(i).body_id());
      EXPECT_EQ(after->hits(i).triangle(), before->hits(i).triangle());
      EXPECT_EQ(after->hits(i).distance(), before->hits(i).distance());
    }
    absl::StatusOr<std::vector<v1::AssetInfo>> list = client->ListAssets("level");
    ASSERT_TRUE(IsOk(list));
    EXPECT_EQ(list->size(), 2u);
  }
}

TEST(Assets, TravelWithTheirSceneThroughExportImportAndAMove) {
  auto source = ServerProcess::Start();
  auto destination = ServerProcess::Start();
  ASSERT_TRUE(IsOk(source));
  ASSERT_TRUE(IsOk(destination));
  std::unique_ptr<client::Client> from = (*source)->NewClient();
  std::unique_ptr<client::Client> to = (*destination)->NewClient();
  Populate(*from);
  // Export into memory (small chunks), import under another name on the same server.
  std::vector<v1::SceneExportMessage> messages;
  ASSERT_TRUE(IsOk(from->ExportScene("level", [&](const v1::SceneExportMessage& m) {
    messages.push_back(m);
    return absl::OkStatus();
  })));
  int asset_parts = 0;
  for (const v1::SceneExportMessage& m : messages) {
    asset_parts += m.has_asset() || m.has_asset_chunk();
  }
  EXPECT_GE(asset_parts, 4);
  EXPECT_EQ(messages.front().header().asset_count(), 2u);
  EXPECT_EQ(messages.back().trailer().asset_count(), 2u);
  size_t next = 0;
  absl::StatusOr<v1::SceneInfo> copy = from->ImportScene(
      [&](v1::SceneExportMessage* m) -> absl::StatusOr<bool> {
        if (next == messages.size()) return false;
        *m = messages[next++];
        return true;
      },
      "copy");
  ASSERT_TRUE(IsOk(copy));
  EXPECT_EQ(copy->stats().asset_count(), 2u);
  // The same answers from both.
  for (float x : {6.0f, 16.0f, 27.0f, 40.0f}) {
    absl::StatusOr<v1::QueryResponse> a = from->Raycast(Down("level", x, x, v1::MODE_ALL));
    absl::StatusOr<v1::QueryResponse> b = from->Raycast(Down("copy", x, x, v1::MODE_ALL));
    ASSERT_TRUE(IsOk(a) && IsOk(b));
    ASSERT_EQ(a->hits_size(), b->hits_size());
    for (int i = 0; i < a->hits_size(); ++i) {
      EXPECT_EQ(a->hits(i).SerializeAsString(), b->hits(i).SerializeAsString());
    }
  }
  // An asset the stream does not carry: refused by the body's path.
  std::vector<v1::SceneExportMessage> without = messages;
  without.erase(std::remove_if(without.begin(), without.end(),
                               [](const v1::SceneExportMessage& m) {
                                 return m.has_asset() || m.has_asset_chunk();
                               }),
                without.end());
  without.front().mutable_header()->set_asset_count(0);
  without.back().mutable_trailer()->set_asset_count(0);
  next = 0;
  absl::Status refused = from->ImportScene(
                                 [&](v1::SceneExportMessage* m) -> absl::StatusOr<bool> {
                                   if (next == without.size()) return false;
                                   *m = without[next++];
                                   return true;
                                 },
                                 "bare")
                             .status();
  // The checksum covers the assets too: removing them is noticed first.
  EXPECT_EQ(refused.code(), absl::StatusCode::kDataLoss) << refused;

  // A live move with its verification.
  absl::StatusOr<client::MoveReport> moved =
      client::MoveScene(*from, *to, "level", (*destination)->address());
  ASSERT_TRUE(IsOk(moved)) << (moved.ok() ? "" : std::string(moved.status().message()));
  absl::StatusOr<std::vector<v1::AssetInfo>> there = to->ListAssets("level");
  ASSERT_TRUE(IsOk(there));
  ASSERT_EQ(there->size(), 2u);
  EXPECT_EQ((*there)[0].sha256(), client::MeshSha256(Block(3).vertices, Block(3).indices));
  absl::StatusOr<v1::QueryResponse> hit = to->Raycast(Down("level", 16, 26, v1::MODE_CLOSEST));
  ASSERT_TRUE(IsOk(hit));
  ASSERT_EQ(hit->hits_size(), 1);
  EXPECT_TRUE(hit->hits(0).has_triangle());
  EXPECT_FALSE(from->GetScene("level").ok());
}

TEST(Assets, TheClientsUploadWaitsOutARestartingServer) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  ASSERT_TRUE(IsOk((*server)->NewClient()->CreateScene("level")));
  // A client that keeps the port while the server is down.
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  ASSERT_TRUE(IsOk((*server)->Stop(SIGTERM)));
  const MeshData block = Block(4);
  absl::StatusOr<v1::UploadAssetResponse> uploaded;
  std::thread upload([&] {
    uploaded = client->UploadMesh("level", "block", block.arrays(),
                                  {.initial_backoff = absl::Milliseconds(50),
                                   .give_up_after = absl::Seconds(30),
                                   .call = {}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_TRUE(IsOk((*server)->RestartOnSamePort()));
  upload.join();
  ASSERT_TRUE(IsOk(uploaded));
  EXPECT_EQ(uploaded->asset().triangle_count(), 16u * 12);
  // A failure no retry mends is returned at once.
  const absl::Time start = absl::Now();
  EXPECT_TRUE(HasError(client->UploadMesh("nowhere", "block", block.arrays()).status(),
                       absl::StatusCode::kNotFound, "scene"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(Assets, LimitsAreCheckedAtTheHeaderBeforeTheDataArrives) {
  ServerConfig config;
  config.metrics = true;
  config.extra_flags = {"--max_mesh_triangles=100", "--max_heightfield_samples=400",
                        "--max_assets_per_scene=2", "--max_asset_bytes_per_scene=20000",
                        "--max_asset_bytes=30000"};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("a")));
  ASSERT_TRUE(IsOk(client->CreateScene("b")));
  EXPECT_TRUE(HasError(client->UploadMesh("a", "big", Block(3).arrays()).status(),
                       absl::StatusCode::kResourceExhausted,
                       "header.mesh.index_count: 108 triangles, over the limit of 100"));
  const std::vector<float> heights = Heights(21);
  EXPECT_TRUE(HasError(client->UploadHeightfield("a", "t", Terrain(heights, 21)).status(),
                       absl::StatusCode::kResourceExhausted, "header.heightfield.rows"));
  // 2 x 2 boxes: 8 x 4 x 12 + 48 x 4 = 576 bytes each... per scene 20000 bytes.
  const std::vector<float> small = Heights(20);  // 1600 bytes
  ASSERT_TRUE(IsOk(client->UploadMesh("a", "one", Block(2).arrays())));
  ASSERT_TRUE(IsOk(client->UploadHeightfield("a", "two", Terrain(small, 20))));
  EXPECT_TRUE(HasError(client->UploadMesh("a", "three", Block(1).arrays()).status(),
                       absl::StatusCode::kResourceExhausted,
                       "header.name: scene \"a\" holds its limit of 2 assets"));
  // The same content in scene b costs the server nothing more.
  ASSERT_TRUE(IsOk(client->UploadMesh("b", "one", Block(2).arrays())));
  absl::StatusOr<v1::GetServerStatsResponse> stats = client->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_EQ(stats->assets(), 2u);
  absl::StatusOr<std::vector<Sample>> samples = Scrape((*server)->metrics_port());
  ASSERT_TRUE(IsOk(samples));
  EXPECT_EQ(SampleValue(*samples, "collide_scene_assets", {{"scene", "a"}}).value_or(-1), 2);
  EXPECT_EQ(SampleValue(*samples, "collide_scene_assets", {{"scene", "b"}}).value_or(-1), 1);
  EXPECT_EQ(SampleValue(*samples, "collide_assets", {}).value_or(-1), 2);
  EXPECT_EQ(SampleValue(*samples, "collide_asset_bytes", {}).value_or(-1),
            static_cast<double>(stats->asset_bytes()));
}

}  // namespace
}  // namespace collide::integration
