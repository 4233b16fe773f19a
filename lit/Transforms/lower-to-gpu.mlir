// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
// The lowered IR is valid input again (the gpu, llvm, scf, vector and memref
// ops it makes all verify and print back).
// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | kgen-opt -split-input-file | FileCheck %s
// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s --check-prefix=NORM

// A copy of a 64-element bf16 row, 16-byte aligned: 8 threads per row, one
// full chunk of 8 each, 32 rows per block.
//
// The module becomes a GPU container; each kgen.kernel becomes a gpu.func
// kernel in gpu.module @kgen with its parameters recorded in kgen.abi:
// pointers, then row strides of the !kgen.rows tensors, then the row count.
// CHECK: module attributes {gpu.container_module}
// CHECK-NEXT: gpu.module @kgen {
// No reduction: no workgroup memory between the parameters and `kernel`.
// CHECK-NEXT: gpu.func @copy(%{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64, %[[ROWS:[a-z0-9]+]]: i64) kernel
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:y", "stride:x", "stride:y", "rows"]
// At most 32 rows a block (256 threads); the launch may give fewer, so the
// block's first row is block_id x (block_dim / 8).
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[BID:.+]] = gpu.block_id x
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK-NEXT: arith.remui %[[TID]], %[[C8]] : index
// CHECK-NEXT: %[[RIB:.+]] = arith.divui %[[TID]], %[[C8]] : index
// CHECK-NEXT: %[[BDIM:.+]] = gpu.block_dim x
// CHECK-NEXT: %[[RPB:.+]] = arith.divui %[[BDIM]], %[[C8]] : index
// CHECK-NEXT: %[[FIRST:.+]] = arith.muli %[[BID]], %[[RPB]] : index
// CHECK-NEXT: arith.addi %[[FIRST]], %[[RIB]] : index
// Rows past the end are clamped (min) and write nothing (slt).
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %{{.+}}, %[[ROWS]] : i64
// CHECK: arith.minsi
// The known-full chunk: one 16-byte load of vector<8xbf16>, read-only (x is
// never written: invariant), with no tail test.
// CHECK-NOT: scf.if
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NEXT: scf.if %[[VALID]] {
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK-NOT: kgen.kernel
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
kgen.kernel @copy(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                  %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, kgen.variant = #kgen.variant<kind = vec>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<64xbf16>
  kgen.store %a, %y[%c0] {vector_width = 8 : i64} : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// The ABI groups parameters by kind whatever the argument order: pointers
// (every tensor), strides (!kgen.rows only), scalars and dims in argument
// order (dims as i64), then rows.
// CHECK-LABEL: gpu.func @abi(
// CHECK-SAME: %[[X:[a-z0-9]+]]: !llvm.ptr<1>, %[[W:[a-z0-9]+]]: !llvm.ptr<1>, %[[Y:[a-z0-9]+]]: !llvm.ptr<1>, %[[SX:[a-z0-9]+]]: i64, %[[SY:[a-z0-9]+]]: i64, %[[EPS:[a-z0-9]+]]: f32, %[[D:[a-z0-9]+]]: i64, %[[K:[a-z0-9]+]]: i32, %[[ROWS:[a-z0-9]+]]: i64) kernel
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:w", "ptr:y", "stride:x", "stride:y", "scalar:eps", "dim:d", "scalar:k", "rows"]
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK: arith.cmpi slt, %{{.+}}, %[[ROWS]] : i64
// CHECK: %[[ROW:.+]] = arith.minsi
// Each !kgen.rows pointer is moved to this thread's row with its own stride.
// CHECK-NEXT: %[[OX:.+]] = arith.muli %[[ROW]], %[[SX]] : i64
// CHECK-NEXT: %[[XROW:.+]] = llvm.getelementptr %[[X]][%[[OX]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// The dim becomes the row length.
// CHECK-NEXT: arith.index_cast %[[D]] : i64 to index
// CHECK-NEXT: %[[OY:.+]] = arith.muli %[[ROW]], %[[SY]] : i64
// CHECK-NEXT: %[[YROW:.+]] = llvm.getelementptr %[[Y]][%[[OY]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// The per-row scalar math is emitted once, before the loop.
// CHECK: %[[KF:.+]] = arith.sitofp %[[K]] : i32 to f32
// CHECK-NEXT: arith.mulf %[[EPS]], %[[KF]] : f32
// CHECK: scf.for
// CHECK: %[[PX:.+]] = llvm.getelementptr %[[XROW]][%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.load %[[PX]] invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// The !kgen.vector weight is shared by all rows: no row offset.
// CHECK: %[[PW:.+]] = llvm.getelementptr %[[W]][%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.load %[[PW]] invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[PY:.+]] = llvm.getelementptr %[[YROW]][%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.store %{{.+}}, %[[PY]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
kgen.kernel @abi(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                 %eps: f32 {kgen.name = "eps"},
                 %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                 %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"},
                 %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"},
                 %k: i32 {kgen.name = "k"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 4, chunks = 0, reread = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %kf = arith.sitofp %k : i32 to f32
  %u = arith.mulf %eps, %kf : f32
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<?xf32>
  %b = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<?xf32>
  %ub = kgen.broadcast %u : f32 -> tensor<?xf32>
  %p = arith.mulf %a, %b : tensor<?xf32>
  %q = arith.addf %p, %ub : tensor<?xf32>
  kgen.store %q, %y[%c0] {vector_width = 4 : i64} : tensor<?xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// vector_width below the chunk: four 4-byte loads of vector<2xbf16> per
// chunk of 8, and eight 2-byte scalar stores.
// CHECK-LABEL: gpu.func @pieces(
// CHECK-COUNT-4: llvm.load %{{.+}} invariant {alignment = 4 : i64} : !llvm.ptr<1> -> vector<2xbf16>
// CHECK-NOT: llvm.load
// CHECK: scf.if
// CHECK-COUNT-8: llvm.store %{{.+}}, %{{.+}} {alignment = 2 : i64} : bf16, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
kgen.kernel @pieces(%x: !kgen.rows<bf16> {kgen.align = 4 : i64, kgen.name = "x"},
                    %y: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 2 : i64} : !kgen.rows<bf16> -> tensor<64xbf16>
  kgen.store %a, %y[%c0] {vector_width = 1 : i64} : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// An in-place update: a tensor that is also written is not loaded as
// invariant (no ld.global.nc).
// CHECK-LABEL: gpu.func @inplace(
// CHECK: llvm.load %{{[^ ]+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store
kgen.kernel @inplace(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<64xf32>
  %b = arith.mulf %a, %a : tensor<64xf32>
  kgen.store %b, %x[%c0] {vector_width = 4 : i64} : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// 100 elements in chunks of 8 over 16 threads: chunk 0 of some threads
// crosses the end of the row. Full chunks keep the 16-byte access; the others
// take a per-element path that never touches memory past the row.
// CHECK-LABEL: gpu.func @tail(
// CHECK: %[[C100:.+]] = arith.constant 100 : index
// CHECK: %[[FULL:.+]] = arith.cmpi ule, %{{.+}}, %[[C100]] : index
// CHECK: scf.if %[[FULL]] -> (vector<8xbf16>) {
// CHECK-NEXT: arith.constant 0 : index
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: } else {
// CHECK-COUNT-8: llvm.load %{{.+}} invariant {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// CHECK: scf.if %[[FULL]] {
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: } else {
// CHECK-COUNT-8: llvm.store %{{.+}}, %{{.+}} {alignment = 2 : i64} : bf16, !llvm.ptr<1>
kgen.kernel @tail(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                  %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 100 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>} {
  %n = arith.constant 100 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<100xbf16>
  kgen.store %a, %y[%c0] {vector_width = 8 : i64} : tensor<100xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A re-read row of 4096 = 2 steps of 256 threads x 8: every chunk of the
// rolled loops is whole, so they take the 16-byte access with no mask, and
// there is no loop for a last partial step.
// CHECK-LABEL: gpu.func @rolled_whole(
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: scf.for
// CHECK-NOT: arith.cmpi ule
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: scf.for
// CHECK: gpu.return
kgen.kernel @rolled_whole(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                          %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %a : tensor<4096xbf16> to tensor<4096xf32>
  %r = kgen.reduce sum %f : tensor<4096xf32> -> f32
  %b = kgen.broadcast %r : f32 -> tensor<4096xf32>
  %m = arith.mulf %f, %b : tensor<4096xf32>
  %t = arith.truncf %m : tensor<4096xf32> to tensor<4096xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A re-read row whose loops ptxas would unroll whole: 16 trips of two f32
// loads are 128 words, over half the 64 registers of 1024 threads. Each
// trip takes the 4 chunks (32 words) that fit, loads first, and the loop
// stays rolled (unroll disabled); the last loop loads three rows, 2 a trip.
// CHECK: #[[ROLLED:.+]] = #llvm.loop_unroll<disable = true>
// CHECK-LABEL: gpu.func @rolled_in_flight(
// CHECK-SAME: nvvm.maxnreg = 64 : i32
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C4]]
// CHECK-COUNT-8: llvm.load {{.+}} -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: arith.addf
// CHECK: } {loop_annotation = #{{.+}}}
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C2]]
// CHECK-COUNT-6: llvm.load
// CHECK-NOT: llvm.load
// CHECK: } {loop_annotation = #{{.+}}}
kgen.kernel @rolled_in_flight(
    %x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
    %r: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "r"},
    %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
    %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 65536 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 16, reread = true>} {
  %n = arith.constant 65536 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<65536xf32>
  %c = kgen.load %r[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<65536xf32>
  %f = arith.addf %a, %c : tensor<65536xf32>
  %q = arith.mulf %f, %f : tensor<65536xf32>
  %s = kgen.reduce sum %q : tensor<65536xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<65536xf32>
  %m = arith.mulf %f, %b : tensor<65536xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<65536xf32>
  %o = arith.mulf %m, %wv : tensor<65536xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<65536xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A row that fits one warp (8 threads): the reduction is a butterfly of
// gpu.shuffle xor over offsets 4, 2, 1, with no shared memory or barrier.
// The per-row result goes to a !kgen.scalars tensor from lane 0 only.
// CHECK-LABEL: gpu.func @warp_sum(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64) kernel
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:s", "stride:x", "rows"]
// CHECK: %[[LANE:.+]] = arith.remui %{{.+}}, %c8 : index
// CHECK: %[[SUM:.+]] = vector.reduction <add>, %{{.+}} : vector<8xf32> into f32
// CHECK-NEXT: arith.constant 32 : i32
// CHECK-NEXT: arith.constant 4 : i32
// CHECK-NEXT: %[[SH4:.+]], %{{.+}} = gpu.shuffle xor %[[SUM]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[R4:.+]] = arith.addf %[[SUM]], %[[SH4]] : f32
// CHECK-NEXT: arith.constant 2 : i32
// CHECK-NEXT: %[[SH2:.+]], %{{.+}} = gpu.shuffle xor %[[R4]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[R2:.+]] = arith.addf %[[R4]], %[[SH2]] : f32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[SH1:.+]], %{{.+}} = gpu.shuffle xor %[[R2]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[R1:.+]] = arith.addf %[[R2]], %[[SH1]] : f32
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK-NEXT: %[[COND:.+]] = arith.andi %{{.+}}, %[[FIRST]] : i1
// CHECK-NEXT: scf.if %[[COND]] {
// CHECK: llvm.store %[[R1]], %{{.+}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
kgen.kernel @warp_sum(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %s: !kgen.scalars<f32> {kgen.align = 4 : i64, kgen.name = "s"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<64xbf16>
  %f = arith.extf %a : tensor<64xbf16> to tensor<64xf32>
  %r = kgen.reduce sum %f : tensor<64xf32> -> f32
  kgen.store %r, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// -----

// More than a warp per row but no reduction: no workgroup memory, no
// barrier.
// CHECK-LABEL: gpu.func @wide_copy(
// CHECK-SAME: %{{[a-z0-9]+}}: i64) kernel attributes
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: gpu.barrier
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
kgen.kernel @wide_copy(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                       %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 1, chunks = 2, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<2048xf32>
  kgen.store %a, %y[%c0] {vector_width = 4 : i64} : tensor<2048xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// RMSNorm-like, 2048 f32 over 128 threads (4 warps) x 4 chunks, 2 rows per
// block, kept in registers: each chunk of x and of the weight is loaded once
// (8 loads in all) and reused by the reductions and the store. Two
// reductions x 2 rows x 4 warps = 16 f32 of workgroup memory; each reduction
// shuffles within the warp (offsets 16 to 1), warp leaders write both
// partials, one barrier (the two are of one level), then every thread
// combines the row's 4 partials of each.
// CHECK-LABEL: gpu.func @norm(
// CHECK-SAME: workgroup(%[[SMEM:.+]] : memref<16xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:w", "ptr:y", "stride:x", "stride:y", "scalar:eps", "rows"]
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: vector.reduction <add>
// CHECK: vector.reduction <maximumf>
// CHECK-NEXT: arith.constant 32 : i32
// CHECK-NEXT: arith.constant 16 : i32
// CHECK-NEXT: gpu.shuffle xor
// CHECK-COUNT-9: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: %[[LEADER:.+]] = arith.cmpi eq
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-COUNT-2: memref.store %{{.+}}, %[[SMEM]][%{{.+}}] : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SMEM]][%{{.+}}] : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.load
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK-COUNT-4: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK-NOT: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: gpu.return
// Wherever they are placed, there are exactly 8 loads.
// NORM-LABEL: gpu.func @norm(
// NORM-COUNT-8: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// NORM-NOT: llvm.load
// NORM: gpu.return
kgen.kernel @norm(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                  %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                  %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"},
                  %eps: f32 {kgen.name = "eps"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 2, chunks = 4, reread = false>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<2048xf32>
  %sq = arith.mulf %a, %a : tensor<2048xf32>
  %s = kgen.reduce sum %sq : tensor<2048xf32> -> f32
  %m = kgen.reduce max %a : tensor<2048xf32> -> f32
  %t = arith.addf %s, %eps : f32
  %u = arith.addf %t, %m : f32
  %r = math.rsqrt %u : f32
  %b = kgen.broadcast %r : f32 -> tensor<2048xf32>
  %o = arith.mulf %a, %b : tensor<2048xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<2048xf32>
  %ow = arith.mulf %o, %wv : tensor<2048xf32>
  kgen.store %ow, %y[%c0] {vector_width = 4 : i64} : tensor<2048xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// Softmax over a dynamic row, re-read: per level of reductions (max, then
// the sum that depends on it) and for the stores, one scf.for over the whole
// steps of 256 threads x 8 (no masks) and one over the step that crosses the
// end of the row (masked); each pass reads x again. 256 threads = 8 warps;
// 2 reductions x 1 row x 8 warps = 16.
// CHECK-LABEL: gpu.func @softmax(
// CHECK-SAME: workgroup(%[[SMEM:.+]] : memref<16xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:y", "stride:x", "stride:y", "dim:d", "rows"]
// CHECK: %[[LEN:.+]] = arith.index_cast %{{.+}} : i64 to index
// Level 1: the max. Whole steps: floor(length / 2048), 16-byte loads, no
// select.
// CHECK: %[[WHOLE:.+]] = arith.divui %[[LEN]], %{{.+}} : index
// CHECK: %[[MAX0:.+]] = scf.for %{{.+}} = %{{.+}} to %[[WHOLE]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8xf32>) {
// CHECK-NOT: arith.select
// CHECK: llvm.load {{.+}} -> vector<8xbf16>
// CHECK-NOT: arith.select
// CHECK: arith.maximumf
// CHECK-NEXT: scf.yield
// The last step, ceil(length / 2048): masked, -inf in the masked lanes.
// CHECK: %[[C2047:.+]] = arith.constant 2047 : index
// CHECK-NEXT: %[[UP:.+]] = arith.addi %[[LEN]], %[[C2047]] : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.divui %[[UP]], %{{.+}} : index
// CHECK: %[[MAXACC:.+]] = scf.for %{{.+}} = %[[WHOLE]] to %[[COUNT]] step %{{.+}} iter_args(%{{.+}} = %[[MAX0]]) -> (vector<8xf32>) {
// CHECK: arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: scf.yield
// CHECK: vector.reduction <maximumf>, %[[MAXACC]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SMEM]]
// Level 2: the sum of exp(x - max), with 0 in the masked lanes.
// CHECK: %[[SUM0:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8xf32>) {
// CHECK: llvm.load {{.+}} -> vector<8xbf16>
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: %[[SUMACC:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[SUM0]]) -> (vector<8xf32>) {
// CHECK: math.exp
// CHECK: arith.select
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: vector.reduction <add>, %[[SUMACC]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// The stores: whole steps, then the masked last step. d is a multiple of 8
// (its divisibility), so a chunk is in the row or out as a whole: an out
// chunk reads chunk 0 and stores nothing, with no per-element path.
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: llvm.load {{.+}} -> vector<8xbf16>
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: arith.cmpi
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[E0:.+]], %[[LEN]] : index
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[SEL:.+]] = arith.select %[[IN]], %[[E0]], %[[C0]] : index
// CHECK-NOT: arith.cmpi ule
// CHECK-NOT: alignment = 2
// CHECK-NOT: scf.if
// CHECK: arith.addi %[[SEL]], %{{.+}} : index
// CHECK-NOT: scf.if
// CHECK: llvm.load {{.+}} -> vector<8xbf16>
// CHECK-NOT: alignment = 2
// CHECK: scf.if %[[IN]] {
// CHECK: llvm.getelementptr
// CHECK-NEXT: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NEXT: }
// CHECK-NOT: alignment = 2
// CHECK-NOT: scf.for
// CHECK: gpu.return
kgen.kernel @softmax(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                     %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
                     %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %m = kgen.reduce max %f : tensor<?xf32> -> f32
  %mb = kgen.broadcast %m : f32 -> tensor<?xf32>
  %z = arith.subf %f, %mb : tensor<?xf32>
  %e = math.exp %z : tensor<?xf32>
  %s = kgen.reduce sum %e : tensor<?xf32> -> f32
  %sb = kgen.broadcast %s : f32 -> tensor<?xf32>
  %o = arith.divf %e, %sb : tensor<?xf32>
  %ob = arith.truncf %o : tensor<?xf32> to tensor<?xbf16>
  kgen.store %ob, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Threads chosen at launch (launchThreads): one row per block, as many
// threads as gpu.block_dim says, each holding 2 chunks of 8. No known block
// size, only the most (nvvm.maxntid). Chunk 0 of every thread is in the row;
// the last chunk is whole or out (the length is a multiple of 16): out, it
// reads chunk 0 instead, its values are masked out of the sum and its store
// is skipped. The warps' partials (16 slots, the most warps) are combined by
// lane i reading slot i, the identity past the launched warps, and 4
// shuffles.
// CHECK-LABEL: gpu.func @held(
// CHECK-SAME: workgroup(%[[SMEM:.+]] : memref<16xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-NOT: known_block_size
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: %[[T:.+]] = gpu.block_dim x
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[E1RAW:.+]], %{{.+}} : index
// CHECK: %[[E1:.+]] = arith.select %[[IN]], %[[E1RAW]], %{{.+}} : index
// CHECK-NEXT: %[[MASK:.+]] = vector.broadcast %[[IN]] : i1 to vector<8xi1>
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: arith.addi %[[E1]]
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: scf.if
// CHECK: arith.select %[[MASK]]
// CHECK: gpu.barrier
// CHECK-NEXT: arith.constant 32 : index
// CHECK-NEXT: %[[W:.+]] = arith.divui %[[T]], %{{.+}} : index
// CHECK-NEXT: arith.constant 16 : index
// CHECK-NEXT: %[[I:.+]] = arith.remui %{{.+}}, %{{.+}} : index
// CHECK: memref.load %[[SMEM]]
// CHECK: arith.cmpi ult, %[[I]], %[[W]] : index
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store
// CHECK: scf.if %[[IN]] {
// CHECK: llvm.store
kgen.kernel @held(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                  %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
                  %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 2, reread = false, launchThreads = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<?xf32>
  %g = arith.mulf %f, %b : tensor<?xf32>
  %h = arith.truncf %g : tensor<?xf32> to tensor<?xbf16>
  kgen.store %h, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A dynamic row re-read over threads and rows a block chosen at launch
// (kgen::rt::rereadLaunch): a block of blockDim.x threads a row by
// blockDim.y rows, at most 1024 threads, so 32 shared slots. The loops step
// by shifts (blockDim.x is a power of two), the whole steps unmasked, the
// last one whole or none. Each butterfly step combines only
// below blockDim.x lanes (rows of 2 to 32 threads share a warp); rows over
// 32 threads combine their warps in a uniform branch, each row from slot
// tid.y * warps.
// CHECK-LABEL: gpu.func @launched(
// CHECK-SAME: workgroup(%[[SMEM:.+]] : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: nvvm.maxntid = array<i32: 1024, 1, 1>
// CHECK-NOT: known_block_size
// CHECK: %[[T:.+]] = gpu.thread_id  x
// CHECK: %[[BX:.+]] = gpu.block_dim  x
// CHECK: %[[TY:.+]] = gpu.thread_id  y
// CHECK: %[[BY:.+]] = gpu.block_dim  y
// CHECK: arith.muli %{{.+}}, %[[BY]] : index
// CHECK: "llvm.intr.cttz"
// CHECK: %[[SHIFT:.+]] = arith.addi %{{.+}}, %c3 : index
// CHECK: %[[WHOLE:.+]] = arith.shrui %{{.+}}, %[[SHIFT]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[WHOLE]]
// CHECK-NOT: arith.cmpi
// CHECK: llvm.load
// CHECK: scf.yield
// CHECK: scf.for %{{.+}} = %[[WHOLE]] to
// CHECK: %[[IN:.+]] = arith.cmpi ult
// CHECK: arith.select %[[IN]]
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK: %[[TAKE:.+]] = arith.cmpi ult, %c16, %[[BX]] : index
// CHECK-NEXT: arith.select %[[TAKE]]
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[WIDE:.+]] = arith.cmpi ugt, %[[BX]], %c32 : index
// CHECK-NEXT: scf.if %[[WIDE]] -> (f32) {
// CHECK: %[[WARPS:.+]] = arith.divui %[[BX]], %{{.+}} : index
// CHECK: arith.muli %[[TY]], %[[WARPS]] : index
// CHECK: memref.store %{{.+}}, %[[SMEM]]
// CHECK: gpu.barrier
// CHECK: %[[USED:.+]] = arith.cmpi ult, %{{.+}}, %[[WARPS]] : index
// CHECK: arith.select %[[USED]], %{{.+}}, %c0
// CHECK: memref.load %[[SMEM]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: } else {
// CHECK-NOT: gpu.barrier
// CHECK: scf.for
// CHECK: llvm.load
// CHECK: llvm.store
kgen.kernel @launched(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
                      %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 0, reread = true, launchThreads = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<?xf32>
  %g = arith.mulf %f, %b : tensor<?xf32>
  %h = arith.truncf %g : tensor<?xf32> to tensor<?xbf16>
  kgen.store %h, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A row over a cluster of 4 blocks of 128 threads (4 warps each): slots for
// each reduction's 16 partials (4 blocks x 4 warps) in an LLVM global of
// shared memory, the weights loaded with the row. A cluster barrier arrived
// on at the start is waited on before the first push (the peers run). Per
// reduction, lane j < 4 of each warp writes the warp's partial into block
// j through mapa, one cluster barrier, and each group of 16 lanes reads the
// block's 16 copies and combines them in 4 shuffles. No barrier before the
// return: nothing reaches a block's memory after the last one.
// CHECK: llvm.mlir.global internal @clus_cluster_slots() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<32 x f32>
// CHECK-LABEL: gpu.func @clus(
// CHECK-NOT: workgroup
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// CHECK: nvvm.cluster.arrive.relaxed {aligned}
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: nvvm.cluster
// CHECK: vector.reduction <add>
// CHECK: llvm.mlir.addressof @clus_cluster_slots : !llvm.ptr<3>
// CHECK: nvvm.cluster.wait {aligned}
// CHECK: arith.cmpi ult, %{{.+}}, %c4
// CHECK-NEXT: scf.if
// CHECK: %[[PEER:.+]] = nvvm.mapa %{{.+}}, %{{.+}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: llvm.store %{{.+}}, %[[PEER]] {alignment = 4 : i64} : f32, !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// The second level (the variance) does the same with its own slots.
// CHECK: vector.reduction <add>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.mapa
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : f32, !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NOT: nvvm.cluster
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.return
kgen.kernel @clus(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                  %w: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"},
                  %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 4, cluster = true>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<2048xf32>
  %s = kgen.reduce sum %a : tensor<2048xf32> -> f32
  %sb = kgen.broadcast %s : f32 -> tensor<2048xf32>
  %d = arith.subf %a, %sb : tensor<2048xf32>
  %sq = arith.mulf %d, %d : tensor<2048xf32>
  %v = kgen.reduce sum %sq : tensor<2048xf32> -> f32
  %r = math.rsqrt %v : f32
  %b = kgen.broadcast %r : f32 -> tensor<2048xf32>
  %o = arith.mulf %d, %b : tensor<2048xf32>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<2048xf32>
  %ow = arith.mulf %o, %wv : tensor<2048xf32>
  kgen.store %ow, %y[%c0] {vector_width = 4 : i64} : tensor<2048xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A dynamic row held a warp a row in 4 chunks a lane (`_vec_warp`): the
// runtime launches it only on rows of at least the variant's minLength elements, so
// chunks 0 and 1 (lanes x 8 elements up to 512 <= 520) need no mask and
// chunks 2 and 3 are whole or none.
// CHECK-LABEL: gpu.func @warp_rows(
// CHECK-COUNT-2: arith.cmpi ult
// CHECK-NOT: arith.cmpi ult
// CHECK: gpu.return
kgen.kernel @warp_rows(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                       %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = warp, minLength = 520, maxLength = 1024>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 4, reread = false, launchRowsPerBlock = 4>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Rows of exactly 1024 elements fill every chunk: no mask at all.
// CHECK-LABEL: gpu.func @warp_rows_full(
// CHECK-NOT: arith.cmpi ult
// CHECK: gpu.return
kgen.kernel @warp_rows_full(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                            %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = warp, minLength = 1024, maxLength = 1024>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 4, reread = false, launchRowsPerBlock = 2>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
