"""VF semantics the API reference pages state and the official suite does not exercise: our own kernels,
numpy expectations, every backend."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf  # noqa: N813

from .on_every_backend import BACKENDS, EVERY_BACKEND, NP_OF, run_on

pytestmark = EVERY_BACKEND


def _sync(src, dst, event):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=event)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=event)


def _one_row_kernel(body, dtype, width):
    """A kernel that runs ``body(out_tile)`` (a vector function) and stores the tile's one row."""
    def kernel(out: pl.Tensor[[1, width], dtype]):
        t = pl.TileType(shape=[1, width], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        with pl.section_vector():
            o = pl.make_tile(t, addr=0)
            body(o)
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"{body.__name__}_{dtype.name}"
    return kernel


def _arange_kernel(start, order, dtype):
    @pl.vector_function
    def arange_row(o):
        vf.store_align(o, vf.arange(start, index_order=order, dtype=dtype),
                       vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dtype))
    return _one_row_kernel(arange_row, dtype, 256 // dtype.nbytes)


ARANGE_KERNELS = {(s, o.name, d.name): _arange_kernel(s, o, d)
                  for s in (0, 5) for o in (pl.IndexOrder.INCREASE_ORDER, pl.IndexOrder.DECREASE_ORDER)
                  for d in (pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_INT16, pl.DT_FP32)}


@pytest.mark.parametrize("key", list(ARANGE_KERNELS), ids=lambda k: "-".join(map(str, k)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_arange_orders(backend, key):
    """INCREASE: start + i; DECREASE: the same values from the last lane down, start + (n-1-i) (the page's
    measured result: arange(63, DECREASE) over 64 UINT32 lanes is 126 .. 63)."""
    start, order, name = key
    dtype = getattr(pl, "DT_" + name)
    n = 256 // dtype.nbytes
    (got,) = run_on(ARANGE_KERNELS[key], backend, np.zeros((1, n), NP_OF[dtype]))
    want = start + np.arange(n)
    if order == "DECREASE_ORDER":
        want = want[::-1]
    np.testing.assert_array_equal(got[0], want.astype(NP_OF[dtype]))


# ----------------------------------------------------------------------------- vf.get_mask_spr


def _spr_kernel(dtype, width_enum, setup):
    n = 256 // dtype.nbytes

    @pl.vector_function
    def copy_under_spr(src, dst):
        every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dtype)
        spr = vf.get_mask_spr(width=width_enum)
        vf.store_align(dst, vf.abs(vf.load_align(src, 0), spr), every)   # unselected lanes: 0

    def kernel(x: pl.Tensor[[1, n], dtype], out: pl.Tensor[[1, n], dtype]):
        t = pl.TileType(shape=[1, n], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        with pl.section_vector():
            a = pl.make_tile(t, addr=0)
            o = pl.make_tile(t, addr=256)
            pl.load(a, x, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
            setup()
            copy_under_spr(a, o)
            pl.reset_mask()
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"spr_{setup.__name__}_{dtype.name}"
    return kernel


def norm_pattern():
    pl.set_mask_norm()
    pl.set_vec_mask(0x8000_0000_0000_0001, 0xF0F0_0000_0000_FFFF)


def count_ten():
    pl.set_mask_count()
    pl.set_vec_mask(0, 10)


def after_reset():
    pl.set_vec_mask(0, 1)
    pl.reset_mask()


def _bits(high, low, n):
    word = (high << 64) | low
    return np.array([(word >> i) & 1 for i in range(n)], dtype=bool)


SPR_CASES = {
    ("norm", "B32"): (norm_pattern, lambda n: _bits(0, 0xF0F0_0000_0000_FFFF, n)),
    ("norm", "B16"): (norm_pattern, lambda n: _bits(0x8000_0000_0000_0001, 0xF0F0_0000_0000_FFFF, n)),
    ("count", "B32"): (count_ten, lambda n: np.arange(n) < 10),
    ("count", "B16"): (count_ten, lambda n: np.arange(n) < 10),
    ("reset", "B32"): (after_reset, lambda n: np.ones(n, bool)),
}
SPR_KERNELS = {k: _spr_kernel(pl.DT_FP32 if k[1] == "B32" else pl.DT_FP16, getattr(pl.MaskWidth, k[1]), setup)
               for k, (setup, _) in SPR_CASES.items()}


@pytest.mark.parametrize("key", list(SPR_CASES), ids=lambda k: "-".join(k))
@pytest.mark.parametrize("backend", BACKENDS)
def test_get_mask_spr_reads_set_vec_mask(backend, key):
    """get_mask_spr reads the {MASK1, MASK0} bits pl.set_vec_mask wrote: B32 lane i = bit i of MASK0,
    B16 lane i = bit i of the 128 bits; in count mode the first mask_low lanes; after reset_mask all."""
    dtype = np.float32 if key[1] == "B32" else np.float16
    n = 256 // np.dtype(dtype).itemsize
    x = (np.arange(n) - n / 2).astype(dtype)
    _, got = run_on(SPR_KERNELS[key], backend, x.reshape(1, n), np.full((1, n), 9, dtype))
    np.testing.assert_array_equal(got[0], np.where(SPR_CASES[key][1](n), np.abs(x), 0).astype(dtype))
