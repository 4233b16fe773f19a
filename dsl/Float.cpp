//===- Float.cpp - Host encodings and rounding of kgen dtypes -------------===//
#include "dsl/Float.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

static_assert(std::endian::native == std::endian::little,
              "kgen's host encodings assume a little-endian host");

namespace kgen {
namespace {

/// A binary float format narrower than f32: E exponent bits, M mantissa bits.
struct Format {
  int expBits;
  int mantBits;
  int bias;
  bool hasInf;      ///< IEEE-like: the all-ones exponent is Inf/NaN.
  bool saturate;    ///< Overflow and Inf go to +-max (satfinite).
  uint32_t maxBits; ///< Largest finite magnitude.
  uint32_t infBits; ///< Only when hasInf.
  uint32_t nanBits; ///< The quiet NaN produced (sign added).
};

constexpr Format kF16{5, 10, 15, true, false, 0x7BFF, 0x7C00, 0x7E00};
constexpr Format kBF16{8, 7, 127, true, false, 0x7F7F, 0x7F80, 0x7FC0};
// e4m3 "fn": no Inf; S.1111.111 is NaN, so the max is S.1111.110 = 448.
constexpr Format kE4M3{4, 3, 7, false, true, 0x7E, 0, 0x7F};
// e5m2: IEEE-like, max S.11110.11 = 57344.
constexpr Format kE5M2{5, 2, 15, true, true, 0x7B, 0x7C, 0x7F};

/// Rounds the f32 bit pattern u to the format, round-to-nearest-even.
uint32_t fromF32(uint32_t u, const Format &fmt) {
  const int M = fmt.mantBits;
  const uint32_t signBit = (u >> 31) << (fmt.expBits + M);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) // NaN
    return signBit | fmt.nanBits;
  if (a == 0x7F800000u) // Inf
    return signBit | (fmt.saturate || !fmt.hasInf ? fmt.maxBits : fmt.infBits);
  if (a == 0)
    return signBit;

  // |f| = sig * 2^exp exactly, sig < 2^24.
  const uint32_t fe = a >> 23, fm = a & 0x7FFFFFu;
  const uint64_t sig = fe ? (fm | 0x800000u) : fm;
  const int exp = fe ? (int)fe - 150 : -149;
  const int top =
      std::bit_width(sig) - 1;   // |f| in [2^(exp+top), 2^(exp+top+1))
  const int emin = 1 - fmt.bias; // smallest normal exponent
  // The target's spacing (quantum) at |f| is 2^qe.
  int qe = (exp + top > emin ? exp + top : emin) - M;
  const int shift = qe - exp;

