"""kgen's torch ops on CPU tensors (the interpreter): schemas, fake
implementations (opcheck), numerics against torch's formulas, argument
errors, and tracing under torch.compile(fullgraph=True)."""
import os
import subprocess

import pytest
import torch

import kgen
from samples import INPLACE, MUTATED, samples

OPS = sorted({name for name, _, _ in samples()})


def _close(got, want, dtype):
    if got.dtype == torch.float8_e4m3fn:
        got, want = got.float(), want.float()
        # an fp8 tie may round either way: one step of e4m3 at most
        assert ((got - want).abs() <= want.abs() / 8 + 1e-3).all()
        return
    if got.dtype == torch.int8:
        # a tie, or a scale an ulp apart, may move a value by one step
        diff = (got.int() - want.int()).abs()
        assert diff.max() <= 1 and (diff == 0).float().mean() >= 0.99, diff
        return
    tol = {torch.float32: 1e-5, torch.bfloat16: 1.6e-2}[dtype]
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


def _torch_ops():
    return {n.split("::")[1] for n in torch._C._dispatch_get_all_op_names()
            if n.startswith("kgen::") and not n.startswith("kgen::_")}


def _bundled_ops():
    """The names `kgen list` prints (skips without KGEN_CLI)."""
    cli = os.environ.get("KGEN_CLI")
    if not cli:
        pytest.skip("KGEN_CLI (the kgen command) is not set")
    listed = subprocess.run([cli, "list"], capture_output=True, text=True,
                            check=True).stdout.split("\n")
    return {line.split()[0] for line in listed if line.strip()}


def test_every_bundled_op_has_a_torch_op():
    assert _torch_ops() == set(kgen.__all__) == set(OPS)
    bundled = _bundled_ops()
    # layernorm_nobias is layernorm with bias=None, fused_add_rmsnorm_noweight
    # fused_add_rmsnorm with weight=None; NAME_f32w is NAME with an
    # f32 weight, NAME_q NAME with k None, NAME_cache16 NAME with a cache in
    # q's dtype, NAME_rotary NAME with a cache narrower than a head, NAME_half
    # and NAME_quarter NAME with a cache of head_dim / 2 and / 4, NAME_ue8m0
    # NAME with use_ue8m0, NAME_transposed NAME with is_scale_transposed.
    forms = {n for n in bundled
             if n.endswith(("_f32w", "_q", "_cache16", "_rotary", "_half",
                            "_quarter", "_ue8m0", "_transposed"))}
    assert {n.rsplit("_", 1)[0] for n in forms} <= bundled
    assert bundled - {"layernorm_nobias", "fused_add_rmsnorm_noweight"} - \
        forms == _torch_ops()


def test_every_bundled_op_has_embedded_kernels():
    # A torch op without kernels works on CPU (the interpreter) and fails on
    # CUDA: the build must embed each bundled op, _f32w forms included.
    embedded = {op for op, _, _ in kgen.kernels()}
    assert sorted(_bundled_ops() - embedded) == []
    assert ("rmsnorm_f32w", "bf16", 0) in kgen.kernels()
    dims = {n for op, _, n in kgen.kernels() if op == "rope_hf"}
    assert dims == {64, 80, 96, 112, 120, 128, 192, 256, 512}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("op", OPS)
def test_matches_torch(op, dtype):
    for name, args, ref in samples(dtype):
        if name != op:
            continue
        fn = getattr(torch.ops.kgen, op)
        if name in INPLACE:
            before = [a.clone() if isinstance(a, torch.Tensor) else a
                      for a in args]
            got = fn(*args)
            want = INPLACE[name](*before)
            for i, w in zip(MUTATED[name], want):
                _close(args[i], w, dtype)
            if ref is not None:  # outputs besides the mutated tensors
                want = ref(*before)
                for g, w in zip(got if isinstance(got, tuple) else (got,),
                                want if isinstance(want, tuple) else (want,)):
                    _close(g, w, dtype)
        elif name == "rmsnorm_quant_dynamic":
            y, s = fn(*args)
            x, w, eps = args
            n = (w * (x.float() * torch.rsqrt(
                x.float().pow(2).mean(-1, keepdim=True) + eps)).to(dtype))
            want_s = n.float().abs().amax(-1, keepdim=True) / 448
            torch.testing.assert_close(s, want_s, rtol=1e-5, atol=1e-7)
            _close(y, (n.float() / want_s).to(torch.float8_e4m3fn), dtype)
        else:
            got = fn(*args)
            want = ref(*args)
            if isinstance(got, tuple):
                for g, w in zip(got, want):
                    _close(g, w, dtype)
            else:
                _close(got, want, dtype)


