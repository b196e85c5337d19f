#include "store/crc32c.h"

#include <array>
#include <cstring>

namespace collide {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed

// kTables[0] is the classic byte-at-a-time table; kTables[k][b] is the CRC of byte b followed by
// k zero bytes, so eight table lookups fold eight input bytes at once.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    t[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

// The table-driven step over the inverted register `c`.
uint32_t ExtendTable(uint32_t c, const unsigned char* p, size_t size) {
  // The 8-byte step loads unaligned words with memcpy and relies on little-endian order: the
  // first input byte must land in the low byte of `lo`.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "slicing-by-8 assumes little endian");
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    const uint32_t lo = static_cast<uint32_t>(word) ^ c;
    const uint32_t hi = static_cast<uint32_t>(word >> 32);
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
  return c;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes the same polynomial, eight bytes an instruction.
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t c, const unsigned char* p,
                                                       size_t size) {
  uint64_t c64 = c;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = __builtin_ia32_crc32di(c64, word);
    p += 8;
    size -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c64);
  while (size-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#endif

using ExtendFn = uint32_t (*)(uint32_t, const unsigned char*, size_t);

ExtendFn ChooseExtend() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("sse4.2")) return ExtendSse42;
#endif
  return ExtendTable;
}

ExtendFn Extend() {
  static const ExtendFn extend = ChooseExtend();
  return extend;
}

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size) {
  return ~Extend()(~crc, static_cast<const unsigned char*>(data), size);
}

uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t size) {
  return ~ExtendTable(~crc, static_cast<const unsigned char*>(data), size);
}

bool Crc32cUsesHardware() { return Extend() != ExtendTable; }

}  // namespace collide
