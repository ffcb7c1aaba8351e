"""Vector mask control (API.md A5; official pages SIMD-API/operation/memory_vector_computation/vector_mask/):
``set_vec_mask``, ``set_mask_count``, ``set_mask_norm``, ``reset_mask``.  Tile ops set the mask themselves
(the pages' note), so the pages' kernels compute full results; the instructions are checked and cost a
scalar instruction on the simulator."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelTypeError
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]


# set_vec_mask.md
def set_vec_mask_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32],
    b: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.set_vec_mask(-1, -1)
        pl.add(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# set_mask_count.md (the same kernel on set_mask_norm.md), plus reset_mask and an all-zero mask: tile ops
# override the mask, so the add is complete whatever was set before it
def mask_modes_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32],
    b: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
    low: pl.DT_UINT64,
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.set_mask_count()
        pl.set_vec_mask(0, 64 * 64)
        pl.set_mask_norm()
        pl.set_vec_mask(-1, -1)
        pl.reset_mask()
        pl.set_vec_mask(0, low)
        pl.add(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_page_kernels_compute_full_tiles(backend):
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    out = np.zeros_like(a)
    pl.jit(set_vec_mask_kernel, backend=backend)(a, b, out)
    np.testing.assert_array_equal(out, a + b)
    out[:] = 0
    pl.jit(mask_modes_kernel, backend=backend)(a, b, out, 0)
    np.testing.assert_array_equal(out, a + b)


def test_masks_cost_a_scalar_instruction_on_the_simulator():
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    k = pl.jit(mask_modes_kernel, backend="sim")
    k(a, b, np.zeros_like(a), 0xFFFFFFFF)
    masks = [ins for ins in k.last_report.instructions if "mask" in ins.op]
    assert [ins.op for ins in masks] == ["set_mask_count", "set_vec_mask", "set_mask_norm", "set_vec_mask",
                                         "reset_mask", "set_vec_mask"]
    assert all(ins.pipe == "S" and ins.cost == k.last_report.params.scalar_op for ins in masks)


@pytest.mark.parametrize("args,match", [((1.5, 0), "mask_high must be a 64-bit integer"),
                                        ((0, True), "mask_low must be a 64-bit integer"),
                                        ((1 << 64, 0), "does not fit 64 bits")])
def test_set_vec_mask_argument_errors(args, match):
    high, low = args

    def bad(out: pl.Tensor[[8], pl.DT_FP32]):
        with pl.section_vector():
            pl.set_vec_mask(high, low)

    with pytest.raises(KernelTypeError, match=match):
        pl.jit(bad, backend="interp")(np.zeros(8, np.float32))
