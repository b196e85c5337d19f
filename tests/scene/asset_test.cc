#include "scene/asset.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/field_error.h"
#include "base/sha256.h"
#include "gtest/gtest.h"

namespace collide {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A unit square of two triangles (4 vertices).
AssetSource Square() {
  AssetSource s;
  s.size = AssetSize{.kind = AssetKind::kMesh, .vertex_count = 4, .index_count = 6};
  s.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}};
  s.indices = {0, 2, 1, 0, 3, 2};
  return s;
}

// A 3 x 4 heightfield (2 x 3 cells), with holes when asked (cell 4 a hole).
AssetSource Field(bool holes = false) {
  AssetSource s;
  s.size = AssetSize{.kind = AssetKind::kHeightfield,
                     .rows = 3,
                     .columns = 4,
                     .spacing_x = 1.0f,
                     .spacing_z = 2.0f,
                     .has_holes = holes};
  s.heights = {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5};
  if (holes) s.holes = {0x10};
  return s;
}

// The message of `status`, or "OK".
std::string Message(const absl::Status& status) {
  return status.ok() ? "OK" : std::string(status.message());
}

struct BadSource {
  const char* name;
  AssetSource source;
  absl::StatusCode code;
  std::string message;
};

std::vector<BadSource> BadSources() {
  std::vector<BadSource> cases;
  auto mesh = [&](const char* name, auto change, absl::StatusCode code, std::string message) {
    AssetSource s = Square();
    change(s);
    cases.push_back({name, std::move(s), code, std::move(message)});
  };
  auto field = [&](const char* name, auto change, absl::StatusCode code, std::string message) {
    AssetSource s = Field(true);
    change(s);
    cases.push_back({name, std::move(s), code, std::move(message)});
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  mesh(
      "NanVertex", [](AssetSource& s) { s.vertices[2].y = kNan; }, kInvalid,
      "vertices[2]: must be finite");
  mesh(
      "InfiniteVertex", [](AssetSource& s) { s.vertices[3].x = -kInf; }, kInvalid,
      "vertices[3]: must be finite");
  mesh(
      "HugeVertex", [](AssetSource& s) { s.vertices[1].z = 1e30f; }, kInvalid,
      "vertices[1]: must be within +-1e9");
  mesh(
      "NegativeHugeVertex", [](AssetSource& s) { s.vertices[0].x = -1e30f; }, kInvalid,
      "vertices[0]: must be within +-1e9");
  mesh(
      "IndexOutOfRange", [](AssetSource& s) { s.indices[4] = 4; }, kInvalid,
      "indices[4]: must be below the vertex count");
  mesh(
      "ReservedIndex", [](AssetSource& s) { s.indices[5] = 0xFFFFFFFFu; }, kInvalid,
      "indices[5]: 4294967295 is not a vertex index");
  mesh(
      "NoVertex", [](AssetSource& s) { s.size.vertex_count = 0; }, kInvalid,
      "mesh.vertex_count: must be at least 1");
  mesh(
      "NoIndex", [](AssetSource& s) { s.size.index_count = 0; }, kInvalid,
      "mesh.index_count: must be a positive multiple of 3 (3 per triangle), got 0");
  mesh(
      "IndicesNotTriangles", [](AssetSource& s) { s.size.index_count = 7; }, kInvalid,
      "mesh.index_count: must be a positive multiple of 3 (3 per triangle), got 7");
  mesh(
      "AllTheVertices", [](AssetSource& s) { s.size.vertex_count = ~uint64_t{0}; }, kInvalid,
      "mesh.vertex_count: must be at most 268435456, got 18446744073709551615");
  // 2^64 - 1 is a multiple of 3.
  mesh(
      "AllTheIndices", [](AssetSource& s) { s.size.index_count = ~uint64_t{0}; },
      absl::StatusCode::kResourceExhausted,
      "mesh.index_count: 6148914691236517205 triangles, over the limit of 1000 "
      "(--max_mesh_triangles)");
  mesh(
      "AllTheIndicesButOne", [](AssetSource& s) { s.size.index_count = ~uint64_t{0} - 1; },
      kInvalid,
      "mesh.index_count: must be a positive multiple of 3 (3 per triangle), got "
      "18446744073709551614");
  mesh(
      "TooManyTriangles", [](AssetSource& s) { s.size.index_count = 3 * 1001; },
      absl::StatusCode::kResourceExhausted,
      "mesh.index_count: 1001 triangles, over the limit of 1000 (--max_mesh_triangles)");
  mesh(
      "ListShorterThanItsSize", [](AssetSource& s) { s.vertices.pop_back(); }, kInvalid,
      "vertices: holds 3, the size says 4");
  mesh(
      "HeightsInAMesh", [](AssetSource& s) { s.heights = {1.0f}; }, kInvalid,
      "heights: holds 1, the size says 0");
  field(
      "OneByOne", [](AssetSource& s) { s.size.rows = s.size.columns = 1; }, kInvalid,
      "heightfield.rows: must be at least 2 (a heightfield needs a cell), got 1");
  field(
      "NoColumn", [](AssetSource& s) { s.size.columns = 0; }, kInvalid,
      "heightfield.columns: must be at least 2 (a heightfield needs a cell), got 0");
  field(
      "TwoToTheThirtyTwoColumns", [](AssetSource& s) { s.size.columns = uint64_t{1} << 32; },
      kInvalid, "heightfield.columns: must be at most 32768, got 4294967296");
  field(
      "AllTheRows", [](AssetSource& s) { s.size.rows = ~uint64_t{0}; }, kInvalid,
      "heightfield.rows: must be at most 32768, got 18446744073709551615");
  field(
      "TooManySamples", [](AssetSource& s) { s.size.rows = s.size.columns = 200; },
      absl::StatusCode::kResourceExhausted,
      "heightfield.rows: 200 x 200 = 40000 samples, over the limit of 10000 "
      "(--max_heightfield_samples)");
  field(
      "NanSpacing", [](AssetSource& s) { s.size.spacing_x = kNan; }, kInvalid,
      "heightfield.spacing_x: must be finite and > 0, and the field within +-1e9");
  field(
      "ZeroSpacing", [](AssetSource& s) { s.size.spacing_z = 0.0f; }, kInvalid,
      "heightfield.spacing_z: must be finite and > 0, and the field within +-1e9");
  field(
      "NegativeSpacing", [](AssetSource& s) { s.size.spacing_x = -1.0f; }, kInvalid,
      "heightfield.spacing_x: must be finite and > 0, and the field within +-1e9");
  field(
      "SpacingPastTheWorld", [](AssetSource& s) { s.size.spacing_x = 1e30f; }, kInvalid,
      "heightfield.spacing_x: must be finite and > 0, and the field within +-1e9");
  field(
      "NanHeight", [](AssetSource& s) { s.heights[7] = kNan; }, kInvalid,
      "heights[7]: must be finite");
  field(
      "HugeHeight", [](AssetSource& s) { s.heights[11] = -1e30f; }, kInvalid,
      "heights[11]: must be within +-1e9");
  field(
      "TooFewHeights", [](AssetSource& s) { s.heights.pop_back(); }, kInvalid,
      "heights: holds 11, the size says 12");
  field(
      "HoleBitPastTheLastCell", [](AssetSource& s) { s.holes[0] = 0x40; }, kInvalid,
      "holes: bits past the last cell (6 cells) must be 0");
  field(
      "HolesWithoutTheFlag", [](AssetSource& s) { s.size.has_holes = false; }, kInvalid,
      "holes: holds 1, the size says 0");
  field(
      "VerticesInAHeightfield",
      [](AssetSource& s) {
        s.vertices = {{0, 0, 0}};
      },
      kInvalid, "vertices: holds 1, the size says 0");
  return cases;
}

TEST(ValidateAssetSource, RefusesEveryBadValueWithItsPath) {
  const AssetLimits limits{.max_mesh_triangles = 1000, .max_heightfield_samples = 10000};
  for (const BadSource& c : BadSources()) {
    const absl::Status status = ValidateAssetSource(c.source, limits);
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << Message(status);
    EXPECT_EQ(Message(status), c.message) << c.name;
    EXPECT_TRUE(GetFieldError(status).has_value()) << c.name << ": the error is data";
  }
}

TEST(ValidateAssetSource, AcceptsZeroAreaAndSliverTriangles) {
  AssetSource s;
  s.size = AssetSize{.kind = AssetKind::kMesh, .vertex_count = 4, .index_count = 9};
  s.vertices = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {1, 1e-7f, 0}};
  // A repeated vertex, three collinear ones, a sliver.
  s.indices = {0, 0, 1, 0, 1, 2, 0, 2, 3};
  EXPECT_TRUE(ValidateAssetSource(s, {}).ok());
  EXPECT_TRUE(ValidateAssetSource(Square(), {}).ok());
  EXPECT_TRUE(ValidateAssetSource(Field(), {}).ok());
  EXPECT_TRUE(ValidateAssetSource(Field(true), {}).ok());
}

