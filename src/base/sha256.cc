#include "base/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace collide {

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  // Allocation failure or a missing digest leaves no way to go on: like a failed new.
  if (context_ == nullptr ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void Sha256::Update(const void* data, size_t size) {
  if (size == 0) return;
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data, size);
}

Sha256::Digest Sha256::Finish() {
  Digest digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest.data(), &length);
  return digest;
}

std::string DigestHex(const Sha256::Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * digest.size(), '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return out;
}

}  // namespace collide
