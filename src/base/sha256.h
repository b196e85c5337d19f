#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace collide {

/// The SHA-256 digest (FIPS 180-4) of a stream of bytes, fed in any number of pieces: the
/// content hash of assets (scene/asset.h). OpenSSL's implementation.
class Sha256 {
 public:
  /// The digest's length in bytes.
  static constexpr size_t kBytes = 32;
  using Digest = std::array<uint8_t, kBytes>;

  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  /// Appends `size` bytes at `data`.
  void Update(const void* data, size_t size);
  void Update(absl::string_view bytes) { Update(bytes.data(), bytes.size()); }
  /// The digest of everything appended; the object must not be used after.
  Digest Finish();

 private:
  void* context_;  // EVP_MD_CTX
};

/// `digest` as 64 lowercase hexadecimal digits.
std::string DigestHex(const Sha256::Digest& digest);

}  // namespace collide
