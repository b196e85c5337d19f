// collide mesh upload | mesh list | mesh delete | heightfield upload: a scene's level geometry
// (UploadAsset, ListAssets, DeleteAsset). Files are read by level_files.h: OBJ with tinyobjloader,
// glTF and the other formats with Assimp, heightmaps as greyscale PNG (libpng) or raw float32.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "client/cli/level_files.h"

namespace collide::cli {
namespace {

std::string FormatAsset(const v1::AssetInfo& asset) {
  std::string size;
  if (asset.has_mesh()) {
    size = Count(asset.mesh().vertex_count(), "vertex", "vertices");
  } else if (asset.has_heightfield()) {
    size =
        absl::StrCat(asset.heightfield().rows(), " x ", asset.heightfield().columns(), " samples");
  }
  return absl::StrCat(
      asset.name(), "  ", asset.kind() == v1::ASSET_KIND_HEIGHTFIELD ? "heightfield" : "mesh", "  ",
      Count(asset.triangle_count(), "triangle"), "  ", size, "  bounds ",
      FormatVec3(asset.bounds().min()), " .. ", FormatVec3(asset.bounds().max()), "  ",
      Count(asset.source_bytes(), "byte"), "  ", asset.memory_bytes(), " bytes of memory  ",
      Count(asset.body_count(), "body", "bodies"), "  sha256 ", asset.sha256());
}

absl::Status UploadMesh(CommandContext& c) {
  const std::string& scene = c.args.positional()[0];
  const std::string& name = c.args.positional()[1];
  const std::string& path = c.args.positional()[2];
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<FileMesh> mesh = ReadMeshFile(path);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<v1::UploadAssetResponse> response = c.client.UploadMesh(
      scene, name, client::MeshArrays{.vertices = mesh->vertices, .indices = mesh->indices});
  if (!response.ok()) return response.status();
  const v1::AssetInfo& asset = response->asset();
  c.out.Print(*response, absl::StrCat(response->already_present() ? "mesh " : "uploaded mesh ",
                                      name, response->already_present() ? " already in " : " into ",
                                      scene, ": ", Count(asset.triangle_count(), "triangle"), ", ",
                                      Count(asset.mesh().vertex_count(), "vertex", "vertices"),
                                      ", sha256 ", asset.sha256(),
                                      mesh->skipped_primitives == 0
                                          ? ""
                                          : absl::StrCat(" (",
                                                         Count(mesh->skipped_primitives,
                                                               "point or line", "points and lines"),
                                                         " of the file left out)")));
  return absl::OkStatus();
}

// The largest rows or columns of a heightfield (HeightfieldAssetSize).
constexpr uint64_t kMaxHeightfieldSide = 32768;

absl::Status UploadHeightfield(CommandContext& c) {
  const std::string& scene = c.args.positional()[0];
  const std::string& name = c.args.positional()[1];
  const std::string& path = c.args.positional()[2];
  // --spacing=S or --spacing=X,Z.
  float spacing_x = 1.0f;
  float spacing_z = 1.0f;
  if (c.args.Has("spacing")) {
    const std::string text = c.args.String("spacing");
    const size_t commas = std::count(text.begin(), text.end(), ',');
    if (commas > 1) {
      c.args.Fail(absl::InvalidArgumentError(
          absl::StrCat("--spacing: expected S or X,Z, got \"", text, "\"")));
    } else {
      std::optional<std::vector<float>> values = c.args.Floats("spacing", commas + 1);
      if (values.has_value()) {
        spacing_x = (*values)[0];
        spacing_z = values->size() == 2 ? (*values)[1] : (*values)[0];
      }
    }
  }
  const float height_scale = c.args.Float("height_scale", 1.0f);
  const float height_offset = c.args.Float("height_offset", 0.0f);
  const bool png = absl::EndsWithIgnoreCase(path, ".png");
  uint64_t rows = 0;
  uint64_t columns = 0;
  if (png) {
    if (c.args.Has("rows") || c.args.Has("columns")) {
      c.args.Fail(absl::InvalidArgumentError(
          "--rows, --columns: a PNG gives its own (its height and width); they are for raw "
          "float32 files"));
    }
  } else {
    c.args.Require("rows");
    c.args.Require("columns");
    rows = c.args.Uint64("rows", 0);
    columns = c.args.Uint64("columns", 0);
    if (c.args.ok() &&
        (rows < 2 || rows > kMaxHeightfieldSide || columns < 2 || columns > kMaxHeightfieldSide)) {
      c.args.Fail(
          absl::InvalidArgumentError(absl::StrCat("--rows, --columns: ", rows, " x ", columns,
                                                  "; each is from 2 to ", kMaxHeightfieldSide)));
    }
  }
  const std::string holes_path = c.args.String("holes");
  if (!c.args.ok()) return c.args.status();

  // The heights: a PNG's values scaled so that its largest value (white) is height_scale, or the
  // raw file's floats times height_scale; height_offset added.
  std::vector<float> heights;
  if (png) {
    absl::StatusOr<GreyImage> image = ReadGreyPng(path, kMaxHeightfieldSide);
    if (!image.ok()) return image.status();
    rows = image->height;
    columns = image->width;
    if (rows < 2 || columns < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", columns, " x ", rows, " pixels; a heightfield has at least 2 x 2 samples"));
    }
    heights.reserve(image->pixels.size());
    for (const uint16_t v : image->pixels) {
      heights.push_back(height_offset + height_scale * (static_cast<float>(v) /
                                                        static_cast<float>(image->max_value)));
    }
  } else {
    absl::StatusOr<std::vector<float>> values = ReadFloat32Grid(path, rows, columns);
    if (!values.ok()) return values.status();
    heights = *std::move(values);
    for (float& h : heights) h = height_offset + height_scale * h;
  }
  // Holes: a greyscale PNG of (columns - 1) x (rows - 1) pixels, one per cell; non-zero: a hole.
  std::vector<uint8_t> holes;
  if (!holes_path.empty()) {
    absl::StatusOr<GreyImage> mask = ReadGreyPng(holes_path, kMaxHeightfieldSide);
    if (!mask.ok()) return mask.status();
    if (mask->width != columns - 1 || mask->height != rows - 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          holes_path, ": ", mask->width, " x ", mask->height, " pixels; the holes of ", columns,
          " x ", rows, " samples are one pixel per cell, ", columns - 1, " x ", rows - 1));
    }
    holes.assign((mask->pixels.size() + 7) / 8, 0);
    for (size_t cell = 0; cell < mask->pixels.size(); ++cell) {
      if (mask->pixels[cell] != 0) holes[cell / 8] |= static_cast<uint8_t>(1u << (cell % 8));
    }
  }
  absl::StatusOr<v1::UploadAssetResponse> response =
      c.client.UploadHeightfield(scene, name,
                                 client::HeightfieldArrays{.rows = rows,
                                                           .columns = columns,
                                                           .spacing_x = spacing_x,
                                                           .spacing_z = spacing_z,
                                                           .heights = heights,
                                                           .holes = holes});
  if (!response.ok()) return response.status();
  const v1::AssetInfo& asset = response->asset();
  c.out.Print(
      *response,
      absl::StrCat(response->already_present() ? "heightfield " : "uploaded heightfield ", name,
                   response->already_present() ? " already in " : " into ", scene, ": ", rows,
                   " x ", columns, " samples, ", Count(asset.triangle_count(), "triangle"),
                   ", heights ", FormatNumber(asset.bounds().min().y()), " to ",
                   FormatNumber(asset.bounds().max().y()), ", sha256 ", asset.sha256()));
  return absl::OkStatus();
}

