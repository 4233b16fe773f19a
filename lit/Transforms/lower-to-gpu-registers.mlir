// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
// RUN: kgen-opt %s -split-input-file --kgen-occupancy=busy-rows=1 --kgen-lower-to-gpu | FileCheck %s --check-prefix=BUSY
// RUN: kgen-opt %s -split-input-file --kgen-occupancy=late-row-registers=1 --kgen-lower-to-gpu | FileCheck %s --check-prefix=LATE
// RUN: kgen-opt %s -split-input-file --kgen-occupancy=group-resident-threads=512 --kgen-lower-to-gpu | FileCheck %s --check-prefix=GROUP512
// kgen-occupancy decides; the schedule shows it before any lowering.
// RUN: kgen-opt %s -split-input-file --kgen-occupancy=busy-rows=1 | FileCheck %s --check-prefix=PLAN
// PLAN-LABEL: kgen.kernel @held_vec(
// PLAN-SAME: chunks = 8, reread = false, maxRegisters = 128>
// PLAN-LABEL: kgen.kernel @busy_narrow(
// PLAN-SAME: maxRegisters = 80, busyRow = true>
//
// The register cap (.maxnreg): a vectorized row of 8 chunks (64 f32 values,
// half of 128) in a 256-thread block gets 128 registers, so that two blocks
// fit on an SM; an element-wise row (the `_any` variant) or one of more than
// 8 chunks gets all the registers the block leaves (255). A row of at most 4
// chunks launched in blocks of 256 threads or more gets the registers of as
// many whole blocks as 1024 threads hold, or what its words need (with
// late-row-registers, for sm_100, those of rows loaded after the reductions
// when chosen per group of rows or in a cluster's blocks).

