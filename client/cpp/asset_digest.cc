#include "client/cpp/asset_digest.h"

#include <openssl/evp.h>

#include <array>
#include <bit>
#include <memory>

namespace collide::client {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the digests read floats and integers as little-endian bytes");

// The reflected Castagnoli polynomial's table, one byte at a time.
constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

// SHA-256 over pieces (OpenSSL's EVP interface).
class Digest {
 public:
  Digest() : context_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
  }
  void Add(const void* data, size_t size) {
    if (size > 0) EVP_DigestUpdate(context_.get(), data, size);
  }
  void AddU64(uint64_t v) { Add(&v, sizeof v); }
  std::string Hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(context_.get(), digest, &length);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
      out.push_back(kHex[digest[i] >> 4]);
      out.push_back(kHex[digest[i] & 0xF]);
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = kCrcTable[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::string MeshSha256(std::span<const float> vertices, std::span<const uint32_t> indices) {
  Digest digest;
  digest.Add("collide-mesh-v1\n", 16);
  digest.AddU64(vertices.size() / 3);
  digest.AddU64(indices.size());
  digest.Add(vertices.data(), vertices.size() * sizeof(float));
  digest.Add(indices.data(), indices.size() * sizeof(uint32_t));
  return digest.Hex();
}

std::string HeightfieldSha256(uint64_t rows, uint64_t columns, float spacing_x, float spacing_z,
                              std::span<const float> heights, std::span<const uint8_t> holes) {
  Digest digest;
  digest.Add("collide-hfield1\n", 16);
  digest.AddU64(rows);
  digest.AddU64(columns);
  digest.Add(&spacing_x, sizeof(float));
  digest.Add(&spacing_z, sizeof(float));
  const uint8_t has_holes = holes.empty() ? 0 : 1;
  digest.Add(&has_holes, 1);
  digest.Add(heights.data(), heights.size() * sizeof(float));
  digest.Add(holes.data(), holes.size());
  return digest.Hex();
}

}  // namespace collide::client
