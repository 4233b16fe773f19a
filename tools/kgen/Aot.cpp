//===- Aot.cpp - Ops as a C library with typed launchers ------------------===//
#include "Aot.h"
#include "Toolkit.h"

#include "runtime/Spec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <map>
#include <set>

namespace kgen::tools {

namespace {

namespace rt = kgen::rt;

/// C and C++ keywords (with C++'s alternative tokens), and the launchers'
/// own parameters (rows, stream).
bool isKeyword(const std::string &s) {
  static const std::set<std::string> keywords = {"alignas",
                                                 "alignof",
                                                 "and",
                                                 "and_eq",
                                                 "asm",
                                                 "auto",
                                                 "bitand",
                                                 "bitor",
                                                 "bool",
                                                 "break",
                                                 "case",
                                                 "catch",
                                                 "char",
                                                 "char8_t",
                                                 "char16_t",
                                                 "char32_t",
                                                 "class",
                                                 "compl",
                                                 "concept",
                                                 "const",
                                                 "consteval",
                                                 "constexpr",
                                                 "constinit",
                                                 "const_cast",
                                                 "continue",
                                                 "co_await",
                                                 "co_return",
                                                 "co_yield",
                                                 "decltype",
                                                 "default",
                                                 "delete",
                                                 "do",
                                                 "double",
                                                 "dynamic_cast",
                                                 "else",
                                                 "enum",
                                                 "explicit",
                                                 "export",
                                                 "extern",
                                                 "false",
                                                 "float",
                                                 "for",
                                                 "friend",
                                                 "goto",
                                                 "if",
                                                 "inline",
                                                 "int",
                                                 "long",
                                                 "mutable",
                                                 "namespace",
                                                 "new",
                                                 "noexcept",
                                                 "not",
                                                 "not_eq",
                                                 "nullptr",
                                                 "operator",
                                                 "or",
                                                 "or_eq",
                                                 "private",
                                                 "protected",
                                                 "public",
                                                 "register",
                                                 "reinterpret_cast",
                                                 "requires",
                                                 "restrict",
                                                 "return",
                                                 "short",
                                                 "signed",
                                                 "sizeof",
                                                 "static",
                                                 "static_assert",
                                                 "static_cast",
                                                 "struct",
                                                 "switch",
                                                 "template",
                                                 "this",
                                                 "thread_local",
                                                 "throw",
                                                 "true",
                                                 "try",
                                                 "typedef",
                                                 "typeid",
                                                 "typename",
                                                 "union",
                                                 "unsigned",
                                                 "using",
                                                 "virtual",
                                                 "void",
                                                 "volatile",
                                                 "wchar_t",
                                                 "while",
                                                 "xor",
                                                 "xor_eq",
                                                 "rows",
                                                 "stream"};
  return keywords.count(s) > 0;
}

/// `text` on one line, safe inside a C or C++ comment.
std::string commentText(std::string text) {
  for (char &c : text)
    if (c == '\n' || c == '\r' || c == '\\')
      c = ' ';
  for (size_t at; (at = text.find("*/")) != std::string::npos;)
    text.replace(at, 2, "* /");
  return text;
}

/// A parameter's name in the generated C: a keyword, or a name of the
/// launchers' locals (kgen_*), gets a trailing '_'.
std::string cName(const std::string &param) {
  bool reserved =
      isKeyword(param) || llvm::StringRef(param).starts_with("kgen_");
  return reserved ? param + "_" : param;
}

const char *elementType(kgen_dtype t) {
  switch (t) {
  case KGEN_F32:
    return "float";
  case KGEN_F16:
    return "kgen_f16";
  case KGEN_BF16:
    return "kgen_bf16";
  case KGEN_F8E4M3:
    return "kgen_f8e4m3";
  case KGEN_F8E5M2:
    return "kgen_f8e5m2";
  case KGEN_I32:
    return "int32_t";
  case KGEN_I64:
    return "int64_t";
  case KGEN_I8:
    return "int8_t";
  }
  return "void";
}

const char *dtypeEnum(kgen_dtype t) {
  static const char *names[] = {"KGEN_F32",    "KGEN_F16",    "KGEN_BF16",
                                "KGEN_F8E4M3", "KGEN_F8E5M2", "KGEN_I32",
                                "KGEN_I64",    "KGEN_I8"};
  return names[t];
}

/// `text` as adjacent C string literals, a line of the text each.
std::string stringLiteral(const std::string &text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = text[i];
    if (c == '\n') {
      out += "\\n\"";
      if (i + 1 < text.size())
        out += "\n    \"";
      else
        return out;
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\', out += char(c);
    else if (c == '\t')
      out += "\\t";
    else if (c < 32 || c >= 127)
      out += fmt::format("\\{:03o}", c);
    else
      out += char(c);
  }
  return out + "\"";
}

std::string byteArray(const std::string &bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    out += i % 16 ? " " : "\n    ";
    out += fmt::format("0x{:02x},", (unsigned char)bytes[i]);
  }
  return out;
}

/// One kernel of the library: an op, dtype and length, with an image per
/// arch (jobs, in arch order).
struct LibKernel {
  const OpDef *op;
  DType dtype;
  int64_t length;
  std::vector<size_t> jobs;
  rt::Spec spec; ///< the first arch's
  std::string symbol;
};

/// The C parameter list and the kgen_arg initializers of `spec`.
struct Signature {
  std::vector<std::string> params;        ///< "const kgen_bf16 *x", ...
  std::vector<std::string> names;         ///< the arguments to forward
  std::vector<std::string> args;          ///< kgen_arg initializers
  std::vector<std::string> unpack;        ///< the arguments from kgen_arg a[]
  std::vector<std::string> kinds, dtypes; ///< per kgen_arg, C enumerators
};

Signature signature(const rt::Spec &spec, bool withDims = true) {
  Signature sig;
  for (const rt::Param &p : spec.params) {
    if (p.kind == KGEN_ARG_DIM && !withDims)
      continue;
    std::string n = cName(p.name);
    switch (p.kind) {
    case KGEN_ARG_TENSOR: {
      bool strided = rt::hasRowStride(p);
      sig.params.push_back(fmt::format("{}{} *{}", p.writes ? "" : "const ",
                                       elementType(p.dtype), n));
      sig.names.push_back(n);
      if (strided) {
        sig.params.push_back(fmt::format("int64_t {}_stride", n));
        sig.names.push_back(n + "_stride");
      }
      sig.args.push_back(fmt::format("{{KGEN_ARG_TENSOR, {}, {}, {}, 0, 0}}",
                                     dtypeEnum(p.dtype), n,
                                     strided ? n + "_stride" : "0"));
      size_t i = sig.kinds.size();
      // Through uintptr_t for a written tensor: kgen_arg's ptr is const.
      sig.unpack.push_back(p.writes ? fmt::format("({} *)(uintptr_t)a[{}].ptr",
                                                  elementType(p.dtype), i)
                                    : fmt::format("(const {} *)a[{}].ptr",
                                                  elementType(p.dtype), i));
      if (strided)
        sig.unpack.push_back(fmt::format("a[{}].row_stride", i));
      sig.kinds.push_back("KGEN_ARG_TENSOR");
      sig.dtypes.push_back(dtypeEnum(p.dtype));
      break;
    }
    case KGEN_ARG_SCALAR:
      sig.params.push_back(fmt::format("{} {}", elementType(p.dtype), n));
      sig.names.push_back(n);
      sig.args.push_back(
          p.dtype == KGEN_F32
              ? fmt::format("{{KGEN_ARG_SCALAR, KGEN_F32, 0, 0, {}, 0}}", n)
              : fmt::format("{{KGEN_ARG_SCALAR, {}, 0, 0, 0, {}}}",
                            dtypeEnum(p.dtype), n));
      sig.unpack.push_back(fmt::format("({})a[{}].{}", elementType(p.dtype),
                                       sig.kinds.size(),
                                       p.dtype == KGEN_F32 ? "f" : "i"));
      sig.kinds.push_back("KGEN_ARG_SCALAR");
      sig.dtypes.push_back(dtypeEnum(p.dtype));
      break;
    case KGEN_ARG_DIM:
      sig.params.push_back("int64_t " + n);
      sig.names.push_back(n);
      sig.args.push_back(
          fmt::format("{{KGEN_ARG_DIM, KGEN_I64, 0, 0, 0, {}}}", n));
      sig.unpack.push_back(fmt::format("a[{}].i", sig.kinds.size()));
      sig.kinds.push_back("KGEN_ARG_DIM");
      sig.dtypes.push_back("KGEN_I64");
      break;
    }
  }
  return sig;
}

std::string paramList(std::vector<std::string> params) {
  params.push_back("int64_t rows");
  params.push_back("void *stream");
  return llvm::join(params, ", ");
}

class Writer {
public:
  Writer(const AotOptions &o, const std::vector<Job> &jobs,
         const std::vector<std::string> &cubins,
         const std::vector<LibKernel> &kernels)
      : o(o), jobs(jobs), cubins(cubins), kernels(kernels) {}

