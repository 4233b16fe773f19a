// RUN: kgen-opt %s -split-input-file --kgen-occupancy="streaming-resident-threads=1536 streaming-one-row-resident-threads=2048" | FileCheck %s
// RUN: kgen-opt %s -split-input-file --kgen-occupancy | FileCheck %s --check-prefix=OFF
// RUN: kgen-opt %s -split-input-file --kgen-occupancy=streaming-resident-threads=1536 | FileCheck %s --check-prefix=ANYROWS
//
// A kernel without reductions or row maps holds one chunk of each row it
// loads a trip: its cap keeps streaming-resident-threads an SM (65536 / 1536
// = 42, in whole 8-register steps: 40), streaming-one-row-resident-threads
// where it loads one view (65536 / 2048 = 32). Without the options the held
// row's rules decide (here 64).

// One view loaded twice (x used in two places) is one row.
// CHECK-LABEL: kgen.kernel @one_row(
// CHECK-SAME: maxRegisters = 32>
// OFF-LABEL: kgen.kernel @one_row(
// OFF-SAME: maxRegisters = 64>
// ANYROWS-LABEL: kgen.kernel @one_row(
// ANYROWS-SAME: maxRegisters = 40>
kgen.kernel @one_row(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                     %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = exact, length = 4096, priority = 1>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 2>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %c0_1 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %b = kgen.load %x[%c0_1] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %m = arith.mulf %a, %b : tensor<4096xbf16>
  kgen.store %m, %y[%c0] {vector_width = 8 : i64} : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Two halves of x (gate and up) are two rows.
// CHECK-LABEL: kgen.kernel @two_rows(
// CHECK-SAME: maxRegisters = 40>
kgen.kernel @two_rows(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {d = 4096 : i64}, kgen.variant = #kgen.variant<kind = exact, length = 4096, priority = 1>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 2>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %up = kgen.load %x[%n] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %gate = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %m = arith.mulf %gate, %up : tensor<4096xbf16>
  kgen.store %m, %y[%c0] {vector_width = 8 : i64} : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A reduction holds its row: the held rules decide.
// CHECK-LABEL: kgen.kernel @reduces(
// CHECK-SAME: maxRegisters = 64>
kgen.kernel @reduces(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                     %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 2, reread = false>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %s = kgen.reduce sum %f : tensor<4096xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<4096xf32>
  %o = arith.subf %f, %b : tensor<4096xf32>
  %t = arith.truncf %o : tensor<4096xf32> to tensor<4096xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// The element-wise fallback needs an address per element: all it may take.
// CHECK-LABEL: kgen.kernel @any_kind(
// CHECK-SAME: maxRegisters = 255>
kgen.kernel @any_kind(%x: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "y"},
                      %d: index {kgen.divisibility = 1 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = any, priority = 7>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 1 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %m = arith.mulf %v, %v : tensor<?xbf16>
  kgen.store %m, %y[%c0] {vector_width = 1 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
