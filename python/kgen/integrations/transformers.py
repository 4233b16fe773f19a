"""Hugging Face transformers models on kgen's ops, in one call.

    model = AutoModelForCausalLM.from_pretrained(...)
    kgen.integrations.transformers.apply_kgen(model)

For Llama, Mistral, Qwen2, Qwen3 (with its q/k norms), Gemma, Gemma2 and
Gemma3 (and any model built of the same modules) it replaces:
- each RMSNorm's forward (Gemma's `1 + w` form with gemma_rmsnorm);
- the gated MLP: gate_proj and up_proj merge into one `gate_up_proj` GEMM
  at patch time, as vLLM does, followed by silu_and_mul or gelu_tanh_and_mul
  (the state dict then has gate_up_proj in place of the two);
- `apply_rotary_pos_emb` with rope_hf, in this model's attention modules
  only (each gets a copy of its forward that reads kgen's function);
- in Llama-style decoder layers, the residual add and the norm after
  attention with add_rmsnorm (out of place: the layer does not own its input).
Each patch checks what its kernel needs (dtypes, head_dim, full rotary) when
called and falls back to the original code otherwise. The per-family
functions apply_kgen_to_llama etc. are the same call.
"""
import inspect
import types

import torch
from torch import nn

import kgen

__all__ = ["apply_kgen"] + [
    f"apply_kgen_to_{f}" for f in
    ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3")
]

_ops = torch.ops.kgen
# The gated MLP activations kgen has, by the config's activation name.
_GATED = {
    "silu": "silu_and_mul", "swish": "silu_and_mul",
    "gelu_pytorch_tanh": "gelu_tanh_and_mul", "gelu_new": "gelu_tanh_and_mul",
    "gelu": "gelu_and_mul",
}
# The head_dims this build has rope_hf kernels for: read from kgen.kernels()
# when a model is patched, not in the traced forward.
_ROPE_HEAD_DIMS = ()



def _norm_kind(module):
    """'rmsnorm', 'gemma_rmsnorm' or None for a module kgen does not replace."""
    name = type(module).__name__
    if not name.endswith("RMSNorm"):
        return None
    weight = getattr(module, "weight", None)
    if not isinstance(weight, nn.Parameter) or weight.dim() != 1:
        return None
    eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
    if not isinstance(eps, float):
        return None
    return "gemma_rmsnorm" if name.startswith("Gemma") else "rmsnorm"


def _norm_forward(op):
    def forward(self, x):
        if x.dtype != self.weight.dtype or x.shape[-1] != self.weight.shape[0]:
            return self._kgen_forward(x)
        return op(x, self.weight, self._kgen_eps)
    return forward


def _patch_norm(module, kind):
    module._kgen_forward = module.forward
    module._kgen_eps = float(getattr(module, "variance_epsilon",
                                     getattr(module, "eps", 1e-6)))
    module.forward = types.MethodType(_norm_forward(getattr(_ops, kind)),
                                      module)


def _act_name(config):
    for key in ("hidden_activation", "hidden_act"):
        act = getattr(config, key, None)
        if isinstance(act, str):
            return act
    return None


def _merge_mlp(mlp, op):
    gate, up = mlp.gate_proj, mlp.up_proj
    if not (isinstance(gate, nn.Linear) and isinstance(up, nn.Linear)
            and gate.weight.shape == up.weight.shape
            and (gate.bias is None) == (up.bias is None)):
        return False
    merged = nn.Linear(gate.in_features, 2 * gate.out_features,
                       bias=gate.bias is not None, device=gate.weight.device,
                       dtype=gate.weight.dtype)
    with torch.no_grad():
        merged.weight.copy_(torch.cat([gate.weight, up.weight], 0))
        if gate.bias is not None:
            merged.bias.copy_(torch.cat([gate.bias, up.bias], 0))
    del mlp.gate_proj, mlp.up_proj
    mlp.gate_up_proj = merged
    act = getattr(_ops, op)

    def forward(self, x):
        return self.down_proj(act(self.gate_up_proj(x)))
    mlp.forward = types.MethodType(forward, mlp)
    return True


def _rope_hf(original):
    global _ROPE_HEAD_DIMS
    _ROPE_HEAD_DIMS = tuple(
        sorted(n for op, _, n in kgen.kernels() if op == "rope_hf"))

    def apply_rotary_pos_emb(q, k, cos, sin, *args, **kwargs):
        # q, k: [B, H, T, D], usually transposed views of token-major
        # projections; cos, sin: [B or 1, T, D].
        unsqueeze = kwargs.get("unsqueeze_dim", args[0] if args else 1)
        d = q.shape[-1]
        if (unsqueeze != 1 or q.dim() != 4 or k.dim() != 4
                or d not in _ROPE_HEAD_DIMS or cos.shape[-1] != d
                or k.shape[-1] != d or cos.dim() != 3
                or not (q.dtype == k.dtype == cos.dtype == sin.dtype)):
            return original(q, k, cos, sin, *args, **kwargs)
        b, t = q.shape[0], q.shape[2]
        cos = cos.expand(b, t, d)
        sin = sin.expand(b, t, d)
        qo, ko = _ops.rope_hf(q.transpose(1, 2), k.transpose(1, 2), cos, sin)
        return qo.transpose(1, 2), ko.transpose(1, 2)
    return apply_rotary_pos_emb


