// RUN: kgen-opt %s -split-input-file --kgen-vectorize | FileCheck %s

// vector_width: the widest power of two elements, at most the schedule's
// chunk, whose bytes divide the alignment of the tensor (kgen.align, base and
// row pitch) and of the start offset (start * element bytes).

// CHECK-LABEL: kgen.kernel @aligned_bf16(
// 16-byte aligned, start 0: a whole 16-byte chunk of 8 bf16.
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 8 : i64} : !kgen.rows<bf16>
// The weight vector, 16-byte aligned.
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 8 : i64} : !kgen.vector<bf16>
// A per-row scalar is a single element.
// CHECK-NEXT: kgen.load %{{.+}} {vector_width = 1 : i64} : !kgen.scalars<bf16> -> bf16
// CHECK-NEXT: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {vector_width = 8 : i64} : tensor<64xbf16>, !kgen.rows<bf16>
// CHECK-NEXT: kgen.store %{{.+}}, %{{.+}} {vector_width = 1 : i64} : bf16, !kgen.scalars<bf16>
kgen.kernel @aligned_bf16(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                          %w: !kgen.vector<bf16> {kgen.align = 16 : i64, kgen.name = "w"},
                          %s: !kgen.scalars<bf16> {kgen.align = 16 : i64, kgen.name = "s"},
                          %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<64xbf16>
  %b = kgen.load %w[%c0] : !kgen.vector<bf16> -> tensor<64xbf16>
  %c = kgen.load %s : !kgen.scalars<bf16> -> bf16
  kgen.store %a, %y[%c0] : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.store %c, %s : bf16, !kgen.scalars<bf16>
  kgen.return
}

// -----

// The fallback variant: only element alignment -> one element per access.
// CHECK-LABEL: kgen.kernel @fallback_bf16(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64} : !kgen.rows<bf16>
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64} : !kgen.vector<bf16>
// CHECK-NEXT: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {vector_width = 1 : i64}
kgen.kernel @fallback_bf16(%x: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "x"},
                           %w: !kgen.vector<bf16> {kgen.align = 2 : i64, kgen.name = "w"},
                           %y: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<64xbf16>
  %b = kgen.load %w[%c0] : !kgen.vector<bf16> -> tensor<64xbf16>
  kgen.store %a, %y[%c0] : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// No kgen.align at all: element alignment is assumed.
// CHECK-LABEL: kgen.kernel @no_align(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64} : !kgen.rows<f32>
kgen.kernel @no_align(%x: !kgen.rows<f32> {kgen.name = "x"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<64xf32>
  kgen.return
}

// -----

// Constant start offsets into a 16-byte aligned bf16 row: the start's
// largest power-of-two divisor bounds the width.
// CHECK-LABEL: kgen.kernel @const_offsets(
// start 1 (2 bytes)
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64}
// start 3 (6 bytes)
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64}
// start 2 (4 bytes)
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 2 : i64}
// start 6 (12 bytes: 4-byte aligned)
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 2 : i64}
// start 4 (8 bytes)
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 4 : i64}
// start 8 (16 bytes)
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 8 : i64}
// start 24 (48 bytes): capped by the 16-byte alignment of the row
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 8 : i64}
// the store at start 1
// CHECK-NEXT: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {vector_width = 1 : i64}
kgen.kernel @const_offsets(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                           %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %a = kgen.load %x[%c1] : !kgen.rows<bf16> -> tensor<64xbf16>
  %b = kgen.load %x[%c3] : !kgen.rows<bf16> -> tensor<64xbf16>
  %c = kgen.load %x[%c2] : !kgen.rows<bf16> -> tensor<64xbf16>
  %d = kgen.load %x[%c6] : !kgen.rows<bf16> -> tensor<64xbf16>
  %e = kgen.load %x[%c4] : !kgen.rows<bf16> -> tensor<64xbf16>
  %f = kgen.load %x[%c8] : !kgen.rows<bf16> -> tensor<64xbf16>
  %g = kgen.load %x[%c24] : !kgen.rows<bf16> -> tensor<64xbf16>
  kgen.store %a, %y[%c1] : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Strided views are not contiguous: one element per access, whatever the
// alignment.
// CHECK-LABEL: kgen.kernel @strided(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 1 : i64}
// CHECK-NEXT: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {stride = 2 : i64, vector_width = 1 : i64}
kgen.kernel @strided(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                     %y: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "y"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 8, rowsPerBlock = 32, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] {stride = 2 : i64} : !kgen.rows<bf16> -> tensor<64xbf16>
  kgen.store %a, %y[%c0] {stride = 2 : i64} : tensor<64xbf16>, !kgen.rows<bf16>
  kgen.return
}

