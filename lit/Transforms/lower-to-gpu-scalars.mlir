// RUN: kgen-opt %s --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
//
// The per-row scalar is one element at row r: a load through the raw
// pointer, offset by the (clamped) row index, not by a row stride.
// CHECK-LABEL: gpu.func @scale_rows(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %[[S:[a-z0-9]+]]: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64) kernel
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:s", "ptr:y", "stride:x", "stride:y", "rows"]
// CHECK: %[[ROW:.+]] = arith.minsi
// The row's element pointer is computed once, in the prologue.
// CHECK: %[[P:.+]] = llvm.getelementptr %[[S]][%[[ROW]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[V:.+]] = llvm.load %[[P]] invariant {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: vector.broadcast %[[V]] : f32 to vector<4xf32>
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
kgen.kernel @scale_rows(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                        %s: !kgen.scalars<f32> {kgen.align = 4 : i64, kgen.name = "s"},
                        %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<64xf32>
  %sv = kgen.load %s : !kgen.scalars<f32> -> f32
  %b = kgen.broadcast %sv : f32 -> tensor<64xf32>
  %o = arith.mulf %a, %b : tensor<64xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// A row split into tiles: block b works on tile b % tiles of rows group
// b / tiles (consecutive blocks, neighbouring memory); chunk j of tile t starts at
// element ((t * chunks + j) * threads_per_row + lane) * vector, and only
// tile 0 writes the per-row scalar. 24 elements in 2 tiles of 2 chunks of 4
// by 2 threads: 32 slots, so the chunks need masks.
// CHECK-LABEL: gpu.func @tiled(
// CHECK: %[[BID:.+]] = gpu.block_id x
// CHECK: %[[TILE:.+]] = arith.remui %[[BID]], %{{.+}} : index
// CHECK: %[[T2:.+]] = arith.muli %[[TILE]], %{{.+}} : index
// CHECK: arith.addi %[[T2]], %{{.+}} : index
// CHECK: scf.if
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TILE]], %{{.+}} : index
// CHECK: %[[ONE:.+]] = arith.andi %{{.+}}, %[[FIRST]] : i1
// CHECK: scf.if %[[ONE]] {
// CHECK-NEXT: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
kgen.kernel @tiled(%x: !kgen.rows<f32> {kgen.name = "x", kgen.align = 16 : i64},
                   %s: !kgen.scalars<f32> {kgen.name = "s"},
                   %y: !kgen.rows<f32> {kgen.name = "y", kgen.align = 16 : i64},
                   %t: !kgen.scalars<f32> {kgen.name = "t"})
    attributes {dims = {n = 24 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 2, rowsPerBlock = 128, chunks = 2, reread = false, tiles = 2>} {
  %n = arith.constant 24 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<24xf32>
  %sv = kgen.load %s : !kgen.scalars<f32> -> f32
  %b = kgen.broadcast %sv : f32 -> tensor<24xf32>
  %o = arith.mulf %a, %b : tensor<24xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<24xf32>, !kgen.rows<f32>
  %d = arith.addf %sv, %sv : f32
  kgen.store %d, %t : f32, !kgen.scalars<f32>
  kgen.return
}