def _rebind(fn, name, value):
    """A copy of `fn` whose global `name` is `value`, through decorators
    that keep the wrapped function in a closure (functools.wraps); None
    when `fn` does not read that global."""
    inner = getattr(fn, "__wrapped__", None)
    if inner is not None:
        new_inner = _rebind(inner, name, value)
        cells = fn.__closure__ or ()

        def holds_inner(cell):
            try:
                return cell.cell_contents is inner
            except ValueError:  # an empty cell
                return False
        if new_inner is None or not any(holds_inner(c) for c in cells):
            return None
        closure = tuple(types.CellType(new_inner) if holds_inner(c) else c
                        for c in cells)
        scope = fn.__globals__
    elif name in fn.__code__.co_names:
        closure = fn.__closure__
        scope = dict(fn.__globals__)
        scope[name] = value
    else:
        return None
    new = types.FunctionType(fn.__code__, scope, fn.__name__,
                             fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    return new


def _patch_rope(attention, cache):
    """Points `attention`'s forward (this module only, not its class) at
    rope_hf in place of the modeling module's apply_rotary_pos_emb."""
    cls = type(attention)
    if cls not in cache:
        fn = inspect.unwrap(cls.forward)
        original = fn.__globals__.get("apply_rotary_pos_emb")
        cache[cls] = None if original is None else _rebind(
            cls.forward, "apply_rotary_pos_emb", _rope_hf(original))
    if cache[cls] is None:
        return False
    attention.forward = types.MethodType(cache[cls], attention)
    return True


def _decoder_forward(self, hidden_states, *args, **kwargs):
    norm = self.post_attention_layernorm
    if args or hidden_states.dtype != norm.weight.dtype:
        return self._kgen_forward(hidden_states, *args, **kwargs)
    residual = hidden_states
    h = self.input_layernorm(hidden_states)
    h = self.self_attn(hidden_states=h, **kwargs)[0]
    h, residual = _ops.add_rmsnorm(h, residual, norm.weight, norm._kgen_eps)
    return residual + self.mlp(h)


def _llama_style_layer(layer):
    """A decoder layer whose forward is Llama's: x + attn(norm(x)), then
    that + mlp(norm(that)), with kgen's rmsnorm as the second norm."""
    names = {n for n, _ in layer.named_children()}
    return (type(layer).__name__.endswith("DecoderLayer")
            and names == {"self_attn", "mlp", "input_layernorm",
                          "post_attention_layernorm"}
            and getattr(layer.post_attention_layernorm, "_kgen_eps", None)
            is not None
            and _norm_kind(layer.post_attention_layernorm) == "rmsnorm")


def apply_kgen(model, rms_norm=True, swiglu=True, rope=True,
               fused_add_norm=True):
    """Patches `model` (an nn.Module of transformers) in place onto kgen's
    ops and returns what it replaced, by kind, e.g. {'rmsnorm': 9, ...}."""
    done = {"rmsnorm": 0, "gemma_rmsnorm": 0, "mlp": 0, "rope": 0,
            "add_rmsnorm": 0}
    config = getattr(model, "config", None)
    text_config = getattr(config, "get_text_config", lambda: config)()
    gated = _GATED.get(_act_name(text_config)) if text_config else None
    rope_cache = {}
    for module in model.modules():
        kind = _norm_kind(module)
        if rms_norm and kind and not hasattr(module, "_kgen_forward"):
            _patch_norm(module, kind)
            done[kind] += 1
        if (swiglu and gated and hasattr(module, "gate_proj")
                and hasattr(module, "up_proj") and hasattr(module, "down_proj")
                and _merge_mlp(module, gated)):
            done["mlp"] += 1
        if (rope and type(module).__name__.endswith("Attention")
                and not hasattr(module, "_kgen_rope")
                and _patch_rope(module, rope_cache)):
            module._kgen_rope = True
            done["rope"] += 1
    if fused_add_norm:
        for module in model.modules():
            if _llama_style_layer(module) and not hasattr(module, "_kgen_forward"):
                module._kgen_forward = module.forward
                module.forward = types.MethodType(_decoder_forward, module)
                done["add_rmsnorm"] += 1
    return done


def _family(name):
    def apply(model, **kwargs):
        return apply_kgen(model, **kwargs)
    apply.__name__ = f"apply_kgen_to_{name}"
    apply.__doc__ = f"apply_kgen for {name} models."
    return apply


for _name in ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2",
              "gemma3"):
    globals()[f"apply_kgen_to_{_name}"] = _family(_name)
