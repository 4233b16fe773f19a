// RUN: kgen-opt %s --kgen-vectorize | FileCheck %s
//
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
