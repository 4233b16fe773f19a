// RUN: kgen-opt %s --kgen-make-variants --kgen-schedule=streaming-rows-loads=2 | FileCheck %s
// RUN: kgen-opt %s --kgen-make-variants --kgen-schedule | FileCheck %s --check-prefix=OFF
// RUN: kgen-opt %s --kgen-make-variants --kgen-schedule="streaming-rows-loads=2 streaming-rows-min-threads=229376" | FileCheck %s --check-prefix=FEWER
//
// A row without reductions gets a `_vec_rows` candidate; with
// streaming-rows-loads it holds that many chunks a thread over the views it
// loads, from launches of streaming-rows-min-threads threads (1048576 / 256
// threads a row = 4096 rows). Where that is one chunk, as `_vec`, or without
// the option, the candidate is erased.

// CHECK-LABEL: kgen.kernel @one_view_vec_rows(
// CHECK-SAME: kind = rows, minRows = 4096
// CHECK-SAME: threadsPerRow = 256, rowsPerBlock = 1, chunks = 2, reread = false>
// CHECK-LABEL: kgen.kernel @one_view_vec(
// CHECK-SAME: chunks = 1, reread = false, tiles = 2>
// FEWER: kgen.kernel @one_view_vec_rows({{.*}}minRows = 896
// OFF-NOT: _vec_rows
kgen.kernel @one_view(%x: !kgen.rows<bf16> {kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {d = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %m = arith.mulf %v, %v : tensor<4096xbf16>
  kgen.store %m, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// Gate and up: two views, one chunk each already.
// CHECK-NOT: @two_views_vec_rows
// CHECK-LABEL: kgen.kernel @two_views_vec(
kgen.kernel @two_views(%x: !kgen.rows<bf16> {kgen.name = "x"},
                       %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {d = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %up = kgen.load %x[%n] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %gate = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %m = arith.mulf %gate, %up : tensor<4096xbf16>
  kgen.store %m, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}
