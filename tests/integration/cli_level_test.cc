// `collide mesh upload` of glTF files (Assimp) and `collide heightfield upload` of 8- and 16-bit
// greyscale PNG heightmaps (libpng) and raw float32 grids, against the real server, with files
// the test writes: what is uploaded is where rays find it; truncated, malformed or mis-sized
// files and NaN values are refused with a clear error and leave no asset behind.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"
#include "png.h"

namespace collide::integration {
namespace {

// A glTF 2.0 file of one mesh, its buffer embedded as a data URI: `vertices` (x, y, z each) and
// `indices` (uint32), placed by a node translated by `translation`. `byte_length` overrides the
// buffer's declared length (0: the true one).
std::string Gltf(const std::vector<float>& vertices, const std::vector<uint32_t>& indices,
                 const std::string& translation, size_t byte_length = 0) {
  std::string bytes(vertices.size() * 4 + indices.size() * 4, '\0');
  std::memcpy(bytes.data(), vertices.data(), vertices.size() * 4);
  std::memcpy(bytes.data() + vertices.size() * 4, indices.data(), indices.size() * 4);
  float lo[3] = {INFINITY, INFINITY, INFINITY};
  float hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < vertices.size(); ++i) {
    lo[i % 3] = std::fmin(lo[i % 3], vertices[i]);
    hi[i % 3] = std::fmax(hi[i % 3], vertices[i]);
  }
  return absl::StrCat(
      R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],)",
      R"("nodes": [{"mesh": 0, "translation": [)", translation, "]}],",
      R"("meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "mode": 4}]}],)",
      R"("buffers": [{"byteLength": )", byte_length != 0 ? byte_length : bytes.size(),
      R"(, "uri": "data:application/octet-stream;base64,)", absl::Base64Escape(bytes), R"("}],)",
      R"("bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": )", vertices.size() * 4,
      R"(}, {"buffer": 0, "byteOffset": )", vertices.size() * 4, R"(, "byteLength": )",
      indices.size() * 4, "}],",
      R"("accessors": [{"bufferView": 0, "componentType": 5126, "count": )", vertices.size() / 3,
      R"(, "type": "VEC3", "min": [)", lo[0], ", ", lo[1], ", ", lo[2], "], \"max\": [", hi[0],
      ", ", hi[1], ", ", hi[2], "]}, ", R"({"bufferView": 1, "componentType": 5125, "count": )",
      indices.size(), R"(, "type": "SCALAR"}]})");
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes a PNG of `width` x `height` pixels in libpng's simplified `format` (PNG_FORMAT_GRAY:
// 8-bit bytes, PNG_FORMAT_LINEAR_Y: 16-bit values, PNG_FORMAT_RGB: 3 bytes a pixel).
void WritePng(const std::string& path, uint32_t width, uint32_t height, uint32_t format,
              const void* pixels) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = format;
  ASSERT_NE(png_image_write_to_file(&image, path.c_str(), 0, pixels, 0, nullptr), 0)
      << image.message;
}

class CliLevelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    Ok({"scene", "create", "level"});
  }

  CommandResult Cli(std::vector<std::string> words) {
    words.insert(words.begin(), {CliPath(), "--address=" + server_->address()});
    return RunCommand(words);
  }

  std::string Ok(std::vector<std::string> words) {
    CommandResult result = Cli(words);
    EXPECT_EQ(result.exit_code, 0) << words[0] << ": " << result.err;
    EXPECT_EQ(result.err, "");
    return result.out;
  }

  // Runs `words`, expects it to fail with an error that starts with `prefix` and contains
  // `part`, and the scene to hold exactly the assets listed in `assets` afterwards.
  void Refused(std::vector<std::string> words, const std::string& prefix, const std::string& part,
               const std::string& assets) {
    CommandResult result = Cli(words);
    EXPECT_NE(result.exit_code, 0) << result.out;
    EXPECT_TRUE(absl::StartsWith(result.err, prefix)) << result.err;
    EXPECT_TRUE(absl::StrContains(result.err, part)) << result.err;
    std::string listed = Ok({"mesh", "list", "level", "--json"});
    for (const char* name : {"floor", "bad", "hills", "raw", "peak8"}) {
      EXPECT_EQ(absl::StrContains(listed, absl::StrCat("\"name\":\"", name, "\"")),
                absl::StrContains(assets, name))
          << name << " after " << result.err << ": " << listed;
    }
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CliLevelTest, MeshUploadReadsGltfWithItsNodeTransform) {
  const TempDir dir("cli-gltf");
  // A floor quad 4 x 4 in the plane y = 0, moved 5 up by its node: two triangles.
  const std::vector<float> quad = {-2, 0, -2, 2, 0, -2, 2, 0, 2, -2, 0, 2};
  const std::vector<uint32_t> indices = {0, 2, 1, 0, 3, 2};
  const std::string gltf = dir.File("floor.gltf");
  WriteFile(gltf, Gltf(quad, indices, "0, 5, 0"));
  const std::string uploaded = Ok({"mesh", "upload", "level", "floor", gltf});
  EXPECT_TRUE(absl::StartsWith(uploaded,
                               "uploaded mesh floor into level: 2 triangles, 4 vertices, sha256 "))
      << uploaded;
  const std::string listed = Ok({"mesh", "list", "level"});
  EXPECT_TRUE(absl::StrContains(listed, "bounds (-2, 5, -2) .. (2, 5, 2)")) << listed;
  EXPECT_TRUE(absl::StrContains(listed, "  0 bodies  ")) << listed;
  Ok({"body", "add", "level", "--id=1", "--mesh=floor", "--static"});
  EXPECT_TRUE(absl::StrContains(Ok({"mesh", "list", "level"}), "  1 body  "));
  const std::string ray = Ok({"raycast", "level", "--from=1,20,0.5", "--dir=0,-1,0"});
  EXPECT_TRUE(absl::StrContains(ray, "body 1  triangle ")) << ray;
  EXPECT_TRUE(absl::StrContains(ray, "distance 15  point (1, 5, 0.5)")) << ray;
}

