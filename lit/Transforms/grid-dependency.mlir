// RUN: kgen-opt %s --kgen-grid-dependency | FileCheck %s

// A kernel waits for the grids before it (before any memory access), then
// lets its dependents launch; device functions are untouched.
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

// Prefetches (under branches) and libdevice math may go before the wait: it
// goes where every memory access is dominated, before the first of them.
// CHECK-LABEL: llvm.func @prefetching(
// CHECK-NOT: griddepcontrol
// CHECK: llvm.call @__nv_fabsf
// CHECK-NOT: griddepcontrol
// CHECK: nvvm.prefetch
// CHECK-NOT: griddepcontrol
// CHECK: ^bb2:
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.load
// Memory accesses only in a loop: the wait goes before the loop, not in it.
// CHECK-LABEL: llvm.func @looping(
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.br ^bb1
// CHECK-NOT: griddepcontrol
// CHECK: llvm.return
// A kernel without memory accesses waits before it returns.
// CHECK-LABEL: llvm.func @empty(
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.return
gpu.module @kgen2 {
  llvm.func @__nv_fabsf(f32) -> f32
  llvm.func @prefetching(%p: !llvm.ptr<1>, %c: i1, %s: f32) attributes {nvvm.kernel} {
    %a = llvm.call @__nv_fabsf(%s) : (f32) -> f32
    llvm.cond_br %c, ^bb1, ^bb2
  ^bb1:
    nvvm.prefetch level = L2, %p : !llvm.ptr<1>
    llvm.br ^bb2
  ^bb2:
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    %m = llvm.fmul %v, %a : f32
    llvm.store %m, %p : f32, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @looping(%p: !llvm.ptr<1>, %n: i64) attributes {nvvm.kernel} {
    %z = llvm.mlir.constant(0 : i64) : i64
    llvm.br ^bb1(%z : i64)
  ^bb1(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^bb2, ^bb3
  ^bb2:
    %q = llvm.getelementptr %p[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = llvm.load %q : !llvm.ptr<1> -> f32
    llvm.store %v, %q : f32, !llvm.ptr<1>
    %one = llvm.mlir.constant(1 : i64) : i64
    %j = llvm.add %i, %one : i64
    llvm.br ^bb1(%j : i64)
  ^bb3:
    llvm.return
  }
  llvm.func @empty() attributes {nvvm.kernel} {
    llvm.return
  }
}