  std::string header();
  std::string source();
  std::string cxxHeader();

private:
  /// Per op and dtype: its kernels (indices into `kernels`).
  std::map<std::pair<std::string, DType>, std::vector<size_t>> groups();
  /// The dispatcher's dims: the dynamic kernel's, and the op's main dim.
  std::vector<std::string> dispatchDims(const std::vector<size_t> &group);
  std::string dispatcherSignature(const std::vector<size_t> &group,
                                  std::string &name);
  /// The kernels of `group` take the same tensors and scalars, and dims
  /// the dispatcher has.
  bool dispatchable(const std::vector<size_t> &group);
  std::string archNote(const LibKernel &k);

  const AotOptions &o;
  const std::vector<Job> &jobs;
  const std::vector<std::string> &cubins;
  const std::vector<LibKernel> &kernels;
};

std::map<std::pair<std::string, DType>, std::vector<size_t>> Writer::groups() {
  std::map<std::pair<std::string, DType>, std::vector<size_t>> g;
  for (size_t i = 0; i < kernels.size(); ++i)
    g[{kernels[i].op->name, kernels[i].dtype}].push_back(i);
  return g;
}

std::string Writer::archNote(const LibKernel &k) {
  std::vector<std::string> parts;
  for (size_t j : k.jobs)
    parts.push_back(jobs[j].arch + (cubins[j].empty() ? "" : " (+cubin)"));
  return llvm::join(parts, ", ");
}

std::vector<std::string>
Writer::dispatchDims(const std::vector<size_t> &group) {
  std::vector<std::string> dims;
  const LibKernel *any = &kernels[group.front()];
  for (size_t i : group)
    if (kernels[i].length == 0)
      any = &kernels[i];
  for (const rt::Param &p : any->spec.params)
    if (p.kind == KGEN_ARG_DIM)
      dims.push_back(p.name);
  const std::string &main = any->op->mainDim;
  if (!llvm::is_contained(dims, main))
    dims.push_back(main);
  return dims;
}

std::string Writer::dispatcherSignature(const std::vector<size_t> &group,
                                        std::string &name) {
  const LibKernel &k = kernels[group.front()];
  name = fmt::format("{}_{}_{}", o.name, k.op->name, kgen::name(k.dtype));
  std::vector<std::string> params = signature(k.spec, false).params;
  for (const std::string &d : dispatchDims(group))
    params.push_back("int64_t " + cName(d));
  return paramList(params);
}

bool Writer::dispatchable(const std::vector<size_t> &group) {
  std::vector<std::string> dims = dispatchDims(group);
  std::vector<std::string> first =
      signature(kernels[group.front()].spec, false).params;
  for (size_t i : group) {
    if (signature(kernels[i].spec, false).params != first)
      return false;
    for (const rt::Param &p : kernels[i].spec.params)
      if (p.kind == KGEN_ARG_DIM && !llvm::is_contained(dims, p.name))
        return false;
  }
  return true;
}

std::string Writer::header() {
  std::string guard = "KGEN_AOT_" + llvm::StringRef(o.name).upper() + "_H";
  std::string s = fmt::format(
      "/* {0}.h: kgen kernels, generated by `kgen aot`; do not edit.\n"
      " *\n"
      " * Each function launches on `stream` (a CUstream; NULL: the default\n"
      " * stream) in the CUDA context current on the calling thread, after\n"
      " * the runtime's argument checks. A row stride (NAME_stride) is in\n"
      " * elements; <= 0 means contiguous rows. A per-head scalar (one a\n"
      " * token and head) lies at token * NAME_stride + head * its pitch:\n"
      " * row-major, or column-major with stride 1 and a pitch >= the\n"
      " * tokens. On failure the message is kgen_last_error().\n"
      " * NAME_kernel gives the kernel of all its images; NAME_images the\n"
      " * images, one per arch (for a launcher of your own: "
      "docs/launching.md).\n"
      " */\n"
      "#ifndef {1}\n#define {1}\n\n#include \"runtime/kgen_runtime.h\"\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
      o.name, guard);
  for (auto &[key, group] : groups()) {
    const LibKernel &first = kernels[group.front()];
    s += fmt::format("/* {}: {} */\n", first.op->name,
                     commentText(first.op->summary));
    for (size_t i : group) {
      const LibKernel &k = kernels[i];
      s += fmt::format("/* {}, {}: {} */\n", kgen::name(k.dtype),
                       k.length ? fmt::format("{} {}", k.op->mainDim, k.length)
                                : "any " + k.op->mainDim,
                       archNote(k));
      s += fmt::format("kgen_status {}({});\n", k.symbol,
                       paramList(signature(k.spec).params));
      s += fmt::format("kgen_status {}_kernel(kgen_kernel **out);\n", k.symbol);
      s += fmt::format("const kgen_image *{}_images(size_t *count);\n",
                       k.symbol);
    }
    if (!dispatchable(group)) {
      s += "\n";
      continue;
    }
    std::string name;
    std::string params = dispatcherSignature(group, name);
    bool dyn =
        llvm::any_of(group, [&](size_t i) { return !kernels[i].length; });
    s += fmt::format("/* Any {}: the kernel specialized on it{}. */\n",
                     first.op->mainDim, dyn ? ", else the dynamic one" : "");
    s += fmt::format("kgen_status {}({});\n\n", name, params);
  }
  s += fmt::format(
      "/* Every kernel of the library, by op, dtype and length (0: dynamic).\n"
      " * launch takes kgen_launch's arguments (each kind and dtype must be\n"
      " * the kernel's) and calls the typed function above. */\n"
      "typedef struct {{\n  const char *op;\n  const char *dtype;\n"
      "  int64_t length;\n  kgen_status (*launch)(const kgen_arg *args, "
      "size_t nargs, int64_t rows,\n                         void *stream);\n"
      "  kgen_status (*kernel)(kgen_kernel **out);\n}} {0}_entry;\n"
      "extern const {0}_entry {0}_entries[];\nextern const size_t "
      "{0}_entry_count;\n\n",
      o.name);
  s += fmt::format("#ifdef __cplusplus\n}} /* extern \"C\" */\n#endif\n\n"
                   "#endif /* {} */\n",
                   guard);
  return s;
}

std::string Writer::source() {
  std::string s = fmt::format(
      "/* {0}.c: kgen kernels, generated by `kgen aot`; do not edit. */\n"
      "#include \"{0}.h\"\n\n#include <stdio.h>\n\n"
      "/* A module's PTX is one literal, longer than C99's minimum limit. */\n"
      "#if defined(__GNUC__) || defined(__clang__)\n"
      "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n"
      "#endif\n\n",
      o.name);
  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    const LibKernel &k = kernels[ki];
    std::vector<std::string> images;
    for (size_t j : k.jobs) {
      std::string id = fmt::format("{}_{}", k.symbol, jobs[j].arch);
      s += fmt::format("static const char {}_ptx[] =\n    {};\n", id,
                       stringLiteral(jobs[j].art.ptx));
      s += fmt::format("static const char {}_spec[] =\n    {};\n", id,
                       stringLiteral(jobs[j].art.spec));
      std::string cubin = "NULL, 0";
      if (!cubins[j].empty()) {
        s += fmt::format("static const unsigned char {}_cubin[] = {{{}\n}};\n",
                         id, byteArray(cubins[j]));
        cubin = fmt::format("{0}_cubin, sizeof({0}_cubin)", id);
      }
      images.push_back(fmt::format(
          "    {{{0}_ptx, sizeof({0}_ptx) - 1, {0}_spec, sizeof({0}_spec) - 1, "
          "{1}}}",
          id, cubin));
    }
    s += fmt::format("static const kgen_image {}_image_table[] = {{\n{}\n}};\n",
                     k.symbol, llvm::join(images, ",\n"));
    s += fmt::format("static kgen_kernel *{}_slot;\n\n", k.symbol);
    s += fmt::format(
        "const kgen_image *{0}_images(size_t *count) {{\n"
        "  if (count)\n    *count = {1};\n  return {0}_image_table;\n}}\n\n",
        k.symbol, k.jobs.size());
    s += fmt::format(
        "kgen_status {0}_kernel(kgen_kernel **out) {{\n"
        "  return kgen_kernel_create_once(&{0}_slot, {0}_image_table, "
        "{1}, out);\n}}\n\n",
        k.symbol, k.jobs.size());
    Signature sig = signature(k.spec);
    s += fmt::format("kgen_status {0}({1}) {{\n  kgen_kernel *kgen_k;\n"
                     "  kgen_status kgen_st = {0}_kernel(&kgen_k);\n"
                     "  if (kgen_st != KGEN_OK)\n    return kgen_st;\n",
                     k.symbol, paramList(sig.params));
    if (sig.args.empty()) {
      s += "  return kgen_launch(kgen_k, NULL, 0, rows, stream);\n}\n\n";
    } else {
      s += fmt::format("  {{\n    const kgen_arg kgen_args[] = {{\n        "
                       "{}}};\n    return kgen_launch(kgen_k, kgen_args, {}, "
                       "rows, stream);\n  }}\n}}\n\n",
                       llvm::join(sig.args, ",\n        "), sig.args.size());
    }
  }
  for (auto &[key, group] : groups()) {
    if (!dispatchable(group))
      continue;
    std::string name;
    std::string params = dispatcherSignature(group, name);
    s += fmt::format("kgen_status {}({}) {{\n", name, params);
    const LibKernel &first = kernels[group.front()];
    std::string mainDim = cName(first.op->mainDim);
    const LibKernel *dyn = nullptr;
    std::vector<std::string> lengths;
    for (size_t i : group) {
      const LibKernel &k = kernels[i];
      if (!k.length) {
        dyn = &k;
        continue;
      }
      lengths.push_back(std::to_string(k.length));
      std::vector<std::string> names = signature(k.spec).names;
      names.push_back("rows");
      names.push_back("stream");
      s += fmt::format("  if ({} == {})\n    return {}({});\n", mainDim,
                       k.length, k.symbol, llvm::join(names, ", "));
    }
    if (dyn) {
      Signature sig = signature(dyn->spec);
      s += fmt::format("  return {}({}{}rows, stream);\n}}\n\n", dyn->symbol,
                       llvm::join(sig.names, ", "),
                       sig.names.empty() ? "" : ", ");
      continue;
    }
    s += fmt::format(
        "  {{\n    char kgen_msg[256];\n    snprintf(kgen_msg, sizeof "
        "kgen_msg,\n             \"{}: no kernel for {} = %lld; the library "
        "has {} {}\",\n             (long long){});\n    return "
        "kgen_set_error(KGEN_ERROR_INVALID_ARGUMENT, kgen_msg);\n  }}\n}}\n\n",
        name, first.op->mainDim, first.op->mainDim, llvm::join(lengths, ", "),
        mainDim);
  }
  std::vector<std::string> entries;
  for (const LibKernel &k : kernels) {
    Signature sig = signature(k.spec);
    size_t n = sig.kinds.size();
    std::vector<std::string> call = sig.unpack;
    call.push_back("rows");
    call.push_back("stream");
    s += fmt::format(
        "static kgen_status {0}_args(const kgen_arg *a, size_t n, "
        "int64_t rows,\n                              void *stream) "
        "{{\n",
        k.symbol);
    if (n) {
      s += fmt::format(
          "  static const kgen_arg_kind kinds[] = {{{1}}};\n"
          "  static const kgen_dtype dtypes[] = {{{2}}};\n  size_t i;\n"
          "  if (!a || n != {0})\n    return "
          "kgen_set_error(KGEN_ERROR_INVALID_ARGUMENT, \"{3}: expected {0} "
          "arguments\");\n"
          "  for (i = 0; i < {0}; ++i)\n    if (a[i].kind != kinds[i] ||\n"
          "        (kinds[i] != KGEN_ARG_DIM && a[i].dtype != dtypes[i])) {{\n"
          "      char msg[160];\n      snprintf(msg, sizeof msg, \"{3}: "
          "argument %u is not of the kernel's kind and dtype (see the typed "
          "function)\", (unsigned)i);\n"
          "      return kgen_set_error(KGEN_ERROR_INVALID_ARGUMENT, msg);\n"
          "    }}\n",
          n, llvm::join(sig.kinds, ", "), llvm::join(sig.dtypes, ", "),
          k.symbol);
      // An i32 scalar is narrowed here: refuse what kgen_launch refuses.
      for (size_t i = 0; i < n; ++i)
        if (sig.kinds[i] == "KGEN_ARG_SCALAR" && sig.dtypes[i] == "KGEN_I32")
          s += fmt::format(
              "  if (a[{0}].i < INT32_MIN || a[{0}].i > INT32_MAX)\n    return "
              "kgen_set_error(KGEN_ERROR_INVALID_ARGUMENT, \"{1}: argument "
              "{0} does not fit in 32 bits\");\n",
              i, k.symbol);
    } else {
      s += fmt::format("  if (n != 0)\n    return kgen_set_error("
                       "KGEN_ERROR_INVALID_ARGUMENT, \"{}: expected no "
                       "arguments\");\n  (void)a;\n",
                       k.symbol);
    }
    s += fmt::format("  return {}({});\n}}\n\n", k.symbol,
                     llvm::join(call, ", "));
    entries.push_back(fmt::format(
        "    {{\"{}\", \"{}\", {}, {}_args, {}_kernel}}", k.op->name,
        kgen::name(k.dtype), k.length, k.symbol, k.symbol));
  }
  s += fmt::format("const {0}_entry {0}_entries[] = {{\n{1}}};\n"
                   "const size_t {0}_entry_count = {2};\n",
                   o.name, llvm::join(entries, ",\n"), entries.size());
  return s;
}

