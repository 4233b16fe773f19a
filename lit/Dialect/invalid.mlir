// RUN: kgen-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect
// One case per verifier message of codegen/Dialect/KgenOps.cpp and of
// ScheduleAttr::verify, VariantAttr::verify and LaunchPolicyAttr::verify in
// codegen/Dialect/KgenDialect.cpp.

//===----------------------------------------------------------------------===//
// kgen.kernel
//===----------------------------------------------------------------------===//

// expected-error@+1 {{'kgen.kernel' op returns nothing; write results with kgen.store}}
kgen.kernel @results(%x: !kgen.rows<f32> {kgen.name = "x"}) -> f32
    attributes {dims = {}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+1 {{'kgen.kernel' op argument #1 has type 'memref<4xf32>'; expected a kgen tensor, a scalar or an index}}
kgen.kernel @memref_arg(%x: !kgen.rows<f32> {kgen.name = "x"},
                        %m: memref<4xf32> {kgen.name = "m"})
    attributes {dims = {}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+1 {{'kgen.kernel' op argument #0 has type 'tensor<4xf32>'; expected a kgen tensor, a scalar or an index}}
kgen.kernel @tensor_arg(%t: tensor<4xf32> {kgen.name = "t"})
    attributes {dims = {}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+1 {{'kgen.kernel' op needs exactly one kgen.domain}}
kgen.kernel @no_domain(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}} {
  kgen.return
}

// -----

// expected-error@+1 {{'kgen.kernel' op needs exactly one kgen.domain}}
kgen.kernel @two_domains(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.domain %n
  kgen.return
}

// -----

kgen.kernel @wrong_length(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'kgen.load' op produces 'tensor<8xf32>' but row values of this kernel are tensor<4x...> (see kgen.domain)}}
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<8xf32>
  kgen.return
}

// -----

// A static row value in a kernel whose domain is dynamic.
kgen.kernel @static_in_dynamic(%x: !kgen.rows<f32> {kgen.name = "x"},
                               %d: index {kgen.name = "d"})
    attributes {dims = {}} {
  kgen.domain %d
  %s = arith.constant 1.0 : f32
  // expected-error@+1 {{'kgen.broadcast' op produces 'tensor<4xf32>' but row values of this kernel are tensor<?x...> (see kgen.domain)}}
  %b = kgen.broadcast %s : f32 -> tensor<4xf32>
  kgen.return
}

// -----

// Row values are 1-D.
kgen.kernel @rank2(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  // expected-error@+1 {{'arith.constant' op produces 'tensor<4x4xf32>' but row values of this kernel are tensor<4x...> (see kgen.domain)}}
  %t = arith.constant dense<0.0> : tensor<4x4xf32>
  kgen.return
}

//===----------------------------------------------------------------------===//
// kgen.load / kgen.store
//===----------------------------------------------------------------------===//

// -----

kgen.kernel @load_stride0(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'kgen.load' op stride must be >= 1, got 0}}
  %v = kgen.load %x[%c0] {stride = 0 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  kgen.return
}

// -----

kgen.kernel @store_negative_stride(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op stride must be >= 1, got -2}}
  kgen.store %v, %x[%c0] {stride = -2 : i64} : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @load_width0(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'kgen.load' op vector_width must be >= 1, got 0}}
  %v = kgen.load %x[%c0] {vector_width = 0 : i64} : !kgen.rows<f32> -> tensor<4xf32>
  kgen.return
}

// -----

kgen.kernel @store_width_negative(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op vector_width must be >= 1, got -1}}
  kgen.store %v, %x[%c0] {vector_width = -1 : i64} : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @scalars_load_start(%s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'kgen.load' op a !kgen.scalars tensor has one element per row and takes no start index}}
  %v = kgen.load %s[%c0] : !kgen.scalars<f32> -> f32
  kgen.return
}

// -----

kgen.kernel @scalars_store_start(%s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  // expected-error@+1 {{'kgen.store' op a !kgen.scalars tensor has one element per row and takes no start index}}
  kgen.store %f, %s[%c0] : f32, !kgen.scalars<f32>
  kgen.return
}

// -----

kgen.kernel @scalars_load_type(%s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  // expected-error@+1 {{'kgen.load' op value of type 'f16' does not match the element type 'f32'}}
  %v = kgen.load %s : !kgen.scalars<f32> -> f16
  kgen.return
}

// -----

