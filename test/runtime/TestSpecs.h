//===- TestSpecs.h - Specs and PTX shared by the runtime tests --*- C++ -*-===//

#ifndef KGEN_TEST_RUNTIME_TESTSPECS_H
#define KGEN_TEST_RUNTIME_TESTSPECS_H

#include "runtime/KgenRuntime.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kgen::test {

using namespace ::kgen::rt;

/// The example of the spec format: rmsnorm on bf16, hidden dynamic.
inline const char *const RmsnormSpec = R"json({
  "kgen_spec": 2,
  "op": "rmsnorm", "dtype": "bf16", "arch": "sm_90",
  "hash": "9f2cab01",
  "dims": {},
  "params": [
    {"name": "x", "kind": "tensor", "dtype": "bf16", "access": "rows", "row_length": "hidden", "writes": false},
    {"name": "weight", "kind": "tensor", "dtype": "bf16", "access": "vector", "row_length": "hidden", "writes": false},
    {"name": "y", "kind": "tensor", "dtype": "bf16", "access": "rows", "row_length": "hidden", "writes": true},
    {"name": "eps", "kind": "scalar", "dtype": "f32"},
    {"name": "hidden", "kind": "dim", "dtype": "i64"}
  ],
  "variants": [
    {"entry": "rmsnorm_bf16_v8", "block": 128, "rows_per_block": 1, "shared_bytes": 0,
     "tensor_align": {"x": 16, "weight": 16, "y": 16},
     "dim_multiple": {"hidden": 8},
     "abi": [{"slot": "ptr", "param": "x", "type": "u64"},
             {"slot": "ptr", "param": "weight", "type": "u64"},
             {"slot": "ptr", "param": "y", "type": "u64"},
             {"slot": "stride", "param": "x", "type": "i64"},
             {"slot": "stride", "param": "y", "type": "i64"},
             {"slot": "scalar", "param": "eps", "type": "f32"},
             {"slot": "dim", "param": "hidden", "type": "i64"},
             {"slot": "rows", "type": "i64"}]},
    {"entry": "rmsnorm_bf16_v1", "block": 128, "rows_per_block": 1, "shared_bytes": 0,
     "tensor_align": {}, "dim_multiple": {},
     "abi": [{"slot": "ptr", "param": "x", "type": "u64"},
             {"slot": "ptr", "param": "weight", "type": "u64"},
             {"slot": "ptr", "param": "y", "type": "u64"},
             {"slot": "stride", "param": "x", "type": "i64"},
             {"slot": "stride", "param": "y", "type": "i64"},
             {"slot": "scalar", "param": "eps", "type": "f32"},
             {"slot": "dim", "param": "hidden", "type": "i64"},
             {"slot": "rows", "type": "i64"}]}
  ]
})json";

/// The "abi" of RmsnormSpec's variants, for specs built from it.
inline const char *const RmsnormAbi =
    R"json([{"slot": "ptr", "param": "x", "type": "u64"},
            {"slot": "ptr", "param": "weight", "type": "u64"},
            {"slot": "ptr", "param": "y", "type": "u64"},
            {"slot": "stride", "param": "x", "type": "i64"},
            {"slot": "stride", "param": "y", "type": "i64"},
            {"slot": "scalar", "param": "eps", "type": "f32"},
            {"slot": "dim", "param": "hidden", "type": "i64"},
            {"slot": "rows", "type": "i64"}])json";

/// Only the entry declarations matter to code that does not reach a GPU.
inline const char *const RmsnormPtx = R"ptx(.version 7.0
.target sm_70
.address_size 64
.visible .entry rmsnorm_bf16_v8(.param .u64 a) { ret; }
.visible .entry rmsnorm_bf16_v1(.param .u64 a) { ret; }
)ptx";

/// Args for RmsnormSpec: all 16-byte aligned, hidden = 4096.
struct RmsnormArgs {
  kgen_arg args[5];
  RmsnormArgs(const void *x = reinterpret_cast<const void *>(0x10000),
              const void *w = reinterpret_cast<const void *>(0x20000),
              const void *y = reinterpret_cast<const void *>(0x30000),
              int64_t hidden = 4096)
      : args{tensorArg(x, KGEN_BF16), tensorArg(w, KGEN_BF16),
             tensorArg(y, KGEN_BF16), f32Arg(1e-6f), dimArg(hidden)} {}
};

/// Replaces the first occurrence of `from` in `text` by `to`; fails the
/// test if there is none (the edit a test meant would not be made).
inline std::string replaced(std::string text, const std::string &from,
                            const std::string &to) {
  size_t at = text.find(from);
  if (at == std::string::npos)
    ADD_FAILURE() << "replaced: '" << from << "' is not in the text";
  else
    text.replace(at, from.size(), to);
  return text;
}

} // namespace kgen::test

#endif // KGEN_TEST_RUNTIME_TESTSPECS_H
