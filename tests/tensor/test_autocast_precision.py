"""The 16-bit float ops the official tensor level computes in FP32, per arch (docs/tensor.md "Precision").

Each kernel's result differs between rounding every op to its 16-bit dtype and the official rule
(listed ops computed in FP32, a chain of them rounded once where the value leaves it).  Expectations
are numpy FP32 computations rounded with ml_dtypes at exactly the points the rule says, compared bit
for bit, on interp and cpu, with ``$PYPTOPRO_JIT_ARCH`` selecting a3 (A2/A3) or a5 (950)."""
import ml_dtypes
import numpy as np
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
BF, F16 = pypto.DT_BF16, pypto.DT_FP16
SHAPE = (24, 64)
ARCHS = pytest.mark.parametrize("arch", ["a3", "a5"])
NP = {BF: ml_dtypes.bfloat16, F16: np.float16}
TORCH = {BF: torch.bfloat16, F16: torch.float16}


def _inputs(n, dtype, seed, lo=0.5, hi=2.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, SHAPE).astype(np.float32).astype(NP[dtype]) for _ in range(n)]


def _run(kernel, dtype, arrays, out_shape=SHAPE):
    """Run ``kernel(*arrays, out)``; returns ``out`` as a numpy array of ``dtype``."""
    ts = [torch.from_numpy(a.astype(np.float32)).to(TORCH[dtype]) for a in arrays]
    out = torch.zeros(out_shape, dtype=TORCH[dtype])
    kernel(*ts, out)
    return out.float().numpy().astype(NP[dtype])


def _r(v, dtype):
    """``v`` rounded once to ``dtype``, back as FP32."""
    return np.asarray(v, np.float32).astype(NP[dtype]).astype(np.float32)


def _f(a):
    return a.astype(np.float32)


def _same(got, want, dtype):
    assert np.array_equal(got.view(np.uint16), _r(want, dtype).astype(NP[dtype]).view(np.uint16))


