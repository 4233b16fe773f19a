// RUN: kgen-opt %s --kgen-saturating-convert --canonicalize | FileCheck %s

// round(x).to(i8), as ImportDSL writes it: one cvt.rni.s32.f32 per element
// (NaN -> 0, saturating) of the unrounded value, then an integer clamp.
// CHECK-LABEL: func.func @round_to_i8(
// CHECK-SAME: %[[X:.+]]: vector<4xf32>
// CHECK: %[[E0:.+]] = vector.extract %[[X]][0]
// CHECK: llvm.call_intrinsic "llvm.nvvm.f2i.rn"(%[[E0]]) : (f32) -> i32
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.f2i.rn"
// CHECK: %[[V:.+]] = vector.from_elements
// CHECK: %[[LO:.+]] = arith.maxsi %[[V]], %{{.+}} : vector<4xi32>
// CHECK: %[[HI:.+]] = arith.minsi %[[LO]], %{{.+}} : vector<4xi32>
// CHECK: %[[R:.+]] = arith.trunci %[[HI]] : vector<4xi32> to vector<4xi8>
// CHECK-NOT: arith.fptosi
// CHECK-NOT: math.roundeven
// CHECK: return %[[R]]
func.func @round_to_i8(%x: vector<4xf32>) -> vector<4xi8> {
  %f = math.roundeven %x : vector<4xf32>
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %z = arith.constant 0 : i8
  %lov = vector.broadcast %lo : f32 to vector<4xf32>
  %hiv = vector.broadcast %hi : f32 to vector<4xf32>
  %zv = vector.broadcast %z : i8 to vector<4xi8>
  %a = arith.maximumf %f, %lov : vector<4xf32>
  %b = arith.minimumf %a, %hiv : vector<4xf32>
  %i = arith.fptosi %b : vector<4xf32> to vector<4xi8>
  %n = arith.cmpf uno, %f, %f : vector<4xf32>
  %r = arith.select %n, %zv, %i : vector<4xi1>, vector<4xi8>
  return %r : vector<4xi8>
}

// A plain conversion to i16 (a scalar) truncates: cvt.rzi.s32.f32.
// CHECK-LABEL: func.func @to_i16(
// CHECK-SAME: %[[X:.+]]: f32
// CHECK: %[[C:.+]] = llvm.call_intrinsic "llvm.nvvm.f2i.rz"(%[[X]]) : (f32) -> i32
// CHECK: arith.maxsi %[[C]]
// CHECK: arith.minsi
// CHECK: arith.trunci %{{.+}} : i32 to i16
func.func @to_i16(%f: f32) -> i16 {
  %lo = arith.constant -32768.0 : f32
  %hi = arith.constant 32767.0 : f32
  %z = arith.constant 0 : i16
  %a = arith.maximumf %f, %lo : f32
  %b = arith.minimumf %a, %hi : f32
  %i = arith.fptosi %b : f32 to i16
  %n = arith.cmpf uno, %f, %f : f32
  %r = arith.select %n, %z, %i : i16
  return %r : i16
}

// Not the DSL's conversion: a bound that is not i8's range, and i32 (whose
// float bound, 2^31 - 128, is not the integer one), stay as they are.
// CHECK-LABEL: func.func @other_bounds(
// CHECK-NOT: llvm.call_intrinsic
// CHECK: arith.fptosi %{{.+}} : f32 to i8
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// CHECK: return
func.func @other_bounds(%f: f32) -> (i8, i32) {
  %lo = arith.constant -127.0 : f32
  %hi = arith.constant 127.0 : f32
  %z = arith.constant 0 : i8
  %a = arith.maximumf %f, %lo : f32
  %b = arith.minimumf %a, %hi : f32
  %i = arith.fptosi %b : f32 to i8
  %n = arith.cmpf uno, %f, %f : f32
  %r = arith.select %n, %z, %i : i8
  %lo32 = arith.constant -2147483648.0 : f32
  %hi32 = arith.constant 2147483520.0 : f32
  %z32 = arith.constant 0 : i32
  %a32 = arith.maximumf %f, %lo32 : f32
  %b32 = arith.minimumf %a32, %hi32 : f32
  %i32 = arith.fptosi %b32 : f32 to i32
  %r32 = arith.select %n, %z32, %i32 : i32
  return %r, %r32 : i8, i32
}
