// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
//
// Loads after the reductions (weights) of a held row whose last chunk is
// masked (threads chosen at launch): with one such load, the masked chunk's
// is issued before the first store, not behind its own store's branch; with
// two, each chunk's come with its store (their registers cost a block an SM).

// CHECK-LABEL: gpu.func @one_late(
// CHECK: gpu.barrier
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: llvm.store
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: llvm.store {{.*}} : vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: scf.if
// CHECK: llvm.store {{.*}} : vector<4xf32>
// CHECK: gpu.return
kgen.kernel @one_late(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                      %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                      %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"},
                      %n: index {kgen.divisibility = 16 : i64, kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 512, rowsPerBlock = 1, chunks = 2, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<?xf32>
  %sq = arith.mulf %a, %a : tensor<?xf32>
  %s = kgen.reduce sum %sq : tensor<?xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<?xf32>
  %o = arith.mulf %a, %bs : tensor<?xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<?xf32>
  %r = arith.mulf %wv, %o : tensor<?xf32>
  kgen.store %r, %y[%c0] {vector_width = 4 : i64} : tensor<?xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @two_late(
// CHECK: gpu.barrier
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: llvm.store
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: llvm.store {{.*}} : vector<4xf32>
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: llvm.store
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: llvm.store {{.*}} : vector<4xf32>
// CHECK: gpu.return
kgen.kernel @two_late(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                      %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                      %b: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "b"},
                      %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"},
                      %n: index {kgen.divisibility = 16 : i64, kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 512, rowsPerBlock = 1, chunks = 2, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<?xf32>
  %sq = arith.mulf %a, %a : tensor<?xf32>
  %s = kgen.reduce sum %sq : tensor<?xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<?xf32>
  %o = arith.mulf %a, %bs : tensor<?xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<?xf32>
  %bv = kgen.load %b[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<?xf32>
  %m = arith.mulf %wv, %o : tensor<?xf32>
  %r = arith.addf %m, %bv : tensor<?xf32>
  kgen.store %r, %y[%c0] {vector_width = 4 : i64} : tensor<?xf32>, !kgen.rows<f32>
  kgen.return
}
