#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace collide::client {

// The two digests of an asset's content the API uses (collide.proto, "Level geometry"),
// computed on the client's side: the CRC-32C an upload's trailer carries, and the SHA-256 that
// names a content (AssetInfo.sha256), which an upload may send for the server to check.

/// Extends `crc` (the CRC-32C, Castagnoli, of some bytes) by `size` bytes at `data`.
/// Crc32cExtend(0, "123456789", 9) is 0xE3069283.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

/// AssetInfo.sha256 of a mesh: `vertices` holds x, y, z per vertex; `indices` 3 per triangle.
std::string MeshSha256(std::span<const float> vertices, std::span<const uint32_t> indices);

/// AssetInfo.sha256 of a heightfield: `heights` row-major (rows x columns), `holes` its hole
/// bits ((rows - 1) x (columns - 1) bits, least significant first) or empty for none.
std::string HeightfieldSha256(uint64_t rows, uint64_t columns, float spacing_x, float spacing_z,
                              std::span<const float> heights, std::span<const uint8_t> holes);

}  // namespace collide::client
