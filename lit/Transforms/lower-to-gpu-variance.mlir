// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu --canonicalize | FileCheck %s

// A sum and a sqdev of the same row, 2048 f32 held over 128 threads x 4
// chunks: every thread's count is known (16 elements), so the counts fold
// into constants: no division left, and only the sum and the squared
// deviations are shuffled (5 steps each) and written to shared memory. The
// sum reduction takes the sqdev's sum: no shuffle chain of its own. One
// barrier; each thread merges the 4 warps' pairs.
// CHECK-LABEL: gpu.func @held(
// CHECK-SAME: workgroup(%[[SMEM:.+]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: arith.divf
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK-COUNT-2: memref.store %{{.+}}, %[[SMEM]]
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SMEM]]
// CHECK-NOT: memref.load
// CHECK-NOT: gpu.barrier
// CHECK-NOT: arith.divf
// CHECK: gpu.return
kgen.kernel @held(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                  %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<2048xf32>
  %s = kgen.reduce sum %a : tensor<2048xf32> -> f32
  %v = kgen.reduce sqdev %a : tensor<2048xf32> -> f32
  %q = arith.addf %s, %v : f32
  %b = kgen.broadcast %q : f32 -> tensor<2048xf32>
  %o = arith.mulf %a, %b : tensor<2048xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<2048xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// 2000 elements on the same schedule: a thread's last chunk may lie past
// the row's end, so the counts are computed, shuffled and written too, and
// the merges divide by them (approximate reciprocals: counts are whole).
// CHECK-LABEL: gpu.func @masked(
// CHECK: arith.divf %{{.+}}, %{{.+}} fastmath<afn> : f32
// CHECK-COUNT-15: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK-COUNT-3: memref.store
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK-COUNT-12: memref.load
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
kgen.kernel @masked(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                    %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2000 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 2000 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<2000xf32>
  %s = kgen.reduce sum %a : tensor<2000xf32> -> f32
  %v = kgen.reduce sqdev %a : tensor<2000xf32> -> f32
  %q = arith.addf %s, %v : f32
  %b = kgen.broadcast %q : f32 -> tensor<2000xf32>
  %o = arith.mulf %a, %b : tensor<2000xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<2000xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A re-read row of any length: the loop over the row's chunks carries the
// sqdev's count, sum and squared deviations as scalars (each chunk's merged
// in), then the one cross-thread step. The sum takes the sqdev's.
// CHECK-LABEL: gpu.func @reread(
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (f32, f32, f32)
// CHECK: arith.divf %{{.+}}, %{{.+}} fastmath<afn> : f32
// CHECK: scf.yield %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32
// CHECK-COUNT-15: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.for
// CHECK: gpu.return
kgen.kernel @reread(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                    %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"},
                    %n: index {kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<?xf32>
  %s = kgen.reduce sum %a : tensor<?xf32> -> f32
  %v = kgen.reduce sqdev %a : tensor<?xf32> -> f32
  %q = arith.addf %s, %v : f32
  %b = kgen.broadcast %q : f32 -> tensor<?xf32>
  %o = arith.mulf %a, %b : tensor<?xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<?xf32>, !kgen.rows<f32>
  kgen.return
}