  uint64_t q; // |f| / 2^qe, rounded to nearest even
  if (shift <= 0) {
    q = sig << -shift;
  } else if (shift > 40) {
    q = 0; // below a quarter of the quantum
  } else {
    q = sig >> shift;
    const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  if (q == 0)
    return signBit;
  if (q == (uint64_t(1) << (M + 1))) { // rounded up into the next binade
    q >>= 1;
    ++qe;
  }
  uint64_t bits;
  if (q < (uint64_t(1) << M)) {
    bits = q; // subnormal (qe is emin - M here)
  } else {
    const int64_t field = (int64_t)qe + M + fmt.bias;
    bits = (uint64_t(field) << M) | (q - (uint64_t(1) << M));
    if (field >= (int64_t(1) << fmt.expBits) || bits > fmt.maxBits)
      return signBit |
             (fmt.saturate || !fmt.hasInf ? fmt.maxBits : fmt.infBits);
  }
  return signBit | (uint32_t)bits;
}

/// Decodes the format's bit pattern exactly.
float toF32(uint32_t bits, const Format &fmt) {
  const int M = fmt.mantBits;
  const bool neg = (bits >> (fmt.expBits + M)) & 1;
  const uint32_t fieldMask = (1u << fmt.expBits) - 1;
  const uint32_t field = (bits >> M) & fieldMask;
  const uint32_t mant = bits & ((1u << M) - 1);
  float v;
  if (fmt.hasInf && field == fieldMask)
    v = mant ? std::numeric_limits<float>::quiet_NaN()
             : std::numeric_limits<float>::infinity();
  else if (!fmt.hasInf && field == fieldMask && mant == (1u << M) - 1)
    v = std::numeric_limits<float>::quiet_NaN();
  else if (field == 0)
    v = std::ldexp((float)mant, 1 - fmt.bias - M);
  else // a normal f32 whose top mantissa bits are mant
    v = std::bit_cast<float>(((field - fmt.bias + 127) << 23) |
                             (mant << (23 - M)));
  return neg ? -v : v;
}

/// roundTo's path to a narrow format: toF32(fromF32(f)) without its field
/// arithmetic. Where the format is normal, f32's mantissa is rounded to M
/// bits in place; below, a float add rounds to the fixed subnormal quantum.
/// FloatTest checks it bit for bit against the two conversions.
float roundNarrow(float f, const Format &fmt) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = u & 0x80000000u;
  uint32_t a = u ^ sign;
  if (a > 0x7F800000u) // NaN, of f's sign as toF32 gives it
    return sign ? -std::numeric_limits<float>::quiet_NaN()
                : std::numeric_limits<float>::quiet_NaN();
  const int drop = 23 - fmt.mantBits;
  const int emin = 1 - fmt.bias;
  float r;
  if (a >= uint32_t(emin + 127) << 23) {
    // Round to nearest even on the dropped bits; a carry moves the exponent.
    a += ((1u << (drop - 1)) - 1) + ((a >> drop) & 1);
    a &= ~((1u << drop) - 1);
    const uint32_t maxField = fmt.maxBits >> fmt.mantBits;
    const uint32_t maxFinite =
        ((maxField - fmt.bias + 127) << 23) |
        ((fmt.maxBits & ((1u << fmt.mantBits) - 1)) << drop);
    if (a > maxFinite)
      a = fmt.saturate || !fmt.hasInf ? maxFinite : 0x7F800000u;
    r = std::bit_cast<float>(a);
  } else {
    // |f| < 2^emin: K's ulp is the quantum 2^(emin - M), so f + K rounds f
    // to it (correctly, in hardware) and - K is exact.
    const float k = std::ldexp(1.0f, emin - fmt.mantBits + 23);
    r = (std::bit_cast<float>(a) + k) - k;
  }
  return sign ? -r : r;
}

/// double -> f32 with round-to-nearest-even, overflow to +-Inf (explicit:
/// an out-of-range double -> float conversion is undefined in C++).
float roundF32(double v) {
  // Halfway between FLT_MAX and 2^128: from here on RNE gives Inf.
  constexpr double kOverflow = 0x1.ffffffp127;
  if (std::isnan(v))
    return std::signbit(v) ? -std::numeric_limits<float>::quiet_NaN()
                           : std::numeric_limits<float>::quiet_NaN();
  if (v >= kOverflow)
    return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow)
    return -std::numeric_limits<float>::infinity();
  return (float)v;
}

uint32_t f32Bits(float f) { return std::bit_cast<uint32_t>(f); }

const Format *narrowFormat(DType t) {
  switch (t) {
  case DType::F16:
    return &kF16;
  case DType::BF16:
    return &kBF16;
  case DType::F8E4M3:
    return &kE4M3;
  case DType::F8E5M2:
    return &kE5M2;
  default:
    return nullptr;
  }
}

double clampTrunc(double v, double lo, double hi) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  return v < lo ? lo : v > hi ? hi : v;
}

constexpr double kI64Lo = -0x1p63;
constexpr double kI64Hi = 0x1p63; // INT64_MAX as the nearest double

} // namespace

uint16_t f32ToBf16Bits(float f) { return (uint16_t)fromF32(f32Bits(f), kBF16); }
float bf16BitsToF32(uint16_t bits) {
  return std::bit_cast<float>((uint32_t)bits << 16);
}
uint16_t f32ToF16Bits(float f) { return (uint16_t)fromF32(f32Bits(f), kF16); }
float f16BitsToF32(uint16_t bits) { return toF32(bits, kF16); }
uint8_t f32ToF8E4M3Bits(float f) { return (uint8_t)fromF32(f32Bits(f), kE4M3); }
float f8E4M3BitsToF32(uint8_t bits) { return toF32(bits, kE4M3); }
uint8_t f32ToF8E5M2Bits(float f) { return (uint8_t)fromF32(f32Bits(f), kE5M2); }
float f8E5M2BitsToF32(uint8_t bits) { return toF32(bits, kE5M2); }

double roundTo(DType t, double v) {
  switch (t) {
  case DType::F32:
    return roundF32(v);
  case DType::F16:
  case DType::BF16:
  case DType::F8E4M3:
  case DType::F8E5M2: {
    return roundNarrow(roundF32(v), *narrowFormat(t));
  }
  case DType::I32:
    return clampTrunc(v, (double)std::numeric_limits<int32_t>::min(),
                      (double)std::numeric_limits<int32_t>::max());
  case DType::I64:
    return clampTrunc(v, kI64Lo, kI64Hi);
  case DType::I8:
    return clampTrunc(v, -128, 127);
  case DType::Bool:
    return v != 0 ? 1 : 0;
  }
  return v;
}