@pytest.mark.parametrize("op", OPS)
def test_opcheck(op):
    for name, args, _ in samples():
        if name == op:
            torch.library.opcheck(getattr(torch.ops.kgen, op), args)


def test_any_leading_dims_and_strided_rows():
    x = torch.randn(2, 3, 4, 128)[..., :64]  # rows of 64 at stride 128
    w = torch.randn(64)
    y = kgen.rmsnorm(x, w)
    torch.testing.assert_close(y, kgen.rmsnorm(x.contiguous(), w))
    xt = torch.randn(4, 3, 64).transpose(0, 1)  # leading dims do not collapse
    torch.testing.assert_close(kgen.rmsnorm(xt, w),
                               kgen.rmsnorm(xt.contiguous(), w))
    assert kgen.rmsnorm(torch.randn(0, 64), w).shape == (0, 64)


def _raises(match, fn, *args):
    with pytest.raises(RuntimeError, match=match):
        fn(*args)


def test_argument_errors():
    x, w = torch.randn(4, 64), torch.randn(64)
    _raises("'x' must be float32, float16 or bfloat16", kgen.rmsnorm,
            x.int(), w)
    _raises(r"'weight' must be \[64\]", kgen.rmsnorm, x, torch.randn(32))
    _raises(r"'weight' must be BFloat16 \(x's dtype\) or float32",
            kgen.rmsnorm, x.bfloat16(), w.half())
    _raises("'weight' must be Float", kgen.rmsnorm, x, w.bfloat16())
    _raises("'bias' must be Float", kgen.layernorm, x.bfloat16(), w,
            w.bfloat16())
    _raises("must be even", kgen.silu_and_mul, torch.randn(4, 63))
    _raises("written in place", kgen.fused_add_rmsnorm,
            torch.randn(64, 4).t(), torch.randn(4, 64), w)
    _raises(r"'x' must be \[B, T, C\]", kgen.adaln, x, x, x)
    _raises("scale must be > 0", kgen.silu_and_mul_quant,
            torch.randn(4, 64), 0.0)
    q, k = torch.randn(3, 4, 48), torch.randn(3, 2, 48)
    _raises("rope_neox.*48", kgen.rope_neox, torch.arange(3), q, k,
            torch.randn(8, 48))
    _raises(r"positions must lie in \[0, 8\)", kgen.rope_neox,
            torch.tensor([0, 9, 1]), torch.randn(3, 4, 64),
            torch.randn(3, 2, 64), torch.randn(8, 64))
    _raises("'positions' must be Long or Int", kgen.rope_neox,
            torch.arange(3).short(), torch.randn(3, 4, 64),
            torch.randn(3, 2, 64), torch.randn(8, 64))
    _raises("'positions' must be Int", kgen.rope_neox_partial,
            torch.arange(3), torch.randn(3, 4, 64), torch.randn(3, 2, 64),
            torch.randn(8, 32))
    _raises("must be Float or q's dtype", kgen.rope_neox, torch.arange(3),
            torch.randn(3, 4, 64), torch.randn(3, 2, 64),
            torch.randn(8, 64).half())
    q, k, p3 = torch.randn(3, 4, 64), torch.randn(3, 2, 64), torch.arange(3)
    for width in (31, 66, 0):  # odd, wider than a head, empty
        _raises(r"\[max_pos, 64\] or \[max_pos, rotary_dim\] with "
                "rotary_dim even and below head_dim", kgen.rope_gptj, p3, q, k,
                torch.randn(8, width))
    _raises("group_size 128 must divide", kgen.per_token_group_quant_fp8,
            torch.randn(4, 200), 128)
    _raises("group_size 64, 128 only, not 96",
            kgen.per_token_group_quant_int8, torch.randn(4, 192), 96)
    for eps in (0.0, 1e-35, float("nan")):  # the kernel's scales stay normal
        _raises(r"'eps' .*must be >= 1e-30", kgen.per_token_group_quant_int8,
                torch.randn(4, 128), 128, eps)
    _raises(r"column-major scales need 'x' of \[..., M, hidden\], not 1-d",
            kgen.per_token_group_quant_fp8, torch.randn(128), 128, 1e-10,
            False, True)
    _raises("scale must be > 0", kgen.quant_int8_static, x, 0.0)
    xg, wg = torch.randn(4, 256), torch.randn(256)
    _raises("group_size 96 must divide", kgen.rmsnorm_quant_group, xg, wg, 96)
    _raises("group_size 64, 128 only, not 32", kgen.rmsnorm_quant_int8_group,
            xg, wg, 32)
    _raises("scale_ub must be > 0", kgen.fused_add_rmsnorm_quant_group, xg,
            xg.clone(), wg, 128, -1.0)


