// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-prefetch="prefetch=true prefetch-ahead=true" --kgen-lower-to-gpu | FileCheck %s
// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-prefetch=prefetch=true --kgen-lower-to-gpu | FileCheck %s --check-prefix=START
// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-prefetch --kgen-lower-to-gpu | FileCheck %s --check-prefix=OFF
// kgen-prefetch decides; the schedule shows it before any lowering.
// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-prefetch="prefetch=true prefetch-ahead=true" | FileCheck %s --check-prefix=PLAN
// PLAN-LABEL: kgen.kernel @held(
// PLAN-SAME: prefetchBlocks = 256, prefetchFirst = true, prefetchAhead = true>
// PLAN-LABEL: kgen.kernel @lines(
// PLAN-SAME: prefetchBlocks = 256, prefetchLines = true, prefetchAhead = true>
// PLAN-LABEL: kgen.kernel @two_rows(
// PLAN-SAME: maxRegisters = 128, prefetchAhead = true>
// PLAN-LABEL: kgen.kernel @many_rows(
// PLAN-SAME: maxRegisters = 64, prefetchAhead = true>
// PLAN-LABEL: kgen.kernel @narrow_store(
// PLAN-SAME: prefetchBlocks = 256, prefetchFirst = true>
//
// With `prefetch`, a held row's lines go to L2 before its first load, in
// the first 256 blocks of a grid (in a kernel that writes a row it loads,
// in grids of at most 256 blocks): each thread prefetches its chunks of the
// rows it reads (rows of 8 chunks a thread: the row's lines, split over its
// threads), and row 0's threads the weight's (every row reads it).
// A gathered row's address needs its index, a load, so it is not
// prefetched, and the index is loaded after the other rows' prefetches.
// Once the held rows' loads are issued, a row that reduces has each thread
// prefetch its lines of the row 6 MiB of row inputs ahead (a later block's),
// in grids of more than 1024 rows (with prefetch-ahead only). Without the
// options, none.

