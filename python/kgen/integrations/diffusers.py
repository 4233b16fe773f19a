"""diffusers models (DiT, Flux, LTX-Video, ...) on kgen's ops, in one call.

    pipe = DiffusionPipeline.from_pretrained(...)
    kgen.integrations.diffusers.apply_kgen(pipe.transformer)

It replaces, in place:
- diffusers' RMSNorm and torch.nn.RMSNorm (Flux's q/k norms), with a weight
  in the input's dtype or without one (then a weight of ones, which
  multiplies exactly), with rmsnorm;
- the GELU activation module (a projection, then GELU, tanh or erf) with
  gelu_tanh / gelu on the projection's output;
- AdaLayerNormZero and AdaLayerNormZeroSingle with a LayerNorm without
  affine parameters (DiT, PixArt, Flux): norm(x) * (1 + scale) + shift is
  one adaln, computed in f32 and rounded once, as torch.compile's fused
  kernel does (eager rounds each step to the dtype).
Each patched call checks what its kernel needs and falls back to the
original code otherwise (a bias on the norm, f32 weights on bf16
activations, other layouts).
"""
import types

import torch
from torch import nn

__all__ = ["apply_kgen"]

_ops = torch.ops.kgen


def _rmsnorm_forward(self, x):
    w = self.weight
    if getattr(self, "bias", None) is not None or x.dim() < 1:
        return self._kgen_forward(x)
    if w is None:
        ones = self._kgen_ones.get(x.dtype)
        if ones is None or ones.device != x.device or \
                ones.shape[0] != x.shape[-1]:
            ones = torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)
            self._kgen_ones[x.dtype] = ones
        w = ones
    elif w.dtype != x.dtype or w.dim() != 1:
        return self._kgen_forward(x)
    eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
    return _ops.rmsnorm(x, w, float(eps))


def _gelu_forward(self, hidden_states):
    h = self.proj(hidden_states)
    if h.device.type not in ("cuda", "cpu"):
        return self.gelu(h)
    return _ops.gelu_tanh(h) if self.approximate == "tanh" else _ops.gelu(h)


def _plain_layernorm(norm):
    return (isinstance(norm, nn.LayerNorm) and norm.weight is None
            and norm.bias is None and len(norm.normalized_shape) == 1)


def _modulate(self, x, shift, scale):
    if x.dim() != 3 or shift.dim() != 2 or x.dtype != shift.dtype:
        return self.norm(x) * (1 + scale[:, None]) + shift[:, None]
    return _ops.adaln(x, scale, shift, float(self.norm.eps))


def _ada_zero_forward(self, x, timestep=None, class_labels=None,
                      hidden_dtype=None, emb=None):
    if self.emb is not None:
        emb = self.emb(timestep, class_labels, hidden_dtype=hidden_dtype)
    emb = self.linear(self.silu(emb))
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = \
        emb.chunk(6, dim=1)
    x = _modulate(self, x, shift_msa, scale_msa)
    return x, gate_msa, shift_mlp, scale_mlp, gate_mlp


def _ada_zero_single_forward(self, x, emb=None):
    emb = self.linear(self.silu(emb))
    shift_msa, scale_msa, gate_msa = emb.chunk(3, dim=1)
    x = _modulate(self, x, shift_msa, scale_msa)
    return x, gate_msa


def _patch(module, forward):
    module._kgen_forward = module.forward
    module.forward = types.MethodType(forward, module)


def apply_kgen(model, rms_norm=True, gelu=True, adaln=True):
    """Patches `model` (a diffusers nn.Module) in place onto kgen's ops and
    returns what it replaced, by kind."""
    done = {"rmsnorm": 0, "gelu": 0, "adaln": 0}
    for module in model.modules():
        if hasattr(module, "_kgen_forward"):
            continue
        cls = type(module)
        name = cls.__name__
        if rms_norm and isinstance(module, nn.RMSNorm) and \
                len(module.normalized_shape) == 1:
            module._kgen_ones = {}
            _patch(module, _rmsnorm_forward)
            done["rmsnorm"] += 1
            continue
        if not cls.__module__.startswith("diffusers."):
            continue
        if rms_norm and name == "RMSNorm" and hasattr(module, "eps"):
            module._kgen_ones = {}
            _patch(module, _rmsnorm_forward)
            done["rmsnorm"] += 1
        elif gelu and name == "GELU" and isinstance(
                getattr(module, "proj", None), nn.Linear) and \
                getattr(module, "approximate", None) in ("tanh", "none"):
            _patch(module, _gelu_forward)
            done["gelu"] += 1
        elif adaln and name in ("AdaLayerNormZero", "AdaLayerNormZeroSingle") \
                and _plain_layernorm(getattr(module, "norm", None)) \
                and isinstance(getattr(module, "linear", None), nn.Linear):
            _patch(module, _ada_zero_forward if name == "AdaLayerNormZero"
                   else _ada_zero_single_forward)
            done["adaln"] += 1
    return done