TEST_F(CliLevelTest, BadMeshFilesAreRefusedAndStoreNothing) {
  const TempDir dir("cli-gltf-bad");
  const std::vector<float> quad = {-2, 0, -2, 2, 0, -2, 2, 0, 2, -2, 0, 2};
  const std::vector<uint32_t> indices = {0, 2, 1, 0, 3, 2};
  const std::string whole = Gltf(quad, indices, "0, 0, 0");
  // Cut in the middle of its JSON.
  const std::string truncated = dir.File("truncated.gltf");
  WriteFile(truncated, whole.substr(0, whole.size() / 2));
  Refused({"mesh", "upload", "level", "bad", truncated},
          absl::StrCat("error: INVALID_ARGUMENT: ", truncated, ": "), "", "");
  // A buffer that says it is longer than its bytes.
  const std::string lying = dir.File("lying.gltf");
  WriteFile(lying, Gltf(quad, indices, "0, 0, 0", 4096));
  Refused({"mesh", "upload", "level", "bad", lying},
          absl::StrCat("error: INVALID_ARGUMENT: ", lying, ": "), "", "");
  // Not a mesh file at all; a file that is not there.
  const std::string text = dir.File("notes.gltf");
  WriteFile(text, "these are not the triangles you are looking for\n");
  Refused({"mesh", "upload", "level", "bad", text},
          absl::StrCat("error: INVALID_ARGUMENT: ", text, ": "), "", "");
  Refused({"mesh", "upload", "level", "bad", dir.File("missing.glb")},
          "error: INVALID_ARGUMENT: ", "missing.glb", "");
  // A NaN vertex reaches the server, which refuses it by its path.
  std::vector<float> nan_quad = quad;
  nan_quad[4] = std::numeric_limits<float>::quiet_NaN();
  const std::string nan = dir.File("nan.gltf");
  WriteFile(nan, Gltf(nan_quad, indices, "0, 0, 0"));
  CommandResult result = Cli({"mesh", "upload", "level", "bad", nan});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(result.err, "error: INVALID_ARGUMENT: ")) << result.err;
  EXPECT_EQ(Ok({"mesh", "list", "level"}), "no assets\n");
  // The good file still goes in.
  const std::string good = dir.File("floor.gltf");
  WriteFile(good, whole);
  Ok({"mesh", "upload", "level", "floor", good});
  Refused({"mesh", "upload", "level", "bad", truncated}, "error: INVALID_ARGUMENT: ", "", "floor");
}

