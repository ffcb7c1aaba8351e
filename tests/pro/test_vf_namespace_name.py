"""``vf.<op>`` inside a kernel names the VF namespace even where the module never imported ``vf``.

The official parser recognises VF calls by the spelling ``vf.`` (official kernels rely on it); an
import of the namespace under that name, or a local variable called ``vf``, still takes precedence.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import BACKENDS, EVERY_BACKEND, run_on

pytestmark = EVERY_BACKEND

R, C = 4, 64


@pl.vector_function
def add_one_rows(tile):
    mask = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)  # noqa: F821 - the point of the test
    for r in pl.range(0, R):
        reg = vf.load_align(tile, r * C)  # noqa: F821
        vf.store_align(tile + r * C, vf.adds(reg, 1.0, mask), mask)  # noqa: F821


def add_one(x: pl.Tensor[[R, C], pl.DT_FP32], out: pl.Tensor[[R, C], pl.DT_FP32]):
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0)
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        add_one_rows(t)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out, t, [0, 0])


def test_module_does_not_define_vf():
    assert "vf" not in globals()


@pytest.mark.parametrize("backend", BACKENDS)
def test_vf_calls_without_importing_vf(backend):
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    _, got = run_on(add_one, backend, x, np.zeros_like(x))
    np.testing.assert_array_equal(got, x + 1)
