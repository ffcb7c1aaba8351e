"""The compiled fast path of the simulator (backends/sim/fast) gives what the interpreter engine gives.

Each kernel runs twice, with the fast path (the default) and with ``PYPTO_SIM_FAST=0``: the output values
are bit-identical, and so is the report: every instruction (op, pipe, line, sync meaning, cost, issue,
start, end, mutex ticket, the release it waited for, each access), the totals, the summary text and the
Chrome trace.  Kernels with a hazard, a bound error or a failing scalar op raise the very same error
(the fast path hands them to the engine).  Kernels outside what it covers run on the engine.
"""
import json

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import fast
from pypto_pro.backends.sim.fast.lazy import LazyStreams
from pypto_pro.backends.sim.simulate import with_auto_mutex
from pypto_pro.errors import KernelError

P = pl.PipeType
FP32, FP16 = pl.DT_FP32, pl.DT_FP16
R, C = 8, 64
TT = pl.TileType([R, C], FP32)
TH = pl.TileType([16, 128], FP16)


@pl.jit(backend="sim")
def grouped_add(x: pl.Tensor[[pl.DYNAMIC, C], FP32], y: pl.Tensor[[pl.DYNAMIC, C], FP32],
                z: pl.Tensor[[pl.DYNAMIC, C], FP32]):
    gx = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0, 1])
    gy = pl.make_tile_group(type=TT, addrs=0x1000, mutex_ids=[2, 3])
    go = pl.make_tile_group(type=TT, addrs=0x2000, mutex_ids=[4, 5])
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            tx = gx.next()
            ty = gy.next()
            to = go.next()
            pl.load(tx, x, [t * R, 0])
            pl.load(ty, y, [t * R, 0])
            pl.add(to, tx, ty)
            pl.maximum(to, to, ty)
            pl.store(z, to, [t * R, 0])


