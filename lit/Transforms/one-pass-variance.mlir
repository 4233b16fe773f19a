// RUN: kgen-opt %s -split-input-file --kgen-one-pass-variance | FileCheck %s

// layernorm's variance in a variant for few rows (a cluster variant): the sum of
// squares of x minus its mean (the sum over the row length) becomes one
// sqdev reduction of x; the mean stays.
// CHECK-LABEL: kgen.kernel @layernorm(
// CHECK: %[[X:.+]] = arith.extf
// CHECK: %[[S:.+]] = kgen.reduce sum %[[X]]
// CHECK: %[[M:.+]] = arith.divf %[[S]], %{{.+}} : f32
// CHECK: %[[MB:.+]] = kgen.broadcast %[[M]]
// CHECK: %[[C:.+]] = arith.subf %[[X]], %[[MB]]
// CHECK-NOT: arith.mulf %[[C]], %[[C]]
// CHECK: %[[V:.+]] = kgen.reduce sqdev %[[X]] : tensor<?xf32> -> f32
// CHECK: arith.divf %[[V]], %{{.+}} : f32
kgen.kernel @layernorm(%x: !kgen.rows<bf16> {kgen.name = "x"},
                       %y: !kgen.rows<bf16> {kgen.name = "y"},
                       %n: index {kgen.name = "n"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  %ni = arith.index_castui %n : index to i64
  %nf = arith.uitofp %ni : i64 to f32
  %m = arith.divf %s, %nf : f32
  %mb = kgen.broadcast %m : f32 -> tensor<?xf32>
  %c = arith.subf %f, %mb : tensor<?xf32>
  %sq = arith.mulf %c, %c : tensor<?xf32>
  %v2 = kgen.reduce sum %sq : tensor<?xf32> -> f32
  %var = arith.divf %v2, %nf : f32
  %r = math.rsqrt %var : f32
  %rb = kgen.broadcast %r : f32 -> tensor<?xf32>
  %o = arith.mulf %c, %rb : tensor<?xf32>
  %t = arith.truncf %o : tensor<?xf32> to tensor<?xbf16>
  kgen.store %t, %y[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Deviations from something other than the mean stay two levels: from the
// row's max, and from the sum over a constant that is not the row length.
// So does the variance of a variant for many rows (not a cluster variant).
// CHECK-LABEL: kgen.kernel @not_the_mean(
// CHECK-NOT: sqdev
// CHECK: kgen.reduce sum %{{.+}} : tensor<64xf32> -> f32
// CHECK: kgen.reduce sum %{{.+}} : tensor<64xf32> -> f32
// CHECK-NOT: sqdev
kgen.kernel @not_the_mean(%x: !kgen.rows<f32> {kgen.name = "x"},
                          %y: !kgen.rows<f32> {kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %f = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  %mx = kgen.reduce max %f : tensor<64xf32> -> f32
  %mxb = kgen.broadcast %mx : f32 -> tensor<64xf32>
  %c = arith.subf %f, %mxb : tensor<64xf32>
  %sq = arith.mulf %c, %c : tensor<64xf32>
  %v = kgen.reduce sum %sq : tensor<64xf32> -> f32
  %s = kgen.reduce sum %f : tensor<64xf32> -> f32
  %two = arith.constant 2.0 : f32
  %h = arith.divf %s, %two : f32
  %hb = kgen.broadcast %h : f32 -> tensor<64xf32>
  %d = arith.subf %f, %hb : tensor<64xf32>
  %dd = arith.mulf %d, %d : tensor<64xf32>
  %w = kgen.reduce sum %dd : tensor<64xf32> -> f32
  %vw = arith.addf %v, %w : f32
  %b = kgen.broadcast %vw : f32 -> tensor<64xf32>
  kgen.store %b, %y[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// CHECK-LABEL: kgen.kernel @many_rows(
// CHECK-NOT: sqdev
// CHECK: arith.mulf
// CHECK: kgen.reduce sum
// CHECK-NOT: sqdev
kgen.kernel @many_rows(%x: !kgen.rows<f32> {kgen.name = "x"},
                       %y: !kgen.rows<f32> {kgen.name = "y"})
    attributes {dims = {n = 64 : i64}} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %f = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  %s = kgen.reduce sum %f : tensor<64xf32> -> f32
  %ni = arith.index_castui %n : index to i64
  %nf = arith.uitofp %ni : i64 to f32
  %m = arith.divf %s, %nf : f32
  %mb = kgen.broadcast %m : f32 -> tensor<64xf32>
  %c = arith.subf %f, %mb : tensor<64xf32>
  %sq = arith.mulf %c, %c : tensor<64xf32>
  %v = kgen.reduce sum %sq : tensor<64xf32> -> f32
  %b = kgen.broadcast %v : f32 -> tensor<64xf32>
  kgen.store %b, %y[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}
