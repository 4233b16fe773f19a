// RUN: kgen-opt %s --kgen-schedule | FileCheck %s
// RUN: kgen-opt %s --kgen-schedule=threads-per-row=32 | FileCheck %s --check-prefix=TPR32
// RUN: kgen-opt %s --kgen-schedule=rows-per-block=1 | FileCheck %s --check-prefix=RPB1
// RUN: kgen-opt %s --kgen-schedule="threads-per-row=64 rows-per-block=2" | FileCheck %s --check-prefix=BOTH
// RUN: not kgen-opt %s --kgen-schedule=threads-per-row=48 2>&1 | FileCheck %s --check-prefix=BADTPR
// RUN: not kgen-opt %s --kgen-schedule="threads-per-row=512 rows-per-block=4" 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// RUN: kgen-opt %s --kgen-schedule=min-tile-threads=256 | FileCheck %s --check-prefix=MINTILE
// RUN: not kgen-opt %s --kgen-schedule=min-tile-threads=16 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: kgen-opt %s --kgen-schedule=narrow-row-threads=8 | FileCheck %s --check-prefix=NARROW8

// A chunk is 16 bytes of the widest dtype a row access moves. Threads per
// row: one per chunk up to 32 chunks; beyond, a power of two for about 4
// chunks per thread in kernels with reductions (at most 256 threads, more
// only when the row would not fit in registers; whole warps when they leave
// fewer chunk slots idle), while elementwise kernels take one chunk per
// thread and split long rows into tiles. Rows per block fill 256 threads
// (128 without reductions); rows that reduce over whole warps launch fewer
// (launchRowsPerBlock): one row of 64 threads or more a block, two of 32.
// The row is re-read when it does not fit in half of a thread's registers
// (at most 128 elements), or when the length is dynamic.

// bf16, 4096, with a reduction: 512 chunks of 8 -> 128 threads x 4 chunks
// (32 elements), 2 rows per block at most, 1 at launch.
// CHECK-LABEL: kgen.kernel @bf16_4096(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 2, chunks = 4, reread = false, launchRowsPerBlock = 1>
// Forced 32 threads: 16 chunks of the row load per thread, more than a
// thread holds of a load: re-read.
// TPR32-LABEL: kgen.kernel @bf16_4096(
// TPR32-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 16, reread = true, launchRowsPerBlock = 2>
// RPB1-LABEL: kgen.kernel @bf16_4096(
// RPB1-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 1, chunks = 4, reread = false>
// BOTH-LABEL: kgen.kernel @bf16_4096(
// BOTH-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 64, rowsPerBlock = 2, chunks = 8, reread = false>
kgen.kernel @bf16_4096(%x: !kgen.rows<bf16> {kgen.name = "x"},
                       %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %s = kgen.reduce sum %f : tensor<4096xf32> -> f32
  kgen.store %v, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// bf16, 11008, with a reduction: 1376 chunks. 256 threads x 6 would leave
// 160 chunk slots idle; 352 threads (11 warps) x 4 leave 32, the fewest of
// up to 8 chunks per thread.
// CHECK-LABEL: kgen.kernel @bf16_11008(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 352, rowsPerBlock = 1, chunks = 4, reread = false>
kgen.kernel @bf16_11008(%x: !kgen.rows<bf16> {kgen.name = "x"},
                        %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 11008 : i64}} {
  %n = arith.constant 11008 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<11008xbf16>
  %f = arith.extf %v : tensor<11008xbf16> to tensor<11008xf32>
  %s = kgen.reduce sum %f : tensor<11008xf32> -> f32
  kgen.store %v, %y[%c0] : tensor<11008xbf16>, !kgen.rows<bf16>
  kgen.return
}

