"""The simulator's report: cycles, pipe use, overlap of double buffering, waves, trace and picture."""
import json

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import KernelRaceError

TT = pl.TileType([16, 64], pl.DT_FP32)
PIPES = {"MTE2", "MTE1", "M", "V", "MTE3", "FIX", "S", "COMM"}  # COMM: pypto.distributed


def _stream(depth, **jit_kw):
    ids = list(range(depth))
    out_ids = [i + 8 for i in ids]

    @pl.jit(backend="sim", **jit_kw)
    def stream_add(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
        gx = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=ids)
        go = pl.make_tile_group(type=TT, addrs=0x8000, mutex_ids=out_ids)
        tiles = x.shape[0] // 16
        with pl.section_vector():
            for t in pl.range(pl.get_block_idx(), tiles, pl.get_block_num()):
                tx = gx.next()
                to = go.next()
                pl.load(tx, x, [t * 16, 0])
                pl.exp(to, tx)
                pl.store(y, to, [t * 16, 0])
    return stream_add


def _run(kernel, rows=256, blocks=1):
    x = np.linspace(-1, 1, rows * 64, dtype=np.float32).reshape(rows, 64)
    y = np.zeros_like(x)
    kernel[blocks](x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    return kernel.last_report


def test_report_fields():
    r = _run(_stream(2))
    assert isinstance(r.total_cycles, int) and r.total_cycles > 0
    assert set(r.pipe_busy) == PIPES and r.pipe_busy["MTE2"] > 0 and r.pipe_busy["V"] > 0
    assert r.pipe_busy["M"] == 0
    assert len(r.per_core) == 1 and r.per_core[0]["busy"]["MTE3"] == r.pipe_busy["MTE3"]
    assert r.hazards == []
    text = str(r)
    assert "bound by pipe MTE2" in text and "utilisation" in text and "hazards: none" in text


def test_double_buffering_overlaps_transfers_and_compute():
    single, double = _run(_stream(1)), _run(_stream(2))
    assert double.total_cycles < single.total_cycles
    assert double.overlap("MTE2", "V") > 10 * single.overlap("MTE2", "V")
    assert double.overlap("MTE2", "MTE3") > 0
    assert any("deepen tile group gx" in t and "from depth 1 to 2" in t for t in single.suggestions())
    assert not any("deepen" in t for t in double.suggestions())


def test_more_blocks_finish_sooner_and_waves_beyond_the_core_count():
    k = _stream(2, arch="a2")
    one = _run(k, rows=48 * 16 * 2, blocks=1).total_cycles
    full = _run(k, rows=48 * 16 * 2, blocks=48).total_cycles
    waves = _run(k, rows=48 * 16 * 2, blocks=96).total_cycles
    assert full < one / 8
    # a vector-only block is one AIV core (48 on a2): 96 blocks of one tile each run in two waves, slower than
    # 48 blocks of two pipelined tiles
    assert waves > full


def test_save_trace_is_chrome_trace_json(tmp_path):
    r = _run(_stream(2), rows=64)
    path = tmp_path / "trace.json"
    r.save_trace(path)
    data = json.loads(path.read_text())
    xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert {e["name"] for e in xs} >= {"load", "exp", "store", "mutex_lock"}
    assert all(e["dur"] >= 0 and "line" in e["args"] for e in xs)
    threads = {(e["pid"], e["args"]["name"]) for e in data["traceEvents"] if e.get("name") == "thread_name"}
    assert (0, "MTE2") in threads and (0, "V") in threads
    loads = [e for e in xs if e["name"] == "load"]
    assert all(e["args"]["source"].startswith("pl.load(tx, x") for e in loads)


def test_save_timeline_png(tmp_path):
    pytest.importorskip("matplotlib")
    r = _run(_stream(2), rows=64)
    path = tmp_path / "timeline.png"
    r.save_timeline(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _racy(**jit_kw):
    @pl.jit(backend="sim", **jit_kw)
    def racy(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
        t = pl.make_tile(TT, addr=0x0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.store(y, t, [0, 0])
    return racy


def test_non_strict_collects_hazards_and_still_computes():
    k = _racy(sim_options={"strict": False})
    x = np.ones((16, 64), np.float32)
    y = np.zeros_like(x)
    k(x, y)
    np.testing.assert_array_equal(y, x)
    (h,) = k.last_report.hazards
    assert h.kind == "race" and [loc.lineno for loc in h.locs] == sorted(loc.lineno for loc in h.locs)
    assert "hazards: 1" in str(k.last_report)


def test_strictness_from_the_environment(monkeypatch):
    x = np.ones((16, 64), np.float32)
    monkeypatch.setenv("PYPTO_SIM_STRICT", "0")
    k = _racy()
    k(x, x.copy())
    assert len(k.last_report.hazards) == 1
    monkeypatch.setenv("PYPTO_SIM_STRICT", "1")
    with pytest.raises(KernelRaceError):
        k(x, x.copy())


def test_unknown_sim_option_is_rejected():
    with pytest.raises(TypeError, match="unknown sim_options"):
        _racy(sim_options={"strcit": False})(np.ones((16, 64), np.float32), np.ones((16, 64), np.float32))
