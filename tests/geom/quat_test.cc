// NormalizeRotation: idempotent bit for bit (what an export and an import rely on), unit to
// within 2^-24 after a normalisation, the same rotation as q / |q| computed in long double, and
// the rotations earlier normalisations stored (float, double, float after double) kept as they
// are.

#include "geom/quat.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace collide {
namespace {

constexpr uint32_t kSeed = 20261130;

// Length in long double (the oracle's arithmetic, wider than the function's double).
long double LengthOf(const Quat& q) {
  const long double x = q.x, y = q.y, z = q.z, w = q.w;
  return std::sqrt(x * x + y * y + z * z + w * w);
}

bool SameBits(const Quat& a, const Quat& b) {
  return std::bit_cast<uint32_t>(a.x) == std::bit_cast<uint32_t>(b.x) &&
         std::bit_cast<uint32_t>(a.y) == std::bit_cast<uint32_t>(b.y) &&
         std::bit_cast<uint32_t>(a.z) == std::bit_cast<uint32_t>(b.z) &&
         std::bit_cast<uint32_t>(a.w) == std::bit_cast<uint32_t>(b.w);
}

// A normalisation in float, as the scene layer did before NormalizeRotation.
Quat NormalizeInFloat(const Quat& q) {
  const float len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  const float s = 1.0f / len;
  return {q.x * s, q.y * s, q.z * s, q.w * s};
}

// A normalisation in double, rounded to float, as the service's converter did.
Quat NormalizeInDouble(const Quat& q) {
  const double len =
      std::sqrt(double{q.x} * q.x + double{q.y} * q.y + double{q.z} * q.z + double{q.w} * q.w);
  return {static_cast<float>(q.x / len), static_cast<float>(q.y / len),
          static_cast<float>(q.z / len), static_cast<float>(q.w / len)};
}

// Random quaternions of every kind: any direction, some with zero components (rotations about
// one axis), lengths from far off to within float rounding of 1.
class RandomQuats {
 public:
  explicit RandomQuats(uint32_t seed) : rng_(seed) {}
  Quat Next() {
    std::normal_distribution<float> normal;
    Quat q{normal(rng_), normal(rng_), normal(rng_), normal(rng_)};
    const int kind = static_cast<int>(rng_() % 4);
    if (kind == 0) q.x = q.y = 0.0f;  // about z only
    const double len = LengthOf(q);
    if (len == 0.0) return Quat::Identity();
    // Scaled to a length the API accepts (within 1e-3 of 1), or left as drawn.
    std::uniform_real_distribution<double> off(-1e-3, 1e-3);
    const double target = kind == 3 ? len : 1.0 + off(rng_);
    const double s = target / len;
    return {static_cast<float>(q.x * s), static_cast<float>(q.y * s), static_cast<float>(q.z * s),
            static_cast<float>(q.w * s)};
  }

 private:
  std::mt19937 rng_;
};

TEST(NormalizeRotation, IsIdempotentBitForBit) {
  RandomQuats quats(kSeed);
  for (int i = 0; i < 200000; ++i) {
    const Quat q = quats.Next();
    const Quat once = NormalizeRotation(q);
    const Quat twice = NormalizeRotation(once);
    ASSERT_TRUE(SameBits(once, twice)) << "seed " << kSeed << " case " << i << ": (" << q.x << ", "
                                       << q.y << ", " << q.z << ", " << q.w << ")";
  }
}

TEST(NormalizeRotation, GivesAUnitQuaternionAlongTheSameRotation) {
  RandomQuats quats(kSeed + 1);
  for (int i = 0; i < 200000; ++i) {
    const Quat q = quats.Next();
    const Quat n = NormalizeRotation(q);
    const long double len = LengthOf(q);
    const long double out_len = LengthOf(n);
    if (std::fabs(len - 1.0L) <= kUnitRotationSlack) {
      ASSERT_TRUE(SameBits(n, q)) << "seed " << kSeed + 1 << " case " << i;
      continue;
    }
    ASSERT_LE(std::fabs(out_len - 1.0L), 0x1p-24L) << "seed " << kSeed + 1 << " case " << i;
    // Each component is q / |q| rounded to float: within half a float ulp of the exact value.
    const float got[4] = {n.x, n.y, n.z, n.w};
    const float in[4] = {q.x, q.y, q.z, q.w};
    for (int k = 0; k < 4; ++k) {
      const long double exact = in[k] / len;
      const long double ulp =
          std::fabs(std::nextafter(static_cast<float>(exact), 2.0f) - static_cast<float>(exact));
      ASSERT_LE(std::fabs(got[k] - exact), 0.5L * ulp + 1e-45L)
          << "seed " << kSeed + 1 << " case " << i << " component " << k;
    }
  }
}

TEST(NormalizeRotation, KeepsWhatEarlierNormalisationsStored) {
  RandomQuats quats(kSeed + 2);
  for (int i = 0; i < 200000; ++i) {
    const Quat q = quats.Next();
    for (const Quat& stored :
         {NormalizeInFloat(q), NormalizeInDouble(q), NormalizeInFloat(NormalizeInDouble(q))}) {
      ASSERT_TRUE(SameBits(NormalizeRotation(stored), stored))
          << "seed " << kSeed + 2 << " case " << i
          << ": length - 1 = " << static_cast<double>(LengthOf(stored) - 1.0L);
    }
  }
}

TEST(NormalizeRotation, HandMadeCases) {
  // The identity and the axis rotations by half a turn are exact.
  for (const Quat& q : {Quat::Identity(), Quat{1, 0, 0, 0}, Quat{0, -1, 0, 0}, Quat{0, 0, 0, -1}}) {
    EXPECT_TRUE(SameBits(NormalizeRotation(q), q));
  }
  // A quarter turn about z as a client writes it (0.7071068 rounds to 0.707106829 in float, a
  // length 6.7e-8 above 1): kept, where a division by the length would give 0.707106769.
  const Quat quarter{0.0f, 0.0f, 0.7071068f, 0.7071068f};
  EXPECT_TRUE(SameBits(NormalizeRotation(quarter), quarter));
  EXPECT_NE(NormalizeInDouble(quarter).z, quarter.z);
  // Just past the slack: normalised, exactly onto the unit axis.
  const Quat longer{0.0f, 0.0f, 0.0f, 1.0f + 1e-4f};
  EXPECT_TRUE(SameBits(NormalizeRotation(longer), Quat::Identity()));
  const Quat shorter{0.0f, 0.0f, 0.0f, -(1.0f - 1e-6f)};
  EXPECT_TRUE(SameBits(NormalizeRotation(shorter), (Quat{0.0f, 0.0f, 0.0f, -1.0f})));
  // Tiny and subnormal components next to a large one.
  const Quat tiny{1e-30f, -1e-41f, 0.0f, 2.0f};
  const Quat n = NormalizeRotation(tiny);
  EXPECT_EQ(n.w, 1.0f);
  EXPECT_FLOAT_EQ(n.x, 5e-31f);
  EXPECT_TRUE(SameBits(NormalizeRotation(n), n));
}

}  // namespace
}  // namespace collide