// bf16, 3584: 448 chunks leave none idle over 224 threads x 2 (or 64 x 7);
// 2 is nearer the 4-chunk target. (128 x 4 left 64 idle.)
// CHECK-LABEL: kgen.kernel @bf16_3584(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 224, rowsPerBlock = 1, chunks = 2, reread = false>
kgen.kernel @bf16_3584(%x: !kgen.rows<bf16> {kgen.name = "x"},
                       %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 3584 : i64}} {
  %n = arith.constant 3584 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<3584xbf16>
  %f = arith.extf %v : tensor<3584xbf16> to tensor<3584xf32>
  %s = kgen.reduce sum %f : tensor<3584xf32> -> f32
  kgen.store %v, %y[%c0] : tensor<3584xbf16>, !kgen.rows<bf16>
  kgen.return
}

// The fallback (`_any`) of a kernel that reduces re-reads its row in a
// rolled loop instead of holding it; an elementwise fallback keeps the
// aligned variant's schedule.
// CHECK-LABEL: kgen.kernel @bf16_4096_any(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>
kgen.kernel @bf16_4096_any(%x: !kgen.rows<bf16> {kgen.name = "x"},
                           %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = any>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %s = kgen.reduce sum %f : tensor<4096xf32> -> f32
  kgen.store %v, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}
// CHECK-LABEL: kgen.kernel @bf16_4096_elementwise_any(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 2>
kgen.kernel @bf16_4096_elementwise_any(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                       %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = any>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  kgen.store %v, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// The same row without a reduction: one chunk per thread (fewer serial
// instructions per thread for few rows), so 256 threads hold half the row:
// 2 tiles. With 32 threads per row: 16 tiles of one chunk, 4 rows in a
// block of 128 threads.
// CHECK-LABEL: kgen.kernel @bf16_4096_elementwise(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 2>
// TPR32-LABEL: kgen.kernel @bf16_4096_elementwise(
// TPR32-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 4, chunks = 1, reread = false, tiles = 16>
kgen.kernel @bf16_4096_elementwise(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                   %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  kgen.store %v, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// f32, 4096, with a reduction: 1024 chunks of 4 -> 256 threads x 4 chunks,
// one row per block.
// CHECK-LABEL: kgen.kernel @f32_4096(
// CHECK-SAME: schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>
kgen.kernel @f32_4096(%x: !kgen.rows<f32> {kgen.name = "x"},
                      %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4096xf32>
  %m = kgen.reduce max %v : tensor<4096xf32> -> f32
  kgen.store %m, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// Loads bf16 but stores f32: the widest access (f32) sets the chunk to 4.
// 1024 chunks, elementwise -> at most 256 threads; with no reduction the row
// is split into 4 tiles (consecutive blocks) of one chunk per thread.
// CHECK-LABEL: kgen.kernel @mixed_widest_store(
// CHECK-SAME: schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 4>
kgen.kernel @mixed_widest_store(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                %y: !kgen.rows<f32> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  kgen.store %f, %y[%c0] : tensor<4096xf32>, !kgen.rows<f32>
  kgen.return
}

// i8 rows: 16 elements per chunk. The f32 per-row scalar is not a row access
// and does not widen the chunk. 2048 / 16 = 128 chunks -> 128 threads x 1, a
// row a block of 128 (elementwise kernels take blocks of 128 threads).
// CHECK-LABEL: kgen.kernel @i8_2048(
// CHECK-SAME: schedule = #kgen.schedule<vector = 16, threadsPerRow = 128, rowsPerBlock = 1, chunks = 1, reread = false>
kgen.kernel @i8_2048(%x: !kgen.rows<i8> {kgen.name = "x"},
                     %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 2048 : i64}} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<i8> -> tensor<2048xi8>
  %f = kgen.load %s : !kgen.scalars<f32> -> f32
  kgen.store %v, %x[%c0] : tensor<2048xi8>, !kgen.rows<i8>
  kgen.return
}

// A tiny row: 64 bf16 = 8 chunks -> 8 threads per row (less than a warp),
// one chunk each, 32 rows per block (also at launch: rows of part of a
// warp have no barrier to wait on). Forced to a warp a row, all 8 rows of
// its block at launch too: fewer would hold under 256 chunks.
// CHECK-LABEL: kgen.kernel @tiny_64(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>
// TPR32-LABEL: kgen.kernel @tiny_64(
// TPR32-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 1, reread = false>
// RPB1-LABEL: kgen.kernel @tiny_64(
// RPB1-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 1, chunks = 1, reread = false>
kgen.kernel @tiny_64(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 64 : i64}} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<64xbf16>
  %f = arith.extf %v : tensor<64xbf16> to tensor<64xf32>
  %s = kgen.reduce sum %f : tensor<64xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.return
}

