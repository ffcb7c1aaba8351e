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
