//===- Aot.h - Ops as a C library with typed launchers ----------*- C++ -*-===//
//
// `kgen aot` writes NAME.h, NAME.c and NAME.hpp into a folder. The C source
// embeds, per kernel, the PTX and spec of each arch and, where ptxas is
// found, a cubin per arch. For each op, dtype and length it defines a launch
// function with named, typed parameters, and per op and dtype one that picks
// the kernel specialized on the row length given, else the dynamic one. They
// create the kernel once (kgen_kernel_create_once) and launch through the
// runtime, with all its argument checks. NAME.hpp overloads them by dtype in
// namespace NAME.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_AOT_H
#define KGEN_TOOLS_KGEN_AOT_H

#include "Jobs.h"

#include <string>

namespace kgen::tools {

enum class CubinMode { Auto, On, Off };

struct AotOptions {
  std::string name; ///< file names, C prefix, C++ namespace
  std::string dir;
  CubinMode cubin = CubinMode::Auto;
  std::string ptxas;    ///< empty: cudaPath/bin/ptxas, then PATH
  std::string cudaPath; ///< the CUDA toolkit
};

/// Compiles `sel` and writes the library. Returns the exit code.
int emitAot(const AotOptions &opts, const Selection &sel,
            const codegen::CompileOptions &base, unsigned threads);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_AOT_H
