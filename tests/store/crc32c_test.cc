#include "store/crc32c.h"

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace collide {
namespace {

// The bit-at-a-time definition, as the oracle.
uint32_t ReferenceCrc32c(const std::string& data) {
  uint32_t crc = ~0u;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

TEST(Crc32c, MatchesPublishedCheckValues) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  // RFC 3720, appendix B.4.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32c, MatchesTheBitwiseDefinitionOnRandomData) {
  const uint64_t seed = 20240601;
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    std::string data(rng() % 300, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    ASSERT_EQ(Crc32c(data), ReferenceCrc32c(data)) << "seed " << seed << " round " << round;
  }
}

TEST(Crc32c, ExtendingEqualsChecksummingTheConcatenation) {
  const std::string a = "the quick brown fox ", b = "jumps over the lazy dog, unaligned!";
  for (size_t split = 0; split <= b.size(); ++split) {
    const uint32_t first = Crc32cExtend(Crc32c(a), b.data(), split);
    EXPECT_EQ(Crc32cExtend(first, b.data() + split, b.size() - split), Crc32c(a + b));
  }
}

}  // namespace
}  // namespace collide
