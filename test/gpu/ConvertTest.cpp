//===- ConvertTest.cpp - Every bf16 value through a kernel's 8-bit output -===//
//
// The other GPU tests compare fp8 outputs within 2 ulps and int8 ones within
// a step (their inputs went through reductions first), so a conversion that
// rounds the wrong way on a tie, or mishandles subnormals, saturation or NaN,
// would still pass there. Here each conversion is checked bit for bit: the
// static rmsnorm_quant kernels (fp8 and int8) on one row of 65536 ones with
// eps 0 (the norm is exactly 1, then rounded to bf16), scale 1, and a weight
// holding every bf16 bit pattern once. The output is the conversion of every
// w, Inf and NaN included, and must equal interpret()'s byte for byte; an fp8
// NaN only has to be a NaN (the interpreter keeps the sign, PTX's cvt gives
// the canonical one).
//
// Every such bf16 dynamic kernel of the bundle runs, for whatever arch it was
// compiled: fp8 on sm_90 and newer converts with cvt.rn.satfinite, on older
// archs in integer arithmetic (ExpandFP8.cpp); int8 with cvt.rni.s32.f32
// (SaturatingConvert.cpp).
//
//===----------------------------------------------------------------------===//

#include "GpuCommon.h"

#include "dsl/Interpreter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

using namespace kgen;
using namespace kgen::gpu;

