#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace collide {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every log record and
/// snapshot. Table-driven, eight bytes per step ("slicing by 8"); no hardware instruction, so the
/// result is the same on every machine.

/// Extends `crc` (the CRC-32C of some bytes A) to the CRC-32C of A followed by `data`.
/// Crc32cExtend(0, data) is the CRC-32C of `data`.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

/// The CRC-32C of `data` ("123456789" -> 0xE3069283).
inline uint32_t Crc32c(absl::string_view data) { return Crc32cExtend(0, data.data(), data.size()); }

}  // namespace collide
