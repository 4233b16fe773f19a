// RUN: kgen-opt %s -split-input-file --kgen-lower-to-gpu | FileCheck %s
//
// The register cap (.maxnreg): a vectorized row of 8 chunks (64 f32 values,
// half of 128) in a 256-thread block gets 128 registers, so that two blocks
// fit on an SM; an element-wise row (the `_any` variant) or one of more than
// 8 chunks gets all the registers the block leaves (255).

// CHECK-LABEL: gpu.func @held_vec(
// CHECK-SAME: nvvm.maxnreg = 128 : i32
kgen.kernel @held_vec(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %s = kgen.reduce sum %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %f, %b : tensor<16384xf32>
  %t = arith.truncf %o : tensor<16384xf32> to tensor<16384xbf16>
  kgen.store %t, %y[%c0] {vector_width = 8 : i64} : tensor<16384xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @held_any(
// CHECK-SAME: nvvm.maxnreg = 255 : i32
kgen.kernel @held_any(%x: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "x"},
                      %y: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 8, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 1 : i64} : !kgen.rows<bf16> -> tensor<16384xbf16>
  %f = arith.extf %v : tensor<16384xbf16> to tensor<16384xf32>
  %s = kgen.reduce sum %f : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %f, %b : tensor<16384xf32>
  %t = arith.truncf %o : tensor<16384xf32> to tensor<16384xbf16>
  kgen.store %t, %y[%c0] {vector_width = 1 : i64} : tensor<16384xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// CHECK-LABEL: gpu.func @held_f32_16_chunks(
// CHECK-SAME: nvvm.maxnreg = 255 : i32
kgen.kernel @held_f32_16_chunks(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                                %y: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 16384 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 1, chunks = 16, reread = false>} {
  %n = arith.constant 16384 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<16384xf32>
  %s = kgen.reduce sum %v : tensor<16384xf32> -> f32
  %b = kgen.broadcast %s : f32 -> tensor<16384xf32>
  %o = arith.subf %v, %b : tensor<16384xf32>
  kgen.store %o, %y[%c0] {vector_width = 4 : i64} : tensor<16384xf32>, !kgen.rows<f32>
  kgen.return
}
