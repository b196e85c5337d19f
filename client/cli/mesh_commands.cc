// collide mesh upload | mesh list | mesh delete: a scene's level geometry (UploadAsset,
// ListAssets, DeleteAsset). OBJ files are read with tinyobjloader (Debian's
// libtinyobjloader-dev).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "tiny_obj_loader.h"

namespace collide::cli {
namespace {

// An OBJ file's triangles: every shape's faces (polygons triangulated by the loader) as one
// indexed mesh over the file's vertices; normals, texture coordinates and materials are ignored.
struct ObjMesh {
  std::vector<float> vertices;
  std::vector<uint32_t> indices;
};

absl::StatusOr<ObjMesh> ReadObj(const std::string& path) {
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  // Materials are not read: a missing .mtl file is no error.
  config.mtl_search_path = "";
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path, config)) {
    std::string error = reader.Error();
    while (!error.empty() && error.back() == '\n') error.pop_back();
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", error.empty() ? "not a readable OBJ file" : error));
  }
  ObjMesh mesh;
  mesh.vertices = reader.GetAttrib().vertices;
  const uint64_t vertex_count = mesh.vertices.size() / 3;
  for (const tinyobj::shape_t& shape : reader.GetShapes()) {
    size_t at = 0;
    for (size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const size_t n = shape.mesh.num_face_vertices[f];
      if (n != 3) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": shape \"", shape.name, "\" face ",
                                                       f, " has ", n, " vertices, not 3"));
      }
      for (size_t k = 0; k < 3; ++k) {
        const int index = shape.mesh.indices[at + k].vertex_index;
        if (index < 0 || static_cast<uint64_t>(index) >= vertex_count) {
          return absl::InvalidArgumentError(absl::StrCat(path, ": shape \"", shape.name, "\" face ",
                                                         f, " names vertex ", index, " of ",
                                                         vertex_count));
        }
        mesh.indices.push_back(static_cast<uint32_t>(index));
      }
      at += n;
    }
  }
  if (mesh.indices.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no faces"));
  }
  return mesh;
}

std::string FormatAsset(const v1::AssetInfo& asset) {
  std::string size;
  if (asset.has_mesh()) {
    size = absl::StrCat(asset.mesh().vertex_count(), " vertices");
  } else if (asset.has_heightfield()) {
    size =
        absl::StrCat(asset.heightfield().rows(), " x ", asset.heightfield().columns(), " samples");
  }
  return absl::StrCat(asset.name(), "  ",
                      asset.kind() == v1::ASSET_KIND_HEIGHTFIELD ? "heightfield" : "mesh", "  ",
                      asset.triangle_count(), " triangles  ", size, "  bounds ",
                      FormatVec3(asset.bounds().min()), " .. ", FormatVec3(asset.bounds().max()),
                      "  ", asset.source_bytes(), " bytes  ", asset.memory_bytes(),
                      " bytes of memory  ", asset.body_count(), " bodies  sha256 ", asset.sha256());
}

absl::Status UploadMesh(CommandContext& c) {
  const std::string& scene = c.args.positional()[0];
  const std::string& name = c.args.positional()[1];
  const std::string& path = c.args.positional()[2];
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<ObjMesh> mesh = ReadObj(path);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<v1::UploadAssetResponse> response = c.client.UploadMesh(
      scene, name, client::MeshArrays{.vertices = mesh->vertices, .indices = mesh->indices});
  if (!response.ok()) return response.status();
  const v1::AssetInfo& asset = response->asset();
  c.out.Print(*response,
              absl::StrCat(response->already_present() ? "mesh " : "uploaded mesh ", name,
                           response->already_present() ? " already in " : " into ", scene, ": ",
                           asset.triangle_count(), " triangles, ", asset.mesh().vertex_count(),
                           " vertices, sha256 ", asset.sha256()));
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
       .positional = "SCENE NAME FILE.obj",
       .positional_count = 3,
       .summary = "Uploads the triangles of an OBJ file as asset NAME of the scene, durably "
                  "(UploadAsset; writer). Place it with `body add --mesh=NAME`.",
       .run = UploadMesh},
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
