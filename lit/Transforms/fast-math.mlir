// RUN: kgen-opt %s --kgen-fast-math | FileCheck %s
// RUN: kgen-opt %s --kgen-fast-math --kgen-fast-math | FileCheck %s --check-prefix=TWICE

// softmax with a bf16 output: the division by the per-row sum becomes one
// reciprocal per row (of the sum scaled by 2^64 when it is subnormal) and two
// multiplies per element; exp becomes approximate (the output has 8 bits).
// CHECK-LABEL: kgen.kernel @softmax_bf16(
// CHECK: math.exp %{{.+}} fastmath<afn> : tensor<4096xf32>
// CHECK: %[[SUM:.+]] = kgen.reduce sum
// CHECK: %[[ABS:.+]] = math.absf %[[SUM]] : f32
// CHECK: %[[TINY:.+]] = arith.cmpf olt, %[[ABS]], %{{.+}} : f32
// CHECK: %[[K:.+]] = arith.select %[[TINY]], %{{.+}}, %{{.+}} : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SUM]], %[[K]] : f32
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %[[SCALED]] : f32
// CHECK: %[[RB:.+]] = kgen.broadcast %[[R]]
// CHECK: %[[Q:.+]] = arith.mulf %{{.+}}, %[[RB]] : tensor<4096xf32>
// CHECK: %[[KB:.+]] = kgen.broadcast %[[K]]
// CHECK: arith.mulf %[[Q]], %[[KB]] : tensor<4096xf32>
// CHECK-NOT: arith.divf %{{.+}} : tensor
kgen.kernel @softmax_bf16(%x: !kgen.rows<bf16> {kgen.name = "x"},
                          %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %m = kgen.reduce max %f : tensor<4096xf32> -> f32
  %mb = kgen.broadcast %m : f32 -> tensor<4096xf32>
  %d = arith.subf %f, %mb : tensor<4096xf32>
  %e = math.exp %d : tensor<4096xf32>
  %s = kgen.reduce sum %e : tensor<4096xf32> -> f32
  %sb = kgen.broadcast %s : f32 -> tensor<4096xf32>
  %q = arith.divf %e, %sb : tensor<4096xf32>
  %o = arith.truncf %q : tensor<4096xf32> to tensor<4096xbf16>
  kgen.store %o, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// An f32 output keeps libdevice's exp; an element-wise division (not by a
// per-row value) stays a division.
// CHECK-LABEL: kgen.kernel @silu_f32(
// CHECK: math.exp %{{[a-z0-9]+}} : tensor<4096xf32>
// CHECK-NOT: fastmath
// CHECK: arith.divf %{{.+}}, %{{.+}} : tensor<4096xf32>
kgen.kernel @silu_f32(%x: !kgen.rows<f32> {kgen.name = "x"},
                      %y: !kgen.rows<f32> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4096xf32>
  %ng = arith.negf %v : tensor<4096xf32>
  %e = math.exp %ng : tensor<4096xf32>
  %one = arith.constant dense<1.0> : tensor<4096xf32>
  %d = arith.addf %e, %one : tensor<4096xf32>
  %q = arith.divf %v, %d : tensor<4096xf32>
  kgen.store %q, %y[%c0] : tensor<4096xf32>, !kgen.rows<f32>
  kgen.return
}

// The same with a bf16 output: the element-wise division becomes a multiply
// by an approximate reciprocal (rcp.approx.f32 in PTX).
// CHECK-LABEL: kgen.kernel @silu_bf16(
// CHECK: math.exp %{{.+}} fastmath<afn> : tensor<4096xf32>
// CHECK: %[[D:.+]] = arith.addf
// CHECK: %[[ONE:.+]] = kgen.broadcast %{{.+}} : f32 -> tensor<4096xf32>
// CHECK: %[[R:.+]] = arith.divf %[[ONE]], %[[D]] fastmath<afn> : tensor<4096xf32>
// CHECK: %[[Q:.+]] = arith.mulf %{{.+}}, %[[R]] : tensor<4096xf32>
// CHECK: arith.truncf %[[Q]]
// Run again, the reciprocal (marked afn) is left alone.
// TWICE-LABEL: kgen.kernel @silu_bf16(
// TWICE: arith.divf %{{.+}}, %{{.+}} fastmath<afn> : tensor<4096xf32>
// TWICE-NOT: arith.divf
// TWICE: kgen.return
kgen.kernel @silu_bf16(%x: !kgen.rows<bf16> {kgen.name = "x"},
                       %y: !kgen.rows<bf16> {kgen.name = "y"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %ng = arith.negf %f : tensor<4096xf32>
  %e = math.exp %ng : tensor<4096xf32>
  %one = arith.constant dense<1.0> : tensor<4096xf32>
  %d = arith.addf %e, %one : tensor<4096xf32>
  %q = arith.divf %f, %d : tensor<4096xf32>
  %o = arith.truncf %q : tensor<4096xf32> to tensor<4096xbf16>
  kgen.store %o, %y[%c0] : tensor<4096xbf16>, !kgen.rows<bf16>
  kgen.return
}

// A kernel that stores integers: an ulp of the quotient would move a value
// across an integer step, so two FMAs correct x * (1 / s) to x / s rounded
// (Markstein); where they give NaN (x infinite) the product stands.
// CHECK-LABEL: kgen.kernel @group_quant_i8(
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %[[SK:.+]] : f32
// CHECK: %[[RB:.+]] = kgen.broadcast %[[R]]
// CHECK: %[[Q0:.+]] = arith.mulf %[[X:.+]], %[[RB]] : tensor<128xf32>
// CHECK: %[[SB:.+]] = kgen.broadcast %[[SK]]
// CHECK: %[[NEG:.+]] = arith.negf %[[Q0]]
// CHECK: %[[E:.+]] = math.fma %[[NEG]], %[[SB]], %[[X]] : tensor<128xf32>
// CHECK: %[[Q1:.+]] = math.fma %[[E]], %[[RB]], %[[Q0]] : tensor<128xf32>
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[Q1]], %[[Q1]]
// CHECK: arith.select %[[NAN]], %[[Q0]], %[[Q1]]
// CHECK-NOT: arith.divf %{{.+}} : tensor
kgen.kernel @group_quant_i8(%x: !kgen.rows<bf16> {kgen.name = "x"},
                            %y: !kgen.rows<i8> {kgen.name = "y"})
    attributes {dims = {n = 128 : i64}} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<128xbf16>
  %f = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %a = math.absf %f : tensor<128xf32>
  %m = kgen.reduce max %a : tensor<128xf32> -> f32
  %mb = kgen.broadcast %m : f32 -> tensor<128xf32>
  %q = arith.divf %f, %mb : tensor<128xf32>
  %i = arith.fptosi %q : tensor<128xf32> to tensor<128xi8>
  kgen.store %i, %y[%c0] : tensor<128xi8>, !kgen.rows<i8>
  kgen.return
}

