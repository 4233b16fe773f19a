"""Tiny random Hugging Face models of each family kgen patches, shared by the
CPU tests and the GPU check."""
import torch

FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3")


def config(family, hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64,
           intermediate=512, vocab=512):
    import transformers as tf
    common = dict(hidden_size=hidden, num_hidden_layers=layers,
                  num_attention_heads=heads, num_key_value_heads=kv_heads,
                  intermediate_size=intermediate, vocab_size=vocab,
                  max_position_embeddings=4096, head_dim=head_dim)
    if family == "llama":
        return tf.LlamaConfig(**common)
    if family == "mistral":
        return tf.MistralConfig(**common, sliding_window=None)
    if family == "qwen2":
        return tf.Qwen2Config(**common)
    if family == "qwen3":
        return tf.Qwen3Config(**common)
    if family == "gemma":
        return tf.GemmaConfig(**common, hidden_activation="gelu_pytorch_tanh")
    if family == "gemma2":
        return tf.Gemma2Config(**common, hidden_activation="gelu_pytorch_tanh",
                               final_logit_softcapping=None,
                               attn_logit_softcapping=None)
    if family == "gemma3":
        return tf.Gemma3TextConfig(**common,
                                   hidden_activation="gelu_pytorch_tanh")
    raise ValueError(family)


def model(family, dtype=torch.float32, device="cpu", seed=0, **kw):
    import transformers as tf
    torch.manual_seed(seed)
    cfg = config(family, **kw)
    cfg._attn_implementation = "sdpa"
    cls = tf.Gemma3ForCausalLM if family == "gemma3" else \
        tf.AutoModelForCausalLM
    m = (cls(cfg) if family == "gemma3" else cls.from_config(cfg))
    # Random, not zero, norm weights, so that a wrong norm shows.
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "norm" in name:
                p.normal_(0, 0.1 if family.startswith("gemma") else 1)
    return m.to(device=device, dtype=dtype).eval()


DIFFUSERS = ("flux", "dit", "ltx")


def _flux(df):
    m = df.FluxTransformer2DModel(
        patch_size=1, in_channels=16, num_layers=1, num_single_layers=1,
        attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
        pooled_projection_dim=32, axes_dims_rope=(4, 6, 6))
    b, t, txt = 2, 12, 5
    inputs = dict(hidden_states=torch.randn(b, t, 16),
                  encoder_hidden_states=torch.randn(b, txt, 32),
                  pooled_projections=torch.randn(b, 32),
                  timestep=torch.tensor([0.5, 0.25]),
                  img_ids=torch.randn(t, 3), txt_ids=torch.zeros(txt, 3))
    return m, inputs, {"rmsnorm", "gelu_tanh", "adaln"}


def _dit(df):
    m = df.DiTTransformer2DModel(
        num_attention_heads=2, attention_head_dim=16, in_channels=4,
        num_layers=1, sample_size=8, patch_size=2, num_embeds_ada_norm=10)
    inputs = dict(hidden_states=torch.randn(2, 4, 8, 8),
                  timestep=torch.tensor([3, 7]),
                  class_labels=torch.tensor([1, 2]))
    return m, inputs, {"gelu_tanh", "adaln"}


def _ltx(df):
    m = df.LTXVideoTransformer3DModel(
        in_channels=8, out_channels=8, patch_size=1, patch_size_t=1,
        num_attention_heads=2, attention_head_dim=16, cross_attention_dim=32,
        num_layers=1, caption_channels=16)
    b, f, h, w = 2, 2, 4, 4
    inputs = dict(hidden_states=torch.randn(b, f * h * w, 8),
                  encoder_hidden_states=torch.randn(b, 3, 16),
                  timestep=torch.tensor([10, 20]),
                  encoder_attention_mask=torch.ones(b, 3),
                  num_frames=f, height=h, width=w)
    return m, inputs, {"rmsnorm", "gelu_tanh"}


def diffusers_model(kind, dtype=torch.float32, device="cpu", seed=0):
    """A tiny random diffusers transformer, its inputs and the kgen ops its
    patch runs."""
    import diffusers as df
    torch.manual_seed(seed)
    model, inputs, kinds = {"flux": _flux, "dit": _dit, "ltx": _ltx}[kind](df)
    inputs = {k: v.to(device=device, dtype=dtype)
              if isinstance(v, torch.Tensor) and v.is_floating_point()
              else v.to(device) if isinstance(v, torch.Tensor) else v
              for k, v in inputs.items()}
    return model.to(device=device, dtype=dtype).eval(), inputs, kinds
