//===- FloatTest.cpp - Rounding and encodings of Float.h ------------------===//
#include "dsl/Float.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace kgen;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

float bitsF32(uint32_t u) { return std::bit_cast<float>(u); }

/// Checks that x is exactly the expected value, -0 and +0 told apart.
void expectSame(double expected, double got) {
  EXPECT_EQ(expected, got);
  EXPECT_EQ(std::signbit(expected), std::signbit(got)) << got;
}

bool isNaNBf16(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F); }
bool isNaNF16(uint16_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x3FF); }

} // namespace

//===----------------------------------------------------------------------===//
// f32
//===----------------------------------------------------------------------===//

TEST(Float, F32RoundsToNearestEven) {
  EXPECT_EQ(roundTo(DType::F32, 1 + 0x1p-24), 1.0);             // tie
  EXPECT_EQ(roundTo(DType::F32, 1 + 3 * 0x1p-24), 1 + 0x1p-22); // tie
  EXPECT_EQ(roundTo(DType::F32, 1 + 0x1p-24 + 0x1p-40), 1 + 0x1p-23);
  EXPECT_EQ(roundTo(DType::F32, 0.1), (double)0.1f);
}

TEST(Float, F32OverflowAndSpecials) {
  const double fltMax = std::numeric_limits<float>::max();
  EXPECT_EQ(roundTo(DType::F32, 0x1.fffffefp127), fltMax); // below the tie
  EXPECT_EQ(roundTo(DType::F32, 0x1.ffffffp127), kInf); // tie -> even = 2^128
  EXPECT_EQ(roundTo(DType::F32, 1e300), kInf);
  EXPECT_EQ(roundTo(DType::F32, -1e300), -kInf);
  EXPECT_TRUE(std::isnan(roundTo(DType::F32, kNaN)));
  EXPECT_EQ(roundTo(DType::F32, 0x1p-149), 0x1p-149); // smallest subnormal
  expectSame(0.0, roundTo(DType::F32, 0x1p-150));     // tie -> 0
  expectSame(-0.0, roundTo(DType::F32, -0x1p-151));
}

//===----------------------------------------------------------------------===//
// bf16
//===----------------------------------------------------------------------===//

TEST(Float, Bf16TiesToEven) {
  // bf16 has 7 mantissa bits: spacing 2^-7 in [1, 2).
  EXPECT_EQ(roundTo(DType::BF16, 1 + 0x1p-8), 1.0);            // 1.0 is even
  EXPECT_EQ(roundTo(DType::BF16, 1 + 3 * 0x1p-8), 1 + 0x1p-6); // 1+2^-6 even
  EXPECT_EQ(roundTo(DType::BF16, -(1 + 3 * 0x1p-8)), -(1 + 0x1p-6));
  // Just above / below the ties (2^-20 is exact in f32 near 1).
  EXPECT_EQ(roundTo(DType::BF16, 1 + 0x1p-8 + 0x1p-20), 1 + 0x1p-7);
  EXPECT_EQ(roundTo(DType::BF16, 1 + 0x1p-8 - 0x1p-20), 1.0);
  EXPECT_EQ(roundTo(DType::BF16, 1 + 3 * 0x1p-8 - 0x1p-20), 1 + 0x1p-7);
  EXPECT_EQ(roundTo(DType::BF16, 1 + 3 * 0x1p-8 + 0x1p-20), 1 + 0x1p-6);
  // The bits.
  EXPECT_EQ(f32ToBf16Bits(1.0f), 0x3F80);
  EXPECT_EQ(f32ToBf16Bits((float)(1 + 0x1p-8)), 0x3F80);
  EXPECT_EQ(f32ToBf16Bits((float)(1 + 3 * 0x1p-8)), 0x3F82);
  EXPECT_EQ(f32ToBf16Bits(-2.0f), 0xC000);
  EXPECT_EQ(bf16BitsToF32(0x3F81), (float)(1 + 0x1p-7));
}