def test_rope_heads_padded_inside_a_row():
    """q and k with heads head_dim + pad apart, the MLA way (the rotated part
    of each head a slice of a longer one): rotated in place as dense copies
    are, the rest of each head untouched; heads that overlap are refused
    and nothing is written."""
    g = torch.Generator().manual_seed(3)
    pos, cache = torch.randint(0, 16, (5,), generator=g), torch.randn(16, 64)
    q_all = torch.randn(5, 3, 192, generator=g)
    k_all = torch.randn(5, 1, 576, generator=g)
    q, k = q_all[..., 128:], k_all[..., 512:]
    q2, k2 = q.clone(), k.clone()
    before = q_all[..., :128].clone(), k_all[..., :512].clone()
    kgen.rope_neox(pos, q, k, cache)
    kgen.rope_neox(pos, q2, k2, cache)
    assert torch.equal(q, q2) and torch.equal(k, k2)
    assert torch.equal(q_all[..., :128], before[0])
    assert torch.equal(k_all[..., :512], before[1])
    overlap = torch.randn(5 * 3 * 32 + 32).as_strided((5, 3, 64), (96, 32, 1))
    snapshot = overlap.clone()
    _raises("heads that do not overlap", kgen.rope_neox, pos, overlap, None,
            cache)
    assert torch.equal(overlap, snapshot)
    # One token's heads repeated (expand: a token stride of 0) would write
    # past the storage: refused too.
    one = torch.randn(1, 3, 64, generator=g)
    _raises("one stride between tokens", kgen.rope_neox, pos,
            one.expand(5, 3, 64), None, cache)


def test_rope_takes_int32_positions():
    """int32 positions (FlashInfer's pos_ids) give the int64 result, for
    rope_neox with k, rope_gptj on q alone and a rotary cache, and
    qk_norm_rope; out-of-range ones are refused as int64 ones are."""
    g = torch.Generator().manual_seed(9)
    pos = torch.randint(0, 16, (5,), generator=g)
    w = torch.randn(64, generator=g)
    cases = [
        (kgen.rope_neox, lambda q, k: (q, k, torch.randn(16, 64,
                                                          generator=g))),
        (kgen.rope_gptj, lambda q, k: (q, None, torch.randn(16, 32,
                                                             generator=g))),
        (kgen.qk_norm_rope_neox, lambda q, k: (q, k, w, w,
                                               torch.randn(16, 64,
                                                           generator=g))),
    ]
    for fn, args in cases:
        q, k = torch.randn(5, 4, 64, generator=g), torch.randn(5, 2, 64,
                                                               generator=g)
        rest = args(q, k)
        copies = [t.clone() if isinstance(t, torch.Tensor) else t
                  for t in rest]
        fn(pos, *rest)
        fn(pos.int(), *copies)
        for a, b in zip(rest, copies):
            if a is not None:
                assert torch.equal(a, b)
    _raises(r"positions must lie in \[0, 16\)", kgen.rope_neox,
            torch.tensor([0, 1, 16, 2, 3], dtype=torch.int32),
            torch.randn(5, 4, 64), torch.randn(5, 2, 64), torch.randn(16, 64))