TEST_F(CliLevelTest, HeightfieldUploadReadsPngHeightmapsAndRawFloats) {
  const TempDir dir("cli-heightfield");
  // 16 bits, 5 columns x 4 rows, all 0 but a peak of 65535 at sample (1, 1): with
  // --height_scale=10 and --spacing=2 the peak is at (2, 10, 2).
  std::vector<uint16_t> pixels(20, 0);
  pixels[1 * 5 + 1] = 65535;
  const std::string hills = dir.File("hills.png");
  WritePng(hills, 5, 4, PNG_FORMAT_LINEAR_Y, pixels.data());
  // Holes: one pixel per cell (4 x 3); cell (2, 3) is a hole.
  std::vector<uint8_t> mask(12, 0);
  mask[2 * 4 + 3] = 255;
  const std::string holes = dir.File("holes.png");
  WritePng(holes, 4, 3, PNG_FORMAT_GRAY, mask.data());
  std::string uploaded = Ok({"heightfield", "upload", "level", "hills", hills, "--spacing=2",
                             "--height_scale=10", "--holes", holes});
  EXPECT_TRUE(absl::StartsWith(
      uploaded,
      "uploaded heightfield hills into level: 4 x 5 samples, 24 triangles, heights 0 "
      "to 10, sha256 "))
      << uploaded;
  Ok({"body", "add", "level", "--id=1", "--heightfield=hills", "--static"});
  std::string ray = Ok({"raycast", "level", "--from=2,100,2", "--dir=0,-1,0"});
  EXPECT_TRUE(absl::StrContains(ray, "body 1  triangle ")) << ray;
  EXPECT_TRUE(absl::StrContains(ray, "distance 90  point (2, 10, 2)")) << ray;
  // Through the hole's middle (x from 6 to 8, z from 4 to 6): nothing; beside it, the ground.
  ray = Ok({"raycast", "level", "--from=7,100,5", "--dir=0,-1,0"});
  EXPECT_TRUE(absl::StrContains(ray, ": no hits")) << ray;
  ray = Ok({"raycast", "level", "--from=5,100,5", "--dir=0,-1,0"});
  EXPECT_TRUE(absl::StrContains(ray, "distance 100  point (5, 0, 5)")) << ray;

  // 8 bits: white is --height_scale, offset added; the spacing per axis.
  std::vector<uint8_t> bytes(9, 0);
  bytes[4] = 255;
  const std::string peak8 = dir.File("peak8.png");
  WritePng(peak8, 3, 3, PNG_FORMAT_GRAY, bytes.data());
  uploaded = Ok({"heightfield", "upload", "level", "peak8", peak8, "--spacing=1,3",
                 "--height_scale=4", "--height_offset=-1"});
  EXPECT_TRUE(absl::StrContains(uploaded, "3 x 3 samples, 8 triangles, heights -1 to 3"))
      << uploaded;
  Ok({"body", "add", "level", "--id=2", "--heightfield=peak8", "--pos=100,0,0", "--static"});
  ray = Ok({"raycast", "level", "--from=101,50,3", "--dir=0,-1,0"});
  EXPECT_TRUE(absl::StrContains(ray, "distance 47  point (101, 3, 3)")) << ray;

  // Raw float32, row-major, scaled.
  const std::vector<float> grid = {0, 1, 2, 3, 4, 5};  // 2 rows x 3 columns
  const std::string raw = dir.File("grid.r32");
  WriteFile(raw, std::string(reinterpret_cast<const char*>(grid.data()), grid.size() * 4));
  uploaded = Ok({"heightfield", "upload", "level", "raw", raw, "--rows=2", "--columns=3",
                 "--height_scale=2"});
  EXPECT_TRUE(absl::StrContains(uploaded, "2 x 3 samples, 4 triangles, heights 0 to 10"))
      << uploaded;
  const std::string listed = Ok({"mesh", "list", "level"});
  EXPECT_TRUE(absl::StrContains(listed, "hills  heightfield  24 triangles  4 x 5 samples"))
      << listed;
}

