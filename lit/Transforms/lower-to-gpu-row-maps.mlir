// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | kgen-opt -split-input-file | FileCheck %s

// x[r] * table[index[r / n]] over heads of q and k: the heads' row pointer
// is picked per thread (q below h_q, else k), the table row is clamped to
// row 0 when the index is outside the table, and its loads turn into NaN
// there.
// CHECK-LABEL: gpu.func @row_maps(
// CHECK-SAME: kgen.abi = ["ptr:q", "ptr:k", "ptr:positions", "ptr:table", "stride:q", "stride:k", "stride:table", "dim:hq", "dim:hk", "dim:rows", "rows"]
// The positions' row, row / (hq + hk); then the heads: token = row /
// (hq + hk), head = row % (hq + hk). The gather comes after them: it loads
// its index, which must follow any prefetch (lower-to-gpu-prefetch.mlir).
// CHECK: arith.divui %{{.+}}, %{{.+}} : i64
// CHECK: %[[TOK:.+]] = arith.divui %{{.+}}, %[[G:.+]] : i64
// CHECK: %[[HEAD:.+]] = arith.remui %{{.+}}, %[[G]] : i64
// CHECK: %[[ISQ:.+]] = arith.cmpi ult, %[[HEAD]], %{{.+}} : i64
// CHECK: %[[QK:.+]] = arith.select %[[ISQ]], %{{.+}}, %{{.+}} : !llvm.ptr<1>
// The gather, at row / (hq + hk): one unsigned compare covers negative
// indices too.
// CHECK: %[[IDX:.+]] = llvm.load %{{.+}} invariant {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[VALID:.+]] = arith.cmpi ult, %[[IDX]], %{{.+}} : i64
// CHECK: arith.select %[[VALID]], %[[IDX]], %{{.+}} : i64
// q and k are written: their loads are not invariant.
// CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[T:.+]] = llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[NAN:.+]] = arith.constant dense<0x7FC00000> : vector<4xf32>
// CHECK: arith.select %[[VALID]], %[[T]], %[[NAN]] : vector<4xf32>
kgen.kernel @row_maps(%q: !kgen.rows<f32> {kgen.name = "q", kgen.align = 16 : i64},
                      %k: !kgen.rows<f32> {kgen.name = "k", kgen.align = 16 : i64},
                      %p: !kgen.scalars<i64> {kgen.name = "positions"},
                      %t: !kgen.rows<f32> {kgen.name = "table", kgen.align = 16 : i64},
                      %hq: index {kgen.name = "hq"},
                      %hk: index {kgen.name = "hk"},
                      %rows: index {kgen.name = "rows"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %c0 = arith.constant 0 : index
  %h = arith.addi %hq, %hk : index
  %pg = kgen.group %p by %h : !kgen.scalars<i64>
  %cs = kgen.gather %t[%pg] rows %rows : !kgen.rows<f32>, !kgen.scalars<i64>
  %qk = kgen.heads [%q, %k] counts [%hq, %hk] length %c4
      : !kgen.rows<f32>, !kgen.rows<f32> -> !kgen.rows<f32>
  %a = kgen.load %qk[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %c = kgen.load %cs[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %o = arith.mulf %a, %c : tensor<4xf32>
  kgen.store %o, %qk[%c0] {vector_width = 4 : i64} : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// Heads padded inside a row: head h of a part starts (h - first) * pitch
// elements into its token's row, the part's own pitch argument.
// CHECK-LABEL: gpu.func @padded_heads(
// CHECK-SAME: "dim:hq", "dim:pq", "dim:hk", "dim:pk", "rows"
// CHECK: %[[PQX:.+]] = arith.index_cast %arg5 : i64 to index
// CHECK: %[[PKX:.+]] = arith.index_cast %arg7 : i64 to index
// CHECK: %[[HEAD:.+]] = arith.remui %{{.+}}, %{{.+}} : i64
// CHECK: %[[PK:.+]] = arith.index_cast %[[PKX]] : index to i64
// CHECK: %[[KH:.+]] = arith.subi %[[HEAD]], %{{.+}} : i64
// CHECK-NEXT: arith.muli %[[KH]], %[[PK]] : i64
// CHECK: %[[PQ:.+]] = arith.index_cast %[[PQX]] : index to i64
// CHECK-NEXT: %[[QH:.+]] = arith.subi %[[HEAD]], %{{.+}} : i64
// CHECK-NEXT: arith.muli %[[QH]], %[[PQ]] : i64
kgen.kernel @padded_heads(%q: !kgen.rows<f32> {kgen.name = "q", kgen.align = 16 : i64},
                          %k: !kgen.rows<f32> {kgen.name = "k", kgen.align = 16 : i64},
                          %hq: index {kgen.name = "hq"},
                          %pq: index {kgen.name = "pq"},
                          %hk: index {kgen.name = "hk"},
                          %pk: index {kgen.name = "pk"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %c0 = arith.constant 0 : index
  %qk = kgen.heads [%q, %k] counts [%hq, %hk] pitches [%pq, %pk] length %c4
      : !kgen.rows<f32>, !kgen.rows<f32> -> !kgen.rows<f32>
  %a = kgen.load %qk[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %o = arith.mulf %a, %a : tensor<4xf32>
  kgen.store %o, %qk[%c0] {vector_width = 4 : i64} : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// Per-head scalars: a scalars tensor under kgen.heads takes a row stride, and
// head h of token t is element t * stride + h * pitch. The launch keeps them
// under 2^32 elements, so heads of their count divide and multiply in i32.
// CHECK-LABEL: gpu.func @per_head_scalars(
// CHECK-SAME: %[[S:arg[0-9]+]]: !llvm.ptr<1>, %arg{{[0-9]+}}: i64, %[[SS:arg[0-9]+]]: i64
// CHECK-SAME: kgen.abi = ["ptr:x", "ptr:scale", "stride:x", "stride:scale", "dim:groups", "dim:pitch", "rows"]
// x's heads first, then the scale's, each with the count's 32-bit division:
// CHECK: arith.divui %{{.+}}, %{{.+}} : i32
// CHECK: llvm.getelementptr %arg0[%{{.+}}] {{.+}} f32
// CHECK: %[[TOK:.+]] = arith.divui %[[R:.+]], %[[G:.+]] : i32
// CHECK-NEXT: %[[HEAD:.+]] = arith.remui %[[R]], %[[G]] : i32
// CHECK: %[[SS32:.+]] = arith.trunci %[[SS]] : i64 to i32
// CHECK: %[[H:.+]] = arith.subi %[[HEAD]], %{{.+}} : i32
// CHECK-NEXT: %[[HOFF:.+]] = arith.muli %[[H]], %{{.+}} : i32
// CHECK-NEXT: %[[TOFF:.+]] = arith.muli %[[TOK]], %[[SS32]] : i32
// CHECK-NEXT: %[[OFF32:.+]] = arith.addi %[[TOFF]], %[[HOFF]] : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.extui %[[OFF32]] : i32 to i64
// CHECK-NEXT: %[[P:.+]] = llvm.getelementptr %[[S]][%[[OFF]]]
// CHECK: llvm.store %{{.+}}, %[[P]] {alignment = 4 : i64} : f32, !llvm.ptr<1>
kgen.kernel @per_head_scalars(%x: !kgen.rows<f32> {kgen.name = "x", kgen.align = 16 : i64},
                              %s: !kgen.scalars<f32> {kgen.name = "scale"},
                              %h: index {kgen.name = "groups"},
                              %p: index {kgen.name = "pitch"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %c0 = arith.constant 0 : index
  %xh = kgen.heads [%x] counts [%h] length %c4
      : !kgen.rows<f32> -> !kgen.rows<f32>
  %sh = kgen.heads [%s] counts [%h] pitches [%p] length %c1
      : !kgen.scalars<f32> -> !kgen.scalars<f32>
  %a = kgen.load %xh[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %m = kgen.reduce max %a : tensor<4xf32> -> f32
  kgen.store %m, %sh : f32, !kgen.scalars<f32>
  kgen.return
}

// -----

// Part vectors: the weight of a row program is its part's vector, picked
// as its head is, with no token or head offset.
// CHECK-LABEL: gpu.func @part_vectors(
// CHECK-SAME: %[[WQ:arg[0-9]+]]: !llvm.ptr<1>, %[[WK:arg[0-9]+]]: !llvm.ptr<1>, %arg{{[0-9]+}}: i64
// CHECK-SAME: kgen.abi = ["ptr:q", "ptr:k", "ptr:wq", "ptr:wk", "stride:q", "stride:k", "dim:hq", "dim:hk", "rows"]
// CHECK: %[[HEAD:.+]] = arith.remui %{{.+}}, %{{.+}} : i64
// CHECK: %[[ISQ:.+]] = arith.cmpi ult, %[[HEAD]], %{{.+}} : i64
// CHECK: %[[QK:.+]] = arith.select %[[ISQ]], %{{.+}}, %{{.+}} : !llvm.ptr<1>
// CHECK: %[[WHEAD:.+]] = arith.remui %{{.+}}, %{{.+}} : i64
// CHECK-NOT: arith.muli
// CHECK: %[[ISQW:.+]] = arith.cmpi ult, %[[WHEAD]], %{{.+}} : i64
// CHECK-NEXT: %[[W:.+]] = arith.select %[[ISQW]], %[[WQ]], %[[WK]] : !llvm.ptr<1>
// CHECK: llvm.load %{{.+}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
kgen.kernel @part_vectors(%q: !kgen.rows<f32> {kgen.name = "q", kgen.align = 16 : i64},
                          %k: !kgen.rows<f32> {kgen.name = "k", kgen.align = 16 : i64},
                          %wq: !kgen.vector<f32> {kgen.name = "wq", kgen.align = 16 : i64},
                          %wk: !kgen.vector<f32> {kgen.name = "wk", kgen.align = 16 : i64},
                          %hq: index {kgen.name = "hq"},
                          %hk: index {kgen.name = "hk"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %c0 = arith.constant 0 : index
  %qk = kgen.heads [%q, %k] counts [%hq, %hk] length %c4
      : !kgen.rows<f32>, !kgen.rows<f32> -> !kgen.rows<f32>
  %w = kgen.heads [%wq, %wk] counts [%hq, %hk] length %c4
      : !kgen.vector<f32>, !kgen.vector<f32> -> !kgen.rows<f32>
  %a = kgen.load %qk[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %b = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  %o = arith.mulf %a, %b : tensor<4xf32>
  kgen.store %o, %qk[%c0] {vector_width = 4 : i64} : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A per-batch row (row / n) that only the stores read (adaln's scale): its
// pointer and the division come after the held row's loads, which they
// would otherwise delay. The row held for the reduction (x) is loaded first.
// CHECK-LABEL: gpu.func @late_group(
// CHECK-NOT: arith.divui %{{.+}}, %{{.+}} : i64
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK: arith.divui %{{.+}}, %{{.+}} : i64
// CHECK: gpu.shuffle
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK: llvm.store {{.*}} : vector<4xf32>
kgen.kernel @late_group(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                        %s: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "scale"},
                        %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"},
                        %n: index {kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %c128 = arith.constant 128 : index
  kgen.domain %c128
  %c0 = arith.constant 0 : index
  %sb = kgen.group %s by %n : !kgen.rows<f32>
  %a = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<128xf32>
  %sq = arith.mulf %a, %a : tensor<128xf32>
  %t = kgen.reduce sum %sq : tensor<128xf32> -> f32
  %bt = kgen.broadcast %t : f32 -> tensor<128xf32>
  %o = arith.mulf %a, %bt : tensor<128xf32>
  %sv = kgen.load %sb[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<128xf32>
  %r = arith.mulf %sv, %o : tensor<128xf32>
  kgen.store %r, %y[%c0] {vector_width = 4 : i64} : tensor<128xf32>, !kgen.rows<f32>
  kgen.return
}
