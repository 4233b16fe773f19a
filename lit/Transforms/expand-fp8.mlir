// RUN: kgen-opt %s --kgen-expand-fp8 | FileCheck %s
// RUN: kgen-opt %s --kgen-expand-fp8=native=true | FileCheck %s --check-prefix=NATIVE

// f32 -> f8E4M3FN: round to 3 mantissa bits on the f32 bits, rebias by
// (127 - 7) << 3 = 960, subnormals in units of 2^-9, saturate at 0x7E (448),
// NaN -> 0x7F, then the sign; the byte comes back as f8 through a bitcast.
// CHECK-LABEL: func.func @e4m3(
// CHECK-NOT: arith.truncf
// CHECK-DAG: arith.constant dense<2147483647> : vector<8xi32>
// CHECK-DAG: arith.constant dense<960> : vector<8xi32>
// CHECK-DAG: arith.constant dense<5.120000e+02> : vector<8xf32>
// CHECK-DAG: arith.constant dense<126> : vector<8xi32>
// CHECK-DAG: arith.constant dense<127> : vector<8xi32>
// CHECK-DAG: arith.constant dense<2139095040> : vector<8xi32>
// CHECK-DAG: math.roundeven
// CHECK: arith.trunci %{{.+}} : vector<8xi32> to vector<8xi8>
// CHECK: arith.bitcast %{{.+}} : vector<8xi8> to vector<8xf8E4M3FN>
// sm_89+: one cvt.rn.satfinite per pair, the pair swapped so that the low
// byte (first in memory) holds the even element.
// NATIVE-LABEL: func.func @e4m3(
// NATIVE-NOT: arith.truncf
// NATIVE: %[[X0:.+]] = vector.extract %{{.+}}[0] : f32 from vector<8xf32>
// NATIVE: %[[X1:.+]] = vector.extract %{{.+}}[1] : f32 from vector<8xf32>
// NATIVE: %[[P0:.+]] = nvvm.convert.f32x2.to.f8x2 %[[X1]], %[[X0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// NATIVE-COUNT-3: nvvm.convert.f32x2.to.f8x2
// NATIVE: %[[H:.+]] = vector.from_elements %[[P0]], %{{.+}}, %{{.+}}, %{{.+}} : vector<4xi16>
// NATIVE: %[[B:.+]] = vector.bitcast %[[H]] : vector<4xi16> to vector<8xi8>
// NATIVE: arith.bitcast %[[B]] : vector<8xi8> to vector<8xf8E4M3FN>
func.func @e4m3(%x: vector<8xf32>) -> vector<8xf8E4M3FN> {
  %y = arith.truncf %x : vector<8xf32> to vector<8xf8E4M3FN>
  return %y : vector<8xf8E4M3FN>
}

// f32 -> f8E5M2 (scalar): 2 mantissa bits, rebias (127 - 15) << 2 = 448,
// saturate at 0x7B (57344).
// CHECK-LABEL: func.func @e5m2(
// CHECK-DAG: arith.constant 448 : i32
// CHECK-DAG: arith.constant 123 : i32
// CHECK: arith.bitcast %{{.+}} : i8 to f8E5M2
// NATIVE-LABEL: func.func @e5m2(
// NATIVE: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// NATIVE: %[[P:.+]] = nvvm.convert.f32x2.to.f8x2 %[[Z]], %{{.+}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E5M2)
// NATIVE: %[[B:.+]] = arith.trunci %[[P]] : i16 to i8
// NATIVE: arith.bitcast %[[B]] : i8 to f8E5M2
func.func @e5m2(%x: f32) -> f8E5M2 {
  %y = arith.truncf %x : f32 to f8E5M2
  return %y : f8E5M2
}

// Other truncations are left alone.
// CHECK-LABEL: func.func @bf16(
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// NATIVE-LABEL: func.func @bf16(
// NATIVE: arith.truncf %{{.+}} : f32 to bf16
func.func @bf16(%x: f32) -> bf16 {
  %y = arith.truncf %x : f32 to bf16
  return %y : bf16
}
