"""Precise access sets: strided windows of one tile, aliased GM arguments, scratch operands.

Each case has a racy and a clean variant: the simulator must report the first and stay silent on the
second (zero false positives)."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl

P = pl.PipeType
VEC = pl.MemorySpace.Vec
WIDE = pl.TileType([16, 64], pl.DT_FP32, VEC)
HALF = pl.TileType([16, 32], pl.DT_FP32, VEC)


def _races(kernel):
    return [h for h in kernel.last_report.hazards if h.kind == "race"]


# ------------------------------------------------------------------------ column slices of one tile
def _halves(store_cols, exp_cols):
    s0, s1 = store_cols
    e0, e1 = exp_cols

    @pl.jit(backend="sim", auto_mutex=False, sim_options={"strict": False})
    def halves(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 32], pl.DT_FP32]):
        t = pl.make_tile(WIDE, addr=0x0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.store(y, t[0:16, s0:s1], [0, 0])      # MTE3 reads some columns
            pl.exp(t[0:16, e0:e1], t[0:16, e0:e1])   # V rewrites others, concurrently
    x = np.linspace(0, 1, 16 * 64, dtype=np.float32).reshape(16, 64)
    y = np.zeros((16, 32), np.float32)
    halves(x, y)
    np.testing.assert_array_equal(y, x[:, s0:s1])
    return halves


def test_disjoint_column_slices_on_two_pipes_do_not_race():
    assert _races(_halves((0, 32), (32, 64))) == []


def test_overlapping_column_slices_on_two_pipes_race():
    (race,) = _races(_halves((0, 32), (16, 48)))
    assert "pl.store on pipe MTE3" in race.message and "pl.exp on pipe V" in race.message


# ------------------------------------------------------------------------ aliased GM arguments
@pl.jit(backend="sim", auto_mutex=False, sim_options={"strict": False})
def copy_rows(src: pl.Tensor[[16, 64], pl.DT_FP32], dst: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(WIDE, addr=0x0)
    with pl.section_vector():
        pl.load(t, src, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.store(dst, t, [0, 0])


def test_views_of_one_torch_buffer_that_overlap_race_across_cores():
    buf = torch.arange(32 * 64, dtype=torch.float32).reshape(32, 64)
    copy_rows[None, 2](buf[0:16], buf[8:24])  # block 1 loads rows 8..15 while block 0 stores them
    races = _races(copy_rows)
    assert races and all("core" in h.summary() for h in races)
    assert any("tensor 'dst'" in h.message and "tensor 'src'" in h.message for h in races)


def test_disjoint_views_of_one_buffer_are_not_reported():
    buf = np.zeros((32, 64), np.float32)
    buf[:16] = 1
    copy_rows[2](buf[0:16], buf[16:32])
    assert copy_rows.last_report.hazards == []
    assert np.all(buf[16:] == 1)
    interleaved = np.zeros((16, 128), np.float32)  # even and odd column blocks: spans overlap, bytes do not
    copy_rows[2](interleaved[:, 0:64], interleaved[:, 64:128])
    assert copy_rows.last_report.hazards == []


def test_the_same_array_passed_twice_is_one_memory():
    a = np.ones((16, 64), np.float32)
    copy_rows[2](a, a)
    assert _races(copy_rows)  # block 0's store and block 1's load of the same bytes are unordered


# ------------------------------------------------------------------------ scratch operands
def _reduce(tmp_is_b: bool, synced: bool):
    @pl.jit(backend="sim", auto_mutex=False, sim_options={"strict": False})
    def row_sum(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32],
                s: pl.Tensor[[16, 1], pl.DT_FP32]):
        a = pl.make_tile(WIDE, addr=0x0)
        b = pl.make_tile(WIDE, addr=0x1000)
        r = pl.make_tile(pl.TileType([16, 1], pl.DT_FP32, VEC, layout=pl.DN), addr=0x2000)
        with pl.section_vector():
            pl.load(a, x, [0, 0])
            pl.load(b, x, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.store(y, b, [0, 0])                 # MTE3 reads b
            if synced:
                pl.system.sync_src(set_pipe=P.MTE3, wait_pipe=P.V, event_id=2)
                pl.system.sync_dst(set_pipe=P.MTE3, wait_pipe=P.V, event_id=2)
            if tmp_is_b:
                pl.sum(r, a, b, dim=0)             # V uses b as scratch
            else:
                pl.sum(r, a, a, dim=0)             # scratch = source, not b
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
            pl.store(s, r, [0, 0])
    x = np.linspace(-1, 1, 16 * 64, dtype=np.float32).reshape(16, 64)
    y = np.zeros_like(x)
    s = np.zeros((16, 1), np.float32)
    row_sum(x, y, s)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_allclose(s[:, 0], x.sum(1), rtol=1e-5, atol=1e-6)
    return row_sum


@pytest.mark.parametrize("tmp_is_b, synced, racy", [(True, False, True), (True, True, False),
                                                    (False, False, False)])
def test_a_reductions_tmp_is_written_by_the_op(tmp_is_b, synced, racy):
    races = _races(_reduce(tmp_is_b, synced))
    if racy:
        (race,) = races
        assert "read by pl.store on pipe MTE3" in race.message and "write by pl.sum on pipe V" in race.message
        assert "tile b" in race.message
    else:
        assert races == []


@pytest.mark.parametrize("synced", [False, True])
def test_a_view_and_its_parameter_are_one_memory(synced):
    @pl.jit(backend="sim", auto_mutex=False, sim_options={"strict": False})
    def through_view(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
        rows = pl.make_tensor(x, [16, 64], [64, 1])
        a = pl.make_tile(WIDE, addr=0x0)
        b = pl.make_tile(WIDE, addr=0x1000)
        with pl.section_vector():
            pl.load(a, y, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.store(x, a, [0, 0])            # MTE3 writes x
            if synced:
                pl.system.sync_src(set_pipe=P.MTE3, wait_pipe=P.MTE2, event_id=1)
                pl.system.sync_dst(set_pipe=P.MTE3, wait_pipe=P.MTE2, event_id=1)
            pl.load(b, rows, [0, 0])          # MTE2 reads x through the view
    x = np.zeros((16, 64), np.float32)
    y = np.ones((16, 64), np.float32)
    through_view(x, y)
    races = _races(through_view)
    assert np.all(x == 1)
    if synced:
        assert races == []
    else:
        (race,) = races
        assert "write by pl.store on pipe MTE3" in race.message and "read by pl.load on pipe MTE2" in race.message
