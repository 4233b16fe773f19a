// The launch policy is one attribute of the module, set from options a
// profile may change; kgen-make-variants and kgen-schedule read it.
// RUN: kgen-opt %s --kgen-launch-policy --kgen-make-variants | FileCheck %s
// RUN: kgen-opt %s --kgen-launch-policy='many-rows=4096 warp-row-chunks=8' --kgen-make-variants | FileCheck %s --check-prefix=TUNED
// RUN: kgen-opt %s --kgen-launch-policy='max-one-chunk-threads=256' --kgen-make-variants | FileCheck %s --check-prefix=NOWARP
// RUN: kgen-opt %s --kgen-launch-policy --kgen-make-variants --kgen-schedule | FileCheck %s --check-prefix=SCHED
// RUN: kgen-opt %s --kgen-launch-policy='min-block-chunks=1024' --kgen-make-variants --kgen-schedule | FileCheck %s --check-prefix=SCHED-TUNED
// Without the pass (a lit test of one pass), the defaults hold.
// RUN: kgen-opt %s --kgen-make-variants | FileCheck %s --check-prefix=UNSET
// A value no block can take is the user's error, named, before any kernel.
// RUN: not kgen-opt %s --kgen-launch-policy='rows-block=100' 2>&1 | FileCheck %s --check-prefix=POW2
// RUN: not kgen-opt %s --kgen-launch-policy='many-rows=0' 2>&1 | FileCheck %s --check-prefix=ZERO

// CHECK: module attributes {kgen.launch_policy = #kgen.launch_policy<{many_rows = 8192 : i64, many_rows_threads = 128 : i64, max_one_chunk_threads = 64 : i64, max_threads_per_row = 256 : i64, min_block_chunks = 256 : i64, min_block_threads = 64 : i64, reread_chunks = 8 : i64, rows_block = 256 : i64, warp_row_chunks = 4 : i64}>}
// TUNED: module attributes {kgen.launch_policy = #kgen.launch_policy<{many_rows = 4096 : i64, {{.*}}, warp_row_chunks = 8 : i64}>}
// UNSET-NOT: kgen.launch_policy
// POW2: kgen-launch-policy: option 'rows-block' is out of range
// ZERO: kgen-launch-policy: option 'many-rows' is out of range

// A warp holds rows of max-one-chunk-threads + 1 to 32 x warp-row-chunks
// chunks (of 8 elements); none when that range is empty.
// CHECK: kgen.kernel @sumsq_vec_warp({{.*}}kgen.variant = #kgen.variant<kind = warp, minLength = 520, maxLength = 1024
// TUNED: kgen.kernel @sumsq_vec_warp({{.*}}kgen.variant = #kgen.variant<kind = warp, minLength = 520, maxLength = 2048
// NOWARP-NOT: _vec_warp
kgen.kernel @sumsq(%x: !kgen.rows<bf16> {kgen.name = "x"},
                   %s: !kgen.scalars<f32> {kgen.name = "s"},
                   %d: index {kgen.name = "d"}) attributes {dims = {}} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %fa = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %t = kgen.reduce sum %fa : tensor<?xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// `_vec_rows` is launched from many-rows rows.
// CHECK: kgen.kernel @norm_vec_rows({{.*}}kgen.variant = #kgen.variant<kind = rows, minRows = 8192, priority = 4>
// TUNED: kgen.kernel @norm_vec_rows({{.*}}kgen.variant = #kgen.variant<kind = rows, minRows = 4096, priority = 4>
// UNSET: kgen.kernel @norm_vec_rows({{.*}}kgen.variant = #kgen.variant<kind = rows, minRows = 8192, priority = 4>
// `_vec`'s rows of 512 chunks launch one a block (64 threads and 256 chunks
// are met by one row of 128 threads); with min-block-chunks 1024, both rows
// of the block.
// SCHED: kgen.kernel @norm_vec({{.*}}schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 2, chunks = 4, reread = false, launchRowsPerBlock = 1>
// SCHED-TUNED: kgen.kernel @norm_vec({{.*}}schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 2, chunks = 4, reread = false>
kgen.kernel @norm(%x: !kgen.rows<bf16> {kgen.name = "x"},
                  %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %t = kgen.reduce sum %f : tensor<4096xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