// CHECK-LABEL: gpu.func @held_vec(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// One level, same dtype out: busy-rows leaves it at two blocks an SM.
// BUSY-LABEL: gpu.func @held_vec(
// BUSY-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @held_vec(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %s = kgen.reduce sum %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %f, %b : tensor<16384xf32>
  %t = arith.truncf %o : tensor<16384xf32> to tensor<16384xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<16384xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @held_any(
// CHECK-SAME: nvvm.maxnreg = 255 : i32
kgen.kernel @held_any(%x: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 1 : i64} : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %s = kgen.reduce sum %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %f, %b : tensor<16384xf32>
  %t = arith.truncf %o : tensor<16384xf32> to tensor<16384xbf16>
  kgen.store %t, %y[%c0] {vector_width = 1 : i64} : tensor<16384xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @held_f32_16_chunks(
// CHECK-SAME: nvvm.maxnreg = 255 : i32
kgen.kernel @held_f32_16_chunks(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                                %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 1, chunks = 16, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<16384xf32>
  %s = kgen.reduce sum %v : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %v, %b : tensor<16384xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<16384xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// With busy-rows, a long bf16 row (8 chunks) written narrower (fp8) keeps
// three 256-thread blocks an SM: 80 registers, and the f32 widening of the
// held bf16 bits is made again after the reduction, as a shift.
// CHECK-LABEL: gpu.func @busy_narrow(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// BUSY-LABEL: gpu.func @busy_narrow(
// BUSY-SAME: nvvm.maxnreg = 80 : i32
// BUSY-COUNT-8: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// BUSY: gpu.shuffle
// BUSY-COUNT-8: arith.shli {{.*}} : vector<8xi32>
// BUSY-NOT: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// BUSY: gpu.return
kgen.kernel @busy_narrow(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                         %y: !kgen.rows<f8E4M3FN> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %s = kgen.reduce sum %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %f, %b : tensor<16384xf32>
  %t = arith.truncf %o : tensor<16384xf32> to tensor<16384xf8E4M3FN>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<16384xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.return
}

// -----

// Over 512 threads (bf16 32768) the three-block cap would still leave one
// block an SM: no cap, no re-widening (80 registers spilled).
// BUSY-LABEL: gpu.func @busy_wide(
// BUSY-SAME: nvvm.maxnreg = 128 : i32
// BUSY-NOT: arith.shli
// BUSY: gpu.return
kgen.kernel @busy_wide(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                       %y: !kgen.rows<f8E4M3FN> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 32768 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 32768 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32768xbf16>
  %f = arith.extf %v : tensor<32768xbf16> to tensor<32768xf32>
  %s = kgen.reduce sum %f : tensor<32768xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<32768xf32>
  %o = arith.subf %f, %b : tensor<32768xf32>
  %t = arith.truncf %o : tensor<32768xf32> to tensor<32768xf8E4M3FN>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<32768xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.return
}

// -----

// The same row in f16: no shift re-widens it, so it keeps two blocks.
// BUSY-LABEL: gpu.func @busy_f16(
// BUSY-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @busy_f16(%x: !kgen.rows<f16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %y: !kgen.rows<f8E4M3FN> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<f16> -> tensor<16384xf16>
  %f = arith.extf %v : tensor<16384xf16> to tensor<16384xf32>
  %s = kgen.reduce sum %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %f, %b : tensor<16384xf32>
  %t = arith.truncf %o : tensor<16384xf32> to tensor<16384xf8E4M3FN>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<16384xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.return
}

// -----

// A bf16 row of 4 chunks over 256 threads: 64 registers keep 4 blocks an SM.
// CHECK-LABEL: gpu.func @wide_four_chunks(
// CHECK-SAME: nvvm.maxnreg = 64 : i32
kgen.kernel @wide_four_chunks(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 8192 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f0 = arith.extf %v0 : tensor<8192xbf16> to tensor<8192xf32>
  %s = kgen.reduce sum %f0 : tensor<8192xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<8192xf32>
  %o0 = arith.subf %f0, %b : tensor<8192xf32>
  %t = arith.truncf %o0 : tensor<8192xf32> to tensor<8192xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<8192xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Over 352 threads 1024 hold 2 blocks: 88 registers.
// CHECK-LABEL: gpu.func @wide_uneven(
// CHECK-SAME: nvvm.maxnreg = 88 : i32
kgen.kernel @wide_uneven(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 11264 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 352, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 11264 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<11264xbf16>
  %f0 = arith.extf %v0 : tensor<11264xbf16> to tensor<11264xf32>
  %s = kgen.reduce sum %f0 : tensor<11264xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<11264xf32>
  %o0 = arith.subf %f0, %b : tensor<11264xf32>
  %t = arith.truncf %o0 : tensor<11264xf32> to tensor<11264xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<11264xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// With late-row-registers (sm_100), rows chosen per group of rows count
// though loaded after the reduction (adaln's scale and shift): 16 + 2 x 16
// words, 72 registers; without, 64. A row shared by all rows loaded there
// (a weight) does not count outside a cluster (the next case).
// CHECK-LABEL: gpu.func @wide_group_rows(
// CHECK-SAME: nvvm.maxnreg = 64 : i32
// LATE-LABEL: gpu.func @wide_group_rows(
// LATE-SAME: nvvm.maxnreg = 72 : i32
kgen.kernel @wide_group_rows(
    %x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
    %sc: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "scale"},
    %sh: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "shift"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
    %per: index {kgen.name = "tokens_per_batch"})
    attributes {dims = {n = 8192 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f = arith.extf %v : tensor<8192xbf16> to tensor<8192xf32>
  %s = kgen.reduce sum %f : tensor<8192xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<8192xf32>
  %o = arith.subf %f, %b : tensor<8192xf32>
  %gsc = kgen.group %sc by %per : !kgen.rows<bf16>
  %vsc = kgen.load %gsc[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %fsc = arith.extf %vsc : tensor<8192xbf16> to tensor<8192xf32>
  %gsh = kgen.group %sh by %per : !kgen.rows<bf16>
  %vsh = kgen.load %gsh[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %fsh = arith.extf %vsh : tensor<8192xbf16> to tensor<8192xf32>
  %m = arith.mulf %o, %fsc : tensor<8192xf32>
  %a = arith.addf %m, %fsh : tensor<8192xf32>
  %t = arith.truncf %a : tensor<8192xf32> to tensor<8192xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<8192xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @wide_late_weight(
// CHECK-SAME: nvvm.maxnreg = 64 : i32
// LATE-LABEL: gpu.func @wide_late_weight(
// LATE-SAME: nvvm.maxnreg = 64 : i32
kgen.kernel @wide_late_weight(
    %x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
    %w: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "weight"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 8192 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f = arith.extf %v : tensor<8192xbf16> to tensor<8192xf32>
  %s = kgen.reduce sum %f : tensor<8192xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<8192xf32>
  %o = arith.subf %f, %b : tensor<8192xf32>
  %vw = kgen.load %w[%c0] {vector_width = 8 : i64} : !kgen.vector<bf16> -> tensor<8192xbf16>
  %fw = arith.extf %vw : tensor<8192xbf16> to tensor<8192xf32>
  %m = arith.mulf %o, %fw : tensor<8192xf32>
  %t = arith.truncf %m : tensor<8192xf32> to tensor<8192xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<8192xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// In a cluster's blocks (8 of 256 threads x 4 chunks a row of 65536) the
// rows loaded late count with late-row-registers: 16 + 2 x 16 words, 72
// registers (sm_100 spilled layernorm at 64).
// CHECK-LABEL: gpu.func @wide_cluster_late(
// CHECK-SAME: nvvm.maxnreg = 64 : i32
// LATE-LABEL: gpu.func @wide_cluster_late(
// LATE-SAME: nvvm.maxnreg = 72 : i32
kgen.kernel @wide_cluster_late(
    %x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
    %w: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "weight"},
    %c: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "bias"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 65536 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false, tiles = 8, cluster = true>} {
  %n = arith.constant 65536 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<65536xbf16>
  %f = arith.extf %v : tensor<65536xbf16> to tensor<65536xf32>
  %s = kgen.reduce sum %f : tensor<65536xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<65536xf32>
  %o = arith.subf %f, %b : tensor<65536xf32>
  %vw = kgen.load %w[%c0] {vector_width = 8 : i64} : !kgen.vector<bf16> -> tensor<65536xbf16>
  %fw = arith.extf %vw : tensor<65536xbf16> to tensor<65536xf32>
  %vc = kgen.load %c[%c0] {vector_width = 8 : i64} : !kgen.vector<bf16> -> tensor<65536xbf16>
  %fc = arith.extf %vc : tensor<65536xbf16> to tensor<65536xf32>
  %m = arith.mulf %o, %fw : tensor<65536xf32>
  %a = arith.addf %m, %fc : tensor<65536xf32>
  %t = arith.truncf %a : tensor<65536xf32> to tensor<65536xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<65536xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Three bf16 row loads of 4 chunks are 48 words: 72 registers, over 64.
// CHECK-LABEL: gpu.func @wide_many_words(
// CHECK-SAME: nvvm.maxnreg = 72 : i32
kgen.kernel @wide_many_words(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %x1: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x1"},
    %x2: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x2"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 8192 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f0 = arith.extf %v0 : tensor<8192xbf16> to tensor<8192xf32>
  %v1 = kgen.load %x1[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f1 = arith.extf %v1 : tensor<8192xbf16> to tensor<8192xf32>
  %v2 = kgen.load %x2[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f2 = arith.extf %v2 : tensor<8192xbf16> to tensor<8192xf32>
  %a1 = arith.addf %f0, %f1 : tensor<8192xf32>
  %a2 = arith.addf %a1, %f2 : tensor<8192xf32>
  %s = kgen.reduce sum %a2 : tensor<8192xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<8192xf32>
  %o0 = arith.subf %f0, %b : tensor<8192xf32>
  %o1 = arith.subf %f1, %b : tensor<8192xf32>
  %o2 = arith.subf %f2, %b : tensor<8192xf32>
  %m1 = arith.mulf %o0, %o1 : tensor<8192xf32>
  %m2 = arith.mulf %m1, %o2 : tensor<8192xf32>
  %t = arith.truncf %m2 : tensor<8192xf32> to tensor<8192xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<8192xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A head held as 4 slices of 8 words, beside each a part vector's 8 words
// and a gathered row's 8: 72 words and 24 others, 96 registers. Without the
// part vectors and the gathered row (ptxas hoists their loads), 64 spilled.
// CHECK-LABEL: gpu.func @wide_head_slices(
// CHECK-SAME: nvvm.maxnreg = 96 : i32
kgen.kernel @wide_head_slices(
    %q: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "q"},
    %k: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "k"},
    %wq: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "wq"},
    %wk: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "wk"},
    %p: !kgen.scalars<i64> {kgen.name = "positions"},
    %t: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "table"},
    %hq: index {kgen.name = "hq"}, %hk: index {kgen.name = "hk"},
    %rows: index {kgen.name = "rows"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 2, rowsPerBlock = 128, chunks = 2, reread = false>} {
  %c32 = arith.constant 32 : index
  kgen.domain %c32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %qk = kgen.heads [%q, %k] counts [%hq, %hk] length %c128
      : !kgen.rows<bf16>, !kgen.rows<bf16> -> !kgen.rows<bf16>
  %w = kgen.heads [%wq, %wk] counts [%hq, %hk] length %c128
      : !kgen.vector<bf16>, !kgen.vector<bf16> -> !kgen.rows<bf16>
  %h = arith.addi %hq, %hk : index
  %pg = kgen.group %p by %h : !kgen.scalars<i64>
  %cs = kgen.gather %t[%pg] rows %rows : !kgen.rows<bf16>, !kgen.scalars<i64>
  %x0 = kgen.load %qk[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %x1 = kgen.load %qk[%c32] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %x2 = kgen.load %qk[%c64] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %x3 = kgen.load %qk[%c96] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %s1 = arith.addf %x0, %x1 : tensor<32xbf16>
  %s2 = arith.addf %x2, %x3 : tensor<32xbf16>
  %s3 = arith.addf %s1, %s2 : tensor<32xbf16>
  %f = arith.extf %s3 : tensor<32xbf16> to tensor<32xf32>
  %r = kgen.reduce sum %f : tensor<32xf32> -> f32
  %rt = arith.truncf %r : f32 to bf16
  %b = kgen.broadcast %rt : bf16 -> tensor<32xbf16>
  %c = kgen.load %cs[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w0 = kgen.load %w[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w1 = kgen.load %w[%c32] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w2 = kgen.load %w[%c64] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w3 = kgen.load %w[%c96] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %m0 = arith.mulf %x0, %w0 : tensor<32xbf16>
  %m1 = arith.mulf %x1, %w1 : tensor<32xbf16>
  %m2 = arith.mulf %x2, %w2 : tensor<32xbf16>
  %m3 = arith.mulf %x3, %w3 : tensor<32xbf16>
  %o0 = arith.mulf %m0, %b : tensor<32xbf16>
  %o1 = arith.mulf %m1, %c : tensor<32xbf16>
  kgen.store %o0, %qk[%c0] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %o1, %qk[%c32] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %m2, %qk[%c64] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %m3, %qk[%c96] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// The same with an f32 table: its gathered row, wider than the held bf16
// rows, is 16 words, counted once: 80 words and 24 others, 104 registers
// (counted as a wider shared row and again as a gathered one: 120).
// CHECK-LABEL: gpu.func @wide_head_slices_f32_table(
// CHECK-SAME: nvvm.maxnreg = 104 : i32
kgen.kernel @wide_head_slices_f32_table(
    %q: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "q"},
    %k: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "k"},
    %wq: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "wq"},
    %wk: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "wk"},
    %p: !kgen.scalars<i64> {kgen.name = "positions"},
    %t: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "table"},
    %hq: index {kgen.name = "hq"}, %hk: index {kgen.name = "hk"},
    %rows: index {kgen.name = "rows"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 2, rowsPerBlock = 128, chunks = 2, reread = false>} {
  %c32 = arith.constant 32 : index
  kgen.domain %c32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %qk = kgen.heads [%q, %k] counts [%hq, %hk] length %c128
      : !kgen.rows<bf16>, !kgen.rows<bf16> -> !kgen.rows<bf16>
  %w = kgen.heads [%wq, %wk] counts [%hq, %hk] length %c128
      : !kgen.vector<bf16>, !kgen.vector<bf16> -> !kgen.rows<bf16>
  %h = arith.addi %hq, %hk : index
  %pg = kgen.group %p by %h : !kgen.scalars<i64>
  %cs = kgen.gather %t[%pg] rows %rows : !kgen.rows<f32>, !kgen.scalars<i64>
  %x0 = kgen.load %qk[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %x1 = kgen.load %qk[%c32] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %x2 = kgen.load %qk[%c64] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %x3 = kgen.load %qk[%c96] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %s1 = arith.addf %x0, %x1 : tensor<32xbf16>
  %s2 = arith.addf %x2, %x3 : tensor<32xbf16>
  %s3 = arith.addf %s1, %s2 : tensor<32xbf16>
  %f = arith.extf %s3 : tensor<32xbf16> to tensor<32xf32>
  %r = kgen.reduce sum %f : tensor<32xf32> -> f32
  %rt = arith.truncf %r : f32 to bf16
  %b = kgen.broadcast %rt : bf16 -> tensor<32xbf16>
  %cf = kgen.load %cs[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<32xf32>
  %c = arith.truncf %cf : tensor<32xf32> to tensor<32xbf16>
  %w0 = kgen.load %w[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w1 = kgen.load %w[%c32] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w2 = kgen.load %w[%c64] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %w3 = kgen.load %w[%c96] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %m0 = arith.mulf %x0, %w0 : tensor<32xbf16>
  %m1 = arith.mulf %x1, %w1 : tensor<32xbf16>
  %m2 = arith.mulf %x2, %w2 : tensor<32xbf16>
  %m3 = arith.mulf %x3, %w3 : tensor<32xbf16>
  %o0 = arith.mulf %m0, %b : tensor<32xbf16>
  %o1 = arith.mulf %m1, %c : tensor<32xbf16>
  kgen.store %o0, %qk[%c0] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %o1, %qk[%c32] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %m2, %qk[%c64] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %m3, %qk[%c96] {vector_width = 8 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Rows of 64 threads launched one a block keep half the registers (128),
// though the block may take 4 rows.
// CHECK-LABEL: gpu.func @narrow_launched(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @narrow_launched(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 2048 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 64, rowsPerBlock = 4, chunks = 4, reread = false, launchRowsPerBlock = 1>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<2048xbf16>
  %f0 = arith.extf %v0 : tensor<2048xbf16> to tensor<2048xf32>
  %s = kgen.reduce sum %f0 : tensor<2048xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<2048xf32>
  %o0 = arith.subf %f0, %b : tensor<2048xf32>
  %t = arith.truncf %o0 : tensor<2048xf32> to tensor<2048xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<2048xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A dynamic kernel's widest held variant of 4 chunks (two held bf16 rows: 8
// chunks would pass max-held-elements) split off for more than 256 threads
// (`_vec_hold4_wide`, a wide held variant) keeps two blocks of 448 threads an
// SM: 72 registers, though its block may take 512 threads.
// CHECK-LABEL: gpu.func @widest_held(
// CHECK-SAME: nvvm.maxnreg = 72 : i32
kgen.kernel @widest_held(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %x1: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x1"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
    %n: index {kgen.divisibility = 16 : i64, kgen.name = "n"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 4, wide = true>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 4, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %v1 = kgen.load %x1[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f0 = arith.extf %v0 : tensor<?xbf16> to tensor<?xf32>
  %f1 = arith.extf %v1 : tensor<?xbf16> to tensor<?xf32>
  %a = arith.addf %f0, %f1 : tensor<?xf32>
  %s = kgen.reduce sum %a : tensor<?xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<?xf32>
  %o = arith.subf %a, %b : tensor<?xf32>
  %t = arith.truncf %o : tensor<?xf32> to tensor<?xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// The same on at most 256 threads (`_vec_hold4`, a held variant of maxThreads 256) keeps
// the registers of a held row: 72 cost its blocks of 128 threads up to 30%.
// CHECK-LABEL: gpu.func @widest_held_narrow(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @widest_held_narrow(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %x1: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x1"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
    %n: index {kgen.divisibility = 16 : i64, kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %v1 = kgen.load %x1[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f0 = arith.extf %v0 : tensor<?xbf16> to tensor<?xf32>
  %f1 = arith.extf %v1 : tensor<?xbf16> to tensor<?xf32>
  %a = arith.addf %f0, %f1 : tensor<?xf32>
  %s = kgen.reduce sum %a : tensor<?xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<?xf32>
  %o = arith.subf %a, %b : tensor<?xf32>
  %t = arith.truncf %o : tensor<?xf32> to tensor<?xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// One held row: an 8-chunk variant exists for the long rows, so the 4-chunk
// one keeps the registers a held row of 4 chunks gets (128 at 512 threads).
// CHECK-LABEL: gpu.func @held_one_row_4(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @held_one_row_4(
    %x0: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x0"},
    %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"},
    %n: index {kgen.divisibility = 16 : i64, kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 4, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v0 = kgen.load %x0[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f0 = arith.extf %v0 : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f0 : tensor<?xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<?xf32>
  %o = arith.subf %f0, %b : tensor<?xf32>
  %t = arith.truncf %o : tensor<?xf32> to tensor<?xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// A held row of 4 chunks quantized per group of 128 (a group_reduce) keeps
// 1024 threads an SM: 64 registers at 512 threads (128 at
// group-resident-threads 512, as any held row of 4 chunks).
// CHECK-LABEL: gpu.func @group_held_4(
// CHECK-SAME: nvvm.maxnreg = 64 : i32
// GROUP512-LABEL: gpu.func @group_held_4(
// GROUP512-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @group_held_4(
    %x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
    %y: !kgen.rows<i8> {kgen.align = 16 : i64, kgen.name = "y"},
    %s: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "scale"},
    %n: index {kgen.divisibility = 128 : i64, kgen.name = "n"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 4>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 4, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %q = arith.mulf %f, %f : tensor<?xf32>
  %ss = kgen.reduce sum %q : tensor<?xf32> -> f32
  %b = kgen.broadcast %ss : f32 -> tensor<?xf32>
  %nrm = arith.mulf %f, %b : tensor<?xf32>
  %a = math.absf %nrm : tensor<?xf32>
  %top = kgen.group_reduce max %a group 128 : tensor<?xf32>
  %o = arith.divf %nrm, %top : tensor<?xf32>
  %i = arith.fptosi %o : tensor<?xf32> to tensor<?xi8>
  kgen.store %i, %y[%c0] {vector_width = 8 : i64} : tensor<?xi8>, !kgen.rows<i8>
  kgen.store %top, %s[%c0] {group = 128 : i64} : tensor<?xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// Past group-row-chunks (4) it keeps the held row's cap: 8 chunks spilled
// under 64 (f32 rows).
// CHECK-LABEL: gpu.func @group_held_8(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @group_held_8(
    %x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
    %y: !kgen.rows<i8> {kgen.align = 16 : i64, kgen.name = "y"},
    %s: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "scale"},
    %n: index {kgen.divisibility = 128 : i64, kgen.name = "n"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 8>, schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 8, reread = false, launchThreads = true>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %q = arith.mulf %f, %f : tensor<?xf32>
  %ss = kgen.reduce sum %q : tensor<?xf32> -> f32
  %b = kgen.broadcast %ss : f32 -> tensor<?xf32>
  %nrm = arith.mulf %f, %b : tensor<?xf32>
  %a = math.absf %nrm : tensor<?xf32>
  %top = kgen.group_reduce max %a group 128 : tensor<?xf32>
  %o = arith.divf %nrm, %top : tensor<?xf32>
  %i = arith.fptosi %o : tensor<?xf32> to tensor<?xi8>
  kgen.store %i, %y[%c0] {vector_width = 8 : i64} : tensor<?xi8>, !kgen.rows<i8>
  kgen.store %top, %s[%c0] {group = 128 : i64} : tensor<?xf32>, !kgen.rows<f32>
  kgen.return
}