// A per-group scale (vLLM's per-block fp8 quant): 1 / s is taken of the
// group-uniform scale, which the lowering computes once per chunk, and two
// FMAs correct the product to the rounded quotient (a group scale divides
// exactly, even in a kernel without integer outputs). The scale itself, a
// quotient of group-uniform values, stays a division.
// CHECK-LABEL: kgen.kernel @group_quant_f8(
// CHECK: %[[TOP:.+]] = kgen.group_reduce max
// CHECK: %[[S:.+]] = arith.divf %[[TOP]], %{{.+}} : tensor<256xf32>
// CHECK: %[[ABS:.+]] = math.absf %[[S]] : tensor<256xf32>
// CHECK: %[[TINY:.+]] = arith.cmpf olt, %[[ABS]], %{{.+}} : tensor<256xf32>
// CHECK: %[[K:.+]] = arith.select %[[TINY]], %{{.+}}, %{{.+}} : tensor<256xi1>, tensor<256xf32>
// CHECK: %[[SK:.+]] = arith.mulf %[[S]], %[[K]] : tensor<256xf32>
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %[[SK]] : tensor<256xf32>
// CHECK: %[[Q0:.+]] = arith.mulf %[[X:.+]], %[[R]] : tensor<256xf32>
// CHECK: %[[NEG:.+]] = arith.negf %[[Q0]]
// CHECK: %[[E:.+]] = math.fma %[[NEG]], %[[SK]], %[[X]] : tensor<256xf32>
// CHECK: %[[Q1:.+]] = math.fma %[[E]], %[[R]], %[[Q0]] : tensor<256xf32>
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[Q1]], %[[Q1]]
// CHECK: %[[Q:.+]] = arith.select %[[NAN]], %[[Q0]], %[[Q1]]
// CHECK: arith.mulf %[[Q]], %[[K]] : tensor<256xf32>
// CHECK-NOT: arith.divf %[[X]]
// Run again, nothing more is rewritten.
// TWICE-LABEL: kgen.kernel @group_quant_f8(
// TWICE-COUNT-2: arith.divf
// TWICE-NOT: arith.divf
// TWICE: kgen.return
kgen.kernel @group_quant_f8(%x: !kgen.rows<bf16> {kgen.name = "x"},
                            %y: !kgen.rows<f8E4M3FN> {kgen.name = "y"})
    attributes {dims = {n = 256 : i64}} {
  %n = arith.constant 256 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<256xbf16>
  %f = arith.extf %v : tensor<256xbf16> to tensor<256xf32>
  %a = math.absf %f : tensor<256xf32>
  %top = kgen.group_reduce max %a group 128 : tensor<256xf32>
  %fmax = arith.constant dense<448.0> : tensor<256xf32>
  %s = arith.divf %top, %fmax : tensor<256xf32>
  %q = arith.divf %f, %s : tensor<256xf32>
  %o = arith.truncf %q : tensor<256xf32> to tensor<256xf8E4M3FN>
  kgen.store %o, %y[%c0] : tensor<256xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.return
}

