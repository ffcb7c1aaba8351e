"""Tile-group slots given as an explicit addrs=[...] list may alias (docs/language.md "Tile groups"):
slots sharing bytes work on disjoint parts of them, and the simulator reports an access of shared bytes
that actually races."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRaceError
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]

R, C = 8, 64
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def halves_of_one_buffer(x: pl.Tensor[[R, C], pl.DT_FP32], y: pl.Tensor[[R, C], pl.DT_FP32]):
    g = pl.make_tile_group(type=TT, addrs=[0x0, 0x0], mutex_ids=[0, 1])  # both slots: the same bytes
    with pl.section_vector():
        left = g[0][:, 0:32]
        pl.load(left, x, [0, 0])
        pl.add(left, left, left)
        pl.store(y, left, [0, 0])
        right = g[1][:, 32:64]
        pl.load(right, x, [0, 32])
        pl.mul(right, right, right)
        pl.store(y, right, [0, 32])


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliased_slots_on_disjoint_columns(backend):
    x = np.random.default_rng(0).standard_normal((R, C)).astype(np.float32)
    y = np.zeros_like(x)
    pl.jit(halves_of_one_buffer, backend=backend)(x, y)
    np.testing.assert_array_equal(y[:, :32], x[:, :32] + x[:, :32])
    np.testing.assert_array_equal(y[:, 32:], x[:, 32:] * x[:, 32:])


def racing_aliases(x: pl.Tensor[[R, C], pl.DT_FP32], y: pl.Tensor[[R, C], pl.DT_FP32]):
    g = pl.make_tile_group(type=TT, addrs=[0x0, 0x0], mutex_ids=[0, 1])
    with pl.section_vector():
        pl.load(g[0], x, [0, 0])
        pl.add(g[1], g[1], g[1])  # reads the bytes the load writes; separate mutex ids order nothing
        pl.store(y, g[1], [0, 0])


def test_the_simulator_reports_a_race_between_aliased_slots():
    with pytest.raises(KernelRaceError, match="data race"):
        pl.jit(racing_aliases, backend="sim")(np.ones((R, C), np.float32), np.zeros((R, C), np.float32))
