// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-vectorize
// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-lower-to-gpu
// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-occupancy
// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-prefetch
// kgen-vectorize, kgen-occupancy, kgen-prefetch and kgen-lower-to-gpu read the
// schedule: an unscheduled kernel is an error, not a silent default.

// expected-error@+1 {{'kgen.kernel' op needs a schedule; run kgen-schedule first}}
kgen.kernel @unscheduled(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"})
    attributes {dims = {n = 64 : i64}} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  kgen.store %a, %x[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// The first kernel is fine; the second one fails the pass.
kgen.kernel @scheduled(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false, maxRegisters = 64>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  kgen.store %a, %x[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}
// expected-error@+1 {{'kgen.kernel' op needs a schedule; run kgen-schedule first}}
kgen.kernel @dynamic_unscheduled(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                 %d: index {kgen.name = "d"})
    attributes {dims = {}} {
  kgen.domain %d
  kgen.return
}
