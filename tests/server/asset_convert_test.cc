// The messages of UploadAsset and the assets of exports: an upload assembled from its header,
// chunks and trailer, every way the stream can lie refused with its path; an asset cut into
// chunks and assembled back bit for bit; the errors of the core in the upload's words.

#include "server/convert/asset_convert.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "base/field_error.h"
#include "gtest/gtest.h"
#include "server/convert/field_path.h"
#include "store/crc32c.h"

namespace collide {
namespace {

// A mesh: `n` x `n` grid of vertices, 2 triangles per cell.
AssetSource Grid(uint32_t n) {
  AssetSource s;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      s.vertices.push_back(
          Vec3{static_cast<float>(j), 0.1f * static_cast<float>(i * j % 5), static_cast<float>(i)});
    }
  }
  for (uint32_t i = 0; i + 1 < n; ++i) {
    for (uint32_t j = 0; j + 1 < n; ++j) {
      const uint32_t a = i * n + j;
      for (uint32_t k : {a, a + n, a + n + 1, a, a + n + 1, a + 1}) s.indices.push_back(k);
    }
  }
  s.size = AssetSize{
      .kind = AssetKind::kMesh, .vertex_count = s.vertices.size(), .index_count = s.indices.size()};
  return s;
}

// The messages of an upload of `source` with chunks of about `chunk_bytes`, its CRC and counts.
std::vector<v1::UploadAssetRequest> Messages(const AssetSource& source, size_t chunk_bytes,
                                             const std::string& scene = "level") {
  std::vector<v1::UploadAssetRequest> out;
  v1::UploadAssetRequest header;
  header.set_scene(scene);
  header.mutable_header()->set_name("grid");
  AssetSizeToProto(source.size, header.mutable_header());
  out.push_back(header);
  std::shared_ptr<const Asset> asset = Asset::Build(source);
  AssetChunkCursor cursor;
  v1::AssetChunk chunk;
  v1::AssetTrailer trailer;
  uint32_t crc = 0;
  uint64_t chunks = 0;
  while (NextAssetChunk(*asset, chunk_bytes, &cursor, &chunk)) {
    crc = Crc32cExtend(crc, chunk.vertices().data(), chunk.vertices_size() * 4);
    crc = Crc32cExtend(crc, chunk.indices().data(), chunk.indices_size() * 4);
    crc = Crc32cExtend(crc, chunk.heights().data(), chunk.heights_size() * 4);
    crc = Crc32cExtend(crc, chunk.holes().data(), chunk.holes().size());
    ++chunks;
    v1::UploadAssetRequest message;
    *message.mutable_chunk() = chunk;
    out.push_back(message);
  }
  trailer.set_vertex_count(source.size.vertex_count);
  trailer.set_index_count(source.size.index_count);
  trailer.set_sample_count(source.heights.size());
  trailer.set_hole_bytes(source.holes.size());
  trailer.set_chunk_count(chunks);
  trailer.set_crc32c(crc);
  v1::UploadAssetRequest last;
  *last.mutable_trailer() = trailer;
  out.push_back(last);
  return out;
}

ServiceLimits Limits() {
  ServiceLimits limits;
  limits.max_mesh_triangles = 1000;
  limits.max_heightfield_samples = 1000;
  return limits;
}

// The first error of feeding `messages` (and finishing), as the client would see it.
absl::Status Feed(const std::vector<v1::UploadAssetRequest>& messages, AssetSource* out = nullptr) {
  AssetUploader uploader(Limits());
  for (const v1::UploadAssetRequest& m : messages) {
    absl::Status status = uploader.Add(m);
    if (!status.ok()) return ForRequest(status, {.kind = RequestLayout::Kind::kUpload});
  }
  absl::StatusOr<AssetUploader::Upload> upload = std::move(uploader).Finish();
  if (!upload.ok()) return ForRequest(upload.status(), {.kind = RequestLayout::Kind::kUpload});
  if (out != nullptr) *out = std::move(upload->source);
  return absl::OkStatus();
}

TEST(AssetUploader, AssemblesWhatWasSentBitForBitWhateverTheChunks) {
  const AssetSource source = Grid(9);
  for (size_t chunk_bytes : {4, 12, 13, 100, 1 << 20}) {
    AssetSource got;
    ASSERT_TRUE(Feed(Messages(source, chunk_bytes), &got).ok()) << chunk_bytes;
    ASSERT_EQ(got.vertices.size(), source.vertices.size());
    EXPECT_EQ(std::memcmp(got.vertices.data(), source.vertices.data(),
                          source.vertices.size() * sizeof(Vec3)),
              0);
    EXPECT_EQ(got.indices, source.indices);
    EXPECT_EQ(AssetSha256(got), AssetSha256(source));
  }
  // A heightfield with holes.
  AssetSource field;
  field.size =
      AssetSize{.kind = AssetKind::kHeightfield, .rows = 5, .columns = 7, .has_holes = true};
  for (int i = 0; i < 35; ++i) field.heights.push_back(static_cast<float>(i) * 0.5f);
  field.holes = {0x81, 0x02, 0x10};
  AssetSource got;
  ASSERT_TRUE(Feed(Messages(field, 8), &got).ok());
  EXPECT_EQ(got.heights, field.heights);
  EXPECT_EQ(got.holes, field.holes);
}

