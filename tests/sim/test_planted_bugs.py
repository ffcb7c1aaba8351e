"""Planted bugs: each kernel hides one hazard the simulator must report with the lines involved;
the fixed twin of each racy kernel must run clean (no false positives)."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import (KernelDeadlockError, KernelMemoryError, KernelRaceError, KernelRuntimeError,
                              KernelUninitError)

P = pl.PipeType
VEC = pl.TileType([16, 64], pl.DT_FP32)


def _sync(set_pipe, wait_pipe, event=0):
    pl.system.sync_src(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)
    pl.system.sync_dst(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)


def _data(rows=16):
    rng = np.random.default_rng(0)
    return rng.standard_normal((rows, 64), dtype=np.float32), np.zeros((rows, 64), np.float32)


def _lines(err):
    return [int(part.split(":")[0]) for part in str(err).split(".py:")[1:]]


# ------------------------------------------------------------------ missing MTE2 -> V
@pl.jit(backend="sim")
def no_mte2_v(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0x0)
    o = pl.make_tile(VEC, addr=0x1000)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.add(o, t, t)
        _sync(P.V, P.MTE3)
        pl.store(y, o, [0, 0])


@pl.jit(backend="sim")
def with_mte2_v(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0x0)
    o = pl.make_tile(VEC, addr=0x1000)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        _sync(P.MTE2, P.V)
        pl.add(o, t, t)
        _sync(P.V, P.MTE3)
        pl.store(y, o, [0, 0])


def test_missing_mte2_to_v_is_a_race_naming_both_lines():
    x, y = _data()
    with pytest.raises(KernelRaceError) as e:
        no_mte2_v(x, y)
    text = str(e.value)
    assert "pl.load on pipe MTE2" in text and "pl.add on pipe V" in text
    assert "set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V" in text
    assert "pl.load(t, x, [0, 0])" in text and "pl.add(o, t, t)" in text
    assert "bytes [0, 4096)" in text


def test_fixed_mte2_to_v_runs_clean():
    x, y = _data()
    with_mte2_v(x, y)
    np.testing.assert_array_equal(y, x + x)
    assert with_mte2_v.last_report.hazards == []


# ------------------------------------------------------------------ missing V -> MTE3
@pl.jit(backend="sim")
def no_v_mte3(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0x0)
    o = pl.make_tile(VEC, addr=0x1000)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        _sync(P.MTE2, P.V)
        pl.add(o, t, t)
        pl.store(y, o, [0, 0])


def test_missing_v_to_mte3_is_a_race():
    x, y = _data()
    with pytest.raises(KernelRaceError) as e:
        no_v_mte3(x, y)
    text = str(e.value)
    assert "write by pl.add on pipe V" in text and "read by pl.store on pipe MTE3" in text
    assert "tile o" in text


# ------------------------------------------------------------------ write-after-read on a reused tile
def _reuse_body(x, y, fixed: bool):
    t = pl.make_tile(VEC, addr=0x0)
    o = pl.make_tile(VEC, addr=0x1000)
    with pl.section_vector():
        for i in pl.range(4):
            pl.load(t, x, [i * 16, 0])
            _sync(P.MTE2, P.V)
            pl.add(o, t, t)
            if pl.constexpr(fixed):
                pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE2, event_id=1)
            _sync(P.V, P.MTE3)
            pl.store(y, o, [i * 16, 0])
            _sync(P.MTE3, P.V, 2)
            if pl.constexpr(fixed):
                pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE2, event_id=1)


@pl.jit(backend="sim")
def reuse_racy(x: pl.Tensor[[64, 64], pl.DT_FP32], y: pl.Tensor[[64, 64], pl.DT_FP32]):
    _reuse_body(x, y, False)


@pl.jit(backend="sim")
def reuse_fixed(x: pl.Tensor[[64, 64], pl.DT_FP32], y: pl.Tensor[[64, 64], pl.DT_FP32]):
    _reuse_body(x, y, True)


def test_write_after_read_on_reused_tile():
    x, y = _data(64)
    with pytest.raises(KernelRaceError) as e:
        reuse_racy(x, y)
    text = str(e.value)
    assert "read by pl.add on pipe V" in text and "write by pl.load on pipe MTE2" in text
    assert "set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE2" in text


def test_reused_tile_with_v_to_mte2_runs_clean():
    x, y = _data(64)
    reuse_fixed(x, y)
    np.testing.assert_array_equal(y, x + x)
    assert reuse_fixed.last_report.hazards == []


# ------------------------------------------------------------------ lonely wait / unreleased lock
@pl.jit(backend="sim")
def lonely_wait(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0x0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=3)
        pl.store(y, t, [0, 0])


def test_lonely_wait_is_a_deadlock_naming_pipe_and_line():
    x, y = _data()
    with pytest.raises(KernelDeadlockError) as e:
        lonely_wait(x, y)
    text = str(e.value)
    assert "pipe MTE3" in text and "sync_dst" in text and "event_id=3" in text
    assert "pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=3)" in text


@pl.jit(backend="sim")
def lock_kept(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0x0)
    with pl.section_vector():
        pl.system.mutex_lock(pipe=P.MTE2, mutex_id=5)
        pl.load(t, x, [0, 0])
        _sync(P.MTE2, P.MTE3)
        pl.store(y, t, [0, 0])


def test_lock_never_released_is_a_deadlock():
    x, y = _data()
    with pytest.raises(KernelDeadlockError, match="mutex 5 .* never released"):
        lock_kept(x, y)


# ------------------------------------------------------------------ cube/vector GM race
M, K, N = 32, 32, 32


def _cv_body(a, b, work, out, fixed: bool):
    a_l1 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, pl.MemorySpace.Mat), addr=0x0)
    b_l1 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, pl.MemorySpace.Mat), addr=0x4000)
    a_l0 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, pl.MemorySpace.Left), addr=0x0)
    b_l0 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, pl.MemorySpace.Right), addr=0x0)
    acc = pl.make_tile(pl.TileType([M, N], pl.DT_FP32, pl.MemorySpace.Acc), addr=0x0)
    with pl.section_cube():
        pl.load(a_l1, a, [0, 0])
        pl.load(b_l1, b, [0, 0])
        _sync(P.MTE2, P.MTE1)
        pl.move(a_l0, a_l1)
        pl.move(b_l0, b_l1)
        _sync(P.MTE1, P.M)
        pl.matmul(acc, a_l0, b_l0)
        _sync(P.M, P.FIX)
        pl.store(work, acc, [0, 0])
        if pl.constexpr(fixed):
            pl.system.set_cross_core(pipe=P.FIX, event_id=0)
    s = pl.make_tile(pl.TileType([M // 2, N], pl.DT_FP32), addr=0x0)
    with pl.section_vector():
        r0 = pl.get_subblock_idx() * (M // 2)
        if pl.constexpr(fixed):
            pl.system.wait_cross_core(pipe=P.MTE2, event_id=0)
        pl.load(s, work, [r0, 0])
        _sync(P.MTE2, P.MTE3)
        pl.store(out, s, [r0, 0])


@pl.jit(backend="sim")
def cv_racy(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
            work: pl.Tensor[[M, N], pl.DT_FP32], out: pl.Tensor[[M, N], pl.DT_FP32]):
    _cv_body(a, b, work, out, False)


@pl.jit(backend="sim")
def cv_fixed(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
             work: pl.Tensor[[M, N], pl.DT_FP32], out: pl.Tensor[[M, N], pl.DT_FP32]):
    _cv_body(a, b, work, out, True)


def _cv_data():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    return a, b, np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)


def test_cube_vector_gm_race_without_cross_core_event():
    with pytest.raises(KernelRaceError) as e:
        cv_racy(*_cv_data())
    text = str(e.value)
    assert "tensor 'work'" in text and "pipe FIX of block 0 AIC" in text and "pipe MTE2 of block 0 AIV" in text
    assert "set_cross_core" in text


def test_cube_vector_with_cross_core_event_runs_clean():
    a, b, work, out = _cv_data()
    cv_fixed(a, b, work, out)
    np.testing.assert_allclose(out, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)
    assert cv_fixed.last_report.hazards == []


@pl.jit(backend="sim")
def cross_wait_unmatched(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    m = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Mat), addr=0x0)
    with pl.section_cube():
        pl.load(m, x, [0, 0])
    t = pl.make_tile(VEC, addr=0x0)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=P.MTE2, event_id=4)
        pl.load(t, x, [0, 0])


def test_cross_core_wait_without_set_is_a_deadlock():
    x, y = _data()
    with pytest.raises(KernelDeadlockError, match="wait_cross_core") as info:
        cross_wait_unmatched(x, y)
    # every blocked core's wait is placed at file:line with its source (docs/contract.md "Errors")
    assert "test_planted_bugs.py:" in str(info.value)
    assert "pl.system.wait_cross_core(pipe=P.MTE2, event_id=4)" in str(info.value)
    assert info.value.loc is not None and info.value.loc.source_line.strip().startswith("pl.system.wait_cross_core")


# ------------------------------------------------------------------ uninitialised read: the seed's Add
@pl.jit(backend="sim")
def seed_add(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
             out: pl.Tensor[[64, 64], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tb = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[1])
    to = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        pl.load(to.current(), a, [0, 0])
        pl.load(tb.current(), b, [0, 0])
        pl.add(to.current(), ta.current(), tb.current())
        pl.store(out, to.current(), [0, 0])


def test_seed_add_reads_an_unwritten_tile():
    a = np.ones((64, 64), np.float16)
    with pytest.raises(KernelUninitError) as e:
        seed_add(a, a, np.zeros_like(a))
    text = str(e.value)
    assert "pl.add" in text and "never written" in text
    assert "pl.add(to.current(), ta.current(), tb.current())" in text


# ------------------------------------------------------------------ capacity, alignment, bounds
def test_over_capacity_tile_is_rejected():
    @pl.jit(backend="sim")
    def too_big(x: pl.Tensor[[16, 64], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType([256, 256], pl.DT_FP32), addr=0x0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])

    with pytest.raises(KernelMemoryError):
        too_big(np.zeros((16, 64), np.float32))


def test_misaligned_tile_is_rejected():
    @pl.jit(backend="sim")
    def misaligned(x: pl.Tensor[[16, 64], pl.DT_FP32]):
        t = pl.make_tile(VEC, addr=0x10)
        with pl.section_vector():
            pl.load(t, x, [0, 0])

    with pytest.raises(KernelMemoryError):
        misaligned(np.zeros((16, 64), np.float32))


def test_out_of_bounds_load_is_rejected():
    @pl.jit(backend="sim")
    def oob(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
        t = pl.make_tile(VEC, addr=0x0)
        with pl.section_vector():
            pl.load(t, x, [8, 0])

    with pytest.raises(KernelRuntimeError, match="exceeds tensor 'x'"):
        oob(np.zeros((16, 64), np.float32))


# ------------------------------------------------------------------ GM write-write between cores
@pl.jit(backend="sim")
def flag_write(out: pl.Tensor[[1], pl.DT_INT32], same: int):
    with pl.section_vector():
        pl.setval(out, 0, 1 if same else pl.get_block_idx())


def test_cores_writing_different_values_to_one_gm_element_race():
    out = np.zeros(1, np.int32)
    flag_write[2](out, 1)  # every core stores the same value: benign
    assert flag_write.last_report.hazards == []
    with pytest.raises(KernelRaceError, match="block 0 AIV0.*\n.*\n.*\n.*block 1 AIV0"):
        flag_write[2](out, 0)


# ------------------------------------------------------------------ Acc phase flags (matmul -> fixpipe)
def _phase_body(a, c, store_phase, first=pl.AccPhase.Partial):
    a_l1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Mat), addr=0x0)
    a_l0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Left), addr=0x0)
    b_l0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Right), addr=0x0)
    acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Acc), addr=0x0)
    with pl.section_cube():
        pl.load(a_l1, a, [0, 0])
        _sync(P.MTE2, P.MTE1)
        pl.move(a_l0, a_l1)
        pl.move(b_l0, a_l1)
        _sync(P.MTE1, P.M)
        pl.matmul(acc, a_l0, b_l0, phase=first)
        pl.matmul_acc(acc, acc, a_l0, b_l0, phase=pl.AccPhase.Final)
        pl.store(c, acc, [0, 0], phase=store_phase)


@pl.jit(backend="sim")
def phased(a: pl.Tensor[[32, 32], pl.DT_FP16], c: pl.Tensor[[32, 32], pl.DT_FP32]):
    _phase_body(a, c, pl.STPhase.Final)


@pl.jit(backend="sim")
def half_phased(a: pl.Tensor[[32, 32], pl.DT_FP16], c: pl.Tensor[[32, 32], pl.DT_FP32]):
    _phase_body(a, c, None)


@pl.jit(backend="sim")
def early_final(a: pl.Tensor[[32, 32], pl.DT_FP16], c: pl.Tensor[[32, 32], pl.DT_FP32]):
    _phase_body(a, c, pl.STPhase.Final, first=pl.AccPhase.Final)  # misuse: Final before the last write


def test_final_phase_before_the_last_matmul_releases_the_store_too_early():
    """The first Final hands the Acc tile to the fixpipe, which stores it before matmul_acc (earlier in the
    program) adds to it: the syncs order the two against program order, which the simulator reports."""
    a, c = np.ones((32, 32), np.float16), np.zeros((32, 32), np.float32)
    with pytest.raises(KernelRaceError, match=r"opposite of program order(.|\n)*write by pl.matmul_acc on pipe M"
                                              r"(.|\n)*read by pl.store on pipe FIX(.|\n)*phase=Final matmul"):
        early_final(a, c)


def test_phased_matmul_and_store_cost_what_unphased_ones_cost():
    """phase= adds a flag handshake; the data still moves at the op's cost (docs/simulator.md)."""
    a, c = np.ones((32, 32), np.float16), np.zeros((32, 32), np.float32)
    phased(a, c)
    costs = {ins.op: ins.end - ins.start for ins in phased.last_report.instructions}
    assert costs["matmul"] == costs["matmul_acc"] > 1
    assert costs["store"] > 32  # 4 KB through the fixpipe plus its latency


def test_acc_phase_flags_order_matmul_and_store():
    a = (np.arange(32 * 32) % 7).astype(np.float16).reshape(32, 32)
    c = np.zeros((32, 32), np.float32)
    phased(a, c)
    np.testing.assert_array_equal(c, 2 * (a.astype(np.float32) @ a.astype(np.float32)))
    assert phased.last_report.hazards == []
    with pytest.raises(KernelRaceError, match="pl.matmul_acc on pipe M(.|\n)*pl.store on pipe FIX"):
        half_phased(a, c)
