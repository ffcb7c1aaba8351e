"""The simulator as a profiler: per-core bottlenecks, advice only where it helps (with its evidence),
roofline numbers, trace slices and sync arrows, timelines of whole blocks."""
import json

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim.costs import PARAMS
from pypto_pro.backends.sim.timeline import cores_to_draw, omitted_text

MS, P = pl.MemorySpace, pl.PipeType
R, C = 16, 128
ROWS = pl.TileType([R, C], pl.DT_FP32, MS.Vec)


def _line(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


# ---------------------------------------------------------------------------------------------- kernels
@pl.jit(backend="sim")
def exp_rows(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    gin = pl.make_tile_group(type=ROWS, addrs=0x0, mutex_ids=[0, 1])
    gout = pl.make_tile_group(type=ROWS, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            src = gin.next()
            dst = gout.next()
            pl.load(src, x, [i * R, 0])
            pl.exp(dst, src)
            pl.store(y, dst, [i * R, 0])


@pl.jit(backend="sim")
def exp_rows_single(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    one_in = pl.make_tile_group(type=ROWS, addrs=0x0, mutex_ids=[0])
    one_out = pl.make_tile_group(type=ROWS, addrs=0x8000, mutex_ids=[1])
    with pl.section_vector():
        for i in pl.range(x.shape[0] // R):
            src = one_in.next()
            dst = one_out.next()
            pl.load(src, x, [i * R, 0])  # single-buffered load
            pl.exp(dst, src)  # single-buffered exp
            pl.store(y, dst, [i * R, 0])


@pl.jit(backend="sim")
def exp_rows_stuck(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    stuck_in = pl.make_tile_group(type=ROWS, addrs=0x0, mutex_ids=[0, 1])
    stuck_out = pl.make_tile_group(type=ROWS, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(x.shape[0] // R):
            src = stuck_in.current()
            dst = stuck_out.current()
            pl.load(src, x, [i * R, 0])  # never advanced
            pl.exp(dst, src)
            pl.store(y, dst, [i * R, 0])


def _exp(kernel, tiles, blocks):
    x = np.linspace(-2, 2, tiles * R * C, dtype=np.float32).reshape(tiles * R, C)
    y = np.zeros_like(x)
    kernel[blocks](x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    return kernel.last_report


def _mm_then_vector():
    """A cube core computes a product and hands each half to a vector core by an Acc -> Vec move; the
    vector cores do no loads at all."""
    def group(shape, dtype, space, addr, mid):
        return pl.make_tile_group(type=pl.TileType(shape, dtype, space), addrs=addr, mutex_ids=[mid]).current()

    @pl.jit(backend="sim")
    def mm_then_abs(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                    c: pl.Tensor[[64, 64], pl.DT_FP32]):
        a1 = group([64, 64], pl.DT_FP16, MS.Mat, 0x0, 0)
        b1 = group([64, 64], pl.DT_FP16, MS.Mat, 0x2000, 1)
        a0 = group([64, 64], pl.DT_FP16, MS.Left, 0x0, 2)
        b0 = group([64, 64], pl.DT_FP16, MS.Right, 0x0, 3)
        acc = group([64, 64], pl.DT_FP32, MS.Acc, 0x0, 4)
        half = pl.make_tile(pl.TileType([32, 64], pl.DT_FP32, MS.Vec), addr=0x0)
        res = group([32, 64], pl.DT_FP32, MS.Vec, 0x2000, 5)
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            pl.move(half, acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
            pl.system.set_cross_core(pipe=P.FIX, event_id=0)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=P.V, event_id=0)
            pl.abs(res, half)
            pl.store(c, res, [pl.get_subblock_idx() * 32, 0])
    return mm_then_abs


@pytest.fixture(scope="module")
def mix_report():
    k = _mm_then_vector()
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    k[1](a, b, c)
    np.testing.assert_allclose(c, np.abs(a.astype(np.float32) @ b.astype(np.float32)), rtol=1e-3, atol=1e-3)
    return k.last_report


# ---------------------------------------------------------------------------------------------- advice
def test_bottlenecks_are_per_core_and_never_compare_pipes_of_different_cores(mix_report):
    r = mix_report
    by_core = {p.label: p for p in r.profiles}
    assert by_core["block 0 AIC"].bound == "MTE2"
    for aiv in ("block 0 AIV0", "block 0 AIV1"):
        assert by_core[aiv].busy["MTE2"] == 0 and by_core[aiv].bound in ("MTE3", "V")
    # the AIVs wait for the cube, which no buffering on either side changes: no advice about depth or overlap
    assert not any("deepen" in t or "double-buffer" in t or "idle while" in t for t in r.suggestions())
    assert r.bound_pipe == "MTE2" and "bound by pipe MTE2 on block 0 AIC" in str(r)
    assert any("one tile per core" in n for n in r.notes())


def test_no_depth_or_block_dim_advice_with_one_tile_per_core():
    r = _exp(exp_rows, tiles=4, blocks=4)
    text = str(r)
    assert not any("deepen" in t or "block_dim" in t for t in r.suggestions()), text
    notes = r.notes()
    assert any("one tile per core: nothing to overlap" in n and "(+3 more cores alike)" in n for n in notes), text
    assert any("4 of 64 cores" in n and "no tiles to work on" in n for n in notes), text


def test_double_buffered_groups_advanced_every_iteration_get_no_depth_advice():
    r = _exp(exp_rows, tiles=16, blocks=1)
    assert not any("deepen" in t or "advance" in t for t in r.suggestions()), str(r)
    # with 16 tiles on one core, more blocks would help, and the advice says why
    assert any("a larger block_dim" in t and "up to 16 tiles" in t for t in r.suggestions())


def test_single_buffer_advice_names_group_lines_and_cycles():
    r = _exp(exp_rows_single, tiles=16, blocks=1)
    (tip,) = [t for t in r.suggestions() if "deepen" in t]
    load, exp = _line("# single-buffered load"), _line("# single-buffered exp")
    assert tip.startswith("block 0 AIV0: deepen tile group one_in")
    assert "from depth 1 to 2 and call next() once per iteration" in tip
    assert f"pl.load at test_profiler.py:{load} (MTE2)" in tip and f"pl.exp at test_profiler.py:{exp} (V)" in tip
    (adv,) = [a for a in r.advice() if "deepen" in a.text]
    assert adv.cycles > 0.1 * r.total_cycles and f"idles {adv.cycles} cycles" in tip
    # the advice is right: the double-buffered kernel is faster by about the cycles it names
    saved = r.total_cycles - _exp(exp_rows, tiles=16, blocks=1).total_cycles
    assert 0.5 * adv.cycles <= saved <= 2 * adv.cycles


def test_group_that_is_never_advanced_is_told_to_call_next():
    r = _exp(exp_rows_stuck, tiles=16, blocks=1)
    tips = [t for t in r.suggestions() if "stuck_in" in t]
    assert tips and "advance tile group stuck_in (depth 2" in tips[0] and "always writes slot stuck_in[1]" in tips[0]


# ---------------------------------------------------------------------------------------------- roofline
def test_roofline_per_core(mix_report):
    rows = {row["core"]: row for row in mix_report.roofline()}
    aic, aiv = rows["block 0 AIC"], rows["block 0 AIV0"]
    a5 = PARAMS["a5"]
    assert aic["bound"] == "MTE2" and aic["peak"] == a5.gm_read_bytes_per_cycle and aic["unit"] == "B/cycle"
    assert aic["moved"]["GM read"] == 2 * 64 * 64 * 2 and aic["moved"]["GM write"] == 0
    assert aiv["moved"]["GM write"] == 32 * 64 * 4 and aiv["moved"]["GM read"] == 0
    for row in rows.values():
        assert 0 < row["busy_fraction"] <= 1 and 0 <= row["peak_fraction"] <= 1
        assert row["peaks"]["V"] == a5.vec_bytes_per_cycle
    text = str(mix_report)
    assert "roofline per core" in text and "block 0 AIC: MTE2-bound, busy" in text
    assert "block 0 AIV0 (+1 alike)" in text and "GM read 16.0 KiB" in text


# ---------------------------------------------------------------------------------------------- trace
def test_trace_slices_carry_op_line_tile_bytes_pipe_and_sync_arrows(mix_report, tmp_path):
    path = tmp_path / "trace.json"
    mix_report.save_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all({"op", "pipe", "line", "cycles"} <= set(e["args"]) for e in slices)
    loads = [e for e in slices if e["name"] == "load"]
    assert all(e["args"]["bytes"] == 2 * 64 * 64 * 2 and any("a1" in t or "b1" in t for t in e["args"]["tiles"])
               for e in loads)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and starts.keys() == ends.keys()
    cross = [(starts[i], ends[i]) for i in starts if starts[i]["name"].startswith("cross-core event 0")]
    # the AIC's set reaches both AIVs: one arrow to each, from the cube core's process
    assert sorted(f["pid"] for _, f in cross) == [1, 2] and all(s["pid"] == 0 for s, _ in cross)
    assert any(s["name"].startswith("mutex") for s in starts.values())


def test_trace_has_flag_arrows_between_pipes():
    @pl.jit(backend="sim", auto_mutex=False)
    def flagged(x: pl.Tensor[[R, C], pl.DT_FP32], y: pl.Tensor[[R, C], pl.DT_FP32]):
        t = pl.make_tile(ROWS, addr=0x0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=1)
            pl.store(y, t, [0, 0])
    x = np.ones((R, C), np.float32)
    flagged(x, np.zeros_like(x))
    events = flagged.last_report.trace_events()
    (s,) = [e for e in events if e["ph"] == "s"]
    assert s["name"] == "flag MTE2->MTE3 event 1"


# ---------------------------------------------------------------------------------------------- timeline
def test_timeline_never_splits_a_block_and_names_what_it_leaves_out():
    blocks = [b for b in range(4) for _ in range(3)]  # mix kernel: AIC + 2 AIVs per block
    drawn, left = cores_to_draw(blocks, 8)
    assert drawn == list(range(6)) and left == [2, 3]
    assert cores_to_draw(blocks, 2) == ([0, 1, 2], [1, 2, 3])  # the first block whole, even past max_cores
    assert cores_to_draw(blocks, 12) == (list(range(12)), [])

    class Fake:
        labels = [f"c{i}" for i in range(12)]
    assert omitted_text(Fake, drawn, left) == ("left out: blocks 2-3 (6 of 12 cores); "
                                               "save_timeline(path, max_cores=12) draws every core")
    assert omitted_text(Fake, list(range(12)), []) is None


def test_save_timeline_draws_whole_blocks(mix_report, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "mix.png"
    drawn = mix_report.save_timeline(path, max_cores=2)
    assert drawn == ["block 0 AIC", "block 0 AIV0", "block 0 AIV1"]
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
