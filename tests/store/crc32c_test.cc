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

// Each implementation: the one Crc32cExtend chose for this CPU, and the tables alone.
using ExtendFn = uint32_t (*)(uint32_t, const void*, size_t);

class Crc32cImpl : public ::testing::TestWithParam<ExtendFn> {
 protected:
  uint32_t Crc(const std::string& data) const { return GetParam()(0, data.data(), data.size()); }
};

TEST_P(Crc32cImpl, MatchesPublishedCheckValues) {
  EXPECT_EQ(Crc(""), 0u);
  EXPECT_EQ(Crc("123456789"), 0xE3069283u);
  // RFC 3720, appendix B.4.
  EXPECT_EQ(Crc(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc(descending), 0x113FDB5Cu);
}

TEST_P(Crc32cImpl, MatchesTheBitwiseDefinitionOnRandomData) {
  const uint64_t seed = 20240601;
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 400; ++round) {
    // Lengths past several 8-byte steps, and every start offset within a word.
    std::string buffer(8 + rng() % 600, '\0');
    for (char& c : buffer) c = static_cast<char>(rng());
    const size_t offset = rng() % 8;
    const std::string data = buffer.substr(offset);
    ASSERT_EQ(GetParam()(0, buffer.data() + offset, buffer.size() - offset), ReferenceCrc32c(data))
        << "seed " << seed << " round " << round;
  }
}

TEST_P(Crc32cImpl, ExtendingEqualsChecksummingTheConcatenation) {
  const std::string a = "the quick brown fox ", b = "jumps over the lazy dog, unaligned!";
  for (size_t split = 0; split <= b.size(); ++split) {
    const uint32_t first = GetParam()(Crc(a), b.data(), split);
    EXPECT_EQ(GetParam()(first, b.data() + split, b.size() - split), Crc(a + b));
  }
}

INSTANTIATE_TEST_SUITE_P(Crc32c, Crc32cImpl,
                         ::testing::Values(&Crc32cExtend, &Crc32cExtendPortable),
                         [](const ::testing::TestParamInfo<ExtendFn>& info) {
                           return info.index == 0 ? "Chosen" : "Tables";
                         });

// On x86-64 with SSE4.2 (every x86-64 CPU since 2008), the chosen one is the instruction.
TEST(Crc32c, UsesTheInstructionWhereTheCpuHasIt) {
#if defined(__x86_64__)
  EXPECT_EQ(Crc32cUsesHardware(), __builtin_cpu_supports("sse4.2") != 0);
#else
  EXPECT_FALSE(Crc32cUsesHardware());
#endif
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
}

}  // namespace
}  // namespace collide
