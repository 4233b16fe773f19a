// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
//
// Where a held row's stores go: each as soon as the reductions its value
// needs are done, so that what it was computed from need not stay live across
// the barriers; all after the last reduction when a tensor written is also
// loaded after the start (that load must see the input).

// fused_add_rmsnorm's shape: the sum r = x + res is written back into res
// before the reduction; y needs the reduction and comes after it.
// CHECK-LABEL: gpu.func @early(
// CHECK: llvm.load
// CHECK: llvm.load
// CHECK: llvm.store {{.*}} : vector<8xbf16>
// CHECK: gpu.shuffle
// CHECK: gpu.barrier
// CHECK: llvm.store {{.*}} : vector<8xbf16>
kgen.kernel @early(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                   %res: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "res"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %b = kgen.load %res[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %r = arith.addf %a, %b : tensor<2048xbf16>
  %f = arith.extf %r : tensor<2048xbf16> to tensor<2048xf32>
  %s = kgen.reduce sum %f : tensor<2048xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<2048xf32>
  %o = arith.mulf %f, %bs : tensor<2048xf32>
  %y = arith.truncf %o : tensor<2048xf32> to tensor<2048xbf16>
  kgen.store %r, %res[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.store %y, %x[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// x is written in place without the reduction, but y reads x after it (a
// load not held): both stores wait for the reduction.
// CHECK-LABEL: gpu.func @late_load(
// CHECK: gpu.shuffle
// CHECK: gpu.barrier
// CHECK: llvm.load
// CHECK: llvm.store {{.*}} : vector<8xbf16>
// CHECK: llvm.store {{.*}} : vector<8xbf16>
kgen.kernel @late_load(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                       %z: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "z"},
                       %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %zv = kgen.load %z[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %zf = arith.extf %zv : tensor<2048xbf16> to tensor<2048xf32>
  %s = kgen.reduce sum %zf : tensor<2048xf32> -> f32
  %xv = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %xx = arith.addf %xv, %xv : tensor<2048xbf16>
  %xf = arith.extf %xv : tensor<2048xbf16> to tensor<2048xf32>
  %bs = kgen.broadcast %s : f32 -> tensor<2048xf32>
  %o = arith.mulf %xf, %bs : tensor<2048xf32>
  %yv = arith.truncf %o : tensor<2048xf32> to tensor<2048xbf16>
  kgen.store %xx, %x[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.store %yv, %y[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// FlashInfer's fused add: the f32 sum is formed again after the reduction
// from second loads of x and res. Those loads come before either store: the
// row is read before it is written, whatever order the stores take.
// CHECK-LABEL: gpu.func @reload(
// CHECK: gpu.barrier
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK: llvm.store {{.*}} : vector<8xbf16>
// CHECK: llvm.store {{.*}} : vector<8xbf16>
kgen.kernel @reload(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                    %res: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "res"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %b = kgen.load %res[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %af = arith.extf %a : tensor<2048xbf16> to tensor<2048xf32>
  %bf = arith.extf %b : tensor<2048xbf16> to tensor<2048xf32>
  %sum = arith.addf %af, %bf : tensor<2048xf32>
  %r = arith.truncf %sum : tensor<2048xf32> to tensor<2048xbf16>
  %sq = arith.mulf %sum, %sum : tensor<2048xf32>
  %s = kgen.reduce sum %sq : tensor<2048xf32> -> f32
  %a2 = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %b2 = kgen.load %res[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %a2f = arith.extf %a2 : tensor<2048xbf16> to tensor<2048xf32>
  %b2f = arith.extf %b2 : tensor<2048xbf16> to tensor<2048xf32>
  %again = arith.addf %a2f, %b2f : tensor<2048xf32>
  %bs = kgen.broadcast %s : f32 -> tensor<2048xf32>
  %o = arith.mulf %again, %bs : tensor<2048xf32>
  %y = arith.truncf %o : tensor<2048xf32> to tensor<2048xbf16>
  kgen.store %r, %res[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.store %y, %x[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.return
}
