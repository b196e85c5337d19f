#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace collide {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every log record and
/// snapshot. With SSE4.2's crc32 instruction where the CPU has it (chosen at run time), else
/// table-driven, eight bytes per step ("slicing by 8"): the same function either way, so files
/// move between machines.

/// Extends `crc` (the CRC-32C of some bytes A) to the CRC-32C of A followed by `data`.
/// Crc32cExtend(0, data) is the CRC-32C of `data`.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

/// Crc32cExtend by the tables alone, whatever the CPU (tests, benchmarks).
uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t size);

/// True when Crc32cExtend uses the CPU's instruction.
bool Crc32cUsesHardware();

/// The CRC-32C of `data` ("123456789" -> 0xE3069283).
inline uint32_t Crc32c(absl::string_view data) { return Crc32cExtend(0, data.data(), data.size()); }

}  // namespace collide
