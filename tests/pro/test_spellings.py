"""Instruction-level spellings: pl.muls & co. (scalar rhs) and pl.row_/col_expand_* (fixed dim)."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelTypeError

from .kernels import assert_bits_equal

BACKENDS = ["interp", "cpu", "sim"]
V = pl.TileType([8, 16], pl.DT_FP32)


@pl.jit
def scalar_forms(x: pl.Tensor[[8, 16], pl.DT_FP32], out: pl.Tensor[[5, 8, 16], pl.DT_FP32]):
    a = pl.make_tile(V, addr=0)
    b = pl.make_tile(V, addr=0x1000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.system.bar_all()
        for k, (spelled, value) in enumerate(((pl.muls, 0.25), (pl.adds, 3.0), (pl.subs, 1.5), (pl.maxs, 0.5),
                                              (pl.mins, -0.5))):
            spelled(b, a, value)
            pl.system.bar_all()
            pl.store(out, b, [k, 0, 0])
            pl.system.bar_all()


@pl.jit
def expand_forms(x: pl.Tensor[[8, 16], pl.DT_FP32], r: pl.Tensor[[8, 1], pl.DT_FP32],
                 c: pl.Tensor[[1, 16], pl.DT_FP32], out: pl.Tensor[[2, 8, 16], pl.DT_FP32]):
    a = pl.make_tile(V, addr=0)
    b = pl.make_tile(V, addr=0x1000)
    rt = pl.make_tile(pl.TileType([8, 1], pl.DT_FP32), addr=0x2000)
    ct = pl.make_tile(pl.TileType([1, 16], pl.DT_FP32), addr=0x3000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.load(rt, r, [0, 0])
        pl.load(ct, c, [0, 0])
        pl.system.bar_all()
        pl.row_expand_sub(b, a, rt)
        pl.system.bar_all()
        pl.store(out, b, [0, 0, 0])
        pl.system.bar_all()
        pl.col_expand_mul(b, a, ct)
        pl.system.bar_all()
        pl.store(out, b, [1, 0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_spellings_compute_their_base_op(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    out = np.zeros((5, 8, 16), np.float32)
    scalar_forms.backend = backend
    scalar_forms(x, out)
    want = np.stack([x * np.float32(0.25), x + np.float32(3), x - np.float32(1.5), np.maximum(x, np.float32(0.5)),
                     np.minimum(x, np.float32(-0.5))])
    assert_bits_equal(out, want)
    r = rng.standard_normal((8, 1)).astype(np.float32)
    c = rng.standard_normal((1, 16)).astype(np.float32)
    out2 = np.zeros((2, 8, 16), np.float32)
    expand_forms.backend = backend
    expand_forms(x, r, c, out2)
    assert_bits_equal(out2, np.stack([x - r, x * c]))


@pl.jit(backend="interp")
def muls_of_a_tile(x: pl.Tensor[[8, 16], pl.DT_FP32]):
    a = pl.make_tile(V, addr=0)
    with pl.section_vector():
        pl.muls(a, a, a)


@pl.jit(backend="interp")
def row_expand_with_dim(x: pl.Tensor[[8, 16], pl.DT_FP32]):
    a = pl.make_tile(V, addr=0)
    rt = pl.make_tile(pl.TileType([8, 1], pl.DT_FP32), addr=0x2000)
    with pl.section_vector():
        pl.row_expand_sub(a, a, rt, dim=1)


@pytest.mark.parametrize("kernel, message", [(muls_of_a_tile, "pl.muls takes a scalar"),
                                             (row_expand_with_dim, "pl.row_expand_sub fixes dim=0")])
def test_spelling_misuse_is_a_kernel_type_error(kernel, message):
    with pytest.raises(KernelTypeError, match=message):
        kernel(np.zeros((8, 16), np.float32))


def test_quant_mode_names():
    assert [m.name for m in pl.QuantMode] == ["SYM", "ASYM"]