// A row value cannot go to a !kgen.scalars tensor.
kgen.kernel @scalars_store_row(%x: !kgen.rows<f32> {kgen.name = "x"},
                               %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op value of type 'tensor<4xf32>' does not match the element type 'f32'}}
  kgen.store %v, %s : tensor<4xf32>, !kgen.scalars<f32>
  kgen.return
}

// -----

kgen.kernel @rows_load_no_start(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  // expected-error@+1 {{'kgen.load' op needs a start index into the row}}
  %v = kgen.load %x : !kgen.rows<f32> -> tensor<4xf32>
  kgen.return
}

// -----

kgen.kernel @rows_store_no_start(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op needs a start index into the row}}
  kgen.store %v, %x : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A constant start whose byte offset wraps int64 (issue 39) is refused,
// as is a negative one.
kgen.kernel @load_start_wraps(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c = arith.constant 9223372036854775807 : index
  // expected-error@+1 {{'kgen.load' op a view from element 9223372036854775807 (stride 1) is outside [0, 2^60): its byte offsets would overflow}}
  %v = kgen.load %x[%c] : !kgen.rows<f32> -> tensor<4xf32>
  kgen.return
}

// -----

kgen.kernel @store_start_negative(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %m = arith.constant -2 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op a view from element -2 (stride 1) is outside [0, 2^60)}}
  kgen.store %v, %x[%m] : tensor<4xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @vector_load_no_start(%w: !kgen.vector<f32> {kgen.name = "w"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  // expected-error@+1 {{'kgen.load' op needs a start index into the row}}
  %v = kgen.load %w : !kgen.vector<f32> -> tensor<4xf32>
  kgen.return
}

// -----

kgen.kernel @row_elem_type(%x: !kgen.rows<bf16> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'kgen.load' op row value of type 'tensor<4xf32>' must be a 1-D tensor of 'bf16'}}
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4xf32>
  kgen.return
}

// -----

kgen.kernel @row_scalar(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'kgen.load' op row value of type 'f32' must be a 1-D tensor of 'f32'}}
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> f32
  kgen.return
}

// -----

kgen.kernel @store_row_elem_type(%x: !kgen.rows<f32> {kgen.name = "x"},
                                 %y: !kgen.rows<f16> {kgen.name = "y"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op row value of type 'tensor<4xf32>' must be a 1-D tensor of 'f16'}}
  kgen.store %v, %y[%c0] : tensor<4xf32>, !kgen.rows<f16>
  kgen.return
}

// -----

kgen.kernel @store_vector(%x: !kgen.rows<f32> {kgen.name = "x"},
                          %w: !kgen.vector<f32> {kgen.name = "w"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
  // expected-error@+1 {{'kgen.store' op cannot write a !kgen.vector: it is shared by all rows}}
  kgen.store %v, %w[%c0] : tensor<4xf32>, !kgen.vector<f32>
  kgen.return
}

//===----------------------------------------------------------------------===//
// kgen.broadcast
//===----------------------------------------------------------------------===//

// -----

kgen.kernel @broadcast_type(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 4 : i64}} {
  %n = arith.constant 4 : index
  kgen.domain %n
  %s = arith.constant 1.0 : f32
  // expected-error@+1 {{'kgen.broadcast' op result element type 'f16' differs from the input type 'f32'}}
  %b = kgen.broadcast %s : f32 -> tensor<4xf16>
  kgen.return
}

//===----------------------------------------------------------------------===//
// #kgen.schedule (ScheduleAttr::verify)
//===----------------------------------------------------------------------===//

// -----