def test_q_and_k_that_share_elements_are_refused():
    """The in-place q and k ops refuse q and k that may share an element (the
    same tensor twice, heads that overlap) and write nothing; q and k as
    views of one fused qkv buffer run."""
    g = torch.Generator().manual_seed(5)
    pos, cache = torch.randint(0, 16, (5,), generator=g), torch.randn(16, 64)
    w = torch.randn(64, generator=g)
    x = torch.randn(5, 6, 64, generator=g)
    snapshot = x.clone()
    for q, k in ((x, x), (x[:, :4], x[:, 3:]), (x[:, 1:2], x[:, :6])):
        _raises("'q' and 'k' share memory", kgen.rope_neox, pos, q, k, cache)
        _raises("'q' and 'k' share memory", kgen.qk_rmsnorm, q, k, w, w)
        _raises("'q' and 'k' share memory", kgen.qk_norm_rope_gptj, pos, q, k,
                w, w, cache)
    # k one token later than q, its heads over q's next token: refused.
    flat = torch.randn(6 * 6 * 64, generator=g)
    q = flat.as_strided((5, 4, 64), (384, 64, 1))
    k = flat.as_strided((5, 2, 64), (384, 64, 1), 384 + 64)
    _raises("'q' and 'k' share memory", kgen.qk_rmsnorm, q, k, w, w)
    assert torch.equal(x, snapshot)
    # q, k and v side by side in each token's row: apart, so both run and
    # match separate copies.
    q, k = x[:, :3], x[:, 3:5]
    q2, k2 = q.clone(), k.clone()
    kgen.qk_rmsnorm(q, k, w, w)
    kgen.qk_rmsnorm(q2, k2, w, w)
    assert torch.equal(q, q2) and torch.equal(k, k2)
    assert torch.equal(x[:, 5], snapshot[:, 5])
    # Heads of q and k interleaved in a row are not proven apart: refused.
    _raises("'q' and 'k' share memory", kgen.qk_rmsnorm, x[:, 0::2],
            x[:, 1::2], w, w)


def test_expanded_rows_are_copied_not_aliased():
    """An input whose rows repeat one (expand: stride 0) is read as rows of
    its own, copied first, never as contiguous rows past its storage."""
    w = torch.randn(64)
    row = torch.randn(1, 64)
    got = kgen.rmsnorm(row.expand(4, 64), w)
    assert torch.equal(got, kgen.rmsnorm(row.expand(4, 64).contiguous(), w))


def test_rope_positions_from_indptr_and_offsets():
    # Two requests of 3 and 2 tokens, continuing at positions 10 and 0.
    indptr, offsets = torch.tensor([0, 3, 5]), torch.tensor([10, 0])
    want = torch.tensor([10, 11, 12, 0, 1])
    assert kgen.rope_positions(indptr, offsets).tolist() == want.tolist()
    got = kgen.rope_positions(indptr.int(), offsets.int(), nnz=5)
    assert got.dtype == torch.int64 and got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="indptr must be"):
        kgen.rope_positions(indptr, torch.tensor([1, 2, 3]))
    # The result drives rope_neox as FlashInfer's apply_rope would.
    q, k = torch.randn(5, 2, 64), torch.randn(5, 1, 64)
    cache = torch.randn(16, 64)
    q2, k2 = q.clone(), k.clone()
    kgen.rope_neox(kgen.rope_positions(indptr, offsets), q, k, cache)
    kgen.rope_neox(want, q2, k2, cache)
    assert torch.equal(q, q2) and torch.equal(k, k2)


def test_compile_fullgraph_no_breaks():
    def block(x, w, r, q, k, cos, sin):
        h, s = kgen.add_rmsnorm(x, r, w)
        g = kgen.silu_and_mul(torch.cat([h, h], -1))
        qo, ko = kgen.rope_hf(q, k, cos, sin)
        return kgen.rmsnorm(g + s, w), qo.sum() + ko.sum()

    args = (torch.randn(5, 64), torch.randn(64), torch.randn(5, 64),
            torch.randn(5, 4, 64), torch.randn(5, 2, 64), torch.randn(5, 64),
            torch.randn(5, 64))
    explain = torch._dynamo.explain(block)(*args)
    assert explain.graph_break_count == 0, explain.break_reasons
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager",
                             dynamic=True)
    for got, want in zip(compiled(*args), block(*args)):
        torch.testing.assert_close(got, want)


