"""Vector mask control: ``set_vec_mask``, ``set_mask_count``, ``set_mask_norm``, ``reset_mask``.

Tile ops program the mask register from their own valid windows (docs/language.md), so whatever mask a
kernel sets before an op, the op covers its whole destination on every backend.  On the simulator each
mask instruction is one scalar-pipe instruction.  Arguments are checked when the kernel compiles.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelTypeError

from .on_every_backend import EVERY_BACKEND, backend, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND


def masked_then_mul(x: pl.Tensor[[16, 48], pl.DT_FP32], y: pl.Tensor[[16, 48], pl.DT_FP32],
                    z: pl.Tensor[[16, 48], pl.DT_FP32], low: pl.DT_UINT64):
    ty = pl.TileType([16, 48], pl.DT_FP32, pl.MemorySpace.Vec)
    xs = pl.make_tile_group(type=ty, addrs=0x1000, mutex_ids=[4])
    ys = pl.make_tile_group(type=ty, addrs=0x2000, mutex_ids=[5])
    zs = pl.make_tile_group(type=ty, addrs=0x3000, mutex_ids=[6])
    with pl.section_vector():
        pl.load(xs[0], x, [0, 0])
        pl.load(ys[0], y, [0, 0])
        pl.reset_mask()
        pl.set_mask_norm()
        pl.set_vec_mask(0, low)  # a narrow (even empty) normal-mode mask
        pl.mul(zs[0], xs[0], ys[0])
        pl.set_mask_count()
        pl.set_vec_mask(0, 7)  # counter mode: 7 elements
        pl.add(zs[0], zs[0], xs[0])
        pl.set_vec_mask(-1, -1)
        pl.store(z, zs[0], [0, 0])


@pytest.mark.parametrize("low", [0, 3, 0xFFFFFFFFFFFFFFFF])
def test_tile_ops_ignore_the_mask_set_before_them(backend, low):
    rng = np.random.default_rng(low % 97)
    x, y = (np.round(rng.uniform(-8, 8, (16, 48)) * 16) / 16 for _ in range(2))
    x, y = x.astype(np.float32), y.astype(np.float32)
    z = run_on(masked_then_mul, backend, x, y, np.zeros((16, 48), np.float32), low)[2]
    np.testing.assert_array_equal(z, x * y + x)


def test_each_mask_instruction_is_one_scalar_instruction_on_the_simulator():
    k = pl.jit(masked_then_mul, backend="sim")
    x = np.ones((16, 48), np.float32)
    k(x, x, np.zeros_like(x), 5)
    ops = [ins for ins in k.last_report.instructions if "mask" in ins.op]
    assert [i.op for i in ops] == ["reset_mask", "set_mask_norm", "set_vec_mask", "set_mask_count", "set_vec_mask",
                                   "set_vec_mask"]
    assert {i.pipe for i in ops} == {"S"}
    assert all(i.cost == k.last_report.params.scalar_op for i in ops)


@pytest.mark.parametrize("high,low,match", [(2.5, 0, "mask_high must be a 64-bit integer"),
                                            (0, False, "mask_low must be a 64-bit integer"),
                                            (0, 1 << 64, "does not fit 64 bits")])
def test_set_vec_mask_rejects_values_that_are_not_64_bit_ints(high, low, match):
    def kernel(v: pl.Tensor[[8], pl.DT_FP32]):
        with pl.section_vector():
            pl.set_vec_mask(high, low)

    with pytest.raises(KernelTypeError, match=match):
        pl.jit(kernel, backend="interp")(np.zeros(8, np.float32))