// An element-wise divisor (not one per group) stays a division.
// CHECK-LABEL: kgen.kernel @elementwise_f8(
// CHECK: arith.divf %{{.+}}, %{{.+}} : tensor<256xf32>
// CHECK-NOT: math.fma
// CHECK: kgen.return
kgen.kernel @elementwise_f8(%x: !kgen.rows<bf16> {kgen.name = "x"},
                            %y: !kgen.rows<f8E4M3FN> {kgen.name = "y"},
                            %s: !kgen.rows<f32> {kgen.name = "s"})
    attributes {dims = {n = 256 : i64}} {
  %n = arith.constant 256 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<256xbf16>
  %f = arith.extf %v : tensor<256xbf16> to tensor<256xf32>
  %a = math.absf %f : tensor<256xf32>
  %q = arith.divf %f, %a : tensor<256xf32>
  %o = arith.truncf %q : tensor<256xf32> to tensor<256xf8E4M3FN>
  kgen.store %o, %y[%c0] : tensor<256xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.store %f, %s[%c0] : tensor<256xf32>, !kgen.rows<f32>
  kgen.return
}

// A divisor bounded below by a normal float needs no 2^64 guard: here
// max(amax, eps) / 127 with eps >= 1e-30 (kgen.min), per group; and a
// per-row max(amax / 448, 2^-10), from constants alone.
// CHECK-LABEL: kgen.kernel @bounded_divisors(
// CHECK-NOT: arith.cmpf olt
// CHECK: %[[S:.+]] = arith.divf %{{.+}}, %{{.+}} : tensor<128xf32>
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %[[S]] : tensor<128xf32>
// CHECK: %[[Q0:.+]] = arith.mulf %[[X:.+]], %[[R]] : tensor<128xf32>
// CHECK: math.fma %{{.+}}, %[[S]], %[[X]] : tensor<128xf32>
// CHECK: %[[Q:.+]] = arith.select %{{.+}}, %[[Q0]], %{{.+}} : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT: arith.fptosi %[[Q]]
// CHECK: %[[T:.+]] = arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: arith.divf %{{.+}}, %[[T]] : f32
// CHECK-NOT: arith.cmpf olt
// CHECK: kgen.return
kgen.kernel @bounded_divisors(%x: !kgen.rows<bf16> {kgen.name = "x"},
                              %y: !kgen.rows<i8> {kgen.name = "y"},
                              %z: !kgen.rows<f8E4M3FN> {kgen.name = "z"},
                              %eps: f32 {kgen.name = "eps", kgen.min = 1.0e-30 : f32})
    attributes {dims = {n = 128 : i64}} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<128xbf16>
  %f = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %a = math.absf %f : tensor<128xf32>
  %top = kgen.group_reduce max %a group 64 : tensor<128xf32>
  %eb = kgen.broadcast %eps : f32 -> tensor<128xf32>
  %m = arith.maximumf %top, %eb : tensor<128xf32>
  %imax = arith.constant dense<127.0> : tensor<128xf32>
  %s = arith.divf %m, %imax : tensor<128xf32>
  %q = arith.divf %f, %s : tensor<128xf32>
  %i = arith.fptosi %q : tensor<128xf32> to tensor<128xi8>
  kgen.store %i, %y[%c0] : tensor<128xi8>, !kgen.rows<i8>
  %rm = kgen.reduce max %a : tensor<128xf32> -> f32
  %fmax = arith.constant 448.0 : f32
  %least = arith.constant 0.0009765625 : f32
  %ts = arith.divf %rm, %fmax : f32
  %t = arith.maximumf %ts, %least : f32
  %tb = kgen.broadcast %t : f32 -> tensor<128xf32>
  %p = arith.divf %f, %tb : tensor<128xf32>
  %o = arith.truncf %p : tensor<128xf32> to tensor<128xf8E4M3FN>
  kgen.store %o, %z[%c0] : tensor<128xf8E4M3FN>, !kgen.rows<f8E4M3FN>
  kgen.return
}