@pl.jit(backend="sim")
def silu_mul(g: pl.Tensor[[64, 256], FP16], u: pl.Tensor[[64, 256], FP16], out: pl.Tensor[[64, 256], FP16]):
    gg = pl.make_tile_group(type=TH, addrs=0x0, mutex_ids=[0, 1])
    gu = pl.make_tile_group(type=TH, addrs=0x2000, mutex_ids=[2, 3])
    go = pl.make_tile_group(type=TH, addrs=0x4000, mutex_ids=[4, 5])
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), 8, pl.get_block_num()):
            r = (t // 2) * 16
            c = (t % 2) * 128
            tg = gg.next()
            tu = gu.next()
            to = go.next()
            pl.load(tg, g, [r, c])
            pl.load(tu, u, [r, c])
            pl.neg(to, tg)
            pl.exp(to, to)
            pl.add(to, to, 1.0)
            pl.div(to, tg, to)
            pl.mul(to, to, tu)
            pl.store(out, to, [r, c])


@pl.jit(backend="sim")
def hand_synced(x: pl.Tensor[[pl.DYNAMIC, C], FP32], y: pl.Tensor[[pl.DYNAMIC, C], FP32]):
    t = pl.make_tile(TT, addr=0x0)
    o = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            ev = i % 2
            pl.load(t, x, [i * R, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=ev)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=ev)
            pl.exp(o, t)
            pl.sqrt(o, o)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.store(y, o, [i * R, 0])
            if i % 3 == 0:
                pl.system.bar_all()
            else:
                pl.system.sync_src(set_pipe=P.MTE3, wait_pipe=P.MTE2, event_id=1)
                pl.system.sync_dst(set_pipe=P.MTE3, wait_pipe=P.MTE2, event_id=1)


ROW = pl.TileType([1, 128], FP32)


@pl.jit(backend="sim")
def control_flow(x: pl.Tensor[[pl.DYNAMIC], FP32], y: pl.Tensor[[pl.DYNAMIC], FP32], n: pl.Scalar[pl.DT_INT32],
                 bias: pl.Scalar[pl.DT_FP32]):
    g = pl.make_tile_group(type=ROW, addrs=0x0, mutex_ids=[0, 1, 2])
    with pl.section_vector():
        i = pl.get_block_idx()
        while i < n:
            t = g.next()
            pl.load(t, x, [i * 128])
            if i % 2 == 0:
                pl.add(t, t, bias)
            else:
                pl.mul(t, t, 2.0)
                pl.relu(t, t)
            pl.store(y, t, [i * 128])
            if i > 40:
                break
            i = i + pl.get_block_num()


@pl.jit(backend="sim")
def racy(x: pl.Tensor[[pl.DYNAMIC, C], FP32], y: pl.Tensor[[pl.DYNAMIC, C], FP32]):
    t = pl.make_tile(TT, addr=0x0)
    o = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        for i in pl.range(x.shape[0] // R):
            pl.load(t, x, [i * R, 0])
            pl.exp(o, t)
            pl.store(y, o, [i * R, 0])


@pl.jit(backend="sim")
def uninit(x: pl.Tensor[[R, C], FP32], y: pl.Tensor[[R, C], FP32]):
    t = pl.make_tile(TT, addr=0x0)
    o = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        pl.exp(o, t)
        pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.store(y, o, [0, 0])


@pl.jit(backend="sim")
def out_of_bounds(x: pl.Tensor[[pl.DYNAMIC, C], FP32], y: pl.Tensor[[pl.DYNAMIC, C], FP32]):
    t = pl.make_tile(TT, addr=0x0)
    with pl.section_vector():
        pl.load(t, x, [x.shape[0] - 4, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.store(y, t, [0, 0])


@pl.jit(backend="sim")
def hangs(x: pl.Tensor[[R, C], FP32], y: pl.Tensor[[R, C], FP32]):
    t = pl.make_tile(TT, addr=0x0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=3)
        pl.store(y, t, [0, 0])


def _covered(kernel) -> bool:
    """Whether the fast path covers the kernel (it then found the hazard itself and handed it over)."""
    variant = next(iter(kernel._variants.values()))
    prepared = fast._prepared.get(with_auto_mutex(variant))
    return prepared is not None and prepared.reason is None


def _both(kernel, blocks, make_args, monkeypatch):
    """(report, outputs) with the fast path and with the engine."""
    results = []
    for fast in ("1", "0"):
        monkeypatch.setenv("PYPTO_SIM_FAST", fast)
        args = make_args()
        kernel[blocks](*args)
        results.append((kernel.last_report, args))
    monkeypatch.delenv("PYPTO_SIM_FAST")
    return results


def _instr(ins):
    """The fields of an instruction (GM regions without the data pointer: each run has its own arrays)."""
    accs = [(a.region[:1] + a.region[2:] if a.gm else a.region, a.lo, a.hi, a.write, a.atomic, a.what, a.nbytes, a.rows, a.cols, a.space, a.dtype, a.gm, a.runs)
            for a in ins.accesses]
    after = None if ins.after is None else (ins.after.core, ins.after.seq)
    return (ins.core, ins.seq, ins.op, ins.pipe, ins.loc, ins.sync, ins.cost, ins.issue, ins.start, ins.end,
            ins.ticket, after, accs)


def _same_reports(fast, slow, tmp_path):
    assert isinstance(fast._streams, LazyStreams), "the fast path did not run"
    assert not isinstance(slow._streams, LazyStreams)
    assert fast.total_cycles == slow.total_cycles
    assert fast.per_core == slow.per_core and fast.pipe_busy == slow.pipe_busy
    assert fast.hazards == slow.hazards == []
    assert [_instr(i) for i in fast.instructions] == [_instr(i) for i in slow.instructions]
    assert str(fast) == str(slow)
    fast.save_trace(tmp_path / "fast.json")
    slow.save_trace(tmp_path / "slow.json")
    assert json.loads((tmp_path / "fast.json").read_text()) == json.loads((tmp_path / "slow.json").read_text())


def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    return lambda: (rng.standard_normal((n, C)).astype(np.float32), rng.standard_normal((n, C)).astype(np.float32),
                    np.zeros((n, C), np.float32))


@pytest.mark.parametrize("blocks", [1, 4, 70])
def test_grouped_add_same_report_and_values(blocks, monkeypatch, tmp_path):
    """Tile groups under auto_mutex, DYNAMIC rows, and (70 blocks on a5) a second wave of blocks."""
    data = _rows(8 * 80)()
    (fast, fargs), (slow, sargs) = _both(grouped_add, blocks, lambda: tuple(a.copy() for a in data), monkeypatch)
    np.testing.assert_array_equal(fargs[2], sargs[2])
    np.testing.assert_array_equal(fargs[2], np.maximum(data[0] + data[1], data[1]))
    _same_reports(fast, slow, tmp_path)


def test_fp16_silu_same_report_and_bits(monkeypatch, tmp_path):
    rng = np.random.default_rng(1)
    g = rng.standard_normal((64, 256)).astype(np.float16)
    u = rng.standard_normal((64, 256)).astype(np.float16)
    (fast, fargs), (slow, sargs) = _both(silu_mul, 3, lambda: (g.copy(), u.copy(), np.zeros_like(g)), monkeypatch)
    assert fargs[2].tobytes() == sargs[2].tobytes()
    _same_reports(fast, slow, tmp_path)


def test_flags_bar_all_and_runtime_event_ids(monkeypatch, tmp_path):
    data = _rows(8 * 12, seed=2)()
    (fast, fargs), (slow, sargs) = _both(hand_synced, 2, lambda: (np.abs(data[0]), np.zeros_like(data[0])),
                                         monkeypatch)
    np.testing.assert_array_equal(fargs[1], sargs[1])
    _same_reports(fast, slow, tmp_path)


def test_while_if_break_scalars_and_1d_tensors(monkeypatch, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(128 * 50).astype(np.float32)
    (fast, fargs), (slow, sargs) = _both(control_flow, 3, lambda: (x.copy(), np.zeros_like(x), 47, 0.25),
                                         monkeypatch)
    np.testing.assert_array_equal(fargs[1], sargs[1])
    _same_reports(fast, slow, tmp_path)


@pytest.mark.parametrize("kernel, rows", [(racy, 16), (uninit, R), (out_of_bounds, 16), (hangs, R)])
def test_hazards_raise_the_engine_error(kernel, rows, monkeypatch):
    """A race, an uninitialised read, a window past the tensor, a hang: the same error either way."""
    messages = []
    for fast in ("1", "0"):
        monkeypatch.setenv("PYPTO_SIM_FAST", fast)
        x = np.ones((rows, C), np.float32)
        with pytest.raises(KernelError) as err:
            kernel[1](x, np.zeros_like(x))
        messages.append((type(err.value), str(err.value)))
    assert messages[0] == messages[1]
    assert _covered(kernel), "the fast path did not look at the kernel"


def test_non_strict_lists_the_same_hazards(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_STRICT", "0")
    found = []
    for fast in ("1", "0"):
        monkeypatch.setenv("PYPTO_SIM_FAST", fast)
        x = np.ones((16, C), np.float32)
        racy[1](x, np.zeros_like(x))
        found.append([h.message for h in racy.last_report.hazards])
    assert found[0] == found[1] and len(found[0]) == 3


def test_uncovered_kernels_run_on_the_engine(monkeypatch):
    """An op the fast path does not model (getval): the engine runs the launch, as before."""
    @pl.jit(backend="sim")
    def with_getval(x: pl.Tensor[[R, C], FP32], y: pl.Tensor[[R, C], FP32]):
        t = pl.make_tile(TT, addr=0x0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.system.bar_all()
            v = pl.getval(t, [0, 1])
            pl.system.bar_all()
            pl.add(t, t, v)
            pl.system.bar_all()
            pl.store(y, t, [0, 0])

    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    y = np.zeros_like(x)
    with_getval[1](x, y)
    np.testing.assert_array_equal(y, x + 1)
    assert not isinstance(with_getval.last_report._streams, LazyStreams)


def test_aliased_arguments_run_on_the_engine():
    """Two arguments sharing memory are compared as bytes of one memory: the engine's model."""
    buf = np.ones((16, C), np.float32)
    grouped_add[1](buf[:8], buf[:8], np.zeros((8, C), np.float32))
    assert not isinstance(grouped_add.last_report._streams, LazyStreams)