// expected-error@+2 {{vector must be in [1, 16], got 0}}
kgen.kernel @vector0(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 0, threadsPerRow = 32, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{vector must be in [1, 16], got 32}}
kgen.kernel @vector32(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 32, threadsPerRow = 32, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{threads_per_row must be a power of two or a multiple of 32 in [1, 1024], got 48}}
kgen.kernel @tpr_not_pow2(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 48, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{threads_per_row must be a power of two or a multiple of 32 in [1, 1024], got 2048}}
kgen.kernel @tpr_too_big(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 2048, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{threads_per_row must be a power of two or a multiple of 32 in [1, 1024], got 0}}
kgen.kernel @tpr0(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 0, rowsPerBlock = 1, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a block of threads_per_row * rows_per_block = 256 * 8 threads is outside [1, 1024]}}
kgen.kernel @block_too_big(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 8, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// 128 * (2^57 + 1) wraps to 128 in int64: still refused.
// expected-error@+2 {{a block of threads_per_row * rows_per_block = 128 * 144115188075855873 threads is outside [1, 1024]}}
kgen.kernel @block_wraps(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 128, rowsPerBlock = 144115188075855873, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{launch_rows_per_block must be in [0, 4] (0: rows_per_block), got 8}}
kgen.kernel @launch_rows_too_many(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 4, chunks = 1, reread = false, launchRowsPerBlock = 8>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{launch_rows_per_block must be in [0, 4] (0: rows_per_block), got -1}}
kgen.kernel @launch_rows_negative(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 4, chunks = 1, reread = false, launchRowsPerBlock = -1>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a block of threads_per_row * rows_per_block = 32 * 0 threads is outside [1, 1024]}}
kgen.kernel @rpb0(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 0, chunks = 1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{chunks must be >= 0, got -1}}
kgen.kernel @chunks_negative(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = -1, reread = false>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{tiles must be in [1, 65535], got 0}}
kgen.kernel @tiles_zero(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 0>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{tiles > 1 needs rows held in registers (reread = false, chunks >= 1)}}
kgen.kernel @tiles_reread(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 32, rowsPerBlock = 1, chunks = 1, reread = true, tiles = 2>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

//===----------------------------------------------------------------------===//
// Row maps: kgen.group, kgen.heads, kgen.gather
//===----------------------------------------------------------------------===//

kgen.kernel @group_vector(%w: !kgen.vector<f32> {kgen.name = "w"},
                          %n: index {kgen.name = "n"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.group' op cannot group a !kgen.vector: it is shared by all rows already}}
  %g = kgen.group %w by %n : !kgen.vector<f32>
  kgen.return
}

// -----

kgen.kernel @group_nested(%x: !kgen.rows<f32> {kgen.name = "x"},
                          %n: index {kgen.name = "n"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %g = kgen.group %x by %n : !kgen.rows<f32>
  // expected-error@+1 {{'kgen.group' op source must be a kernel argument (row maps do not nest)}}
  %g2 = kgen.group %g by %n : !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_counts(%q: !kgen.rows<f32> {kgen.name = "q"},
                          %k: !kgen.rows<f32> {kgen.name = "k"},
                          %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op has 2 parts but 1 counts; give one count per part}}
  %v = kgen.heads [%q, %k] counts [%h] length %c4
      : !kgen.rows<f32>, !kgen.rows<f32> -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_pitches(%q: !kgen.rows<f32> {kgen.name = "q"},
                           %k: !kgen.rows<f32> {kgen.name = "k"},
                           %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op has 2 parts but 1 pitches; give one pitch per part or none}}
  %v = kgen.heads [%q, %k] counts [%h, %h] pitches [%h] length %c4
      : !kgen.rows<f32>, !kgen.rows<f32> -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_none(%h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op needs at least one part}}
  %v = "kgen.heads"(%c4) <{operandSegmentSizes = array<i32: 0, 0, 0, 1>}>
      : (index) -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_types(%q: !kgen.rows<f32> {kgen.name = "q"},
                         %k: !kgen.rows<bf16> {kgen.name = "k"},
                         %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op part of type '!kgen.rows<bf16>' does not fit the result type '!kgen.rows<f32>' (rows of rows or of vectors, scalars of scalars)}}
  %v = kgen.heads [%q, %k] counts [%h, %h] length %c4
      : !kgen.rows<f32>, !kgen.rows<bf16> -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_mixed(%q: !kgen.rows<f32> {kgen.name = "q"},
                         %w: !kgen.vector<f32> {kgen.name = "w"},
                         %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op part of type '!kgen.vector<f32>' does not fit the result type '!kgen.rows<f32>' (rows of rows or of vectors, scalars of scalars)}}
  %v = kgen.heads [%q, %w] counts [%h, %h] length %c4
      : !kgen.rows<f32>, !kgen.vector<f32> -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_scalars_length(%s: !kgen.scalars<f32> {kgen.name = "s"},
                                  %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op has scalars parts, whose sub-rows are one element; the length must be the constant 1}}
  %v = kgen.heads [%s] counts [%h] length %c4
      : !kgen.scalars<f32> -> !kgen.scalars<f32>
  kgen.return
}

// -----

