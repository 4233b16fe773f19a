// RUN: kgen-opt %s -split-input-file --kgen-online-softmax | FileCheck %s

// softmax in a variant for few rows (a cluster variant): the sum of exp(x -
// max(x)) becomes one expsum reduction of x, with the exponential's flags;
// the max and the exponentials the output reads stay.
// CHECK-LABEL: kgen.kernel @softmax(
// CHECK: %[[X:.+]] = arith.extf
// CHECK: %[[M:.+]] = kgen.reduce max %[[X]]
// CHECK: %[[E:.+]] = math.exp %{{.+}} fastmath<afn>
// CHECK: %[[S:.+]] = kgen.reduce expsum %[[X]] {kgen.exp_fastmath = #arith.fastmath<afn>} : tensor<4096xf32> -> f32
// CHECK: kgen.broadcast %[[S]]
kgen.kernel @softmax(%x: !kgen.rows<bf16> {kgen.name = "x"},
                     %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %m = kgen.reduce max %f : tensor<4096xf32> -> f32
  %mb = kgen.broadcast %m : f32 -> tensor<4096xf32>
  %d = arith.subf %f, %mb : tensor<4096xf32>
  %e = math.exp %d fastmath<afn> : tensor<4096xf32>
  %s = kgen.reduce sum %e : tensor<4096xf32> -> f32
  %sb = kgen.broadcast %s : f32 -> tensor<4096xf32>
  %q = arith.divf %e, %sb : tensor<4096xf32>
  %o = arith.truncf %q : tensor<4096xf32> to tensor<4096xbf16>
  kgen.store %o, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Not when the exponentials are shifted by another row's max, nor in a
// variant for many rows (not a cluster variant).
// CHECK-LABEL: kgen.kernel @other_max(
// CHECK-NOT: expsum
// CHECK: kgen.reduce sum
kgen.kernel @other_max(%x: !kgen.rows<f32> {kgen.name = "x"},
                       %z: !kgen.rows<f32> {kgen.name = "z"},
                       %y: !kgen.rows<f32> {kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, kgen.variant = #kgen.variant<kind = cluster, maxRows = 8>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %f = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  %g = kgen.load %z[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  %m = kgen.reduce max %g : tensor<64xf32> -> f32
  %mb = kgen.broadcast %m : f32 -> tensor<64xf32>
  %d = arith.subf %f, %mb : tensor<64xf32>
  %e = math.exp %d : tensor<64xf32>
  %s = kgen.reduce sum %e : tensor<64xf32> -> f32
  %sb = kgen.broadcast %s : f32 -> tensor<64xf32>
  kgen.store %sb, %y[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// CHECK-LABEL: kgen.kernel @many_rows(
// CHECK-NOT: expsum
// CHECK: kgen.reduce sum
kgen.kernel @many_rows(%x: !kgen.rows<f32> {kgen.name = "x"},
                       %y: !kgen.rows<f32> {kgen.name = "y"})
    attributes {dims = {n = 64 : i64}} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %f = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  %m = kgen.reduce max %f : tensor<64xf32> -> f32
  %mb = kgen.broadcast %m : f32 -> tensor<64xf32>
  %d = arith.subf %f, %mb : tensor<64xf32>
  %e = math.exp %d : tensor<64xf32>
  %s = kgen.reduce sum %e : tensor<64xf32> -> f32
  %sb = kgen.broadcast %s : f32 -> tensor<64xf32>
  kgen.store %sb, %y[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}