TEST(AssetUploader, RefusesEveryLieOfTheStreamWithItsPath) {
  const AssetSource source = Grid(4);
  const std::vector<v1::UploadAssetRequest> good = Messages(source, 40);
  ASSERT_GE(good.size(), 5u);
  struct Case {
    const char* name;
    std::vector<v1::UploadAssetRequest> messages;
    absl::StatusCode code;
    std::string prefix;
  };
  std::vector<Case> cases;
  auto with = [&](const char* name, auto change, absl::StatusCode code, std::string prefix) {
    std::vector<v1::UploadAssetRequest> m = good;
    change(m);
    cases.push_back({name, std::move(m), code, std::move(prefix)});
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  const auto kDataLoss = absl::StatusCode::kDataLoss;
  with(
      "ChunkBeforeTheHeader", [](auto& m) { m.erase(m.begin()); }, kInvalid,
      "messages[0]: the first message must hold the header");
  with(
      "SecondHeader", [](auto& m) { m.insert(m.begin() + 1, m[0]); }, kInvalid,
      "messages[1].scene: only the first message names the scene");
  with(
      "SecondHeaderWithoutScene",
      [](auto& m) {
        v1::UploadAssetRequest again = m[0];
        again.clear_scene();
        m.insert(m.begin() + 2, again);
      },
      kInvalid, "messages[2]: a second header");
  with(
      "ChunkAfterTheTrailer", [](auto& m) { m.push_back(m[1]); }, kInvalid,
      "messages[" + std::to_string(good.size()) + "]: a message after the trailer");
  with(
      "EmptyMessage", [](auto& m) { m.insert(m.begin() + 1, v1::UploadAssetRequest()); }, kInvalid,
      "messages[1]: holds no header, chunk or trailer");
  with(
      "EmptyChunk",
      [](auto& m) {
        v1::UploadAssetRequest empty;
        empty.mutable_chunk();
        m.insert(m.begin() + 1, empty);
      },
      kInvalid, "messages[1]: an empty chunk");
  with(
      "NoKind", [](auto& m) { m[0].mutable_header()->clear_kind(); }, kInvalid,
      "header: must hold a mesh or a heightfield size");
  with(
      "BadName", [](auto& m) { m[0].mutable_header()->set_name("no name"); }, kInvalid,
      "header.name: character 2 of the name is not one of [A-Za-z0-9_.-]");
  with(
      "LongName", [](auto& m) { m[0].mutable_header()->set_name(std::string(129, 'n')); }, kInvalid,
      "header.name: a name has 1 to 128 characters, got 129");
  with(
      "BadSha", [](auto& m) { m[0].mutable_header()->set_sha256("ABC"); }, kInvalid,
      "header.sha256: must be empty or 64 lowercase hexadecimal digits");
  with(
      "AllTheIndices",
      [](auto& m) { m[0].mutable_header()->mutable_mesh()->set_index_count(UINT64_MAX); },
      absl::StatusCode::kResourceExhausted,
      "header.mesh.index_count: 6148914691236517205 triangles, over the limit of 1000");
  with(
      "TooManyTriangles",
      [](auto& m) { m[0].mutable_header()->mutable_mesh()->set_index_count(3 * 1001); },
      absl::StatusCode::kResourceExhausted,
      "header.mesh.index_count: 1001 triangles, over the limit of 1000");
  with(
      "AllTheVertices",
      [](auto& m) { m[0].mutable_header()->mutable_mesh()->set_vertex_count(UINT64_MAX); },
      kInvalid, "header.mesh.vertex_count: must be at most 268435456");
  with(
      "HeaderSaysFewerVertices",
      [](auto& m) { m[0].mutable_header()->mutable_mesh()->set_vertex_count(2); }, kInvalid,
      "chunks[0].vertices: more than the header's 6 floats");
  with(
      "HeaderSaysMoreVertices",
      [](auto& m) { m[0].mutable_header()->mutable_mesh()->set_vertex_count(17); }, kDataLoss,
      "trailer: the data is not what the header announced: 48 of 51 vertex floats");
  with(
      "HeightsInAMesh",
      [](auto& m) {
        v1::UploadAssetRequest heights;
        heights.mutable_chunk()->add_heights(1.0f);
        m.insert(m.begin() + 1, heights);
      },
      kInvalid, "chunks[0].heights: a mesh carries none");
  with(
      "TrailerLiesAboutVertices", [](auto& m) { m.back().mutable_trailer()->set_vertex_count(15); },
      kDataLoss, "trailer.vertex_count: says 15, 16 were received");
  with(
      "TrailerLiesAboutIndices",
      [](auto& m) { m.back().mutable_trailer()->set_index_count(UINT64_MAX); }, kDataLoss,
      "trailer.index_count: says 18446744073709551615, 54 were received");
  with(
      "TrailerLiesAboutChunks", [](auto& m) { m.back().mutable_trailer()->set_chunk_count(1); },
      kDataLoss, "trailer.chunk_count: says 1");
  with(
      "TrailerLiesAboutTheCrc",
      [](auto& m) { m.back().mutable_trailer()->set_crc32c(m.back().trailer().crc32c() ^ 1); },
      kDataLoss, "trailer.crc32c: says");
  with(
      "AFloatChangedOnTheWay", [](auto& m) { m[1].mutable_chunk()->set_vertices(0, 7.0f); },
      kDataLoss, "trailer.crc32c: says");
  with(
      "NoTrailer", [](auto& m) { m.pop_back(); }, kDataLoss, "stream: ended after");
  with(
      "NanVertex",
      [](auto& m) {
        m[1].mutable_chunk()->set_vertices(4, std::numeric_limits<float>::quiet_NaN());
        // The CRC follows the lie: the core's check finds it.
        uint32_t crc = 0;
        for (size_t i = 1; i + 1 < m.size(); ++i) {
          const v1::AssetChunk& c = m[i].chunk();
          crc = Crc32cExtend(crc, c.vertices().data(), c.vertices_size() * 4);
          crc = Crc32cExtend(crc, c.indices().data(), c.indices_size() * 4);
        }
        m.back().mutable_trailer()->set_crc32c(crc);
      },
      kInvalid, "vertices[1]: must be finite");
  with(
      "IndexOutOfRange",
      [](auto& m) {
        m.back().mutable_trailer()->set_crc32c(0);
        for (auto& message : m) {
          if (message.has_chunk() && message.chunk().indices_size() > 0) {
            message.mutable_chunk()->set_indices(0, 16);
            break;
          }
        }
        uint32_t crc = 0;
        for (size_t i = 1; i + 1 < m.size(); ++i) {
          const v1::AssetChunk& c = m[i].chunk();
          crc = Crc32cExtend(crc, c.vertices().data(), c.vertices_size() * 4);
          crc = Crc32cExtend(crc, c.indices().data(), c.indices_size() * 4);
        }
        m.back().mutable_trailer()->set_crc32c(crc);
      },
      kInvalid, "indices[0]: must be below the vertex count");
  for (const Case& c : cases) {
    const absl::Status status = Feed(c.messages);
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << status;
    EXPECT_TRUE(absl::StartsWith(status.message(), c.prefix))
        << c.name << ": " << status.message() << "\n  expected: " << c.prefix;
  }
}

TEST(NextAssetChunk, CutsWholeVerticesAndBoundsEachChunk) {
  std::shared_ptr<const Asset> asset = Asset::Build(Grid(20));
  AssetChunkCursor cursor;
  v1::AssetChunk chunk;
  size_t floats = 0, indices = 0, chunks = 0;
  while (NextAssetChunk(*asset, 1000, &cursor, &chunk)) {
    ++chunks;
    EXPECT_LE(chunk.ByteSizeLong(), 1000u + 16);
    EXPECT_EQ(chunk.vertices_size() % 3, 0);
    EXPECT_TRUE(chunk.vertices_size() == 0 || chunk.indices_size() == 0);
    floats += static_cast<size_t>(chunk.vertices_size());
    indices += static_cast<size_t>(chunk.indices_size());
  }
  EXPECT_EQ(floats, 3u * 400);
  EXPECT_EQ(indices, 6u * 19 * 19);
  EXPECT_GT(chunks, 10u);
}

TEST(ForRequest, NamesTheUploadsHeaderFields) {
  const RequestLayout upload{.kind = RequestLayout::Kind::kUpload};
  EXPECT_EQ(ForRequest(InvalidFieldError("mesh.index_count", "bad"), upload).message(),
            "header.mesh.index_count: bad");
  EXPECT_EQ(ForRequest(InvalidFieldError("name", "bad"), upload).message(), "header.name: bad");
  EXPECT_EQ(ForRequest(InvalidElementError("vertices", 12, "", "bad"), upload).message(),
            "vertices[12]: bad");
  EXPECT_EQ(ForRequest(InvalidFieldError("scene", "bad"), upload).message(), "scene: bad");
}

}  // namespace
}  // namespace collide
