// kgen-pipeline: the stages a compile runs, for an arch under a profile, as
// one pipeline of kgen-opt with typed options.
// RUN: kgen-opt %s --kgen-pipeline='arch=sm_80 stage=kgen' | FileCheck %s --check-prefix=KGEN
// RUN: kgen-opt %s --kgen-pipeline='arch=sm_90 stage=kgen profile=%S/../kgen/Inputs/profile-few-chunks.json' \
// RUN:   | FileCheck %s --check-prefix=TWO
// RUN: kgen-opt %s --kgen-pipeline='arch=sm_90 stage=gpu' | FileCheck %s --check-prefix=GPU
// RUN: kgen-opt %s --kgen-pipeline='arch=sm_90' | FileCheck %s --check-prefix=LLVM
// RUN: not kgen-opt %s --kgen-pipeline='arch=sm_80 profile=sm_90' 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not kgen-opt %s --kgen-pipeline='stage=ptx' 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not kgen-opt %s --kgen-pipeline='arch=sm_99' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Variants and schedules: sm_80 has no clusters; 512 bf16 chunks over 128
// threads of 4 (the target), or 256 threads of 2 under the profile that
// aims at 2.
// KGEN-NOT: _vec_cluster
// KGEN: kgen.kernel @norm_vec(
// KGEN-SAME: schedule = #kgen.schedule<vector = 8, threadsPerRow = 128, rowsPerBlock = 2, chunks = 4
// TWO: kgen.kernel @norm_vec_cluster(
// TWO: kgen.kernel @norm_vec(
// TWO-SAME: threadsPerRow = 256, rowsPerBlock = 1, chunks = 2
// The gpu stage: a gpu.func per variant, its register cap set.
// GPU: gpu.func @norm_vec_cluster(
// GPU: gpu.func @norm_vec(
// GPU-SAME: nvvm.maxnreg
// sm_90's last stage waits on the grids before it.
// LLVM: llvm.func @norm_vec(
// LLVM: nvvm.griddepcontrol wait
// ARCH: kgen-pipeline: profile sm_90 is for sm_90, sm_90a, not sm_80
// STAGE: kgen-pipeline: stage must be kgen, gpu or llvm, not 'ptx'
// UNKNOWN: kgen-pipeline: unknown arch 'sm_99'
kgen.kernel @norm(%x: !kgen.rows<bf16> {kgen.name = "x"},
                  %s: !kgen.scalars<f32> {kgen.name = "s"})
    attributes {dims = {n = 4096 : i64}} {
  %n = arith.constant 4096 : index
  kgen.domain %n
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<4096xbf16>
  %f = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
  %t = kgen.reduce sum %f : tensor<4096xf32> -> f32
  kgen.store %t, %s : f32, !kgen.scalars<f32>
  kgen.return
}
