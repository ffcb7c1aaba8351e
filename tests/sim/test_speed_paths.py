"""The simulator's fast paths compute what the plain ones do.

* the replay's running per-core summary (busy cycles per pipe, start, end) equals what the report
  derives from every instruction, also with scalar-unit ops, ``bar_all``, ``sync_all`` and waves;
* fp16 tile reads through the lookup table equal numpy's cast for every bit pattern;
* pausing the cycle collector leaves the collector's state, and a program's own ``gc.freeze``, alone.
"""
import gc

import numpy as np

import pypto_pro.language as pl
from pypto_pro.backends.interp.memory import _F16_TO_F32
from pypto_pro.backends.sim.report import SimReport
from pypto_pro.backends.sim.simulate import paused_cycle_collection

FP32 = pl.DT_FP32
ROW = pl.TileType([1, 64], FP32, pl.MemorySpace.Vec)
P = pl.PipeType


@pl.jit(backend="sim")
def barriers_and_scalars(x: pl.Tensor[[pl.DYNAMIC, 64], FP32], y: pl.Tensor[[pl.DYNAMIC, 64], FP32]):
    t = pl.make_tile(ROW, addr=0x0)
    u = pl.make_tile(ROW, addr=0x100)
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load(t, x, [b, 0])
        pl.system.bar_all()
        v = pl.getval(t, [0, 3])
        pl.add(u, t, v)
        pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
        pl.store(y, u, [b, 0])


def _plain(report: SimReport) -> SimReport:
    """The same report with its summary computed from the instructions."""
    return SimReport(report.kernel, report.arch, report.block_dim, report.core_num, report.labels, report.blocks,
                     report._streams, report.params, report.total_cycles, report.hazards, report.tiles)


def test_running_summary_equals_the_instructions():
    x = np.arange(6 * 64, dtype=np.float32).reshape(6, 64)
    y = np.zeros_like(x)
    barriers_and_scalars[6](x, y)
    np.testing.assert_array_equal(y, x + x[:, 3:4])
    fast = barriers_and_scalars.last_report
    plain = _plain(fast)
    assert fast.per_core == plain.per_core and fast.pipe_busy == plain.pipe_busy
    assert fast.pipe_busy["S"] > 0 and fast.pipe_busy["MTE2"] > 0


def test_running_summary_over_waves():
    """More blocks than cores: later blocks start when earlier ones leave the core."""
    @pl.jit(backend="sim", arch="a5")
    def copy_rows(x: pl.Tensor[[pl.DYNAMIC, 64], FP32], y: pl.Tensor[[pl.DYNAMIC, 64], FP32]):
        t = pl.make_tile_group(type=ROW, addrs=0x0, mutex_ids=[0]).current()
        with pl.section_vector():
            b = pl.get_block_idx()
            pl.load(t, x, [b, 0])
            pl.store(y, t, [b, 0])

    n = 70  # a5 runs 64 vector blocks at once
    x = np.arange(n * 64, dtype=np.float32).reshape(n, 64)
    y = np.zeros_like(x)
    copy_rows[n](x, y)
    np.testing.assert_array_equal(y, x)
    fast = copy_rows.last_report
    plain = _plain(fast)
    assert fast.per_core == plain.per_core and fast.pipe_busy == plain.pipe_busy
    assert fast.per_core[64]["start"] >= fast.per_core[0]["end"]


def test_fp16_table_is_numpys_cast_for_every_bit_pattern():
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    expected = halves.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(_F16_TO_F32.take(halves).view(np.uint32), expected.view(np.uint32))


def test_paused_collection_restores_the_collector_and_keeps_a_programs_freeze():
    assert gc.isenabled()
    with paused_cycle_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_cycle_collection():
            pass
        assert not gc.isenabled()  # a program that disabled the collector keeps it disabled
    finally:
        gc.enable()
    kept = [object()]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_cycle_collection():
            pass
        assert gc.get_freeze_count() == frozen  # the program's frozen objects stay frozen
    finally:
        gc.unfreeze()
    del kept
