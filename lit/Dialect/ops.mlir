// RUN: kgen-opt %s | kgen-opt | FileCheck %s
// RUN: kgen-opt %s -mlir-print-op-generic | kgen-opt | FileCheck %s
// Round trip of every kgen op, type and attribute, in the custom and the
// generic form.

// The three tensor types, every scalar argument kind, a dynamic domain and a
// schedule with every field.
// CHECK-LABEL: kgen.kernel @all(
// CHECK-SAME: %[[X:[a-z0-9]+]]: !kgen.rows<bf16> {kgen.name = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: !kgen.vector<f32> {kgen.name = "w"}
// CHECK-SAME: %[[S:[a-z0-9]+]]: !kgen.scalars<f32> {kgen.name = "s"}
// CHECK-SAME: %[[Y:[a-z0-9]+]]: !kgen.rows<bf16> {kgen.name = "y"}
// CHECK-SAME: %{{[a-z0-9]+}}: f32 {kgen.name = "alpha"}
// CHECK-SAME: %[[K:[a-z0-9]+]]: i32 {kgen.name = "k"}
// CHECK-SAME: %{{[a-z0-9]+}}: i64 {kgen.name = "n64"}
// CHECK-SAME: %[[D:[a-z0-9]+]]: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
// CHECK-SAME: attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>}
// CHECK-NEXT: kgen.domain %[[D]]{{$}}
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.+]] = kgen.load %[[X]][%[[C0]]] : !kgen.rows<bf16> -> tensor<?xbf16>
// CHECK-NEXT: kgen.load %[[X]][%[[D]]] {stride = 2 : i64, vector_width = 1 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
// CHECK-NEXT: %[[WV:.+]] = kgen.load %[[W]][%[[C0]]] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<?xf32>
// CHECK-NEXT: kgen.load %[[S]] : !kgen.scalars<f32> -> f32
// CHECK-NEXT: %[[AF:.+]] = arith.extf %[[A]] : tensor<?xbf16> to tensor<?xf32>
// CHECK-NEXT: %[[SUM:.+]] = kgen.reduce sum %[[AF]] : tensor<?xf32> -> f32
// CHECK-NEXT: %[[MAX:.+]] = kgen.reduce max %[[AF]] : tensor<?xf32> -> f32
// CHECK-NEXT: kgen.reduce min %[[WV]] : tensor<?xf32> -> f32
// CHECK-NEXT: %[[BC:.+]] = kgen.broadcast %[[SUM]] : f32 -> tensor<?xf32>
// CHECK-NEXT: kgen.broadcast %[[K]] : i32 -> tensor<?xi32>
// CHECK-NEXT: kgen.broadcast %[[D]] : index -> tensor<?xindex>
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[BC]] : tensor<?xf32> to tensor<?xbf16>
// CHECK-NEXT: kgen.store %[[R]], %[[Y]][%[[C0]]] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
// CHECK-NEXT: kgen.store %[[MAX]], %[[S]] : f32, !kgen.scalars<f32>
// CHECK-NEXT: kgen.return
// CHECK-NEXT: }
kgen.kernel @all(%x: !kgen.rows<bf16> {kgen.name = "x"},
                 %w: !kgen.vector<f32> {kgen.name = "w"},
                 %s: !kgen.scalars<f32> {kgen.name = "s"},
                 %y: !kgen.rows<bf16> {kgen.name = "y"},
                 %alpha: f32 {kgen.name = "alpha"},
                 %k: i32 {kgen.name = "k"},
                 %n64: i64 {kgen.name = "n64"},
                 %d: index {kgen.name = "d", kgen.divisibility = 16 : i64})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %b = kgen.load %x[%d] {stride = 2 : i64, vector_width = 1 : i64} : !kgen.rows<bf16> -> tensor<?xbf16>
  %wv = kgen.load %w[%c0] {vector_width = 4 : i64} : !kgen.vector<f32> -> tensor<?xf32>
  %sv = kgen.load %s : !kgen.scalars<f32> -> f32
  %af = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %sum = kgen.reduce sum %af : tensor<?xf32> -> f32
  %mx = kgen.reduce max %af : tensor<?xf32> -> f32
  %mn = kgen.reduce min %wv : tensor<?xf32> -> f32
  %bc = kgen.broadcast %sum : f32 -> tensor<?xf32>
  %bi = kgen.broadcast %k : i32 -> tensor<?xi32>
  %bx = kgen.broadcast %d : index -> tensor<?xindex>
  %r = arith.truncf %bc : tensor<?xf32> to tensor<?xbf16>
  kgen.store %r, %y[%c0] {vector_width = 8 : i64} : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.store %mx, %s : f32, !kgen.scalars<f32>
  kgen.return
}

