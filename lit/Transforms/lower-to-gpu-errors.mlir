// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-lower-to-gpu
// Schedules kgen-lower-to-gpu cannot lower as they stand.

// Rows held over threads chosen at launch must be a whole number of chunks.
// expected-error@+1 {{'kgen.kernel' op holds rows over threads chosen at launch but its row length is not known to be a whole number of 8-element chunks (a kgen.divisibility of the dims)}}
kgen.kernel @held_ragged(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                         %d: index {kgen.divisibility = 4 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 2, reread = false, launchThreads = true, maxRegisters = 128>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.store %a, %x[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// The register cap is kgen-occupancy's decision: without it, no guess.
// expected-error@+1 {{'kgen.kernel' op needs a register cap; run kgen-occupancy first}}
kgen.kernel @uncapped(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  kgen.store %a, %x[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A group of 128 f32 elements is 32 chunks of 4: more lanes than threads a
// row (16).
// expected-error@+1 {{'kgen.kernel' op groups of 128 elements need whole chunks of 4 elements over a power of two of lanes, at most 32, that divides the row's 16 threads}}
kgen.kernel @group_past_threads(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                                %s: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "s"})
    attributes {dims = {n = 256 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 4, reread = false, maxRegisters = 128>} {
  %n = arith.constant 256 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %t = kgen.group_reduce sum %a group 128 : tensor<256xf32>
  kgen.store %t, %s[%c0] {group = 128 : i64} : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}