namespace {

constexpr int64_t Length = 65536; // every bf16 bit pattern

/// The ops whose static kernels convert every bf16 weight, and the format.
const std::pair<const char *, const char *> kConversions[] = {
    {"rmsnorm_quant_static", "fp8"}, {"rmsnorm_quant_int8_static", "int8"}};

struct ConvertSpec {
  std::string name, skip;
  bool noGpu = false;
  ManifestEntry entry;
  std::string format;
};

void PrintTo(const ConvertSpec &s, std::ostream *os) { *os << s.name; }

class Conversion : public ::testing::TestWithParam<ConvertSpec> {};

TEST_P(Conversion, EveryBf16) {
  const ConvertSpec &s = GetParam();
  if (!s.skip.empty()) {
    noGpuSkipFlag() |= s.noGpu;
    GTEST_SKIP() << s.skip;
  }
  if (!brokenContext().empty())
    GTEST_FAIL() << "not run: the CUDA context is unusable after "
                 << brokenContext();
  std::string why;
  const rt::Driver *d = openGpu(why);
  if (!d) {
    noGpuSkipFlag() = true;
    GTEST_SKIP() << "no GPU: " << why;
  }
  RtKernel k;
  std::string err;
  ASSERT_TRUE(loadKernel(std::getenv("KGEN_KERNEL_DIR"), s.entry, k, err))
      << err;
  const Kernel &dsl = k.dsl;

  std::vector<uint16_t> x(Length, uint16_t(0x3F80) /* 1.0 */), w(Length);
  for (int64_t i = 0; i < Length; ++i)
    w[i] = uint16_t(i);
  std::vector<uint8_t> ref(Length, 0xAA), got(Length, 0xAA);
  std::map<std::string, double> scalars = {{"eps", 0.0}, {"scale", 1.0}};

  // The interpreter, by the DSL's tensor and param names.
  Bindings b;
  b.rows = 1;
  b.dims.assign(dsl.dims.size(), Length);
  for (const TensorDecl &t : dsl.tensors) {
    void *data = t.name == "x"        ? (void *)x.data()
                 : t.name == "weight" ? (void *)w.data()
                 : t.name == "y"      ? (void *)ref.data()
                                      : nullptr;
    ASSERT_NE(data, nullptr) << "unexpected tensor " << t.name;
    b.tensors.push_back({data, 0});
  }
  for (const ParamDecl &p : dsl.params) {
    ASSERT_TRUE(scalars.count(p.name)) << "unexpected param " << p.name;
    b.params.push_back(scalars.at(p.name));
  }
  interpret(dsl, b);

  // The kernel, by the spec's param names.
  DeviceBuffer dx, dw, dy;
  ASSERT_TRUE(dx.allocate(d, Length * 2, err) &&
              dw.allocate(d, Length * 2, err) && dy.allocate(d, Length, err))
      << err;
  ASSERT_EQ(d->memcpyHtoD(dx.ptr(), x.data(), Length * 2), CUDA_SUCCESS);
  ASSERT_EQ(d->memcpyHtoD(dw.ptr(), w.data(), Length * 2), CUDA_SUCCESS);
  ASSERT_EQ(d->memcpyHtoD(dy.ptr(), got.data(), Length), CUDA_SUCCESS);
  std::vector<kgen_arg> args;
  for (const kgen_param_info &pi : k.params) {
    kgen_arg a{pi.kind, pi.dtype};
    std::string name = pi.name;
    if (pi.kind == KGEN_ARG_TENSOR)
      a.ptr = reinterpret_cast<const void *>(name == "x"   ? dx.ptr()
                                             : name == "y" ? dy.ptr()
                                                           : dw.ptr());
    else if (pi.kind == KGEN_ARG_SCALAR) {
      ASSERT_TRUE(scalars.count(name)) << "unexpected spec param " << name;
      a.f = scalars.at(name);
    } else
      a.i = Length;
    args.push_back(a);
  }
  kgen_status st = kgen_launch(k.k, args.data(), args.size(), 1, nullptr);
  if (st == KGEN_ERROR_CUDA)
    brokenContext() = s.entry.name + ": " + kgen_last_error();
  ASSERT_EQ(st, KGEN_OK) << "kgen_launch: " << kgen_last_error();
  ASSERT_EQ(d->ctxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(d->memcpyDtoH(got.data(), dy.ptr(), Length), CUDA_SUCCESS);

  bool fp8 = s.format == "fp8";
  auto isNan = [](uint8_t v) { return (v & 0x7F) == 0x7F; };
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < Length; ++i) {
    bool same = fp8 && isNan(ref[i]) ? isNan(got[i]) : got[i] == ref[i];
    if (!same && bad++ < 8)
      first << "\n  bf16 0x" << std::hex << i << ": got 0x" << int(got[i])
            << ", interpret() 0x" << int(ref[i]) << std::dec;
  }
  EXPECT_EQ(bad, 0) << s.entry.name << ": " << bad << " of " << Length
                    << " bf16 values convert differently:" << first.str();
  std::cout << "[kgen-gpu] " << s.entry.name << ": " << Length
            << " bf16 values to " << s.format << ", " << bad << " differ\n";
}

std::vector<ConvertSpec> conversionTests() {
  auto skip = [](std::string why, bool noGpu) {
    return std::vector<ConvertSpec>{{"Skipped", std::move(why), noGpu, {}, ""}};
  };
  const char *dir = std::getenv("KGEN_KERNEL_DIR");
  if (!dir || !*dir)
    return skip("KGEN_KERNEL_DIR is not set", true);
  std::vector<ManifestEntry> manifest;
  std::string err;
  if (!readManifest(dir, manifest, err)) // KgenGpuManifest.Load fails
    return skip(err, false);
  std::vector<ConvertSpec> out;
  for (const ManifestEntry &e : manifest)
    for (auto [op, format] : kConversions)
      if (e.op == op && e.dtype == "bf16" && e.length == 0)
        out.push_back(
            {std::string(format) + "_" + e.arch, "", false, e, format});
  if (out.empty())
    return skip("the bundle has no dynamic static-scale rmsnorm_quant bf16 "
                "kernel",
                false);
  return out;
}

INSTANTIATE_TEST_SUITE_P(KgenGpuConvert, Conversion,
                         ::testing::ValuesIn(conversionTests()),
                         [](const ::testing::TestParamInfo<ConvertSpec> &i) {
                           return i.param.name;
                         });

} // namespace
