"""FP16 add / sub / mul are computed in FP32, and a chain of them rounds once (docs/tensor.md "Precision").

The official tensor level computes these FP16 ops in FP32 and hands the FP32 value to the next such
op; the value is rounded to FP16 where it leaves the chain (a store, or an op outside the chain such
as ``maximum``).  Expected values here are torch FP32 computations rounded to FP16 at exactly those
points, compared bit for bit, on interp and cpu alike."""
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
F16 = pypto.DT_FP16
SHAPE = (40, 96)


def _inputs(n: int, seed: int = 7):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(SHAPE, generator=g).half() for _ in range(n)]


@BOTH
def test_a_chain_of_adds_subs_and_muls_rounds_once():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(SHAPE, F16), y: pypto.Tensor(SHAPE, F16), out: pypto.Tensor(SHAPE, F16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = (y - x * (x + y)) * y

    a, b = _inputs(2)
    out = torch.zeros(SHAPE, dtype=torch.float16)
    k(a, b, out)
    fa, fb = a.float(), b.float()
    want = ((fb - fa * (fa + fb)) * fb).half()
    assert torch.equal(out, want)
    per_op = ((b - a * (a + b)) * b)  # torch rounds every FP16 op: the chain must not
    assert not torch.equal(out, per_op)


@BOTH
def test_scalar_operands_join_the_chain():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(SHAPE, F16), y: pypto.Tensor(SHAPE, F16), out: pypto.Tensor(SHAPE, F16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = (x * 0.3 + y) * 1.7 - 0.25

    a, b = _inputs(2, seed=11)
    out = torch.zeros(SHAPE, dtype=torch.float16)
    k(a, b, out)
    s1, s2 = torch.tensor(0.3, dtype=torch.float32), torch.tensor(1.7, dtype=torch.float32)
    want = ((a.float() * s1 + b.float()) * s2 - 0.25).half()
    assert torch.equal(out, want)


@BOTH
def test_an_op_outside_the_chain_reads_the_rounded_value():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(SHAPE, F16), y: pypto.Tensor(SHAPE, F16), z: pypto.Tensor(SHAPE, F16),
          out: pypto.Tensor(SHAPE, F16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pypto.maximum(x * y + x, z) * y

    a, b, c = _inputs(3, seed=3)
    out = torch.zeros(SHAPE, dtype=torch.float16)
    k(a, b, c, out)
    inner = (a.float() * b.float() + a.float()).half()  # rounded where maximum reads it
    want = (torch.maximum(inner, c).float() * b.float()).half()
    assert torch.equal(out, want)


@BOTH
def test_a_value_stored_between_statements_is_rounded_there():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(SHAPE, F16), y: pypto.Tensor(SHAPE, F16), mid: pypto.Tensor(SHAPE, F16),
          out: pypto.Tensor(SHAPE, F16)):
        pypto.set_vec_tile_shapes(16, 32)
        mid[:] = x * y + x
        out[:] = mid * y

    a, b = _inputs(2, seed=5)
    mid, out = torch.zeros(SHAPE, dtype=torch.float16), torch.zeros(SHAPE, dtype=torch.float16)
    k(a, b, mid, out)
    want_mid = (a.float() * b.float() + a.float()).half()
    assert torch.equal(mid, want_mid)
    assert torch.equal(out, (want_mid.float() * b.float()).half())


@BOTH
def test_fp32_is_unchanged():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(SHAPE, pypto.DT_FP32), y: pypto.Tensor(SHAPE, pypto.DT_FP32),
          out: pypto.Tensor(SHAPE, pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x * y + x

    g = torch.Generator().manual_seed(9)
    a, b = (torch.rand(SHAPE, generator=g) for _ in range(2))
    out = torch.zeros(SHAPE, dtype=torch.float32)
    k(a, b, out)
    assert torch.equal(out, a * b + a)  # BF16 chains: tests/tensor/test_autocast_precision.py