TEST(Float, Bf16RoundsThroughF32) {
  // v is above the bf16 tie 1 + 2^-8, so rounding v directly to bf16 would
  // give 1 + 2^-7. But v rounds to f32 exactly at the tie (2^-30 is below
  // half an f32 ulp, 2^-24), and the tie then rounds to even: 1.0.
  const double v = 1 + 0x1p-8 + 0x1p-30;
  ASSERT_GT(v, 1 + 0x1p-8);
  ASSERT_EQ(roundTo(DType::F32, v), 1 + 0x1p-8);
  EXPECT_EQ(roundTo(DType::BF16, v), 1.0);
  uint16_t bits;
  encode(DType::BF16, v, &bits);
  EXPECT_EQ(bits, 0x3F80);
  // Same for f16 (10 mantissa bits: the tie is at 1 + 2^-11).
  const double w = 1 + 0x1p-11 + 0x1p-30;
  ASSERT_EQ(roundTo(DType::F32, w), 1 + 0x1p-11);
  EXPECT_EQ(roundTo(DType::F16, w), 1.0);
}

TEST(Float, Bf16NaNInfOverflow) {
  EXPECT_TRUE(std::isnan(roundTo(DType::BF16, kNaN)));
  EXPECT_TRUE(
      isNaNBf16(f32ToBf16Bits(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload is only in the low 16 bits must not become Inf (as
  // plain truncation or the rounding-bias trick without a NaN check would).
  EXPECT_TRUE(isNaNBf16(f32ToBf16Bits(bitsF32(0x7F800001))));
  EXPECT_TRUE(isNaNBf16(f32ToBf16Bits(bitsF32(0xFF80FFFF))));
  EXPECT_TRUE(std::isnan(bf16BitsToF32(0x7FC0)));
  EXPECT_EQ(f32ToBf16Bits(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(f32ToBf16Bits(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(roundTo(DType::BF16, kInf), kInf);
  EXPECT_EQ(roundTo(DType::BF16, -kInf), -kInf);
  // The largest bf16 is (2 - 2^-7) * 2^127 (0x7F7F); its mantissa is odd, so
  // the tie above it rounds up to Inf.
  const double bmax = (2 - 0x1p-7) * 0x1p127;
  EXPECT_EQ(bf16BitsToF32(0x7F7F), bmax);
  EXPECT_EQ(roundTo(DType::BF16, bmax), bmax);
  EXPECT_EQ(roundTo(DType::BF16, (2 - 0x1p-8 - 0x1p-20) * 0x1p127), bmax);
  EXPECT_EQ(roundTo(DType::BF16, (2 - 0x1p-8) * 0x1p127), kInf);
  EXPECT_EQ(f32ToBf16Bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(roundTo(DType::BF16, -1e39), -kInf); // beyond f32 too
}

TEST(Float, Bf16Subnormals) {
  // Smallest bf16 subnormal: 2^-126 * 2^-7 = 2^-133.
  EXPECT_EQ(bf16BitsToF32(0x0001), 0x1p-133);
  EXPECT_EQ(bf16BitsToF32(0x0080), 0x1p-126); // smallest normal
  EXPECT_EQ(roundTo(DType::BF16, 0x1p-133), 0x1p-133);
  expectSame(0.0, roundTo(DType::BF16, 0x1p-134)); // tie -> 0 (even)
  expectSame(-0.0, roundTo(DType::BF16, -0x1p-134));
  EXPECT_EQ(roundTo(DType::BF16, 0.75 * 0x1p-133), 0x1p-133);
  EXPECT_EQ(roundTo(DType::BF16, 1.5 * 0x1p-133), 0x1p-132); // tie -> 2
  EXPECT_EQ(roundTo(DType::BF16, 2.5 * 0x1p-133), 0x1p-132); // tie -> 2
  EXPECT_EQ(f32ToBf16Bits((float)0x1p-149), 0x0000);
  EXPECT_EQ(f32ToBf16Bits((float)-0x1p-149), 0x8000);
  // Rounding up out of the subnormals into the smallest normal.
  EXPECT_EQ(f32ToBf16Bits((float)(0x1p-126 - 0x1p-140)), 0x0080);
}

TEST(Float, Bf16AllPatternsRoundTrip) {
  int nans = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t bits = (uint16_t)i;
    float f = bf16BitsToF32(bits);
    if (std::isnan(f)) {
      ++nans;
      EXPECT_TRUE(isNaNBf16(bits)) << std::hex << i;
      EXPECT_TRUE(isNaNBf16(f32ToBf16Bits(f))) << std::hex << i;
      continue;
    }
    ASSERT_EQ(f32ToBf16Bits(f), bits) << std::hex << i;
    ASSERT_EQ(roundTo(DType::BF16, f), (double)f) << std::hex << i;
    uint16_t enc;
    encode(DType::BF16, f, &enc);
    ASSERT_EQ(enc, bits) << std::hex << i;
    ASSERT_EQ(std::bit_cast<uint64_t>(decode(DType::BF16, &bits)),
              std::bit_cast<uint64_t>((double)f));
  }
  EXPECT_EQ(nans, 2 * 127);
}

/// Checks the rounding of random floats against the nearest value in a
/// sorted table of all finite values of the format (ties to the even
/// pattern), an implementation that shares nothing with Float.cpp.
template <typename ToBits, typename FromBits>
void checkAgainstTable(int numPatterns, ToBits toBits, FromBits fromBits,
                       bool saturate, int lowExp, int highExp) {
  struct Entry {
    double value;
    uint32_t bits;
  };
  std::vector<Entry> table;
  for (int i = 0; i < numPatterns; ++i) {
    float f = fromBits((uint32_t)i);
    if (std::isfinite(f) && !(f == 0 && std::signbit(f)))
      table.push_back({f, (uint32_t)i});
  }
  std::sort(table.begin(), table.end(),
            [](const Entry &a, const Entry &b) { return a.value < b.value; });
  const double maxv = table.back().value;
  const double spacingAtMax = maxv - table[table.size() - 2].value;
  const uint32_t signBitOut = (uint32_t)numPatterns >> 1;

  std::mt19937 rng(42);
  for (int n = 0; n < 200000; ++n) {
    // Random sign and mantissa; an exponent in [lowExp, highExp], or an f32
    // subnormal now and then; every 4th mantissa cut short
    // (which makes ties).
    uint32_t u = rng() & 0x807FFFFFu;
    if (n % 4 == 0)
      u &= ~((1u << (rng() % 24)) - 1);
    int e = lowExp + (int)(rng() % (uint32_t)(highExp - lowExp + 1));
    uint32_t field = n % 50 == 0 ? 0 : (uint32_t)std::clamp(e + 127, 1, 254);
    u |= field << 23;
    float f = bitsF32(u);
    double a = std::fabs((double)f);
    uint32_t expected;
    bool expectInf = false;
    if (a > maxv) {
      // Saturate, or IEEE: Inf from max + half a spacing on (max is odd, so
      // the tie goes up too).
      expectInf = !saturate && a >= maxv + spacingAtMax / 2;
      expected = table.back().bits;
    } else {
      auto it = std::lower_bound(
          table.begin(), table.end(), a,
          [](const Entry &x, double v) { return x.value < v; });
      const Entry &hi = *it;
      if (hi.value == a) {
        expected = hi.bits;
      } else {
        const Entry &lo = *(it - 1);
        double dlo = a - lo.value, dhi = hi.value - a;
        expected = dlo < dhi            ? lo.bits
                   : dhi < dlo          ? hi.bits
                   : (lo.bits & 1) == 0 ? lo.bits
                                        : hi.bits;
      }
    }
    uint32_t got = toBits(f);
    if (expectInf) {
      ASSERT_TRUE(std::isinf(fromBits(got))) << f;
      ASSERT_EQ(std::signbit(fromBits(got)), std::signbit(f)) << f;
    } else {
      uint32_t sign = std::signbit(f) ? signBitOut : 0;
      ASSERT_EQ(got, expected | sign) << f << " (" << std::hex << u << ")";
    }
  }
}

TEST(Float, Bf16MatchesNearestTableValue) {
  checkAgainstTable(
      65536, [](float f) { return (uint32_t)f32ToBf16Bits(f); },
      [](uint32_t b) { return bf16BitsToF32((uint16_t)b); }, false, -140, 127);
}

//===----------------------------------------------------------------------===//
// f16
//===----------------------------------------------------------------------===//

TEST(Float, F16KnownValuesAndTies) {
  EXPECT_EQ(f32ToF16Bits(1.0f), 0x3C00);
  EXPECT_EQ(f32ToF16Bits(-2.0f), 0xC000);
  EXPECT_EQ(f32ToF16Bits(0.5f), 0x3800);
  EXPECT_EQ(f32ToF16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(f16BitsToF32(0x3555), 0x1.554p-2f); // 0.333251953125
  EXPECT_EQ(roundTo(DType::F16, 1 + 0x1p-11), 1.0);
  EXPECT_EQ(roundTo(DType::F16, 1 + 3 * 0x1p-11), 1 + 0x1p-9);
  EXPECT_EQ(roundTo(DType::F16, 1 + 0x1p-11 + 0x1p-20), 1 + 0x1p-10);
  EXPECT_EQ(roundTo(DType::F16, 1 + 0x1p-11 - 0x1p-20), 1.0);
}

TEST(Float, F16NaNInfOverflow) {
  EXPECT_TRUE(std::isnan(roundTo(DType::F16, kNaN)));
  EXPECT_TRUE(isNaNF16(f32ToF16Bits(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(isNaNF16(f32ToF16Bits(bitsF32(0x7F800001))));
  EXPECT_TRUE(isNaNF16(f32ToF16Bits(bitsF32(0xFFC00000))));
  EXPECT_TRUE(std::isnan(f16BitsToF32(0x7C01)));
  EXPECT_EQ(f16BitsToF32(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16BitsToF32(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f32ToF16Bits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f32ToF16Bits(-std::numeric_limits<float>::infinity()), 0xFC00);
  // Max 65504, spacing 32 in the top binade: 65520 is the tie with 65536
  // and 65504's mantissa is odd, so it goes up to Inf.
  EXPECT_EQ(roundTo(DType::F16, 65519), 65504);
  EXPECT_EQ(roundTo(DType::F16, 65520), kInf);
  EXPECT_EQ(roundTo(DType::F16, -65520), -kInf);
  EXPECT_EQ(roundTo(DType::F16, 1e10), kInf);
  EXPECT_EQ(f32ToF16Bits(1e5f), 0x7C00);
}

TEST(Float, F16Subnormals) {
  EXPECT_EQ(f16BitsToF32(0x0001), 0x1p-24f); // smallest subnormal
  EXPECT_EQ(f16BitsToF32(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(f16BitsToF32(0x0400), 0x1p-14f); // smallest normal
  EXPECT_EQ(roundTo(DType::F16, 0x1p-24), 0x1p-24);
  expectSame(0.0, roundTo(DType::F16, 0x1p-25)); // tie -> 0
  expectSame(-0.0, roundTo(DType::F16, -0x1p-25));
  EXPECT_EQ(roundTo(DType::F16, 0x1p-25 + 0x1p-35), 0x1p-24);
  EXPECT_EQ(roundTo(DType::F16, 3 * 0x1p-25), 0x1p-23); // tie 1.5 -> 2
  EXPECT_EQ(roundTo(DType::F16, 5 * 0x1p-25), 0x1p-23); // tie 2.5 -> 2
  EXPECT_EQ(roundTo(DType::F16, 1e-10), 0.0);
  // 1023.75 * 2^-24 rounds up out of the subnormals to 2^-14.
  EXPECT_EQ(f32ToF16Bits(1023.75f * 0x1p-24f), 0x0400);
  EXPECT_EQ(f32ToF16Bits(1023.25f * 0x1p-24f), 0x03FF);
}

TEST(Float, F16AllPatternsRoundTrip) {
  int nans = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t bits = (uint16_t)i;
    float f = f16BitsToF32(bits);
    if (std::isnan(f)) {
      ++nans;
      EXPECT_TRUE(isNaNF16(bits)) << std::hex << i;
      EXPECT_TRUE(isNaNF16(f32ToF16Bits(f))) << std::hex << i;
      continue;
    }
    ASSERT_FALSE(isNaNF16(bits)) << std::hex << i;
    ASSERT_EQ(f32ToF16Bits(f), bits) << std::hex << i;
    ASSERT_EQ(roundTo(DType::F16, f), (double)f) << std::hex << i;
    uint16_t enc;
    encode(DType::F16, f, &enc);
    ASSERT_EQ(enc, bits) << std::hex << i;
    ASSERT_EQ(decode(DType::F16, &bits), (double)f);
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(Float, F16MatchesNearestTableValue) {
  checkAgainstTable(
      65536, [](float f) { return (uint32_t)f32ToF16Bits(f); },
      [](uint32_t b) { return f16BitsToF32((uint16_t)b); }, false, -28, 18);
}

//===----------------------------------------------------------------------===//
// fp8
//===----------------------------------------------------------------------===//

TEST(Float, F8E4M3ValuesAndSaturation) {
  EXPECT_EQ(f8E4M3BitsToF32(0x7E), 448.0f); // S.1111.110, the max
  EXPECT_TRUE(std::isnan(f8E4M3BitsToF32(0x7F)));
  EXPECT_TRUE(std::isnan(f8E4M3BitsToF32(0xFF)));
  EXPECT_EQ(f8E4M3BitsToF32(0x78), 256.0f); // S.1111.000 is a number
  EXPECT_EQ(f8E4M3BitsToF32(0x38), 1.0f);
  EXPECT_EQ(f8E4M3BitsToF32(0x01), 0x1p-9f); // smallest subnormal
  EXPECT_EQ(f8E4M3BitsToF32(0x08), 0x1p-6f); // smallest normal
  EXPECT_EQ(f32ToF8E4M3Bits(1.0f), 0x38);
  EXPECT_EQ(f32ToF8E4M3Bits(-1.0f), 0xB8);
  // Saturation (satfinite): beyond 448 and Inf -> +-448, never NaN.
  EXPECT_EQ(f32ToF8E4M3Bits(448.0f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(449.0f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(464.0f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(500.0f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(1e30f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(-1e30f), 0xFE);
  EXPECT_EQ(f32ToF8E4M3Bits(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(roundTo(DType::F8E4M3, 1e6), 448);
  EXPECT_EQ(roundTo(DType::F8E4M3, -kInf), -448);
  EXPECT_EQ(roundTo(DType::F8E4M3, 1e300), 448); // f32 Inf, then saturated
  // NaN stays NaN.
  EXPECT_EQ(f32ToF8E4M3Bits(std::numeric_limits<float>::quiet_NaN()) & 0x7F,
            0x7F);
  EXPECT_TRUE(std::isnan(roundTo(DType::F8E4M3, kNaN)));
  // Ties to even: spacing 2^-3 in [1, 2).
  EXPECT_EQ(roundTo(DType::F8E4M3, 1 + 0x1p-4), 1.0);
  EXPECT_EQ(roundTo(DType::F8E4M3, 1 + 3 * 0x1p-4), 1.25);
  EXPECT_EQ(roundTo(DType::F8E4M3, 1 + 0x1p-4 + 0x1p-10), 1.125);
  // Subnormals.
  EXPECT_EQ(roundTo(DType::F8E4M3, 0x1p-10), 0.0);        // tie -> 0
  EXPECT_EQ(roundTo(DType::F8E4M3, 3 * 0x1p-10), 0x1p-8); // tie -> 2
  EXPECT_EQ(roundTo(DType::F8E4M3, 0x1p-30), 0.0);
}

TEST(Float, F8E5M2ValuesAndSaturation) {
  EXPECT_EQ(f8E5M2BitsToF32(0x7B), 57344.0f); // max
  EXPECT_EQ(f8E5M2BitsToF32(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f8E5M2BitsToF32(0x7D)));
  EXPECT_TRUE(std::isnan(f8E5M2BitsToF32(0xFF)));
  EXPECT_EQ(f8E5M2BitsToF32(0x3C), 1.0f);
  EXPECT_EQ(f8E5M2BitsToF32(0x01), 0x1p-16f);
  EXPECT_EQ(f32ToF8E5M2Bits(1.0f), 0x3C);
  EXPECT_EQ(f32ToF8E5M2Bits(57344.0f), 0x7B);
  EXPECT_EQ(f32ToF8E5M2Bits(61440.0f), 0x7B); // the tie with 65536
  EXPECT_EQ(f32ToF8E5M2Bits(1e9f), 0x7B);
  EXPECT_EQ(f32ToF8E5M2Bits(-1e9f), 0xFB);
  EXPECT_EQ(f32ToF8E5M2Bits(std::numeric_limits<float>::infinity()), 0x7B);
  EXPECT_EQ(f32ToF8E5M2Bits(-std::numeric_limits<float>::infinity()), 0xFB);
  EXPECT_EQ(roundTo(DType::F8E5M2, kInf), 57344);
  EXPECT_TRUE(std::isnan(roundTo(DType::F8E5M2, kNaN)));
  EXPECT_TRUE(std::isnan(f8E5M2BitsToF32(
      f32ToF8E5M2Bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(roundTo(DType::F8E5M2, 1.125), 1.0); // tie -> even
  EXPECT_EQ(roundTo(DType::F8E5M2, 1.375), 1.5); // tie -> even
  EXPECT_EQ(roundTo(DType::F8E5M2, 0x1p-17), 0.0);
  EXPECT_EQ(roundTo(DType::F8E5M2, 3 * 0x1p-17), 0x1p-15);
}

TEST(Float, F8AllPatternsRoundTrip) {
  int nans4 = 0, nans5 = 0;
  for (uint32_t i = 0; i < 256; ++i) {
    uint8_t bits = (uint8_t)i;
    float f = f8E4M3BitsToF32(bits);
    if (std::isnan(f)) {
      ++nans4;
    } else {
      EXPECT_EQ(f32ToF8E4M3Bits(f), bits) << i;
      uint8_t enc;
      encode(DType::F8E4M3, f, &enc);
      EXPECT_EQ(enc, bits) << i;
      EXPECT_EQ(decode(DType::F8E4M3, &bits), (double)f);
    }
    float g = f8E5M2BitsToF32(bits);
    if (std::isnan(g)) {
      ++nans5;
    } else if (std::isinf(g)) {
      // Inf exists in the layout but a conversion saturates it.
      EXPECT_EQ(f32ToF8E5M2Bits(g), (bits & 0x80) | 0x7B);
    } else {
      EXPECT_EQ(f32ToF8E5M2Bits(g), bits) << i;
      EXPECT_EQ(decode(DType::F8E5M2, &bits), (double)g);
    }
  }
  EXPECT_EQ(nans4, 2);
  EXPECT_EQ(nans5, 6);
}

TEST(Float, F8MatchesNearestTableValue) {
  checkAgainstTable(
      256, [](float f) { return (uint32_t)f32ToF8E4M3Bits(f); },
      [](uint32_t b) { return f8E4M3BitsToF32((uint8_t)b); }, true, -12, 11);
  checkAgainstTable(
      256, [](float f) { return (uint32_t)f32ToF8E5M2Bits(f); },
      [](uint32_t b) { return f8E5M2BitsToF32((uint8_t)b); }, true, -20, 18);
}

//===----------------------------------------------------------------------===//
// roundTo's fast path against the full conversions
//===----------------------------------------------------------------------===//

/// Every pattern of a narrow format decodes to sign * mant * 2^exp, built
/// with ldexp here (the library builds normal values from bits).
TEST(Float, NarrowDecodeMatchesLdexp) {
  struct Case {
    DType t;
    int patterns, expBits, mantBits, bias;
  };
  for (Case c :
       {Case{DType::BF16, 65536, 8, 7, 127}, Case{DType::F16, 65536, 5, 10, 15},
        Case{DType::F8E4M3, 256, 4, 3, 7},
        Case{DType::F8E5M2, 256, 5, 2, 15}}) {
    const int width = 1 + c.expBits + c.mantBits;
    const uint32_t fieldMax = (1u << c.expBits) - 1;
    for (int i = 0; i < c.patterns; ++i) {
      uint32_t field = (uint32_t(i) >> c.mantBits) & fieldMax;
      uint32_t mant = uint32_t(i) & ((1u << c.mantBits) - 1);
      if (field == fieldMax && (c.t != DType::F8E4M3 || mant == 0x7))
        continue; // Inf and NaN: the other tests
      double want = field == 0
                        ? std::ldexp(double(mant), 1 - c.bias - c.mantBits)
                        : std::ldexp(double(mant | (1u << c.mantBits)),
                                     int(field) - c.bias - c.mantBits);
      if ((uint32_t(i) >> (width - 1)) & 1)
        want = -want;
      uint16_t bits = uint16_t(i);
      expectSame(want, decode(c.t, &bits));
    }
  }
}

/// roundTo(t, f) rounds in place on f32's bits; encode() and decode() go
/// through the format's fields. They must agree on every f32 whose dropped
/// bits sit at a rounding boundary, in every binade, and on random ones.
TEST(Float, NarrowRoundToMatchesEncodeDecode) {
  auto check = [](DType t, float f) {
    uint16_t bits = 0;
    encode(t, f, &bits);
    double slow = decode(t, &bits), fast = roundTo(t, f);
    if (std::isnan(slow)) {
      ASSERT_TRUE(std::isnan(fast)) << f;
      ASSERT_EQ(std::signbit(slow), std::signbit(fast)) << f;
      return;
    }
    ASSERT_EQ(std::bit_cast<uint64_t>(slow), std::bit_cast<uint64_t>(fast))
        << std::hexfloat << f << " as " << name(t);
  };
  std::mt19937 rng(7);
  for (DType t : {DType::BF16, DType::F16, DType::F8E4M3, DType::F8E5M2}) {
    const int drop = t == DType::BF16     ? 16
                     : t == DType::F16    ? 13
                     : t == DType::F8E4M3 ? 20
                                          : 21;
    const uint32_t half = 1u << (drop - 1);
    for (uint32_t top = 0; top < (1u << (32 - drop)); ++top) {
      uint32_t base = top << drop;
      for (uint32_t low : {0u, 1u, half - 1, half, half + 1, 2 * half - 1})
        check(t, bitsF32(base | low));
      check(t, bitsF32(base | (uint32_t(rng()) & (2 * half - 1))));
    }
    for (int n = 0; n < 200000; ++n)
      check(t, bitsF32(uint32_t(rng())));
  }
}

/// decodeRun and encodeRun give decode() and encode()'s values, strided.
TEST(Float, RunsMatchOneAtATime) {
  std::mt19937 rng(3);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F8E4M3,
                  DType::F8E5M2, DType::I32, DType::I64, DType::Bool}) {
    const int64_t n = 4096, stride = 3, size = sizeInBytes(t);
    std::vector<double> v(n);
    for (double &x : v) // any f32 pattern, integers up to 2^31
      x = isFloat(t) ? double(bitsF32(uint32_t(rng())))
                     : double(int32_t(rng()));
    std::vector<uint8_t> one(n * stride * size), run(n * stride * size, 0xAB);
    for (int64_t i = 0; i < n; ++i)
      encode(t, v[i], one.data() + i * stride * size);
    for (int64_t i = 0; i < n; ++i) // the bytes between stay as they were
      std::memset(one.data() + (i * stride + 1) * size, 0xAB,
                  (stride - 1) * size);
    encodeRun(t, v.data(), n, run.data(), stride);
    ASSERT_EQ(one, run) << name(t);
    std::vector<double> got(n);
    decodeRun(t, run.data(), stride, n, got.data());
    for (int64_t i = 0; i < n; ++i) {
      double want = decode(t, run.data() + i * stride * size);
      ASSERT_TRUE(std::bit_cast<uint64_t>(want) ==
                      std::bit_cast<uint64_t>(got[i]) ||
                  (std::isnan(want) && std::isnan(got[i])))
          << name(t) << " element " << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Integers, bool, encode/decode, ulp
//===----------------------------------------------------------------------===//

TEST(Float, IntegersTruncateAndClamp) {
  EXPECT_EQ(roundTo(DType::I32, 2.7), 2);
  EXPECT_EQ(roundTo(DType::I32, -2.7), -2);
  EXPECT_EQ(roundTo(DType::I32, 3e9), 2147483647);
  EXPECT_EQ(roundTo(DType::I32, -3e9), -2147483648.0);
  EXPECT_EQ(roundTo(DType::I32, kInf), 2147483647);
  EXPECT_EQ(roundTo(DType::I32, kNaN), 0);
  EXPECT_EQ(roundTo(DType::I64, -5.5), -5);
  EXPECT_EQ(roundTo(DType::I64, kNaN), 0);
  EXPECT_EQ(roundTo(DType::I64, -1e30), -0x1p63);
  int64_t i;
  encode(DType::I64, 1e30, &i);
  EXPECT_EQ(i, std::numeric_limits<int64_t>::max());
  encode(DType::I64, -1e30, &i);
  EXPECT_EQ(i, std::numeric_limits<int64_t>::min());
  encode(DType::I64, (double)(int64_t(1) << 52) + 1, &i);
  EXPECT_EQ(i, (int64_t(1) << 52) + 1);
  EXPECT_EQ(decode(DType::I64, &i), (double)((int64_t(1) << 52) + 1));
}

TEST(Float, BoolIsNonZero) {
  EXPECT_EQ(roundTo(DType::Bool, 0.0), 0);
  EXPECT_EQ(roundTo(DType::Bool, -0.0), 0);
  EXPECT_EQ(roundTo(DType::Bool, 0.5), 1);
  EXPECT_EQ(roundTo(DType::Bool, -3), 1);
  EXPECT_EQ(roundTo(DType::Bool, kNaN), 1);
  uint8_t b = 7;
  encode(DType::Bool, 2.0, &b);
  EXPECT_EQ(b, 1);
  b = 5;
  EXPECT_EQ(decode(DType::Bool, &b), 1);
}

TEST(Float, EncodeIsLittleEndianBitLayout) {
  unsigned char buf[8] = {};
  encode(DType::F32, 1.0, buf);
  EXPECT_EQ(std::vector<unsigned char>(buf, buf + 4),
            (std::vector<unsigned char>{0x00, 0x00, 0x80, 0x3F}));
  encode(DType::BF16, -2.0, buf);
  EXPECT_EQ(buf[0], 0x00);
  EXPECT_EQ(buf[1], 0xC0);
  encode(DType::F16, 1.0, buf);
  EXPECT_EQ(buf[0], 0x00);
  EXPECT_EQ(buf[1], 0x3C);
  encode(DType::I32, -2, buf);
  EXPECT_EQ(std::vector<unsigned char>(buf, buf + 4),
            (std::vector<unsigned char>{0xFE, 0xFF, 0xFF, 0xFF}));
  encode(DType::F8E4M3, 1000.0, buf);
  EXPECT_EQ(buf[0], 0x7E);
  encode(DType::F8E5M2, -1.0, buf);
  EXPECT_EQ(buf[0], 0xBC);
  // encode rounds: 1 + 2^-8 is a bf16 tie.
  encode(DType::BF16, 1 + 0x1p-8, buf);
  EXPECT_EQ(decode(DType::BF16, buf), 1.0);
  encode(DType::F32, 0.1, buf);
  EXPECT_EQ(decode(DType::F32, buf), (double)0.1f);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F8E4M3,
                  DType::F8E5M2, DType::I32, DType::I64, DType::Bool}) {
    encode(t, 3.0, buf);
    EXPECT_EQ(decode(t, buf), t == DType::Bool ? 1.0 : 3.0) << name(t);
  }
}

TEST(Float, Ulp) {
  EXPECT_EQ(ulp(DType::F32, 1.0), 0x1p-23);
  EXPECT_EQ(ulp(DType::F32, -1.5), 0x1p-23);
  EXPECT_EQ(ulp(DType::F32, 0.0), 0x1p-149);
  EXPECT_EQ(ulp(DType::BF16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp(DType::BF16, 3.0), 0x1p-6);
  EXPECT_EQ(ulp(DType::BF16, 1e-40), 0x1p-133);
  EXPECT_EQ(ulp(DType::F16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp(DType::F16, 0.0), 0x1p-24);
  EXPECT_EQ(ulp(DType::F16, 1e9), 32.0); // top binade
  EXPECT_EQ(ulp(DType::F16, kInf), 32.0);
  EXPECT_EQ(ulp(DType::F8E4M3, 1.0), 0.125);
  EXPECT_EQ(ulp(DType::F8E4M3, 448), 32.0);
  EXPECT_EQ(ulp(DType::F8E4M3, 0.001), 0x1p-9);
  EXPECT_EQ(ulp(DType::F8E5M2, 1.0), 0.25);
  EXPECT_EQ(ulp(DType::I32, 12345), 1.0);
  EXPECT_TRUE(std::isnan(ulp(DType::F32, kNaN)));
  // ulp is the distance to the next value up from a value of the type.
  for (DType t : {DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2})
    for (double v : {0.75, 1.0, 1.5, 3.0, 10.0})
      EXPECT_EQ(roundTo(t, v + ulp(t, v)), v + ulp(t, v)) << name(t) << v;
}
