// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-lower-to-gpu
// Schedules kgen-lower-to-gpu cannot lower as they stand.

// Rows held over threads chosen at launch must be a whole number of chunks.
// expected-error@+1 {{'kgen.kernel' op holds rows over threads chosen at launch but its row length is not known to be a whole number of 8-element chunks (a kgen.divisibility of the dims)}}
kgen.kernel @held_ragged(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                         %d: index {kgen.divisibility = 4 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 2, reread = false, launchThreads = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.store %a, %x[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