TEST(ValidateAssetSize, ZeroLimitsRefuseEveryAsset) {
  const AssetLimits none{.max_mesh_triangles = 0, .max_heightfield_samples = 0};
  EXPECT_EQ(ValidateAssetSize(Square().size, none).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ValidateAssetSize(Field().size, none).code(), absl::StatusCode::kResourceExhausted);
}

TEST(ValidateAssetName, AcceptsTheSceneNameRulesOnly) {
  EXPECT_TRUE(ValidateAssetName("level-1.city_blocks").ok());
  EXPECT_TRUE(ValidateAssetName(std::string(128, 'a')).ok());
  for (const std::string& bad : {std::string(), std::string(129, 'a'), std::string("-x"),
                                 std::string("a b"), std::string("a/b"), std::string("é")}) {
    const absl::Status status = ValidateAssetName(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(FieldPathOf(*GetFieldError(status)), "name") << bad;
  }
}

TEST(AssetSize, CountsBytesAndSaturates) {
  EXPECT_EQ(Square().size.SourceBytes(), 4u * 12 + 6u * 4);
  EXPECT_EQ(Field(true).size.SourceBytes(), 12u * 4 + 1);
  EXPECT_EQ(Field(true).size.HoleBytes(), 1u);
  EXPECT_EQ(Field(false).size.HoleBytes(), 0u);
  EXPECT_EQ(Field().size.TriangleCount(), 12u);
  AssetSize huge{.kind = AssetKind::kMesh, .vertex_count = ~uint64_t{0}, .index_count = 3};
  EXPECT_EQ(huge.SourceBytes(), ~uint64_t{0});
  AssetSize wide{.kind = AssetKind::kHeightfield, .rows = ~uint64_t{0}, .columns = 5};
  EXPECT_EQ(wide.SourceBytes(), ~uint64_t{0});
}

TEST(Sha256, KnownAnswers) {
  // FIPS 180-2, appendix B.1 and the empty message.
  Sha256 abc;
  abc.Update("abc");
  EXPECT_EQ(DigestHex(abc.Finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Sha256 empty;
  EXPECT_EQ(DigestHex(empty.Finish()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // In pieces as at once.
  Sha256 pieces;
  pieces.Update("a");
  pieces.Update("");
  pieces.Update("bc");
  EXPECT_EQ(DigestHex(pieces.Finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// The canonical bytes written out by hand, little-endian.
template <typename T>
void Put(std::string* out, T v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out->append(bytes, sizeof v);
}

std::string HashOf(const std::string& bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return DigestHex(hash.Finish());
}

TEST(AssetSha256, IsTheHashOfTheDocumentedBytes) {
  const AssetSource mesh = Square();
  std::string bytes = "collide-mesh-v1\n";
  Put<uint64_t>(&bytes, 4);
  Put<uint64_t>(&bytes, 6);
  for (const Vec3& v : mesh.vertices) {
    Put(&bytes, v.x);
    Put(&bytes, v.y);
    Put(&bytes, v.z);
  }
  for (uint32_t i : mesh.indices) Put(&bytes, i);
  EXPECT_EQ(AssetSha256(mesh), HashOf(bytes));

  const AssetSource field = Field(true);
  bytes = "collide-hfield1\n";
  Put<uint64_t>(&bytes, 3);
  Put<uint64_t>(&bytes, 4);
  Put(&bytes, 1.0f);
  Put(&bytes, 2.0f);
  bytes.push_back('\1');
  for (float h : field.heights) Put(&bytes, h);
  bytes.push_back('\x10');
  EXPECT_EQ(AssetSha256(field), HashOf(bytes));
}

TEST(AssetSha256, ChangesWithEveryPartOfTheContent) {
  const std::string base = AssetSha256(Square());
  AssetSource s = Square();
  s.vertices[1].x = -0.0f == s.vertices[1].x ? 1.0f : std::nextafter(s.vertices[1].x, 2.0f);
  EXPECT_NE(AssetSha256(s), base);
  s = Square();
  std::swap(s.indices[1], s.indices[2]);  // the other winding
  EXPECT_NE(AssetSha256(s), base);
  const std::string field = AssetSha256(Field(false));
  AssetSource f = Field(false);
  f.size.spacing_z = 2.5f;
  EXPECT_NE(AssetSha256(f), field);
  EXPECT_NE(AssetSha256(Field(true)), field);
}

TEST(Asset, BuildsKeepsItsContentAndCountsItsMemory) {
  std::shared_ptr<const Asset> mesh = Asset::Build(Square());
  EXPECT_EQ(mesh->kind(), AssetKind::kMesh);
  EXPECT_EQ(mesh->triangle_count(), 2u);
  EXPECT_EQ(mesh->sha256(), AssetSha256(Square()));
  EXPECT_EQ(mesh->source().indices, Square().indices);
  EXPECT_GE(mesh->memory_bytes(), mesh->geometry().MemoryBytes() + mesh->source_bytes());
  EXPECT_EQ(mesh->geometry().local_bounds().max.x, 1.0f);
  // The geometry handle keeps the whole asset alive.
  std::shared_ptr<const AssetGeometry> geometry = mesh->SharedGeometry();
  const std::weak_ptr<const Asset> weak = mesh;
  mesh.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(geometry->triangle_count(), 2u);
  geometry.reset();
  EXPECT_TRUE(weak.expired());

  std::shared_ptr<const Asset> field = Asset::Build(Field(true));
  EXPECT_EQ(field->kind(), AssetKind::kHeightfield);
  EXPECT_EQ(field->triangle_count(), 12u);
  EXPECT_GE(field->max_height_error(), 0.0f);
  EXPECT_LE(field->max_height_error(), 5.0f / 65535.0f);
  EXPECT_TRUE(field->geometry().heightfield().IsHole(1, 1));
  EXPECT_FALSE(field->geometry().heightfield().IsHole(1, 0));
}

}  // namespace
}  // namespace collide