@pypto.frontend.jit
def _arith(x: pypto.Tensor(SHAPE, BF), y: pypto.Tensor(SHAPE, BF), out: pypto.Tensor(SHAPE, BF)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = (y - x * (x + y)) / y * 0.7 + 0.1


@BOTH
@ARCHS
def test_bf16_arithmetic_and_div_chain_on_both_archs(arch, monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", arch)
    x, y = _inputs(2, BF, 1)
    got = _run(_arith, BF, [x, y])
    fx, fy = _f(x), _f(y)
    _same(got, (fy - fx * (fx + fy)) / fy * np.float32(0.7) + np.float32(0.1), BF)
    per_op = _r(fy - _r(fx * _r(fx + fy, BF), BF), BF)
    per_op = _r(_r(_r(per_op / fy, BF) * np.float32(0.7), BF) + np.float32(0.1), BF)
    assert not np.array_equal(_r(got, BF), per_op)


@pypto.frontend.jit
def _maxwhere(x: pypto.Tensor(SHAPE, BF), y: pypto.Tensor(SHAPE, BF), out: pypto.Tensor(SHAPE, BF)):
    pypto.set_vec_tile_shapes(8, 64)
    m = pypto.maximum(x * y, y * 1.3)
    out[:] = pypto.where(x > 1.0, -m, m * 0.9) * x


@BOTH
@ARCHS
def test_bf16_maximum_where_neg_chain_on_a3_only(arch, monkeypatch):
    """A2/A3 list maximum, where and neg; 950 computes them in BF16, reading rounded operands."""
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", arch)
    x, y = _inputs(2, BF, 2)
    got = _run(_maxwhere, BF, [x, y])
    fx, fy = _f(x), _f(y)
    p, q = fx * fy, fy * np.float32(1.3)
    if arch == "a3":
        m = np.maximum(p, q)
        want = np.where(fx > 1.0, -m, m * np.float32(0.9)) * fx
    else:
        m = np.maximum(_r(p, BF), _r(q, BF))
        want = np.where(fx > 1.0, -m, _r(m * np.float32(0.9), BF)) * fx
    _same(got, want, BF)


@pypto.frontend.jit
def _unary(x: pypto.Tensor(SHAPE, BF), y: pypto.Tensor(SHAPE, BF), out: pypto.Tensor(SHAPE, BF)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.sqrt(pypto.exp(x * y) + y) * pypto.log(x * y + 1.0)


@BOTH
@ARCHS
def test_bf16_unary_math_chains_log_only_on_a3(arch, monkeypatch):
    """exp/sqrt are listed on both archs, log on A2/A3 only (on 950 it reads the rounded product and
    rounds its own result)."""
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", arch)
    x, y = _inputs(2, BF, 3)
    got = _run(_unary, BF, [x, y])
    fx, fy = _f(x), _f(y)
    with np.errstate(all="ignore"):
        left = np.sqrt(np.exp(fx * fy) + fy)
        right = np.log(fx * fy + np.float32(1.0)) if arch == "a3" else _r(np.log(_r(fx * fy + np.float32(1.0), BF)), BF)
        want = left * right
    # exp/log are FP32 library functions here: compare after rounding, where the one-ulp FP32
    # difference of exp32 vs numpy rarely shows; the per-op variant differs far more often
    got32 = _r(got, BF)
    assert np.mean(got32 == _r(want, BF)) > 0.99
    per_op = _r(_r(np.sqrt(_r(_r(np.exp(_r(fx * fy, BF)), BF) + fy, BF)), BF)
                * _r(np.log(_r(_r(fx * fy, BF) + 1.0, BF)), BF), BF)
    assert np.mean(got32 == per_op) < 0.9


@pypto.frontend.jit
def _rowsum(x: pypto.Tensor(SHAPE, BF), y: pypto.Tensor(SHAPE, BF), out: pypto.Tensor([SHAPE[0], 1], BF)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.sum(x * y, dim=-1, keepdim=True) * 0.37


@BOTH
@ARCHS
def test_bf16_row_sum_reads_and_passes_on_fp32_values(arch, monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", arch)
    x, y = _inputs(2, BF, 4)
    got = _run(_rowsum, BF, [x, y], (SHAPE[0], 1))
    s = np.sum(_f(x) * _f(y), axis=-1, keepdims=True, dtype=np.float32)
    want = s * np.float32(0.37)
    got32 = _r(got, BF)
    # the row sum's FP32 order of additions is the tile op's; allow one BF16 ulp where they differ
    assert np.mean(got32 == _r(want, BF)) > 0.9
    assert np.allclose(got32, _r(want, BF), rtol=2 ** -7, atol=0)
    per_op = _r(_r(np.sum(_r(_f(x) * _f(y), BF), axis=-1, keepdims=True, dtype=np.float32), BF) * 0.37, BF)
    assert not np.array_equal(got32, per_op)


@pypto.frontend.jit
def _lowrank(x: pypto.Tensor(SHAPE, F16), v: pypto.Tensor([SHAPE[1]], F16), w: pypto.Tensor([SHAPE[1]], F16),
             out: pypto.Tensor(SHAPE, F16)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * (v * w + v)


@BOTH
def test_a_lower_rank_operand_is_rounded_before_the_broadcast(monkeypatch):
    """Officially the 1-D operand is reshaped to 2-D first (an op outside the chain)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 2, SHAPE).astype(np.float16)
    v, w = (rng.uniform(0.5, 2, SHAPE[1]).astype(np.float16) for _ in range(2))
    xt, vt, wt = (torch.from_numpy(a) for a in (x, v, w))
    out = torch.zeros(SHAPE, dtype=torch.float16)
    _lowrank(xt, vt, wt, out)
    inner = _r(_f(v) * _f(w) + _f(v), F16)
    assert np.array_equal(out.numpy(), (_f(x) * inner).astype(np.float16))


@pypto.frontend.jit
def _mods(x: pypto.Tensor(SHAPE, F16), y: pypto.Tensor(SHAPE, F16), out: pypto.Tensor(SHAPE, F16)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.fmod(x * 7.3, y) + pypto.remainder(x * -5.1, y)


@BOTH
@ARCHS
def test_fp16_fmod_and_remainder_compute_in_fp32(arch, monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", arch)
    x, y = _inputs(2, F16, 6)
    got = _run(_mods, F16, [x, y])
    fx, fy = _f(x), _f(y)
    a, b = _r(fx * np.float32(7.3), F16), _r(fx * np.float32(-5.1), F16)
    fm = a - np.trunc(a / fy) * fy
    rm = b - np.floor(b / fy) * fy
    want = _r(fm, F16) + _r(rm, F16)
    _same(got, want, F16)
    fm16 = _r(a - _r(np.trunc(_r(a / fy, F16)) * fy, F16), F16)  # the FP16 chain of sub/mul still in FP32
    rm16 = _r(b - _r(np.floor(_r(b / fy, F16)) * fy, F16), F16)
    per_op = _r(fm16 + rm16, F16)
    assert not np.array_equal(_r(got, F16), per_op)


@pypto.frontend.jit
def _two_uses(x: pypto.Tensor(SHAPE, F16), y: pypto.Tensor(SHAPE, F16), o1: pypto.Tensor(SHAPE, F16),
              o2: pypto.Tensor(SHAPE, F16)):
    pypto.set_vec_tile_shapes(8, 64)
    t = x * y + x
    o1[:] = t
    o2[:] = t * y


@BOTH
def test_a_value_stored_and_also_read_by_a_listed_op_stays_fp32_for_that_op():
    """Officially the store reads the rounded value and the listed consumer the FP32 one."""
    x, y = _inputs(2, F16, 8)
    xt, yt = (torch.from_numpy(a) for a in (x, y))
    o1, o2 = torch.zeros(SHAPE, dtype=torch.float16), torch.zeros(SHAPE, dtype=torch.float16)
    _two_uses(xt, yt, o1, o2)
    t = _f(x) * _f(y) + _f(x)
    assert np.array_equal(o1.numpy(), t.astype(np.float16))
    assert np.array_equal(o2.numpy(), (t * _f(y)).astype(np.float16))
    assert not np.array_equal(o2.numpy(), (_r(t, F16) * _f(y)).astype(np.float16))
