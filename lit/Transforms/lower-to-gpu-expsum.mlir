// RUN: kgen-opt %s --kgen-occupancy --kgen-lower-to-gpu --canonicalize | FileCheck %s

// A max and an expsum of the same row, 2048 f32 held over 128 threads x 4
// chunks: each thread's max and sum of exp(x - its max) (shifted by 0 when
// its max is -inf: all its elements masked logits), then pairs merged
// by rescaling (an exponential with the op's flags per merge). The max takes
// the expsum's: 5 shuffle steps of two values, both written to shared
// memory, one barrier, the 4 warps' pairs merged by every thread.
// CHECK-LABEL: gpu.func @softmax(
// CHECK-SAME: workgroup(%[[SMEM:.+]] : memref<12xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[TOP:.+]] = vector.reduction <maximumf>
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[TOP]], %{{.+}} : f32
// CHECK: %[[SHIFT:.+]] = arith.select %[[NONE]], %{{.+}}, %[[TOP]] : f32
// CHECK: vector.broadcast %[[SHIFT]]
// CHECK: math.exp %{{.+}} fastmath<afn> : vector<4xf32>
// CHECK: vector.reduction <add>
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: math.exp %{{.+}} fastmath<afn> : f32
// CHECK: scf.if
// CHECK-COUNT-2: memref.store %{{.+}}, %[[SMEM]]
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SMEM]]
// CHECK-NOT: memref.load
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
kgen.kernel @softmax(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                     %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<2048xf32>
  %m = kgen.reduce max %a : tensor<2048xf32> -> f32
  %s = kgen.reduce expsum %a {kgen.exp_fastmath = #arith.fastmath<afn>} : tensor<2048xf32> -> f32
  %q = arith.addf %m, %s : f32
  %b = kgen.broadcast %q : f32 -> tensor<2048xf32>
  %o = arith.mulf %a, %b : tensor<2048xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<2048xf32>, !kgen.rows<f32>
  kgen.return
}