def test_f32_weights_are_used_unrounded():
    # An f32 weight rounded to bf16 moves the output by up to half a bf16
    # ulp: the result must stay within an ulp of the f32-weight formula and
    # differ from the bf16-weight kernel's somewhere.
    from samples import ref_gemma_rmsnorm, ref_layernorm, ref_rmsnorm_f32w
    g = torch.Generator().manual_seed(3)
    x = torch.randn(8, 256, generator=g).bfloat16()
    w = 1 + torch.rand(256, generator=g) / 64  # all but lost in bf16
    b = torch.randn(256, generator=g) / 64
    cases = [(kgen.rmsnorm, (x, w), ref_rmsnorm_f32w),
             (kgen.gemma_rmsnorm, (x, w), ref_gemma_rmsnorm),
             (kgen.layernorm, (x, w, b), ref_layernorm)]
    for fn, args, ref in cases:
        got = fn(*args)
        assert got.dtype == torch.bfloat16
        torch.testing.assert_close(got, ref(*args), rtol=2 ** -8, atol=0)
        narrow = fn(*[a.bfloat16() for a in args])
        assert (got != narrow).any(), fn.__name__
    r = torch.randn(8, 256, generator=g).bfloat16()
    xs, rs = x.clone(), r.clone()
    kgen.gemma_fused_add_rmsnorm(xs, rs, w)
    torch.testing.assert_close(rs, x + r, rtol=0, atol=0)
    torch.testing.assert_close(xs, ref_gemma_rmsnorm(x + r, w), rtol=2 ** -8,
                               atol=0)


def test_group_scales_transposed():
    # vLLM's is_scale_transposed: the scales [..., groups] over a [groups,
    # tokens] buffer, the same values as row-major.
    x, w = torch.randn(2, 5, 256), torch.randn(256)
    _, want = kgen.rmsnorm_quant_group(x, w, 64)
    _, s = kgen.rmsnorm_quant_group(x, w, 64, None, 1e-6, True)
    assert s.shape == (2, 5, 4) and s.stride() == (5, 1, 10)
    torch.testing.assert_close(s, want, rtol=0, atol=0)
    x2 = torch.randn(7, 512)
    _, want = kgen.silu_and_mul_quant_int8_group(x2, 128)
    y, s = kgen.silu_and_mul_quant_int8_group(x2, 128, True)
    assert y.shape == (7, 256) and s.shape == (7, 2) and s.stride() == (1, 7)
    torch.testing.assert_close(s, want, rtol=0, atol=0)
    _raises(r"group_size 96 must divide half the last dim of 'x' \(256\)",
            kgen.silu_and_mul_quant_group, x2, 96)
    _raises("scale_ub must be > 0", kgen.silu_and_mul_quant_group, x2, 64,
            -1.0)
    assert kgen.silu_and_mul_quant_group(torch.randn(0, 256), 64,
                                         None, True)[1].shape == (0, 2)


def test_group_quant_column_major_scales():
    # vLLM's layouts for DeepGEMM: each [M, groups] matrix column-major,
    # columns of M floats, or of M rounded up to 4 (TMA-aligned).
    x = torch.randn(2, 5, 256)
    _, want = kgen.per_token_group_quant_fp8(x, 64)
    for tma, p in ((False, 5), (True, 8)):
        y, s = kgen.per_token_group_quant_fp8(x, 64, 1e-10, False, True, tma)
        assert s.shape == (2, 5, 4) and s.stride() == (4 * p, 1, p)
        torch.testing.assert_close(s, want, rtol=0, atol=0)
    _, s = kgen.per_token_group_quant_fp8(x[0], 128, 1e-10, True, True, True)
    assert s.shape == (5, 2) and s.stride() == (1, 8)
    _, s = kgen.per_token_group_quant_fp8(x, 64, 1e-10, False, False, True)
    assert s.stride() == (20, 4, 1)  # TMA alignment alone: row-major
    assert kgen.per_token_group_quant_fp8(
        torch.randn(0, 128), 128, 1e-10, False, True)[1].shape == (0, 1)