std::string Writer::cxxHeader() {
  std::string s = fmt::format(
      "// {0}.hpp: C++ overloads of {0}.h, generated by `kgen aot`; do not\n"
      "// edit. Each op takes any of its dtypes; failures return a\n"
      "// kgen_status, the message is kgen_last_error().\n"
      "#ifndef KGEN_AOT_{1}_HPP\n#define KGEN_AOT_{1}_HPP\n\n"
      "#include \"{0}.h\"\n\n"
      "namespace {0} {{\n\n",
      o.name, llvm::StringRef(o.name).upper());
  std::set<std::string> seen;
  for (auto &[key, group] : groups()) {
    if (!dispatchable(group))
      continue;
    std::string name;
    std::string params = dispatcherSignature(group, name);
    std::string cxxParams = params;
    // The stream defaults to the default stream.
    cxxParams.replace(cxxParams.rfind("void *stream"), 12,
                      "void *stream = nullptr");
    const LibKernel &k = kernels[group.front()];
    std::string decl = k.op->name + "(" + params + ")";
    if (!seen.insert(decl).second)
      continue; // two dtypes that C++ cannot tell apart: use the C names
    std::vector<std::string> forward;
    for (llvm::StringRef p : llvm::split(params, ", "))
      forward.push_back(p.rsplit(' ').second.ltrim('*').str());
    s += fmt::format("/// {}\ninline kgen_status {}({}) noexcept {{\n"
                     "  return ::{}({});\n}}\n\n",
                     commentText(k.op->summary), k.op->name, cxxParams, name,
                     llvm::join(forward, ", "));
  }
  s += fmt::format("}} // namespace {}\n\n#endif // KGEN_AOT_{}_HPP\n", o.name,
                   llvm::StringRef(o.name).upper());
  return s;
}

} // namespace