// -----

// Dynamic starts: the divisibility of a dim comes from kgen.divisibility;
// sums take the smaller divisor, products multiply them.
// CHECK-LABEL: kgen.kernel @dynamic_starts(
// CHECK-SAME: %[[X:[a-z0-9]+]]: !kgen.rows<bf16>
// CHECK-SAME: %[[D16:[a-z0-9]+]]: index {kgen.divisibility = 16
// CHECK-SAME: %[[D1:[a-z0-9]+]]: index {kgen.divisibility = 1 :
// CHECK-SAME: %[[DN:[a-z0-9]+]]: index {kgen.name = "dn"}
// CHECK-SAME: %[[D2:[a-z0-9]+]]: index {kgen.divisibility = 2 :
// A multiple of 16 elements: 8.
// CHECK: kgen.load %[[X]][%[[D16]]] {vector_width = 8 : i64}
// Divisibility 1, or no attribute: 1.
// CHECK-NEXT: kgen.load %[[X]][%[[D1]]] {vector_width = 1 : i64}
// CHECK-NEXT: kgen.load %[[X]][%[[DN]]] {vector_width = 1 : i64}
// A multiple of 2 (4 bytes): 2.
// CHECK-NEXT: kgen.load %[[X]][%[[D2]]] {vector_width = 2 : i64}
// d16 + 8: 8.
// CHECK-NEXT: %[[S0:.+]] = arith.addi %[[D16]], %c8
// CHECK-NEXT: kgen.load %[[X]][%[[S0]]] {vector_width = 8 : i64}
// 4 + d16: 4.
// CHECK-NEXT: %[[S1:.+]] = arith.addi %c4, %[[D16]]
// CHECK-NEXT: kgen.load %[[X]][%[[S1]]] {vector_width = 4 : i64}
// d16 + 1: 1.
// CHECK-NEXT: %[[S2:.+]] = arith.addi %[[D16]], %c1
// CHECK-NEXT: kgen.load %[[X]][%[[S2]]] {vector_width = 1 : i64}
// d1 * 4: 4.
// CHECK-NEXT: %[[S3:.+]] = arith.muli %[[D1]], %c4
// CHECK-NEXT: kgen.load %[[X]][%[[S3]]] {vector_width = 4 : i64}
// d2 * d2 (a multiple of 4): 4.
// CHECK-NEXT: %[[S4:.+]] = arith.muli %[[D2]], %[[D2]]
// CHECK-NEXT: kgen.load %[[X]][%[[S4]]] {vector_width = 4 : i64}
// d1 * 0 (zero is divisible by anything): 8.
// CHECK-NEXT: %[[S5:.+]] = arith.muli %[[D1]], %c0
// CHECK-NEXT: kgen.load %[[X]][%[[S5]]] {vector_width = 8 : i64}
// d16 - 8: an op the analysis does not know gives divisor 1.
// CHECK-NEXT: %[[S6:.+]] = arith.subi %[[D16]], %c8
// CHECK-NEXT: kgen.load %[[X]][%[[S6]]] {vector_width = 1 : i64}
kgen.kernel @dynamic_starts(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                            %d16: index {kgen.divisibility = 16 : i64, kgen.name = "d16"},
                            %d1: index {kgen.divisibility = 1 : i64, kgen.name = "d1"},
                            %dn: index {kgen.name = "dn"},
                            %d2: index {kgen.divisibility = 2 : i64, kgen.name = "d2"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %a = kgen.load %x[%d16] : !kgen.rows<bf16> -> tensor<?xbf16>
  %b = kgen.load %x[%d1] : !kgen.rows<bf16> -> tensor<?xbf16>
  %c = kgen.load %x[%dn] : !kgen.rows<bf16> -> tensor<?xbf16>
  %d = kgen.load %x[%d2] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s0 = arith.addi %d16, %c8 : index
  %e = kgen.load %x[%s0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s1 = arith.addi %c4, %d16 : index
  %f = kgen.load %x[%s1] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s2 = arith.addi %d16, %c1 : index
  %g = kgen.load %x[%s2] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s3 = arith.muli %d1, %c4 : index
  %h = kgen.load %x[%s3] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s4 = arith.muli %d2, %d2 : index
  %i = kgen.load %x[%s4] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s5 = arith.muli %d1, %c0 : index
  %j = kgen.load %x[%s5] : !kgen.rows<bf16> -> tensor<?xbf16>
  %s6 = arith.subi %d16, %c8 : index
  %k = kgen.load %x[%s6] : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.return
}

// -----

// The second half of a [T, 2d] row, as silu_and_mul reads it: start d.
// CHECK-LABEL: kgen.kernel @second_half_vec(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 8 : i64}
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 8 : i64}
// CHECK-LABEL: kgen.kernel @second_half_any(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64}
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 1 : i64}
kgen.kernel @second_half_vec(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                             %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %b = kgen.load %x[%d] : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.return
}
kgen.kernel @second_half_any(%x: !kgen.rows<bf16> {kgen.align = 2 : i64, kgen.name = "x"},
                             %d: index {kgen.divisibility = 1 : i64, kgen.name = "d"})
    attributes {dims = {}, schedule = #kgen.schedule<vector = 8, threadsPerRow = 256, rowsPerBlock = 1, chunks = 0, reread = true>} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %b = kgen.load %x[%d] : !kgen.rows<bf16> -> tensor<?xbf16>
  kgen.return
}