// Fewer elements than a chunk: one thread per row, 128 rows per block (a
// block of 128 threads: no reductions).
// CHECK-LABEL: kgen.kernel @three(
// CHECK-SAME: schedule = #kgen.schedule<vector = 4, threadsPerRow = 1, rowsPerBlock = 128, chunks = 1, reread = false>
kgen.kernel @three(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 3 : i64}} {
  %n = arith.constant 3 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<3xf32>
  kgen.store %v, %x[%c0] : tensor<3xf32>, !kgen.rows<f32>
  kgen.return
}

// 1000 bf16 = 125 chunks (the last one partial). With a reduction: 32
// threads x 4 chunks, 3 rows a block at launch (the fewest that hold 256
// chunks); without: 128 threads x 1 chunk, one row a block of 128.
// CHECK-LABEL: kgen.kernel @bf16_1000(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 4, reread = false, launchRowsPerBlock = 3>
kgen.kernel @bf16_1000(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 1000 : i64}} {
  %n = arith.constant 1000 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<1000xbf16>
  %f = arith.extf %v : tensor<1000xbf16> to tensor<1000xf32>
  %s = kgen.reduce min %f : tensor<1000xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<1000xbf16>, !kgen.rows<bf16>
  kgen.return
}
// CHECK-LABEL: kgen.kernel @bf16_1000_elementwise(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 1, chunks = 1, reread = false>
kgen.kernel @bf16_1000_elementwise(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 1000 : i64}} {
  %n = arith.constant 1000 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<1000xbf16>
  kgen.store %v, %x[%c0] : tensor<1000xbf16>, !kgen.rows<bf16>
  kgen.return
}

// 32768 bf16 -> 512 threads x 8 chunks: 256 threads would hold 16 chunks,
// more than a thread holds of a load.
// CHECK-LABEL: kgen.kernel @bf16_32768(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 8, reread = false>
kgen.kernel @bf16_32768(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 32768 : i64}} {
  %n = arith.constant 32768 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<32768xbf16>
  %f = arith.extf %v : tensor<32768xbf16> to tensor<32768xf32>
  %s = kgen.reduce sum %f : tensor<32768xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<32768xbf16>, !kgen.rows<bf16>
  kgen.return
}

