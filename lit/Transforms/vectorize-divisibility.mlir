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

// Heads padded inside a row start h * pitch elements in: a pitch known only
// to be even moves bf16 heads two at a time (4 bytes), while the unpadded
// length 8 alone would allow 8.
// CHECK-LABEL: kgen.kernel @pitch2(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 2 : i64}
kgen.kernel @pitch2(%q: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "q"},
                    %h: index {kgen.name = "h"},
                    %p: index {kgen.divisibility = 2 : i64, kgen.name = "p"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 1, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %c8 = arith.constant 8 : index
  kgen.domain %c8
  %c0 = arith.constant 0 : index
  %v = kgen.heads [%q] counts [%h] pitches [%p] length %c8
      : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %a = kgen.load %v[%c0] : !kgen.rows<bf16> -> tensor<8xbf16>
  kgen.return
}
