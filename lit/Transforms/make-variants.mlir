// RUN: kgen-opt %s --kgen-make-variants | FileCheck %s
// Running the pass again changes nothing: kernels with kgen.variant are split.
// RUN: kgen-opt %s --kgen-make-variants --kgen-make-variants | FileCheck %s
// RUN: kgen-opt %s --kgen-make-variants=clusters=true | FileCheck %s --check-prefix=CLUSTERS
// Without clusters (before sm_90), no kernel gets a cluster variant.
// CHECK-NOT: _vec_cluster

// Each kernel becomes @NAME_vec (16-byte aligned tensors, the dynamic dims
// that place accesses or size the rows a multiple of 16: here d, the domain
// and the load's start, not e, which places nothing) followed by @NAME_any
// (element alignment, no divisibility).
// A scalars tensor, moved one element at a time, keeps element alignment.
// Scalars (f32, i32) get no assumption. The body is cloned unchanged.

// CHECK-LABEL: kgen.kernel @k_vec(
// CHECK-SAME: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"}
// CHECK-SAME: !kgen.vector<f32> {kgen.align = 16 : i64, kgen.name = "w"}
// CHECK-SAME: !kgen.scalars<i8> {kgen.align = 1 : i64, kgen.name = "s"}
// CHECK-SAME: f32 {kgen.name = "eps"}
// CHECK-SAME: i32 {kgen.name = "k"}
// CHECK-SAME: index {kgen.divisibility = 16 : i64, kgen.name = "d"}
// CHECK-SAME: index {kgen.divisibility = 1 : i64, kgen.name = "e"})
// CHECK-SAME: attributes {dims = {}, kgen.variant = #kgen.variant<kind = vec, priority = 5>}
// CHECK-NEXT: kgen.domain
// CHECK-NEXT: arith.constant 3 : index
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] : !kgen.rows<bf16> -> tensor<?xbf16>
// CHECK-NEXT: kgen.store
// CHECK-NEXT: kgen.return