TEST_F(CliLevelTest, BadHeightmapFilesAreRefusedAndStoreNothing) {
  const TempDir dir("cli-heightfield-bad");
  std::vector<uint16_t> pixels(20, 1000);
  const std::string good = dir.File("good.png");
  WritePng(good, 5, 4, PNG_FORMAT_LINEAR_Y, pixels.data());
  const std::string whole = ReadFile(good);
  // A PNG cut short, and one whose bytes are damaged past its header.
  const std::string truncated = dir.File("truncated.png");
  WriteFile(truncated, whole.substr(0, whole.size() - 20));
  Refused({"heightfield", "upload", "level", "hills", truncated},
          absl::StrCat("error: INVALID_ARGUMENT: ", truncated, ": not a readable PNG file"), "",
          "");
  const std::string garbage = dir.File("garbage.png");
  WriteFile(garbage, "\x89PNG\r\n\x1a\n and then nothing a PNG holds");
  Refused({"heightfield", "upload", "level", "hills", garbage},
          absl::StrCat("error: INVALID_ARGUMENT: ", garbage, ": not a readable PNG file"), "", "");
  // Colour is not a height.
  std::vector<uint8_t> rgb(5 * 4 * 3, 7);
  const std::string colour = dir.File("colour.png");
  WritePng(colour, 5, 4, PNG_FORMAT_RGB, rgb.data());
  Refused({"heightfield", "upload", "level", "hills", colour},
          "error: INVALID_ARGUMENT: ", "not a greyscale image", "");
  // One row is no heightfield.
  const std::string line = dir.File("line.png");
  WritePng(line, 5, 1, PNG_FORMAT_LINEAR_Y, pixels.data());
  Refused({"heightfield", "upload", "level", "hills", line},
          "error: INVALID_ARGUMENT: ", "at least 2 x 2 samples", "");
  // A hole mask of the samples' size rather than the cells'.
  std::vector<uint8_t> mask(20, 0);
  const std::string wrong_mask = dir.File("mask.png");
  WritePng(wrong_mask, 5, 4, PNG_FORMAT_GRAY, mask.data());
  Refused({"heightfield", "upload", "level", "hills", good, "--holes", wrong_mask},
          "error: INVALID_ARGUMENT: ", "one pixel per cell, 4 x 3", "");
  // --rows with a PNG; raw files without them, of the wrong size, of out-of-range sizes.
  Refused({"heightfield", "upload", "level", "hills", good, "--rows=4"},
          "error: INVALID_ARGUMENT: --rows", "", "");
  const std::vector<float> grid = {0, 1, 2, 3, 4, 5};
  const std::string raw = dir.File("grid.r32");
  WriteFile(raw, std::string(reinterpret_cast<const char*>(grid.data()), grid.size() * 4));
  Refused({"heightfield", "upload", "level", "raw", raw}, "error: INVALID_ARGUMENT: ", "rows", "");
  Refused({"heightfield", "upload", "level", "raw", raw, "--rows=3", "--columns=3"},
          absl::StrCat("error: INVALID_ARGUMENT: ", raw,
                       ": 24 bytes; 3 x 3 float32 samples are "
                       "36 bytes"),
          "", "");
  Refused({"heightfield", "upload", "level", "raw", raw, "--rows=1", "--columns=6"},
          "error: INVALID_ARGUMENT: --rows, --columns", "", "");
  Refused(
      {"heightfield", "upload", "level", "raw", raw, "--rows=18446744073709551615", "--columns=3"},
      "error: INVALID_ARGUMENT: --rows, --columns", "", "");
  Refused(
      {"heightfield", "upload", "level", "raw", raw, "--rows=2", "--columns=3", "--spacing=nan"},
      "error: INVALID_ARGUMENT: ", "spacing", "");
  Refused(
      {"heightfield", "upload", "level", "raw", raw, "--rows=2", "--columns=3", "--spacing=1,2,3"},
      "error: INVALID_ARGUMENT: --spacing: expected S or X,Z", "", "");
  // NaN and infinite heights are the server's to refuse, by their index; nothing is stored.
  std::vector<float> nan_grid = grid;
  nan_grid[4] = std::numeric_limits<float>::quiet_NaN();
  const std::string nan = dir.File("nan.r32");
  WriteFile(nan, std::string(reinterpret_cast<const char*>(nan_grid.data()), nan_grid.size() * 4));
  Refused({"heightfield", "upload", "level", "raw", nan, "--rows=2", "--columns=3"},
          "error: INVALID_ARGUMENT: heights[4]", "", "");
  Refused({"heightfield", "upload", "level", "raw", raw, "--rows=2", "--columns=3",
           "--height_scale=1e38"},
          "error: INVALID_ARGUMENT: heights[", "", "");
  // The good file still goes in.
  Ok({"heightfield", "upload", "level", "hills", good});
  Refused({"heightfield", "upload", "level", "raw", raw}, "error: INVALID_ARGUMENT: ", "rows",
          "hills");
}

TEST_F(CliLevelTest, CountsOfOneAreSingular) {
  const TempDir dir("cli-counts");
  Ok({"body", "add", "level", "--id=1", "--sphere=1"});
  const std::string file = dir.File("level.export");
  const std::string exported = Ok({"scene", "export", "level", file});
  EXPECT_TRUE(absl::StrContains(exported, "(1 body, 1 chunk) to ")) << exported;
  const std::string imported = Ok({"scene", "import", file, "--name=copy"});
  EXPECT_TRUE(absl::StrContains(imported, "(1 body) from ")) << imported;
  const std::string removed = Ok({"body", "remove", "level", "--id=1"});
  EXPECT_TRUE(absl::StartsWith(removed, "removed 1 body")) << removed;
  const std::string backup = dir.File("backup");
  Ok({"scene", "delete", "copy"});
  const std::string backed = Ok({"backup", backup});
  EXPECT_TRUE(absl::StartsWith(backed, "backed up 1 scene to ")) << backed;
  EXPECT_TRUE(absl::StrContains(backed, ", 0 bodies -> ")) << backed;
}

}  // namespace
}  // namespace collide::integration
