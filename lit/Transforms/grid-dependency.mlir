// RUN: kgen-opt %s --kgen-grid-dependency | FileCheck %s

// A kernel starts by waiting for the grids before it (before any memory
// access), then lets its dependents launch; device functions are untouched.
// CHECK-LABEL: llvm.func @k(
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.load
// CHECK-LABEL: llvm.func @helper(
// CHECK-NOT: griddepcontrol
gpu.module @kgen {
  llvm.func @k(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @helper(%p: !llvm.ptr<1>) {
    llvm.return
  }
}