absl::Status ListAssets(CommandContext& c) {
  absl::StatusOr<std::vector<v1::AssetInfo>> assets = c.client.ListAssets(c.args.positional()[0]);
  if (!assets.ok()) return assets.status();
  v1::ListAssetsResponse response;
  std::string text;
  for (const v1::AssetInfo& asset : *assets) {
    *response.add_assets() = asset;
    absl::StrAppend(&text, FormatAsset(asset), "\n");
  }
  c.out.Print(response, assets->empty() ? "no assets" : text);
  return absl::OkStatus();
}

absl::Status DeleteAsset(CommandContext& c) {
  const std::string& scene = c.args.positional()[0];
  const std::string& name = c.args.positional()[1];
  absl::Status status = c.client.DeleteAsset(scene, name);
  if (!status.ok()) return status;
  c.out.Print(v1::DeleteAssetResponse(), absl::StrCat("deleted asset ", name, " of ", scene));
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> MeshCommands() {
  return {
      {.name = "mesh upload",
       .positional = "SCENE NAME FILE",
       .positional_count = 3,
       .summary = "Uploads the triangles of a mesh file as asset NAME of the scene, durably "
                  "(UploadAsset; writer): OBJ (tinyobjloader), glTF .gltf/.glb, FBX, COLLADA, "
                  "PLY, STL and Assimp's other formats. Place it with `body add --mesh=NAME`.",
       .run = UploadMesh},
      {.name = "heightfield upload",
       .positional = "SCENE NAME FILE",
       .positional_count = 3,
       .summary = "Uploads a heightmap as heightfield asset NAME of the scene, durably "
                  "(UploadAsset; writer): a greyscale PNG (8 or 16 bits; white is "
                  "--height_scale) or raw little-endian float32 samples (--rows, --columns). "
                  "Place it with `body add --heightfield=NAME`.",
       .flags = {{"spacing", "S|X,Z", "distance between samples along x and z (default 1)"},
                 {"height_scale", "H",
                  "a PNG: the height of its largest value; raw: each value's factor (default 1)"},
                 {"height_offset", "O", "added to every height (default 0)"},
                 {"rows", "N", "raw float32 files: samples along z (row after row)"},
                 {"columns", "N", "raw float32 files: samples along x (in a row)"},
                 {"holes", "MASK.png",
                  "a greyscale PNG of (columns - 1) x (rows - 1) pixels: non-zero cells are "
                  "holes"}},
       .run = UploadHeightfield},
      {.name = "mesh list",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Lists the scene's assets: meshes and heightfields (ListAssets).",
       .run = ListAssets},
      {.name = "mesh delete",
       .positional = "SCENE NAME",
       .positional_count = 2,
       .summary = "Deletes an asset no body uses (DeleteAsset; writer).",
       .run = DeleteAsset},
  };
}

}  // namespace collide::cli