// Element alignment: 2 bytes for bf16, 4 for f32, 1 for i8.
// CHECK-LABEL: kgen.kernel @k_any(
// CHECK-SAME: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "x"}
// CHECK-SAME: !kgen.vector<f32> {kgen.align = 4 : i64, kgen.name = "w"}
// CHECK-SAME: !kgen.scalars<i8> {kgen.align = 1 : i64, kgen.name = "s"}
// CHECK-SAME: f32 {kgen.name = "eps"}
// CHECK-SAME: i32 {kgen.name = "k"}
// CHECK-SAME: index {kgen.divisibility = 1 : i64, kgen.name = "d"}
// CHECK-SAME: index {kgen.divisibility = 1 : i64, kgen.name = "e"})
// CHECK-SAME: attributes {dims = {}, kgen.variant = #kgen.variant<kind = any, priority = 7>}
// CHECK-NEXT: kgen.domain
// CHECK-NEXT: arith.constant 3 : index
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] : !kgen.rows<bf16> -> tensor<?xbf16>
// CHECK-NEXT: kgen.store
// CHECK-NEXT: kgen.return
kgen.kernel @k(%x: !kgen.rows<bf16> {kgen.name = "x"},
               %w: !kgen.vector<f32> {kgen.name = "w"},
               %s: !kgen.scalars<i8> {kgen.name = "s"},
               %eps: f32 {kgen.name = "eps"},
               %k: i32 {kgen.name = "k"},
               %d: index {kgen.name = "d"},
               %e: index {kgen.name = "e"}) attributes {dims = {}} {
  kgen.domain %d
  %c3 = arith.constant 3 : index
  %v = kgen.load %x[%c3] : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.store %v, %x[%c3] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A dynamic kernel that reduces also gets the variants that hold its row in
// 1, 2, 4 or 8 chunks per thread over threads chosen at launch, after the
// exact-length ones: those whose held loads fit 64 elements a thread. Here
// two bf16 row loads feed the reduction (16 elements a chunk): 1, 2 and 4.
// First of all, when 4 chunks fit, `_vec_warp`: rows of 65 to 128 chunks of
// 8 elements, a warp each, on at least 4096 rows. The widest, 4 chunks, is
// split: `_vec_hold4` on at most 256 threads, `_vec_hold4_wide` on more
// (their registers differ, kgen-lower-to-gpu).
// CHECK-LABEL: kgen.kernel @sumsq_vec_warp(
// CHECK-SAME: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
// CHECK-SAME: attributes {dims = {}, kgen.variant = #kgen.variant<kind = warp, minLength = 520, maxLength = 1024, minRows = 4096>}
// CHECK-LABEL: kgen.kernel @sumsq_vec_n16384(
// CHECK-LABEL: kgen.kernel @sumsq_vec_hold1(
// CHECK-SAME: kgen.variant = #kgen.variant<kind = held, chunks = 1, priority = 2>
// CHECK-LABEL: kgen.kernel @sumsq_vec_hold2(
// CHECK-SAME: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
// CHECK-SAME: attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 2, priority = 2>}
// CHECK-LABEL: kgen.kernel @sumsq_vec_hold4(
// CHECK-SAME: kgen.variant = #kgen.variant<kind = held, chunks = 4, maxThreads = 256, priority = 2>
// CHECK-LABEL: kgen.kernel @sumsq_vec_hold4_wide(
// CHECK-SAME: attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 4, wide = true, priority = 2>}
// CHECK-NOT: hold8
// CHECK-LABEL: kgen.kernel @sumsq_vec(
// CHECK-NOT: held_chunks
// CHECK-LABEL: kgen.kernel @sumsq_any(
kgen.kernel @sumsq(%x: !kgen.rows<bf16> {kgen.name = "x"},
                   %r: !kgen.rows<bf16> {kgen.name = "r"},
                   %s: !kgen.scalars<f32> {kgen.name = "s"},
                   %d: index {kgen.name = "d"}) attributes {dims = {}} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %b = kgen.load %r[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %fa = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %fb = arith.extf %b : tensor<?xbf16> to tensor<?xf32>
  %p = arith.mulf %fa, %fb : tensor<?xf32>
  %t = kgen.reduce sum %p : tensor<?xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// A kernel that is already a variant is left alone: no renaming, no
// assumptions, no clone.
// CHECK-LABEL: kgen.kernel @done(
// CHECK-SAME: %{{[a-z0-9]+}}: !kgen.rows<f32> {kgen.name = "x"})
// CHECK-SAME: attributes {dims = {n = 4 : i64}, kgen.variant = #kgen.variant<kind = any>}
// CHECK-NOT: kgen.kernel
kgen.kernel @done(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}, kgen.variant = #kgen.variant<kind = any>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// A kernel of static length that reduces, over rows of whole chunks, also
// gets @NAME_vec_rows before the others, with the _vec assumptions: the
// runtime launches it on at least minRows rows.
// CHECK-LABEL: kgen.kernel @norm_vec_rows(
// CHECK-SAME: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"}
// CHECK-SAME: attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192, priority = 4>}
// CHECK-LABEL: kgen.kernel @norm_vec(
// CHECK-NOT: minRows
// CHECK-LABEL: kgen.kernel @norm_any(
// CHECK-NOT: minRows
// CHECK-LABEL: kgen.kernel @tail_vec(
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

// With clusters, a kernel of static length that reduces over rows of at
// least 256 whole chunks gets @NAME_vec_cluster first: the runtime launches
// it on at most maxRows rows, the row's chunks / 64. Not for rows of
// 4095 or 1024 bf16, nor for a reduction that reads another's result.
// CLUSTERS-NOT: _vec_cluster
// CLUSTERS-LABEL: kgen.kernel @norm_vec_cluster(
// CLUSTERS-SAME: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"}
// CLUSTERS-SAME: attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8, priority = 3>}
// CLUSTERS-LABEL: kgen.kernel @norm_vec_rows(
// CLUSTERS-LABEL: kgen.kernel @norm_vec(
// CLUSTERS-NOT: _vec_cluster
// CLUSTERS-LABEL: kgen.kernel @norm_any(
// CLUSTERS-NOT: _vec_cluster

// Not for rows that end inside a chunk (4095 bf16): masking the last chunk
// made ptxas spill at the schedule _vec_rows takes.
// CHECK-NOT: minRows
// CHECK-LABEL: kgen.kernel @tail_any(
kgen.kernel @tail(%x: !kgen.rows<bf16> {kgen.name = "x"},
                  %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4095 : i64}} {
  %n = arith.constant 4095 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4095xbf16>
  %f = arith.extf %v : tensor<4095xbf16> to tensor<4095xf32>
  %t = kgen.reduce sum %f : tensor<4095xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// CLUSTERS-LABEL: kgen.kernel @short_vec_rows(
// CLUSTERS-NOT: _vec_cluster
kgen.kernel @short(%x: !kgen.rows<bf16> {kgen.name = "x"},
                   %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 1024 : i64}} {
  %n = arith.constant 1024 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<1024xbf16>
  %f = arith.extf %v : tensor<1024xbf16> to tensor<1024xf32>
  %t = kgen.reduce sum %f : tensor<1024xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// CLUSTERS-LABEL: kgen.kernel @nested_vec_rows(
// CLUSTERS-NOT: _vec_cluster
kgen.kernel @nested(%x: !kgen.rows<f32> {kgen.name = "x"},
                    %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4096xf32>
  %m = kgen.reduce max %v : tensor<4096xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<4096xf32>
  %d = arith.subf %v, %b : tensor<4096xf32>
  %t = kgen.reduce sum %d : tensor<4096xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// Nested reductions get a cluster variant from 2048 chunks a row (f32 8192),
// launched on up to 8 rows.
// CLUSTERS-LABEL: kgen.kernel @long_nested_vec_cluster(
// CLUSTERS-SAME: kgen.variant = #kgen.variant<kind = cluster, maxRows = 8, priority = 3>
kgen.kernel @long_nested(%x: !kgen.rows<f32> {kgen.name = "x"},
                         %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 8192 : i64}} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<8192xf32>
  %m = kgen.reduce max %v : tensor<8192xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<8192xf32>
  %d = arith.subf %v, %b : tensor<8192xf32>
  %t = kgen.reduce sum %d : tensor<8192xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// A variance over the row's mean counts as one level (kgen-one-pass-variance
// makes it one reduction in the cluster variant): it gets @NAME_vec_cluster,
// launched on up to a row's chunks / 32 rows (its `_vec` takes two levels),
// at most 32.
// CLUSTERS-LABEL: kgen.kernel @variance_vec_cluster(
// CLUSTERS-SAME: kgen.variant = #kgen.variant<kind = cluster, maxRows = 32, priority = 3>
kgen.kernel @variance(%x: !kgen.rows<f32> {kgen.name = "x"},
                      %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4096xf32>
  %t = kgen.reduce sum %v : tensor<4096xf32> -> f32
  %ni = arith.index_castui %n : index to i64
  %nf = arith.uitofp %ni : i64 to f32
  %m = arith.divf %t, %nf : f32
  %b = kgen.broadcast %m : f32 -> tensor<4096xf32>
  %d = arith.subf %v, %b : tensor<4096xf32>
  %sq = arith.mulf %d, %d : tensor<4096xf32>
  %q = kgen.reduce sum %sq : tensor<4096xf32> -> f32
  kgen.store %q, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// CLUSTERS-LABEL: kgen.kernel @long_variance_vec_cluster(
// CLUSTERS-SAME: kgen.variant = #kgen.variant<kind = cluster, maxRows = 32, priority = 3>
kgen.kernel @long_variance(%x: !kgen.rows<f32> {kgen.name = "x"},
                           %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 8192 : i64}} {
  %n = arith.constant 8192 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<8192xf32>
  %t = kgen.reduce sum %v : tensor<8192xf32> -> f32
  %ni = arith.index_castui %n : index to i64
  %nf = arith.uitofp %ni : i64 to f32
  %m = arith.divf %t, %nf : f32
  %b = kgen.broadcast %m : f32 -> tensor<8192xf32>
  %d = arith.subf %v, %b : tensor<8192xf32>
  %sq = arith.mulf %d, %d : tensor<8192xf32>
  %q = kgen.reduce sum %sq : tensor<8192xf32> -> f32
  kgen.store %q, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// So does softmax's sum of exp(x - max(x)) (kgen-online-softmax), over
// rows of at least 1024 chunks, launched on at most a row's chunks / 128.
// CLUSTERS-LABEL: kgen.kernel @softmax_vec_cluster(
// CLUSTERS-SAME: kgen.variant = #kgen.variant<kind = cluster, maxRows = 8, priority = 3>
kgen.kernel @softmax(%x: !kgen.rows<f32> {kgen.name = "x"},
                     %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4096xf32>
  %m = kgen.reduce max %v : tensor<4096xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<4096xf32>
  %d = arith.subf %v, %b : tensor<4096xf32>
  %e = math.exp %d : tensor<4096xf32>
  %t = kgen.reduce sum %e : tensor<4096xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// CLUSTERS-NOT: @short_softmax_vec_cluster
// CLUSTERS-LABEL: kgen.kernel @short_softmax_vec_rows(
// CLUSTERS-NOT: _vec_cluster
kgen.kernel @short_softmax(%x: !kgen.rows<f32> {kgen.name = "x"},
                           %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 2048 : i64}} {
  %n = arith.constant 2048 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<2048xf32>
  %m = kgen.reduce max %v : tensor<2048xf32> -> f32
  %b = kgen.broadcast %m : f32 -> tensor<2048xf32>
  %d = arith.subf %v, %b : tensor<2048xf32>
  %e = math.exp %d : tensor<2048xf32>
  %t = kgen.reduce sum %e : tensor<2048xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
