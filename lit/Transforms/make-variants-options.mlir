// The variant set is data: a profile (or a flag) sets it.
// RUN: kgen-opt %s --kgen-make-variants | FileCheck %s --check-prefix=DEFAULT
// RUN: kgen-opt %s --kgen-make-variants='exact-lengths=4096,16384 held-chunks=2 warp-min-rows=1024' | FileCheck %s --check-prefix=TUNED
// RUN: kgen-opt %s --kgen-make-variants='exact-lengths= held-chunks=' | FileCheck %s --check-prefix=NONE
// Values out of range are the user's error, named, before any kernel.
// RUN: not kgen-opt %s --kgen-make-variants='held-chunks=4,2' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not kgen-opt %s --kgen-make-variants='exact-lengths=0' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kgen-opt %s --kgen-make-variants='cluster-min-chunks=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// Two bf16 row loads feed the reduction: 1, 2 and 4 chunks fit 64 elements a
// thread. By default the held variants of up to 4 chunks over 256 threads
// cover rows up to 8192: only 16384 gets an exact-length variant.
// DEFAULT: kgen.kernel @sumsq_vec_warp({{.*}}minRows = 4096>
// DEFAULT-NOT: _vec_n
// DEFAULT: kgen.kernel @sumsq_vec_n16384(
// DEFAULT: kgen.kernel @sumsq_vec_hold1(
// DEFAULT: kgen.kernel @sumsq_vec_hold2(
// DEFAULT: kgen.kernel @sumsq_vec_hold4(
// DEFAULT: kgen.kernel @sumsq_vec_hold4_wide(

// Held in 2 chunks at most, rows up to 4096 are covered: 16384 keeps its
// exact variant, 4096 gets none.
// TUNED: kgen.kernel @sumsq_vec_warp({{.*}}minRows = 1024>
// TUNED-NOT: _vec_n4096
// TUNED: kgen.kernel @sumsq_vec_n16384(
// TUNED: kgen.kernel @sumsq_vec_hold1(
// TUNED: kgen.kernel @sumsq_vec_hold2(
// TUNED-NOT: _vec_hold4

// Empty lists: no exact-length variants, and of the held ones only the
// single chunk and the warp's.
// NONE-NOT: _vec_n
// NONE: kgen.kernel @sumsq_vec_warp(
// NONE-NOT: _vec_n
// NONE: kgen.kernel @sumsq_vec_hold1(
// NONE-NOT: _vec_hold2
// NONE: kgen.kernel @sumsq_vec(

// ORDER: kgen-make-variants: option 'held-chunks' must list its values in strictly ascending order
// RANGE: kgen-make-variants: option 'exact-lengths' must list values in [1, 1048576], not 0
// NEGATIVE: kgen-make-variants: option 'cluster-min-chunks' must lie in [1, 1073741824], not -1
kgen.kernel @sumsq(%x: !kgen.rows<bf16> {kgen.name = "x"},
                   %r: !kgen.rows<bf16> {kgen.name = "r"},
                   %s: !kgen.scalars<f32> {kgen.name = "s"},
                   %d: index {kgen.name = "d"}) attributes {dims = {}} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %a = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %b = kgen.load %r[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %fa = arith.extf %a : tensor<?xbf16> to tensor<?xf32>
  %fb = arith.extf %b : tensor<?xbf16> to tensor<?xf32>
  %p = arith.mulf %fa, %fb : tensor<?xf32>
  %t = kgen.reduce sum %p : tensor<?xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