// -----

// Other dtypes and alignments: i8 rows move 16 per access; an 8-byte aligned
// bf16 row 4; a 4-byte aligned f16 row 2; the schedule's chunk caps the
// width (here 4, as the kernel also stores f32).
// CHECK-LABEL: kgen.kernel @dtypes(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 4 : i64} : !kgen.rows<i8>
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 4 : i64} : !kgen.rows<bf16>
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 2 : i64} : !kgen.rows<f16>
// CHECK-NEXT: kgen.load %{{.+}}[%{{.+}}] {vector_width = 4 : i64} : !kgen.rows<bf16>
// CHECK: kgen.store %{{.+}}, %{{.+}}[%{{.+}}] {vector_width = 4 : i64} : tensor<64xf32>, !kgen.rows<f32>
kgen.kernel @dtypes(%q: !kgen.rows<i8> {kgen.align = 16 : i64, kgen.name = "q"},
                    %b8: !kgen.rows<bf16> {kgen.align = 8 : i64, kgen.name = "b8"},
                    %h4: !kgen.rows<f16> {kgen.align = 4 : i64, kgen.name = "h4"},
                    %b16: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "b16"},
                    %o: !kgen.rows<f32> {kgen.align = 16 : i64, kgen.name = "o"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 4, threadsPerRow = 16, rowsPerBlock = 16, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %q[%c0] : !kgen.rows<i8> -> tensor<64xi8>
  %b = kgen.load %b8[%c0] : !kgen.rows<bf16> -> tensor<64xbf16>
  %c = kgen.load %h4[%c0] : !kgen.rows<f16> -> tensor<64xf16>
  %d = kgen.load %b16[%c0] : !kgen.rows<bf16> -> tensor<64xbf16>
  %f = arith.extf %d : tensor<64xbf16> to tensor<64xf32>
  kgen.store %f, %o[%c0] : tensor<64xf32>, !kgen.rows<f32>
  kgen.return
}

// -----

// CHECK-LABEL: kgen.kernel @i8_full(
// CHECK: kgen.load %{{.+}}[%{{.+}}] {vector_width = 16 : i64} : !kgen.rows<i8>
kgen.kernel @i8_full(%q: !kgen.rows<i8> {kgen.align = 16 : i64, kgen.name = "q"})
    attributes {dims = {n = 64 : i64}, schedule = #kgen.schedule<vector = 16, threadsPerRow = 4, rowsPerBlock = 64, chunks = 1, reread = false>} {
  %n = arith.constant 64 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %a = kgen.load %q[%c0] : !kgen.rows<i8> -> tensor<64xi8>
  kgen.return
}
