#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace collide::cli {

// The level files `collide mesh upload` and `collide heightfield upload` read, each through a
// real loader: OBJ with tinyobjloader (libtinyobjloader-dev), glTF and the other formats with
// Assimp (libassimp-dev), greyscale PNG with libpng (libpng-dev). Errors are INVALID_ARGUMENT
// and start with the file's path. Values are not judged here: the server checks each one
// (`vertices[3]: must be finite`, `heights[12]: ...`) and stores nothing when one is bad.

/// A file's triangles as one indexed mesh.
struct FileMesh {
  /// x, y, z per vertex.
  std::vector<float> vertices;
  /// Three per triangle.
  std::vector<uint32_t> indices;
  /// Points and lines the file held, left out (they have no triangles).
  uint64_t skipped_primitives = 0;
};

/// The triangles of an OBJ file (tinyobjloader): every shape's faces, polygons split into
/// triangles by the loader, over the file's vertices as they are; normals, texture coordinates
/// and materials ignored.
absl::StatusOr<FileMesh> ReadObjMesh(const std::string& path);

/// The triangles of any file Assimp reads (glTF 2.0 .gltf and .glb, FBX, COLLADA .dae, PLY, STL,
/// 3DS, ...): every mesh of the scene placed by its node's transform (aiProcess_PreTransform-
/// Vertices), polygons split into triangles, identical vertices joined; points and lines left
/// out (counted). A file that holds no triangle is refused.
absl::StatusOr<FileMesh> ReadAssimpMesh(const std::string& path);

/// The triangles of `path`: an `.obj` file with ReadObjMesh, anything else with ReadAssimpMesh.
absl::StatusOr<FileMesh> ReadMeshFile(const std::string& path);

/// A greyscale image's pixels, row by row.
struct GreyImage {
  uint64_t width = 0;
  uint64_t height = 0;
  /// 255 for an 8-bit file, 65535 for a 16-bit one.
  uint32_t max_value = 0;
  std::vector<uint16_t> pixels;
};

/// A greyscale PNG of 8 or 16 bits per pixel (libpng), its values as stored. Colour images and
/// images with an alpha channel are refused, as are images wider or taller than `max_side`.
absl::StatusOr<GreyImage> ReadGreyPng(const std::string& path, uint64_t max_side);

/// A file of rows x columns little-endian float32 values, row-major (a raw float heightmap:
/// .r32, .raw, .f32); refused unless it holds exactly that many bytes.
absl::StatusOr<std::vector<float>> ReadFloat32Grid(const std::string& path, uint64_t rows,
                                                   uint64_t columns);

}  // namespace collide::cli