int emitAot(const AotOptions &o, const Selection &sel,
            const codegen::CompileOptions &base, unsigned threads) {
  auto fail = [](const std::string &msg) {
    llvm::errs() << "kgen: error: " << msg << "\n";
    return 1;
  };
  if (!isIdentifier(o.name) || isKeyword(o.name))
    return fail(fmt::format("--name '{}' must be a C identifier: it prefixes "
                            "the generated functions",
                            o.name));
  std::vector<Job> jobs;
  std::string err;
  if (!planJobs(sel, jobs, err))
    return fail(err);
  std::string ptxas;
  if (o.cubin != CubinMode::Off) {
    std::string why;
    ptxas = findTool("ptxas", o.ptxas, o.cudaPath, why);
    if (ptxas.empty() && o.cubin == CubinMode::On)
      return fail("--cubin=on: " + why);
    if (ptxas.empty())
      llvm::errs() << "kgen: note: " << why << "; embedding PTX only\n";
  }
  // A -o that cannot be a folder fails before the work; the folder itself
  // is made after it, so a failed library writes nothing.
  if (llvm::sys::fs::exists(o.dir) && !llvm::sys::fs::is_directory(o.dir))
    return fail(fmt::format(
        "cannot create folder {}: {}", o.dir,
        std::make_error_code(std::errc::not_a_directory).message()));

  std::vector<std::string> cubins(jobs.size()), ptxasErrors(jobs.size());
  // With --cubin=auto a ptxas that fails (one that lacks the arch, say)
  // leaves that image PTX only; with --cubin=on it fails the library.
  compileJobs(jobs, base, codegen::Stage::Spec, threads, [&](Job &j) {
    size_t i = &j - jobs.data();
    std::string report;
    if (!ptxas.empty() &&
        !runPtxas(ptxas, j.arch, j.art.ptx, /*verbose=*/false, cubins[i],
                  report, ptxasErrors[i]) &&
        o.cubin == CubinMode::On)
      j.ok = false, j.error = ptxasErrors[i];
  });
  for (size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].ok && !ptxasErrors[i].empty()) {
      llvm::errs() << "kgen: note: " << jobs[i].name << ": no cubin, PTX only ("
                   << ptxasErrors[i] << ")\n";
      break;
    }
  int failures = 0;
  for (const Job &j : jobs)
    if (!j.ok) {
      llvm::errs() << "kgen: error: " << j.name << ": " << j.error << "\n";
      ++failures;
    }
  if (failures)
    return 1;

  // Kernels by (op, dtype, length), their images in arch order.
  std::vector<LibKernel> kernels;
  std::map<std::tuple<std::string, DType, int64_t>, size_t> index;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job &j = jobs[i];
    auto key = std::make_tuple(j.op->name, j.dtype, j.length);
    auto [it, fresh] = index.emplace(key, kernels.size());
    if (fresh) {
      LibKernel k{j.op, j.dtype, j.length, {}, {}, ""};
      if (!rt::parseSpec(j.art.spec, k.spec, err))
        return fail(fmt::format("internal: {}: the spec kgen wrote does not "
                                "parse: {}",
                                j.name, err));
      k.symbol = fmt::format("{}_{}_{}_{}", o.name, j.op->name,
                             kgen::name(j.dtype), lengthTag(*j.op, j.length));
      kernels.push_back(std::move(k));
    }
    kernels[it->second].jobs.push_back(i);
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const LibKernel &a, const LibKernel &b) {
              return std::tie(a.op->name, a.dtype, a.length) <
                     std::tie(b.op->name, b.dtype, b.length);
            });

  // Names the generated code declares must be C names, each once.
  for (const LibKernel &k : kernels) {
    if (isKeyword(k.op->name))
      return fail(fmt::format("op '{}' is a C or C++ keyword: the generated "
                              "C++ cannot name it; rename the op",
                              k.op->name));
    std::set<std::string> seen;
    for (const std::string &n : signature(k.spec).names)
      if (!seen.insert(n).second)
        return fail(fmt::format("{}: two parameters of the launcher would be "
                                "named '{}' (a tensor's row stride is "
                                "NAME_stride); rename the op's tensor or "
                                "param",
                                k.symbol, n));
  }
  Writer w(o, jobs, cubins, kernels);
  if (!makeFolder(o.dir) ||
      !writeFile(o.dir + "/" + o.name + ".h", w.header()) ||
      !writeFile(o.dir + "/" + o.name + ".c", w.source()) ||
      !writeFile(o.dir + "/" + o.name + ".hpp", w.cxxHeader()))
    return 1;
  size_t withCubin = llvm::count_if(cubins, [](auto &c) { return !c.empty(); });
  llvm::outs() << fmt::format("{}: {} kernels ({} images, {} with a cubin) in "
                              "{}/{}.{{h,c,hpp}}\n",
                              o.name, kernels.size(), jobs.size(), withCubin,
                              o.dir, o.name);
  return 0;
}

} // namespace kgen::tools
