// RUN: kgen-opt %s -split-input-file --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s
//
// A group reduction (vLLM's per-group scales): each chunk reduces its own
// elements, then xor shuffles over the lanes holding the rest of its group,
// group / vector lanes (128 / 8 = 16: offsets 8, 4, 2, 1; no barrier). A
// group store writes element 0 of the chunk that starts a group, at e0 /
// group.

// CHECK-LABEL: gpu.func @group_amax(
// CHECK: gpu.barrier
// CHECK: vector.reduction <maximumf>
// CHECK: %[[O8:.*]] = arith.constant 8 : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %[[O8]]
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: %[[O1:.*]] = arith.constant 1 : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %[[O1]]
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: llvm.store {{.*}} : vector<8xi8>
// CHECK: %[[G:.*]] = arith.constant 128 : index
// CHECK: arith.remui %{{.*}}, %[[G]]
// CHECK: arith.divui %{{.*}}, %[[G]]
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
kgen.kernel @group_amax(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                        %y: !kgen.rows<i8> {kgen.align = 16 : i64, kgen.name = "y"},
                        %s: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 2, reread = false>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 8 : i64} : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %q = arith.mulf %f, %f : tensor<4096xf32>
  %ss = kgen.reduce sum %q : tensor<4096xf32> -> f32
  %b = kgen.broadcast %ss : f32 -> tensor<4096xf32>
  %nrm = arith.mulf %f, %b : tensor<4096xf32>
  %a = math.absf %nrm : tensor<4096xf32>
  %top = kgen.group_reduce max %a group 128 : tensor<4096xf32>
  %o = arith.divf %nrm, %top : tensor<4096xf32>
  %i = arith.fptosi %o : tensor<4096xf32> to tensor<4096xi8>
  kgen.store %i, %y[%c0] {vector_width = 8 : i64} : tensor<4096xi8>, !kgen.rows<i8>
  kgen.store %top, %s[%c0] {group = 128 : i64} : tensor<4096xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// A group store with a pitch (vLLM's transposed scales) writes group e0 /
// group at that many pitches from the row's first element.

// CHECK-LABEL: gpu.func @group_pitch(
// CHECK: %[[G:.*]] = arith.constant 128 : index
// CHECK: %[[I:.*]] = arith.divui %{{.*}}, %[[G]]
// CHECK: %[[P:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: arith.addi %[[P]], %{{.*}} : index
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
kgen.kernel @group_pitch(%x: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "x"},
                         %s: !kgen.rows<f32> {kgen.align = 4 : i64, kgen.name = "s"},
                         %p: index {kgen.name = "p"})
    attributes {dims = {n = 4096 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 256, rowsPerBlock = 1, chunks = 4, reread = false>} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] {vector_width = 4 : i64} : !kgen.rows<f32> -> tensor<4096xf32>
  %a = math.absf %v : tensor<4096xf32>
  %top = kgen.group_reduce max %a group 128 : tensor<4096xf32>
  kgen.store %top, %s[%c0] pitch %p {group = 128 : i64} : tensor<4096xf32>, !kgen.rows<f32>
  kgen.return
}
