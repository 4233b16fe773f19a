//===- Float.h - Host encodings and rounding of kgen dtypes -----*- C++ -*-===//
//
// How a double becomes a value of each dtype, and the bit layouts tensors hold
// (little endian). No CUDA and no compiler extensions (_Float16, __bf16): the
// conversions are written out on the f32 bit pattern, so they are the same on
// every host.
//
// Rounding rules (roundTo):
//   f32          round-to-nearest-even; beyond the range -> +-Inf.
//   f16, bf16    round to f32 FIRST, then to f16/bf16 with round-to-nearest-
//                even. The double rounding is deliberate: PyTorch and the GPU
//                compute in f32 and round that. Overflow -> +-Inf, NaN stays
//                NaN, subnormals are kept.
//   f8e4m3       the "fn" variant (no Inf, max 448, NaN = S.1111.111) and
//   f8e5m2       (IEEE-like, max 57344): via f32, round-to-nearest-even,
//                SATURATING like PTX's cvt.rn.satfinite: finite values beyond
//                the max and +-Inf become +-max; NaN stays NaN.
//   i32, i64     truncation toward zero, clamped to the range; NaN -> 0 (as
//                PTX's cvt.rzi.sat). i64 values are held in a double, so they
//                are exact up to 2^53 only.
//   bool         v != 0 ? 1 : 0 (NaN is true).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_FLOAT_H
#define KGEN_DSL_FLOAT_H

#include "dsl/DType.h"

#include <cstdint>

namespace kgen {

/// The value v becomes when rounded to t (see the rules above).
double roundTo(DType t, double v);

/// roundTo(t, v) for a float dtype t and a value that is already an f32:
/// the same result, without a double's range checks.
double roundFloat(DType t, float v);

/// Writes roundTo(t, v) in t's bit layout (little endian, sizeInBytes(t)
/// bytes; bool is one byte 0 or 1).
void encode(DType t, double v, void *dst);
/// Reads a value of t's bit layout. Exact: every value of t is a double.
double decode(DType t, const void *src);

/// decode() of n values `stride` elements apart, from src; and encode() of
/// n values into dst, `stride` elements apart. The same values, one dtype
/// dispatch for the run (the interpreter's loads and stores).
void decodeRun(DType t, const void *src, int64_t stride, int64_t n,
               double *out);
void encodeRun(DType t, const double *v, int64_t n, void *dst, int64_t stride);

/// The spacing of t's values at |v|: the distance from |v|'s binade bottom
/// to the next value (for |v| below the smallest normal, the subnormal
/// spacing; beyond the largest finite value, the spacing of the top binade).
/// Integers: 1. NaN gives NaN.
double ulp(DType t, double v);

// Raw conversions from f32 (round-to-nearest-even; NaN -> a quiet NaN of the
// same sign). f16/bf16 overflow to +-Inf; fp8 saturates to +-max (satfinite).
uint16_t f32ToBf16Bits(float f);
float bf16BitsToF32(uint16_t bits);
uint16_t f32ToF16Bits(float f);
float f16BitsToF32(uint16_t bits);
uint8_t f32ToF8E4M3Bits(float f);
float f8E4M3BitsToF32(uint8_t bits);
uint8_t f32ToF8E5M2Bits(float f);
float f8E5M2BitsToF32(uint8_t bits);

} // namespace kgen

#endif // KGEN_DSL_FLOAT_H
