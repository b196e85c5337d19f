#include "client/cli/level_files.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "assimp/Importer.hpp"
#include "assimp/postprocess.h"
#include "assimp/scene.h"
#include "png.h"
#include "tiny_obj_loader.h"

namespace collide::cli {
namespace {

absl::Status FileError(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
}

std::string TrimNewlines(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

absl::StatusOr<FileMesh> ReadObjMesh(const std::string& path) {
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  // Materials are not read: a missing .mtl file is no error.
  config.mtl_search_path = "";
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path, config)) {
    const std::string error = TrimNewlines(reader.Error());
    return FileError(path, error.empty() ? "not a readable OBJ file" : error);
  }
  FileMesh mesh;
  mesh.vertices = reader.GetAttrib().vertices;
  const uint64_t vertex_count = mesh.vertices.size() / 3;
  for (const tinyobj::shape_t& shape : reader.GetShapes()) {
    size_t at = 0;
    for (size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const size_t n = shape.mesh.num_face_vertices[f];
      if (n != 3) {
        return FileError(path, absl::StrCat("shape \"", shape.name, "\" face ", f, " has ", n,
                                            " vertices, not 3"));
      }
      for (size_t k = 0; k < 3; ++k) {
        const int index = shape.mesh.indices[at + k].vertex_index;
        if (index < 0 || static_cast<uint64_t>(index) >= vertex_count) {
          return FileError(path, absl::StrCat("shape \"", shape.name, "\" face ", f,
                                              " names vertex ", index, " of ", vertex_count));
        }
        mesh.indices.push_back(static_cast<uint32_t>(index));
      }
      at += n;
    }
  }
  if (mesh.indices.empty()) return FileError(path, "no faces");
  return mesh;
}

absl::StatusOr<FileMesh> ReadAssimpMesh(const std::string& path) {
  Assimp::Importer importer;
  // Points and lines are sorted out of the meshes and dropped.
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE,
                              aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* scene =
      importer.ReadFile(path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                                  aiProcess_PreTransformVertices | aiProcess_SortByPType |
                                  aiProcess_ValidateDataStructure);
  if (scene == nullptr) {
    const std::string error = TrimNewlines(importer.GetErrorString());
    return FileError(path, error.empty() ? "not a file Assimp reads" : error);
  }
  if ((scene->mFlags & AI_SCENE_FLAGS_INCOMPLETE) != 0) {
    return FileError(path, "incomplete scene (Assimp read no whole scene from it)");
  }
  FileMesh mesh;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* part = scene->mMeshes[m];
    const uint64_t base = mesh.vertices.size() / 3;
    if (base + part->mNumVertices > std::numeric_limits<uint32_t>::max()) {
      return FileError(path, "more than 2^32 - 1 vertices");
    }
    for (unsigned v = 0; v < part->mNumVertices; ++v) {
      mesh.vertices.insert(mesh.vertices.end(),
                           {part->mVertices[v].x, part->mVertices[v].y, part->mVertices[v].z});
    }
    for (unsigned f = 0; f < part->mNumFaces; ++f) {
      const aiFace& face = part->mFaces[f];
      if (face.mNumIndices != 3) {
        ++mesh.skipped_primitives;
        continue;
      }
      for (unsigned k = 0; k < 3; ++k) {
        mesh.indices.push_back(static_cast<uint32_t>(base + face.mIndices[k]));
      }
    }
  }
  if (mesh.indices.empty()) return FileError(path, "no triangles");
  return mesh;
}

absl::StatusOr<FileMesh> ReadMeshFile(const std::string& path) {
  const size_t dot = path.rfind('.');
  const std::string extension =
      dot == std::string::npos ? "" : absl::AsciiStrToLower(path.substr(dot + 1));
  if (extension == "obj") return ReadObjMesh(path);
  return ReadAssimpMesh(path);
}

absl::StatusOr<GreyImage> ReadGreyPng(const std::string& path, uint64_t max_side) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    const std::string why = image.message;
    png_image_free(&image);
    return FileError(path, absl::StrCat("not a readable PNG file (libpng: ", why, ")"));
  }
  if ((image.format & PNG_FORMAT_FLAG_COLOR) != 0 || (image.format & PNG_FORMAT_FLAG_ALPHA) != 0) {
    png_image_free(&image);
    return FileError(path, "not a greyscale image without alpha (a heightmap has one channel)");
  }
  GreyImage out;
  out.width = image.width;
  out.height = image.height;
  if (out.width > max_side || out.height > max_side) {
    png_image_free(&image);
    return FileError(
        path, absl::StrCat(out.width, " x ", out.height, " pixels, over ", max_side, " on a side"));
  }
  // A 16-bit file is read as its 16-bit values (linear: no gamma applied), an 8-bit one as its
  // bytes.
  const bool sixteen = (image.format & PNG_FORMAT_FLAG_LINEAR) != 0;
  image.format = sixteen ? PNG_FORMAT_LINEAR_Y : PNG_FORMAT_GRAY;
  out.max_value = sixteen ? 65535 : 255;
  const size_t count = static_cast<size_t>(out.width * out.height);
  out.pixels.resize(count);
  std::vector<uint8_t> bytes;
  bool read = false;
  if (sixteen) {
    read = png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr) != 0;
  } else {
    bytes.resize(count);
    read = png_image_finish_read(&image, nullptr, bytes.data(), 0, nullptr) != 0;
    std::copy(bytes.begin(), bytes.end(), out.pixels.begin());
  }
  if (!read) {
    const std::string why = image.message;
    png_image_free(&image);
    return FileError(path, absl::StrCat("not a readable PNG file (libpng: ", why, ")"));
  }
  png_image_free(&image);
  return out;
}

absl::StatusOr<std::vector<float>> ReadFloat32Grid(const std::string& path, uint64_t rows,
                                                   uint64_t columns) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return FileError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  const uint64_t want = rows * columns * 4;  // rows and columns are at most 32768 each
  if (size != want) {
    return FileError(path, absl::StrCat(size, " bytes; ", rows, " x ", columns,
                                        " float32 samples are ", want, " bytes"));
  }
  std::vector<float> values(static_cast<size_t>(rows * columns));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(want))) {
    return FileError(path, "read failed");
  }
  static_assert(std::endian::native == std::endian::little, "float32 files are little-endian");
  return values;
}

}  // namespace collide::cli
