# -*- Python -*-
# lit configuration of the kgen FileCheck tests.
#
# Normally loaded through the lit.site.cfg.py that CMake writes into the build
# folder (build/lit): `ninja -C build check-kgen-lit` or `ctest -R lit`.
# Running `lit -sv lit/` on the source folder also works: the tools are then
# looked up in build/ (or $KGEN_BUILD_DIR).

import os

import lit.formats
import lit.util

config.name = "kgen"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.test_source_root = os.path.dirname(__file__)

if not hasattr(config, "kgen_tools_dirs"):
    # No site config: a run from the source tree.
    repo = os.path.dirname(config.test_source_root)
    build = os.environ.get("KGEN_BUILD_DIR", os.path.join(repo, "build"))
    config.kgen_tools_dirs = [
        os.path.join(build, "tools", "kgen"),
        os.path.join(build, "tools", "kgen-opt"),
    ]
    config.llvm_tools_dir = "/usr/lib/llvm-22/bin"
    config.kgen_cuda_path = os.environ.get("KGEN_CUDA_PATH", "/usr/local/cuda")
    config.test_exec_root = os.path.join(build, "lit")


def find_tool(name, dirs):
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    lit_config.fatal(
        "cannot find %s in %s (build the kgen and kgen-opt targets)"
        % (name, ", ".join(dirs)))


kgen = find_tool("kgen", config.kgen_tools_dirs)
kgen_opt = find_tool("kgen-opt", config.kgen_tools_dirs)
filecheck = find_tool("FileCheck", [config.llvm_tools_dir])
not_ = find_tool("not", [config.llvm_tools_dir])
count = find_tool("count", [config.llvm_tools_dir])

# Tools first on PATH too, so that a test names them plainly.
config.environment["PATH"] = os.pathsep.join(
    config.kgen_tools_dirs + [config.llvm_tools_dir,
                              config.environment.get("PATH", "")])

# Longest names first: `kgen-opt` must not be seen as `kgen` + `-opt`. The
# patterns only match a whole word that is not part of a path, a flag, a
# symbol (@kgen...) or a dialect name (kgen.kernel, !kgen.rows, #kgen...).
def tool(name):
    return r"(?<![-\w/.@!#$%%=:,])%s(?![-\w./=])" % name.replace("-", r"\-")


config.substitutions.append((tool("kgen-opt"), kgen_opt))
config.substitutions.append((tool("kgen"), kgen))
config.substitutions.append((tool("FileCheck"), filecheck))
config.substitutions.append((tool("not"), not_))
config.substitutions.append((tool("count"), count))
# The CUDA toolkit kgen was configured with (lint and baseline run its ptxas).
config.substitutions.append(("%cuda", config.kgen_cuda_path))