double roundFloat(DType t, float v) {
  if (t == DType::F32)
    return v;
  return roundNarrow(v, *narrowFormat(t));
}

void encode(DType t, double v, void *dst) {
  switch (t) {
  case DType::F32: {
    float f = roundF32(v);
    std::memcpy(dst, &f, 4);
    return;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits = (uint16_t)fromF32(f32Bits(roundF32(v)), *narrowFormat(t));
    std::memcpy(dst, &bits, 2);
    return;
  }
  case DType::F8E4M3:
  case DType::F8E5M2: {
    uint8_t bits = (uint8_t)fromF32(f32Bits(roundF32(v)), *narrowFormat(t));
    std::memcpy(dst, &bits, 1);
    return;
  }
  case DType::I32: {
    int32_t i = (int32_t)roundTo(DType::I32, v);
    std::memcpy(dst, &i, 4);
    return;
  }
  case DType::I8: {
    int8_t i = (int8_t)roundTo(DType::I8, v);
    std::memcpy(dst, &i, 1);
    return;
  }
  case DType::I64: {
    double d = roundTo(DType::I64, v);
    int64_t i = d >= kI64Hi ? std::numeric_limits<int64_t>::max() : (int64_t)d;
    std::memcpy(dst, &i, 8);
    return;
  }
  case DType::Bool: {
    uint8_t b = v != 0 ? 1 : 0;
    std::memcpy(dst, &b, 1);
    return;
  }
  }
}

double decode(DType t, const void *src) {
  switch (t) {
  case DType::F32: {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, src, 2);
    return t == DType::BF16 ? bf16BitsToF32(bits) : f16BitsToF32(bits);
  }
  case DType::F8E4M3:
  case DType::F8E5M2: {
    uint8_t bits;
    std::memcpy(&bits, src, 1);
    return toF32(bits, *narrowFormat(t));
  }
  case DType::I32: {
    int32_t i;
    std::memcpy(&i, src, 4);
    return i;
  }
  case DType::I64: {
    int64_t i;
    std::memcpy(&i, src, 8);
    return (double)i;
  }
  case DType::I8: {
    int8_t i;
    std::memcpy(&i, src, 1);
    return i;
  }
  case DType::Bool: {
    uint8_t b;
    std::memcpy(&b, src, 1);
    return b != 0 ? 1 : 0;
  }
  }
  return 0;
}

void decodeRun(DType t, const void *src, int64_t stride, int64_t n,
               double *out) {
  const char *p = static_cast<const char *>(src);
  const int64_t step = stride * sizeInBytes(t);
  auto each = [&](auto read) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = read(p + i * step);
  };
  switch (t) {
  case DType::F32:
    return each([](const char *q) {
      float f;
      std::memcpy(&f, q, 4);
      return double(f);
    });
  case DType::BF16:
    return each([](const char *q) {
      uint16_t bits;
      std::memcpy(&bits, q, 2);
      return double(bf16BitsToF32(bits));
    });
  default:
    return each([t](const char *q) { return decode(t, q); });
  }
}

void encodeRun(DType t, const double *v, int64_t n, void *dst, int64_t stride) {
  char *p = static_cast<char *>(dst);
  const int64_t step = stride * sizeInBytes(t);
  switch (t) {
  case DType::F32:
    for (int64_t i = 0; i < n; ++i) {
      float f = roundF32(v[i]);
      std::memcpy(p + i * step, &f, 4);
    }
    return;
  case DType::BF16: // the rounded f32's top half is the bf16 pattern
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits = uint16_t(
          std::bit_cast<uint32_t>(roundNarrow(roundF32(v[i]), kBF16)) >> 16);
      std::memcpy(p + i * step, &bits, 2);
    }
    return;
  default:
    for (int64_t i = 0; i < n; ++i)
      encode(t, v[i], p + i * step);
  }
}

double ulp(DType t, double v) {
  if (std::isnan(v))
    return v;
  if (!isFloat(t))
    return 1;
  int mantBits, emin;
  double maxFinite;
  if (t == DType::F32) {
    mantBits = 23;
    emin = -126;
    maxFinite = std::numeric_limits<float>::max();
  } else {
    const Format &fmt = *narrowFormat(t);
    mantBits = fmt.mantBits;
    emin = 1 - fmt.bias;
    maxFinite = toF32(fmt.maxBits, fmt);
  }
  double a = std::fabs(v);
  if (a > maxFinite)
    a = maxFinite;
  if (a < std::ldexp(1.0, emin))
    return std::ldexp(1.0, emin - mantBits);
  return std::ldexp(1.0, std::ilogb(a) - mantBits);
}

} // namespace kgen
