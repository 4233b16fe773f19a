// RUN: kgen-opt %s --kgen-vectorize | FileCheck %s --check-prefix=WIDTH
// RUN: kgen-opt %s --kgen-vectorize --kgen-occupancy --kgen-lower-to-gpu | FileCheck %s

// GPT-J pairs: x[0::2] and x[1::2] of a 16-byte aligned bf16 row, rotated
// and written back in place. Alone each view has stride 2 (width 1); as a
// pair they cover the contiguous span [2*e0, 2*e0 + 16) of each chunk, which
// moves in 16-byte accesses and is split (or, for the stores, interleaved)
// with shuffles. The lone stride-2 view of y has no partner: width 1.
// WIDTH: kgen.load %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 8 : i64}
// WIDTH: kgen.load %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 8 : i64}
// WIDTH: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 8 : i64}
// WIDTH: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 8 : i64}
// WIDTH: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 1 : i64}

// CHECK-LABEL: gpu.func @gptj(
// CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: vector.shuffle %[[S:.+]], %[[S]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.shuffle %[[S]], %[[S]] [1, 3, 5, 7, 9, 11, 13, 15] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15] : vector<8xbf16>, vector<8xbf16>
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
kgen.kernel @gptj(%x: !kgen.rows<bf16> {kgen.name = "x", kgen.align = 16 : i64},
                  %y: !kgen.rows<bf16> {kgen.name = "y", kgen.align = 16 : i64})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 4, rowsPerBlock = 64, chunks = 1, reread = false>} {
  %n = arith.constant 32 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = kgen.load %x[%c0] {stride = 2 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %b = kgen.load %x[%c1] {stride = 2 : i64} : !kgen.rows<bf16> -> tensor<32xbf16>
  %s = arith.addf %a, %b : tensor<32xbf16>
  %d = arith.subf %a, %b : tensor<32xbf16>
  kgen.store %s, %x[%c0] {stride = 2 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %d, %x[%c1] {stride = 2 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.store %s, %y[%c1] {stride = 2 : i64} : tensor<32xbf16>, !kgen.rows<bf16>
  kgen.return
}
