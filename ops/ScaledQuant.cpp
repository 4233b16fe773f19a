//===- ScaledQuant.cpp - int8 quantization of rows -------------------------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's static_scaled_int8_quant and dynamic_scaled_int8_quant (symmetric,
// no zero point): round to nearest even, saturating to [-128, 127]. The
// static form divides by the scale. The dynamic one writes amax|x| / 127 per
// row and multiplies by 127 / amax (0 for a zero row), as vLLM's kernel does.
static Kernel quantInt8(DType dt, bool dynamicScale) {
  Builder b(dynamicScale ? "quant_int8_dynamic" : "quant_int8_static");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Expr xf = x.to(DType::F32);
  if (!dynamicScale) {
    b.output("y", round(xf / b.scalar("scale", DType::F32)).to(DType::I8));
    return b.build();
  }
  Expr top = amax(abs(xf));
  Expr inverse = select(top == 0.0, 0.0, 127.0 / top);
  b.output("y", round(xf * inverse).to(DType::I8));
  b.output("scale", top / 127.0);
  return b.build();
}

KGEN_REGISTER_OP(quant_int8_static)
    .summary("y = round(x / scale) as int8, saturating (vLLM's "
             "static_scaled_int8_quant)")
    .scalar("scale", 0.05)
    .kernel([](DType dt) { return quantInt8(dt, false); });

KGEN_REGISTER_OP(quant_int8_dynamic)
    .summary("per-row scale = amax|x| / 127; y = round(x * 127 / amax) as "
             "int8; outputs y and scale (vLLM's dynamic_scaled_int8_quant)")
    .kernel([](DType dt) { return quantInt8(dt, true); });

} // namespace kgen::ops
