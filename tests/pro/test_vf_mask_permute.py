"""vf.de_interleave / vf.interleave of mask registers: predicate lanes of the given dtype's width move.

Two masks give 2 x lanes predicates (src0's then src1's); de-interleaving keeps the even ones in dst0
and the odd ones in dst1, interleaving alternates them and splits the result in halves -- the same
permutations as for data registers, applied to the lanes of a mask.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf  # noqa: N813

from .on_every_backend import BACKENDS, EVERY_BACKEND, run_on

pytestmark = EVERY_BACKEND

LANES = 128  # 16-bit lanes of one 256-byte register
FIRST = 37   # src0 selects its first FIRST lanes; src1 every lane


def _kernel(interleave: bool):
    @pl.vector_function
    def spread(tile):
        all16 = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT16)
        head = vf.update_mask(FIRST, dtype=pl.DT_UINT16)
        if pl.constexpr(interleave):
            m0, m1 = vf.interleave(head, all16, dtype=pl.DT_UINT16)
        else:
            m0, m1 = vf.de_interleave(head, all16, dtype=pl.DT_UINT16)
        one = vf.full(1, dtype=pl.DT_UINT16)
        zero = vf.full(0, dtype=pl.DT_UINT16)
        vf.store_align(tile, vf.select(one, zero, m0), all16)
        vf.store_align(tile + LANES, vf.select(one, zero, m1), all16)

    def kernel(out: pl.Tensor[[2, LANES], pl.DT_UINT16]):
        with pl.section_vector():
            t = pl.make_tile(pl.TileType(shape=[2, LANES], dtype=pl.DT_UINT16, target_memory=pl.MemorySpace.Vec),
                             addr=0)
            spread(t)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, t, [0, 0])
    return kernel


DE_INTERLEAVE, INTERLEAVE = _kernel(False), _kernel(True)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("interleave", [False, True])
def test_mask_permute_moves_lanes(backend, interleave):
    src0 = np.arange(LANES) < FIRST
    src1 = np.ones(LANES, bool)
    if interleave:
        z = np.empty(2 * LANES, bool)
        z[0::2], z[1::2] = src0, src1
        want = np.stack([z[:LANES], z[LANES:]])
    else:
        z = np.concatenate([src0, src1])
        want = np.stack([z[0::2], z[1::2]])
    (got,) = run_on(INTERLEAVE if interleave else DE_INTERLEAVE, backend, np.full((2, LANES), 7, np.uint16))
    np.testing.assert_array_equal(got, want.astype(np.uint16))
