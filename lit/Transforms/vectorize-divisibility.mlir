// RUN: kgen-opt %s --kgen-vectorize | FileCheck %s
//
// XFAIL: *
// BUG: knownDivisor (codegen/Transforms/Vectorize.cpp) returns a dim's
// kgen.divisibility as is, although its callers treat it as a power of two:
// for arith.addi it takes the min of the operands' divisors, which is only a
// common divisor when both are powers of two. With d a multiple of 12 it
// claims d + 8 is a multiple of 8, so a bf16 load at d + 8 gets
// vector_width = 8 (16-byte accesses) while d = 12 puts it at element 20,
// byte 40: only 8-byte aligned. The pipeline itself only emits
// kgen.divisibility 16 or 1, so this needs hand-written IR (nothing rejects
// the attribute). Fix: return the largest power of two dividing the
// attribute (1 << countr_zero(d)). Remove the XFAIL then.

// d is a multiple of 4 (the power-of-two part of 12); d + 8 too: 8 bytes.
// CHECK-LABEL: kgen.kernel @div12(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 4 : i64}
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 4 : i64}
kgen.kernel @div12(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                   %d: index {kgen.divisibility = 12 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d
  %a = kgen.load %x[%d] : !kgen.rows<bf16> -> tensor<?xbf16>
  %c8 = arith.constant 8 : index
  %s = arith.addi %d, %c8 : index
  %b = kgen.load %x[%s] : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.return
}
