// RUN: kgen-opt %s -split-input-file -verify-diagnostics --kgen-schedule

// A range of row lengths needs both ends (kgen-make-variants sets both).
// expected-error@+1 {{'kgen.kernel' op has kgen.max_domain but no kgen.min_domain}}
kgen.kernel @half_range(%x: !kgen.rows<bf16> {kgen.align = 16 : i64, kgen.name = "x"},
                        %d: index {kgen.divisibility = 16 : i64, kgen.name = "d"})
    attributes {dims = {}, kgen.max_domain = 1024 : i64} {
  kgen.domain %d
  %c0 = arith.constant 0 : index
  %v = kgen.load %x[%c0] : !kgen.rows<bf16> -> tensor<?xbf16>
  %f = arith.extf %v : tensor<?xbf16> to tensor<?xf32>
  %s = kgen.reduce sum %f : tensor<?xf32> -> f32
  kgen.store %v, %x[%c0] : tensor<?xbf16>, !kgen.rows<bf16>
  kgen.return
}