// OFF-NOT: nvvm.prefetch
// START-LABEL: gpu.func @held(
// START: nvvm.prefetch
// START-NOT: %c6291456_i64
// START: gpu.return
// CHECK-LABEL: gpu.func @held(
// CHECK: %[[FEW:.+]] = arith.cmpi ult, %block_id_x{{.*}}, %c256{{.*}} : index
// CHECK: scf.if %[[FEW]] {
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i64
// CHECK: scf.if %[[FIRST]] {
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK-COUNT-2: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: nvvm.prefetch
// CHECK: %[[QUOT:.+]] = arith.divui %c6291456_i64, %{{.+}} : i64
// CHECK: %[[DIST:.+]] = arith.maxsi %{{.+}}, %[[QUOT]] : i64
// CHECK: %[[AHEAD:.+]] = arith.addi %{{.+}}, %[[DIST]] : i64
// CHECK: %[[BEFORE:.+]] = arith.cmpi slt, %[[AHEAD]], %arg5 : i64
// CHECK: %[[MANY:.+]] = arith.cmpi sgt, %arg5, %c1024_i64 : i64
// CHECK: %[[BOTH:.+]] = arith.andi %[[MANY]], %[[BEFORE]] : i1
// CHECK: scf.if %[[BOTH]] {
// CHECK: %[[AT:.+]] = arith.muli %[[DIST]], %arg3 : i64
// CHECK: llvm.getelementptr %{{.+}}[%[[AT]]]
// CHECK-COUNT-1: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
kgen.kernel @held(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                  %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                  %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 2, reread = false>} {
  %c256 = arith.constant 256 : index
  kgen.domain %c256
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %sq = arith.mulf %a, %a : tensor<256xf32>
  %s = kgen.reduce sum %sq : tensor<256xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<256xf32>
  %o = arith.mulf %a, %bs : tensor<256xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<256xf32>
  %r = arith.mulf %wv, %o : tensor<256xf32>
  kgen.store %r, %y[%c0] {vector_width = 4 : i64} : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @gathered(
// CHECK-NOT: llvm.load
// CHECK: scf.if
// CHECK-COUNT-1: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: llvm.load {{.*}} -> i64
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
kgen.kernel @gathered(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                      %p: !kgen.scalars<i64> {kgen.name = "positions"},
                      %t: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "table"},
                      %rows: index {kgen.name = "rows"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %c0 = arith.constant 0 : index
  %cs = kgen.gather %t[%p] rows %rows : !kgen.rows<f32>, !kgen.scalars<i64>
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %c = kgen.load %cs[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %o = arith.mulf %a, %c : tensor<4xf32>
  kgen.store %o, %x[%c0] {vector_width = 4 : i64} : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A row of 8 chunks a thread: each thread prefetches one line (32 f32) of
// the row and, in row 0, of the weight, where it lies in the row; only in
// grids of at most 256 blocks (it spilled in the first blocks of any grid).
// CHECK-LABEL: gpu.func @lines(
// CHECK: %[[FEW:.+]] = arith.cmpi ule, %grid_dim_x{{.*}}, %c256{{.*}} : index
// CHECK: scf.if %[[FEW]] {
// CHECK: %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %{{.+}} : index
// CHECK: scf.if %[[IN]] {
// CHECK-COUNT-1: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i64
// CHECK: scf.if %[[FIRST]] {
// CHECK: scf.if %{{.+}} {
// CHECK-COUNT-1: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: llvm.load {{.*}} -> vector<4xf32>
kgen.kernel @lines(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                   %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                   %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %c1024 = arith.constant 1024 : index
  kgen.domain %c1024
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<1024xf32>
  %sq = arith.mulf %a, %a : tensor<1024xf32>
  %s = kgen.reduce sum %sq : tensor<1024xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<1024xf32>
  %o = arith.mulf %a, %bs : tensor<1024xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<1024xf32>
  %r = arith.mulf %wv, %o : tensor<1024xf32>
  kgen.store %r, %y[%c0] {vector_width = 4 : i64} : tensor<1024xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// Two rows of 8 chunks a thread (fused_add_rmsnorm's x and residual) are
// not prefetched at the start (measured slower); a later block's are, one
// line a thread of each, 6 MiB ahead over both.
// CHECK-LABEL: gpu.func @two_rows(
// CHECK-NOT: nvvm.prefetch
// CHECK-COUNT-16: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: nvvm.prefetch
// CHECK: %[[PERROW:.+]] = arith.muli %c1024{{.*}}, %c8{{.*}} : index
// CHECK: arith.cmpi sgt, %arg6, %c1024_i64 : i64
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.+}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
kgen.kernel @two_rows(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                      %z: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "z"},
                      %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %c1024 = arith.constant 1024 : index
  kgen.domain %c1024
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<1024xf32>
  %b = kgen.load %z[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<1024xf32>
  %t = arith.addf %a, %b : tensor<1024xf32>
  %sq = arith.mulf %t, %t : tensor<1024xf32>
  %s = kgen.reduce sum %sq : tensor<1024xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<1024xf32>
  %o = arith.mulf %t, %bs : tensor<1024xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<1024xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A variant launched from 8192 rows only (a rows variant's minRows), 8 rows a block:
// at least 1024 blocks, so no prefetch at the start, in place or not
// (measured no better, and it spilled); only a later block's row. With 2048
// rows, 256 blocks (the next case, in place): it keeps the branch, on the
// grid's size.
// CHECK-LABEL: gpu.func @many_rows(
// CHECK-NOT: nvvm.prefetch
// CHECK: llvm.load
// CHECK-NOT: nvvm.prefetch
// CHECK: arith.cmpi sgt, %{{.+}}, %c1024_i64 : i64
// CHECK-COUNT-1: nvvm.prefetch
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @many_rows_in_place(
// CHECK-NOT: nvvm.prefetch
// CHECK: llvm.load
// CHECK-NOT: nvvm.prefetch
// CHECK: arith.cmpi sgt, %{{.+}}, %c1024_i64 : i64
// CHECK-COUNT-1: nvvm.prefetch
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @many_rows_2048(
// CHECK: arith.cmpi ule, %grid_dim_x{{.*}}, %c256{{.*}} : index
// CHECK: nvvm.prefetch
kgen.kernel @many_rows(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                       %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 8, chunks = 2, reread = false>} {
  %c256 = arith.constant 256 : index
  kgen.domain %c256
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %s = kgen.reduce sum %a : tensor<256xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<256xf32>
  %o = arith.mulf %a, %bs : tensor<256xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}
kgen.kernel @many_rows_in_place(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 8, chunks = 2, reread = false>} {
  %c256 = arith.constant 256 : index
  kgen.domain %c256
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %s = kgen.reduce sum %a : tensor<256xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<256xf32>
  %o = arith.mulf %a, %bs : tensor<256xf32>
  kgen.store %o, %x[%c0] {vector_width = 4 : i64} : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}
kgen.kernel @many_rows_2048(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = rows, minRows = 2048>, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 8, chunks = 2, reread = false>} {
  %c256 = arith.constant 256 : index
  kgen.domain %c256
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %s = kgen.reduce sum %a : tensor<256xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<256xf32>
  %o = arith.mulf %a, %bs : tensor<256xf32>
  kgen.store %o, %x[%c0] {vector_width = 4 : i64} : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A row stored narrower than it is loaded (an fp8 or f16 output of f32
// rows) gets no later block's row: measured slower (rmsnorm_quant).
// CHECK-LABEL: gpu.func @narrow_store(
// CHECK-NOT: arith.cmpi sgt, %{{.+}}, %c1024_i64
// CHECK: gpu.return
kgen.kernel @narrow_store(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                          %y: !kgen.rows<f16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 2, reread = false>} {
  %c256 = arith.constant 256 : index
  kgen.domain %c256
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %s = kgen.reduce sum %a : tensor<256xf32> -> f32
  %bs = kgen.broadcast %s : f32 -> tensor<256xf32>
  %o = arith.mulf %a, %bs : tensor<256xf32>
  %h = arith.truncf %o : tensor<256xf32> to tensor<256xf16>
  kgen.store %h, %y[%c0] {vector_width = 4 : i64} : tensor<256xf16>, !kgen.rows<f16>
  kgen.return
}

// -----

// A row that does not reduce (silu_and_mul) gets no later block's row:
// those kernels already run at memcpy's speed.
// CHECK-LABEL: gpu.func @elementwise(
// CHECK-NOT: arith.cmpi sgt, %{{.+}}, %c1024_i64
// CHECK: gpu.return
kgen.kernel @elementwise(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                         %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 2, reread = false>} {
  %c256 = arith.constant 256 : index
  kgen.domain %c256
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<256xf32>
  %o = arith.mulf %a, %a : tensor<256xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}
