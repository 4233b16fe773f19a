//===- Generator.h - The kgen command line as a library ---------*- C++ -*-===//
//
// `kgen` is generatorMain linked with kgen's bundled ops; a kernel author's
// generator is the same main linked with their own op files (see
// docs/writing-ops.md and the CMake function kgen_add_library).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_GENERATOR_H
#define KGEN_TOOLS_KGEN_GENERATOR_H

namespace kgen {

/// Runs the kgen command line (list, emit, bundle, aot) over every op
/// registered with KGEN_REGISTER_OP in this program. Returns the exit code.
int generatorMain(int argc, char **argv);

} // namespace kgen

#endif // KGEN_TOOLS_KGEN_GENERATOR_H