kgen.kernel @heads_vector_pitches(%wq: !kgen.vector<f32> {kgen.name = "wq"},
                                  %wk: !kgen.vector<f32> {kgen.name = "wk"},
                                  %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.heads' op has pitches but its parts are vectors (each is one sub-row)}}
  %v = kgen.heads [%wq, %wk] counts [%h, %h] pitches [%h, %h] length %c4
      : !kgen.vector<f32>, !kgen.vector<f32> -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @heads_nested(%q: !kgen.rows<f32> {kgen.name = "q"},
                          %h: index {kgen.name = "h"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %g = kgen.group %q by %h : !kgen.rows<f32>
  // expected-error@+1 {{'kgen.heads' op parts must be kernel arguments (row maps do not nest)}}
  %v = kgen.heads [%g] counts [%h] length %c4
      : !kgen.rows<f32> -> !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @gather_float_index(%t: !kgen.rows<f32> {kgen.name = "t"},
                                %p: !kgen.scalars<f32> {kgen.name = "p"},
                                %n: index {kgen.name = "n"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  // expected-error@+1 {{'kgen.gather' op index elements must be i32 or i64, not 'f32'}}
  %g = kgen.gather %t[%p] rows %n : !kgen.rows<f32>, !kgen.scalars<f32>
  kgen.return
}

// -----

kgen.kernel @gather_nested_table(%t: !kgen.rows<f32> {kgen.name = "t"},
                                 %p: !kgen.scalars<i32> {kgen.name = "p"},
                                 %n: index {kgen.name = "n"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %tg = kgen.group %t by %n : !kgen.rows<f32>
  // expected-error@+1 {{'kgen.gather' op table must be a kernel argument (row maps do not nest)}}
  %g = kgen.gather %tg[%p] rows %n : !kgen.rows<f32>, !kgen.scalars<i32>
  kgen.return
}

// -----

// No kgen op makes positions; an op of no dialect stands in for one.
kgen.kernel @gather_index_computed(%t: !kgen.rows<f32> {kgen.name = "t"},
                                   %n: index {kgen.name = "n"})
    attributes {dims = {}} {
  %c4 = arith.constant 4 : index
  kgen.domain %c4
  %p = "test.positions"() : () -> !kgen.scalars<i32>
  // expected-error@+1 {{'kgen.gather' op index must be a kernel argument or its kgen.group}}
  %g = kgen.gather %t[%p] rows %n : !kgen.rows<f32>, !kgen.scalars<i32>
  kgen.return
}


// -----

// expected-error@+2 {{launchThreads needs rows_per_block = 1, tiles = 1, threads_per_row a multiple of 32, and its rows held (chunks >= 1) or re-read (reread = true, chunks = 0)}}
kgen.kernel @launch_threads_rows(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 2, chunks = 1, reread = false, launchThreads = true>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{launchThreads needs rows_per_block = 1, tiles = 1, threads_per_row a multiple of 32, and its rows held (chunks >= 1) or re-read (reread = true, chunks = 0)}}
kgen.kernel @launch_threads_reread_chunks(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 2, reread = true, launchThreads = true>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{rows over threads and rows chosen at launch (re-read, or one chunk a thread) need threads_per_row and vector powers of two, got 96 and 4}}
kgen.kernel @launch_threads_reread_not_pow2(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 96, rowsPerBlock = 1, chunks = 0, reread = true, launchThreads = true>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{rows over threads and rows chosen at launch (re-read, or one chunk a thread) need threads_per_row and vector powers of two, got 224 and 8}}
kgen.kernel @launch_threads_one_chunk_not_pow2(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 224, rowsPerBlock = 1, chunks = 1, reread = false, launchThreads = true>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{rows over threads and rows chosen at launch (re-read, or one chunk a thread) need threads_per_row and vector powers of two, got 1024 and 3}}
kgen.kernel @launch_threads_reread_vector(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 3, threadsPerRow = 1024, rowsPerBlock = 1, chunks = 0, reread = true, launchThreads = true>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a cluster needs 2 to 8 tiles of one row per block held in registers (tiles in [2, 8], rows_per_block = 1, launchThreads = false, reread = false, chunks >= 1), got tiles = 16}}
kgen.kernel @cluster_too_wide(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 1, chunks = 1, reread = false, tiles = 16, cluster = true>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a cluster needs 2 to 8 tiles of one row per block held in registers (tiles in [2, 8], rows_per_block = 1, launchThreads = false, reread = false, chunks >= 1), got tiles = 4}}
kgen.kernel @cluster_two_rows(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 2, chunks = 1, reread = false, tiles = 4, cluster = true>} {
  %n = arith.constant 1024 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{prefetchFirst and prefetchLines need prefetchBlocks > 0, got 0}}
kgen.kernel @prefetch_first_alone(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 1, chunks = 1, reread = false, prefetchFirst = true>} {
  %n = arith.constant 256 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{only rows held in registers are prefetched}}
kgen.kernel @prefetch_reread(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 1, chunks = 0, reread = true, prefetchAhead = true>} {
  %n = arith.constant 256 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{busyRow needs a register cap (maxRegisters > 0)}}
kgen.kernel @busy_uncapped(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 64, rowsPerBlock = 1, chunks = 1, reread = false, busyRow = true>} {
  %n = arith.constant 256 : index
  kgen.domain %n
  kgen.return
}

//===----------------------------------------------------------------------===//
// #kgen.variant (VariantAttr::verify)
//===----------------------------------------------------------------------===//

// -----

// expected-error@+2 {{a warp variant needs 0 < minLength <= maxLength}}
kgen.kernel @variant0(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = warp, maxLength = 1024>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a warp variant needs 0 < minLength <= maxLength}}
kgen.kernel @variant1(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = warp, minLength = 2048, maxLength = 1024>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a rows variant has a field of another kind}}
kgen.kernel @variant2(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = rows, minRows = 8192, maxRows = 8>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a vec variant has a field of another kind}}
kgen.kernel @variant3(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = vec, chunks = 4>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a held variant needs chunks in [1, 64], got 0}}
kgen.kernel @variant4(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a held variant's maxThreads must be whole warps up to 1024 (0: the schedule's), got 100}}
kgen.kernel @variant5(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = held, chunks = 4, maxThreads = 100>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{an exact variant needs length > 0}}
kgen.kernel @variant6(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = exact>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{a cluster variant needs maxRows > 0}}
kgen.kernel @variant7(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = cluster>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

// -----

// expected-error@+2 {{variant fields must be >= 0}}
kgen.kernel @variant8(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {}, kgen.variant = #kgen.variant<kind = rows, minRows = -1>} {
  %n = arith.constant 4 : index
  kgen.domain %n
  kgen.return
}

//===----------------------------------------------------------------------===//
// #kgen.launch_policy (LaunchPolicyAttr::verify)
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{launch_policy needs an integer 'min_block_threads'}}
module attributes {kgen.launch_policy = #kgen.launch_policy<{rows_block = 256 : i64}>} {}

// -----

// expected-error@+1 {{launch_policy has fields it does not know}}
module attributes {kgen.launch_policy = #kgen.launch_policy<{many_rows = 8192 : i64, many_rows_threads = 128 : i64, max_one_chunk_threads = 64 : i64, max_threads_per_row = 256 : i64, min_block_chunks = 256 : i64, min_block_threads = 64 : i64, reread_chunks = 8 : i64, rows_block = 256 : i64, warp_row_chunks = 4 : i64, rows_blok = 256 : i64}>} {}

// -----

// expected-error@+1 {{launch_policy's 'max_threads_per_row' is out of range (thread counts: powers of two up to 1024; others positive)}}
module attributes {kgen.launch_policy = #kgen.launch_policy<{many_rows = 8192 : i64, many_rows_threads = 128 : i64, max_one_chunk_threads = 64 : i64, max_threads_per_row = 96 : i64, min_block_chunks = 256 : i64, min_block_threads = 64 : i64, reread_chunks = 8 : i64, rows_block = 256 : i64, warp_row_chunks = 4 : i64}>} {}

// -----

kgen.kernel @group_ragged(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 96 : i64}} {
  %n = arith.constant 96 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<96xf32>
  // expected-error@+1 {{rows of 96 elements are not a whole number of groups of 64}}
  %t = kgen.group_reduce max %a group 64 : tensor<96xf32>
  kgen.store %t, %x[%c0] : tensor<96xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @group_mean(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 128 : i64}} {
  %n = arith.constant 128 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<128xf32>
  // expected-error@+1 {{reduces groups by sum, max or min only}}
  %t = kgen.group_reduce sqdev %a group 64 : tensor<128xf32>
  kgen.store %t, %x[%c0] : tensor<128xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

kgen.kernel @pitch_without_group(%x: !kgen.rows<f32> {kgen.name = "x"},
                                 %y: !kgen.rows<f32> {kgen.name = "y"},
                                 %p: index {kgen.name = "p"})
    attributes {dims = {n = 16 : i64}} {
  %n = arith.constant 16 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<16xf32>
  // expected-error@+1 {{'kgen.store' op only a group store takes a pitch}}
  kgen.store %v, %y[%c0] pitch %p : tensor<16xf32>, !kgen.rows<f32>
  kgen.return
}