// 65536 bf16 -> 1024 threads (the cap) x 8 chunks = 64 elements per thread:
// more than the 32 a 1024-thread block's 64 registers per thread leave for
// the row, so it is re-read.
// CHECK-LABEL: kgen.kernel @bf16_65536(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 8, reread = true>
kgen.kernel @bf16_65536(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 65536 : i64}} {
  %n = arith.constant 65536 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<65536xbf16>
  %f = arith.extf %v : tensor<65536xbf16> to tensor<65536xf32>
  %s = kgen.reduce sum %f : tensor<65536xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<65536xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A long row: 131072 bf16 -> 1024 threads x 16 chunks = 128 elements per
// thread -> re-read.
// CHECK-LABEL: kgen.kernel @bf16_131072(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 16, reread = true>
kgen.kernel @bf16_131072(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 131072 : i64}} {
  %n = arith.constant 131072 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<131072xbf16>
  %f = arith.extf %v : tensor<131072xbf16> to tensor<131072xf32>
  %s = kgen.reduce sum %f : tensor<131072xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<131072xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A dynamic domain: 256 threads per row, re-read (kgen-make-variants adds
// the length-bounded variants that keep rows in registers). Forced to 32
// threads, 4 rows fill the block of 128 of a kernel without reductions.
// CHECK-LABEL: kgen.kernel @dynamic(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>
// TPR32-LABEL: kgen.kernel @dynamic(
// TPR32-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 4, chunks = 0, reread = true>
// BOTH-LABEL: kgen.kernel @dynamic(
// BOTH-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 64, rowsPerBlock = 2, chunks = 0, reread = true>
kgen.kernel @dynamic(%x: !kgen.rows<bf16> {kgen.name = "x"},
                     %d: index {kgen.name = "d"}) attributes {dims = {}} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A dynamic row of whole chunks that reduces: the launch picks its threads
// and rows a block (up to 1024 threads). Forced threads or rows keep a fixed
// width; a row that may end inside a chunk (no kgen.divisibility) too.
// CHECK-LABEL: kgen.kernel @dynamic_reduce(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 0, reread = true, launchThreads = true>
// TPR32-LABEL: kgen.kernel @dynamic_reduce(
// TPR32-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 0, reread = true, launchRowsPerBlock = 2>
// RPB1-LABEL: kgen.kernel @dynamic_reduce(
// RPB1-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>
kgen.kernel @dynamic_reduce(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                            %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
// Held variants (kgen-make-variants' held kind): threads chosen at
// launch, at most 512 a row of several chunks each (or the variant's maxThreads),
// one row a block; one chunk a thread takes a block of up to 256 threads, x
// a row by y rows.
// CHECK-LABEL: kgen.kernel @held_one(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, launchThreads = true>
// CHECK-LABEL: kgen.kernel @held_four(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 4, reread = false, launchThreads = true>
// CHECK-LABEL: kgen.kernel @held_four_narrow(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false, launchThreads = true>
kgen.kernel @held_one(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 1>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
kgen.kernel @held_four(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                       %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 4>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
kgen.kernel @held_four_narrow(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                              %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 4, maxThreads = 256>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
// Rows of a range of lengths (kgen-make-variants' warp kind, its
// minLength and maxLength, `_vec_warp`): a warp a row holding the longest, 8 rows a
// block, launched on as many as the shortest row's specialized kernel takes
// (rows of 65 chunks: 4, for 256 chunks a block). Its minRows does
// not make it a `_vec_rows` (which goes when it schedules as its base).
// CHECK-LABEL: kgen.kernel @warp_rows(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 32, rowsPerBlock = 8, chunks = 4, reread = false, launchRowsPerBlock = 4>
kgen.kernel @warp_rows(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                       %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = warp, minLength = 520, maxLength = 1024, minRows = 4096>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
// CHECK-LABEL: kgen.kernel @dynamic_reduce_any_length(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>
kgen.kernel @dynamic_reduce_any_length(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                                       %d: index {kgen.divisibility = 4 : i64, kgen.name = "d"})
    attributes {dims = {}} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A forced schedule that #kgen.schedule rejects fails the pass.
// BADTPR: error: 'kgen.kernel' op invalid schedule: threads_per_row must be a power of two or a multiple of 32 in [1, 1024], got 48
// BADBLOCK: error: 'kgen.kernel' op invalid schedule: a block of threads_per_row * rows_per_block = 512 * 4 threads is outside [1, 1024]

// An elementwise row of 11008 bf16 (1376 chunks): tiles of whole warps that
// waste the fewest slots: 11 tiles of 128 threads x 1 chunk (1408 slots),
// not 3 tiles of 256 x 2 (1536); a block of 128 threads holds one row's tile.
// CHECK-LABEL: kgen.kernel @bf16_11008_elementwise(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 11>
// With tiles of at least 256 threads: 6 of 256 (1536 slots).
// MINTILE-LABEL: kgen.kernel @bf16_11008_elementwise(
// MINTILE-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 6>
// BADTILE: kgen-schedule: option 'min-tile-threads' must lie in [32, 1024], not 16
kgen.kernel @bf16_11008_elementwise(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                    %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 11008 : i64}} {
  %n = arith.constant 11008 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<11008xbf16>
  kgen.store %v, %y[%c0] : tensor<11008xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A variant for many rows (the rows kind): one row per block, at most 128
// threads per row (bf16 8192: 128 x 8 chunks, where _vec takes 256 x 4).
// CHECK-LABEL: kgen.kernel @many_vec_rows(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 1, chunks = 8, reread = false>
// CHECK-LABEL: kgen.kernel @many_vec(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>
kgen.kernel @many_vec_rows(%x: !kgen.rows<bf16> {kgen.name = "x"},
                           %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 8192 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f = arith.extf %v : tensor<8192xbf16> to tensor<8192xf32>
  %t = kgen.reduce sum %f : tensor<8192xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
kgen.kernel @many_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                      %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 8192 : i64}} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<8192xbf16>
  %f = arith.extf %v : tensor<8192xbf16> to tensor<8192xf32>
  %t = kgen.reduce sum %f : tensor<8192xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// bf16 2048: the variant would take _vec's 64 threads x 4 chunks, differing
// only in the rows a block holds, which the launch picks: dropped.
// CHECK-NOT: kgen.kernel @short_vec_rows(
// CHECK-LABEL: kgen.kernel @short_vec(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 64, rowsPerBlock = 4, chunks = 4, reread = false, launchRowsPerBlock = 1>
kgen.kernel @short_vec_rows(%x: !kgen.rows<bf16> {kgen.name = "x"},
                            %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 2048 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<2048xbf16>
  %f = arith.extf %v : tensor<2048xbf16> to tensor<2048xf32>
  %t = kgen.reduce sum %f : tensor<2048xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
kgen.kernel @short_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                       %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 2048 : i64}} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<2048xbf16>
  %f = arith.extf %v : tensor<2048xbf16> to tensor<2048xf32>
  %t = kgen.reduce sum %f : tensor<2048xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// Many groups of 128 (16 chunks) stored as int8: the variant for many rows
// takes narrow-row-threads (4) threads of 4 chunks a group and 64 groups a
// block, from 57344 groups (narrow-rows-min-threads over 4); _vec keeps a
// chunk a thread. Stored as bf16, the variant would schedule as _vec:
// dropped.
// CHECK-LABEL: kgen.kernel @group_i8_vec_rows(
// CHECK-SAME: kgen.variant = #kgen.variant<kind = rows, minRows = 57344>
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 4, rowsPerBlock = 64, chunks = 4, reread = false>
// CHECK-LABEL: kgen.kernel @group_i8_vec(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>
// CHECK-NOT: kgen.kernel @group_bf16_vec_rows(
// CHECK-LABEL: kgen.kernel @group_bf16_vec(
// NARROW8-LABEL: kgen.kernel @group_i8_vec_rows(
// NARROW8-SAME: kgen.variant = #kgen.variant<kind = rows, minRows = 28672>
// NARROW8-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 2, reread = false>
kgen.kernel @group_i8_vec_rows(%x: !kgen.rows<bf16> {kgen.name = "x"},
                               %y: !kgen.rows<i8> {kgen.name = "y"},
                               %g: index {kgen.name = "groups"})
    attributes {dims = {n = 128 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %xh = kgen.heads [%x] counts [%g] length %n : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %yh = kgen.heads [%y] counts [%g] length %n : !kgen.rows<i8> -> !kgen.rows<i8>
  %v = kgen.load %xh[%c0] : !kgen.rows<bf16> -> tensor<128xbf16>
  %f = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %m = kgen.reduce max %f : tensor<128xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<128xf32>
  %q = arith.divf %f, %b : tensor<128xf32>
  %i = arith.fptosi %q : tensor<128xf32> to tensor<128xi8>
  kgen.store %i, %yh[%c0] : tensor<128xi8>, !kgen.rows<i8>
  kgen.return
}
kgen.kernel @group_i8_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                          %y: !kgen.rows<i8> {kgen.name = "y"},
                          %g: index {kgen.name = "groups"})
    attributes {dims = {n = 128 : i64}} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %xh = kgen.heads [%x] counts [%g] length %n : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %yh = kgen.heads [%y] counts [%g] length %n : !kgen.rows<i8> -> !kgen.rows<i8>
  %v = kgen.load %xh[%c0] : !kgen.rows<bf16> -> tensor<128xbf16>
  %f = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %m = kgen.reduce max %f : tensor<128xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<128xf32>
  %q = arith.divf %f, %b : tensor<128xf32>
  %i = arith.fptosi %q : tensor<128xf32> to tensor<128xi8>
  kgen.store %i, %yh[%c0] : tensor<128xi8>, !kgen.rows<i8>
  kgen.return
}
kgen.kernel @group_bf16_vec_rows(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                 %y: !kgen.rows<bf16> {kgen.name = "y"},
                                 %g: index {kgen.name = "groups"})
    attributes {dims = {n = 128 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %xh = kgen.heads [%x] counts [%g] length %n : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %yh = kgen.heads [%y] counts [%g] length %n : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %v = kgen.load %xh[%c0] : !kgen.rows<bf16> -> tensor<128xbf16>
  %f = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %m = kgen.reduce max %f : tensor<128xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<128xf32>
  %q = arith.divf %f, %b : tensor<128xf32>
  %t = arith.truncf %q : tensor<128xf32> to tensor<128xbf16>
  kgen.store %t, %yh[%c0] : tensor<128xbf16>, !kgen.rows<bf16>
  kgen.return
}
kgen.kernel @group_bf16_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                            %y: !kgen.rows<bf16> {kgen.name = "y"},
                            %g: index {kgen.name = "groups"})
    attributes {dims = {n = 128 : i64}} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %xh = kgen.heads [%x] counts [%g] length %n : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %yh = kgen.heads [%y] counts [%g] length %n : !kgen.rows<bf16> -> !kgen.rows<bf16>
  %v = kgen.load %xh[%c0] : !kgen.rows<bf16> -> tensor<128xbf16>
  %f = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %m = kgen.reduce max %f : tensor<128xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<128xf32>
  %q = arith.divf %f, %b : tensor<128xf32>
  %t = arith.truncf %q : tensor<128xf32> to tensor<128xbf16>
  kgen.store %t, %yh[%c0] : tensor<128xbf16>, !kgen.rows<bf16>
  kgen.return
}

// bf16 16384 does not fit 128 threads (16 chunks): the variant for many rows
// takes 256 x 8 on one row a block, and _vec, for fewer rows, 512 x 4.
// CHECK-LABEL: kgen.kernel @long_vec_rows(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>
// CHECK-LABEL: kgen.kernel @long_vec(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 512, rowsPerBlock = 1, chunks = 4, reread = false>
kgen.kernel @long_vec_rows(%x: !kgen.rows<bf16> {kgen.name = "x"},
                           %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 16384 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %t = kgen.reduce sum %f : tensor<16384xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
kgen.kernel @long_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                      %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 16384 : i64}} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %t = kgen.reduce sum %f : tensor<16384xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// A row stored narrower than loaded (fp8) keeps 256 x 8.
// CHECK-LABEL: kgen.kernel @long_narrow_vec(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>
kgen.kernel @long_narrow_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                             %y: !kgen.rows<f8E4M3FN> {kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %t = kgen.reduce max %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %t : f32 -> tensor<16384xf32>
  %d = arith.divf %f, %b : tensor<16384xf32>
  %q = arith.truncf %d : tensor<16384xf32> to tensor<16384xf8E4M3FN>
  kgen.store %q, %y[%c0] : tensor<16384xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.return
}

// A sum of exponentials over the row's max (softmax) keeps 256 x 8.
// CHECK-LABEL: kgen.kernel @long_expsum_vec(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>
kgen.kernel @long_expsum_vec(%x: !kgen.rows<bf16> {kgen.name = "x"},
                             %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 16384 : i64}} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %m = kgen.reduce max %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<16384xf32>
  %d = arith.subf %f, %b : tensor<16384xf32>
  %e = math.exp %d : tensor<16384xf32>
  %t = kgen.reduce sum %e : tensor<16384xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// Nor is one that would re-read its rows (bf16 65536).
// CHECK-NOT: kgen.kernel @huge_vec_rows(
kgen.kernel @huge_vec_rows(%x: !kgen.rows<bf16> {kgen.name = "x"},
                           %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 65536 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192>} {
  %n = arith.constant 65536 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<65536xbf16>
  %f = arith.extf %v : tensor<65536xbf16> to tensor<65536xf32>
  %t = kgen.reduce sum %f : tensor<65536xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// A variant for few rows (the cluster kind): the row over a cluster of blocks,
// equal spans of whole warps, about 128 chunks a block (bf16 4096: 4 blocks
// of 128 threads x 1 chunk; 16384: 8 of 256 x 1). The forced threads and
// rows do not apply. A row no 2 to 8 blocks split so (bf16 11008, 43 warps)
// would need masks: the variant is dropped.
// CHECK-LABEL: kgen.kernel @few_vec_cluster(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 4, cluster = true>
// TPR32-LABEL: kgen.kernel @few_vec_cluster(
// TPR32-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 4, cluster = true>
// CHECK-LABEL: kgen.kernel @longfew_vec_cluster(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 8, cluster = true>
// CHECK-NOT: kgen.kernel @oddfew_vec_cluster(
kgen.kernel @few_vec_cluster(%x: !kgen.rows<bf16> {kgen.name = "x"},
                             %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %t = kgen.reduce sum %f : tensor<4096xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
kgen.kernel @longfew_vec_cluster(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                 %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 16384 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %t = kgen.reduce sum %f : tensor<16384xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
kgen.kernel @oddfew_vec_cluster(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 11008 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  %n = arith.constant 11008 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<11008xbf16>
  %f = arith.extf %v : tensor<11008xbf16> to tensor<11008xf32>
  %t = kgen.reduce sum %f : tensor<11008xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// Two rows held across the reduction (fused_add_rmsnorm's x and residual)
// split the 4 chunks a thread aims at: 512 chunks on 256 threads x 2. A
// row and a held vector (rmsnorm_quant_dynamic's weight) keep 128 x 4, as
// do two rows that no power of two of threads splits exactly (3072: 384
// chunks).
// CHECK-LABEL: kgen.kernel @two_rows_4096(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 2, reread = false>
// CHECK-LABEL: kgen.kernel @row_and_vector_4096(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 2, chunks = 4, reread = false, launchRowsPerBlock = 1>
// CHECK-LABEL: kgen.kernel @two_rows_3072(
// CHECK-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 2, chunks = 3, reread = false, launchRowsPerBlock = 1>
kgen.kernel @two_rows_4096(%x: !kgen.rows<bf16> {kgen.name = "x"},
                           %r: !kgen.rows<bf16> {kgen.name = "r"},
                           %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %b = kgen.load %r[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %s = arith.addf %a, %b : tensor<4096xbf16>
  %f = arith.extf %s : tensor<4096xbf16> to tensor<4096xf32>
  %t = kgen.reduce sum %f : tensor<4096xf32> -> f32
  kgen.store %s, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}
kgen.kernel @row_and_vector_4096(%x: !kgen.rows<bf16> {kgen.name = "x"},
                                 %w: !kgen.vector<bf16> {kgen.name = "w"},
                                 %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %b = kgen.load %w[%c0] : !kgen.vector<bf16> -> tensor<4096xbf16>
  %s = arith.mulf %a, %b : tensor<4096xbf16>
  %f = arith.extf %s : tensor<4096xbf16> to tensor<4096xf32>
  %t = kgen.reduce max %f : tensor<4096xf32> -> f32
  kgen.store %s, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}
kgen.kernel @two_rows_3072(%x: !kgen.rows<bf16> {kgen.name = "x"},
                           %r: !kgen.rows<bf16> {kgen.name = "r"},
                           %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 3072 : i64}} {
  %n = arith.constant 3072 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<3072xbf16>
  %b = kgen.load %r[%c0] : !kgen.rows<bf16> -> tensor<3072xbf16>
  %s = arith.addf %a, %b : tensor<3072xbf16>
  %f = arith.extf %s : tensor<3072xbf16> to tensor<3072xf32>
  %t = kgen.reduce sum %f : tensor<3072xf32> -> f32
  kgen.store %s, %y[%c0] : tensor<3072xbf16>, !kgen.rows<bf16>
  kgen.return
}