// A static domain, no schedule yet, other element types. A stride of 1 is
// the default and is not printed (no attribute dict after the start index).
// CHECK-LABEL: kgen.kernel @static(
// CHECK-SAME: !kgen.rows<f16>
// CHECK-SAME: !kgen.vector<i8>
// CHECK-SAME: !kgen.scalars<i32>
// CHECK-SAME: !kgen.rows<f32>
// CHECK-SAME: attributes {dims = {n = 64 : i64}} {
// CHECK: %[[C64:.+]] = arith.constant 64 : index
// CHECK-NEXT: kgen.domain %[[C64]]
// CHECK: kgen.load %{{.+}}[%{{.+}}] : !kgen.rows<f16> -> tensor<64xf16>
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] : !kgen.vector<i8> -> tensor<64xi8>
// CHECK-NEXT: kgen.load %{{.+}} : !kgen.scalars<i32> -> i32
// CHECK: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] : tensor<64xf32>, !kgen.rows<f32>
// CHECK-NEXT: kgen.store %{{.+}}, %{{.+}} : i32, !kgen.scalars<i32>
// CHECK-NEXT: kgen.return
kgen.kernel @static(%h: !kgen.rows<f16> {kgen.name = "h"},
                    %q: !kgen.vector<i8> {kgen.name = "q"},
                    %i: !kgen.scalars<i32> {kgen.name = "i"},
                    %o: !kgen.rows<f32> {kgen.name = "o"})
    attributes {dims = {n = 64 : i64}} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %hv = kgen.load %h[%c0] {stride = 1 : i64} : !kgen.rows<f16> -> tensor<64xf16>
  %qv = kgen.load %q[%c0] : !kgen.vector<i8> -> tensor<64xi8>
  %iv = kgen.load %i : !kgen.scalars<i32> -> i32
  %hf = arith.extf %hv : tensor<64xf16> to tensor<64xf32>
  %qf = arith.sitofp %qv : tensor<64xi8> to tensor<64xf32>
  %p = arith.mulf %hf, %qf : tensor<64xf32>
  kgen.store %p, %o[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.store %iv, %i : i32, !kgen.scalars<i32>
  kgen.return
}

// The other extremes of #kgen.schedule: a one-thread row and a full block.
// CHECK-LABEL: kgen.kernel @tiny(
// CHECK-SAME: schedule = #kgen.schedule<vector = 1, threadsPerRow = 1, rowsPerBlock = 1024, chunks = 3, reread = false>
kgen.kernel @tiny(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 3 : i64}, schedule = #kgen.schedule<vector = 1, threadsPerRow = 1, rowsPerBlock = 1024, chunks = 3, reread = false>} {
  %n = arith.constant 3 : index
  kgen.domain %n
  kgen.return
}

// CHECK-LABEL: kgen.kernel @wide(
// CHECK-SAME: schedule = #kgen.schedule<vector = 16, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 0, reread = true>
kgen.kernel @wide(%x: !kgen.rows<i8> {kgen.name = "x"}, %n: index {kgen.name = "n"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 16, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %n
  kgen.return
}

// Row maps: a grouped per-row tensor indexing a gather, and heads over two
// tensors.
// CHECK-LABEL: kgen.kernel @row_maps(
// CHECK: %[[G:.+]] = kgen.group %{{.+}} by %{{.+}} : !kgen.scalars<i64>
// CHECK-NEXT: %{{.+}} = kgen.gather %{{.+}}[%[[G]]] rows %{{.+}} : <f32>, <i64>
// CHECK-NEXT: %{{.+}} = kgen.heads[%{{.+}}, %{{.+}}] counts[%{{.+}}, %{{.+}}] length %{{.+}} : !kgen.rows<bf16>, !kgen.rows<bf16> -> !kgen.rows<bf16>
kgen.kernel @row_maps(%q: !kgen.rows<bf16> {kgen.name = "q"},
                      %k: !kgen.rows<bf16> {kgen.name = "k"},
                      %p: !kgen.scalars<i64> {kgen.name = "positions"},
                      %t: !kgen.rows<f32> {kgen.name = "table"},
                      %hq: index {kgen.name = "hq"},
                      %hk: index {kgen.name = "hk"},
                      %rows: index {kgen.name = "rows"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %h = arith.addi %hq, %hk : index
  %pg = kgen.group %p by %h : !kgen.scalars<i64>
  %cs = kgen.gather %t[%pg] rows %rows : !kgen.rows<f32>, !kgen.scalars<i64>
  %qk = kgen.heads [%q, %k] counts [%hq, %hk] length %c4
      : !kgen.rows<bf16>, !kgen.rows<bf16> -> !kgen.rows<bf16>
  kgen.return
}

// Per-head scalars: one value a head, a row stride and a pitch apart.
// CHECK-LABEL: kgen.kernel @per_head_scalars(
// CHECK: kgen.heads[%{{.+}}] counts[%{{.+}}] pitches[%{{.+}}] length %{{.+}} : !kgen.scalars<f32> -> !kgen.scalars<f32>
kgen.kernel @per_head_scalars(%s: !kgen.scalars<f32> {kgen.name = "scale"},
                              %h: index {kgen.name = "groups"},
                              %p: index {kgen.name = "pitch"})
    attributes {dims = {}} {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %sh = kgen.heads [%s] counts [%h] pitches [%p] length %c1
      : !kgen.scalars<f32> -> !kgen.scalars<f32>
  kgen.return
}

// Part vectors: a weight per part of a heads view (QK-norm's q and k).
// CHECK-LABEL: kgen.kernel @part_vectors(
// CHECK: kgen.heads[%{{.+}}, %{{.+}}] counts[%{{.+}}, %{{.+}}] length %{{.+}} : !kgen.vector<bf16>, !kgen.vector<bf16> -> !kgen.rows<bf16>
kgen.kernel @part_vectors(%wq: !kgen.vector<bf16> {kgen.name = "q_weight"},
                          %wk: !kgen.vector<bf16> {kgen.name = "k_weight"},
                          %hq: index {kgen.name = "hq"},
                          %hk: index {kgen.name = "hk"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %w = kgen.heads [%wq, %wk] counts [%hq, %hk] length %c4
      : !kgen.vector<bf16>, !kgen.vector<bf16> -> !kgen.rows<bf16>
  kgen.return
}
