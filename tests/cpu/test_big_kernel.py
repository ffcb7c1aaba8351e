"""The big-kernel code shape (backends/cpu/bigkernel.py) only cuts g++'s compile time: each distinct
fused loop becomes one function that every group with that loop calls, and the glue around the tile ops
is compiled at -Og.  A kernel forced into that shape (a threshold of 1 line) gives the interpreter's
bits: fp32 and fp16 groups, scalar operands, a row reduction, groups with and without fused loads,
repeated groups sharing one loop, and a fallback the runtime guard takes (a view's partial window)."""
import numpy as np
import pytest

from kernels import load_kernels
from pypto_pro.backends.cpu import bigkernel

KERNEL = """
@pl.jit(backend="{backend}")
def blocks(x: pl.Tensor[[64, 64], pl.DT_FP32], h: pl.Tensor[[64, 64], pl.DT_FP16],
           out: pl.Tensor[[64, 64], pl.DT_FP32], hout: pl.Tensor[[64, 64], pl.DT_FP16],
           rows: pl.Tensor[[64, 1], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x0)
    b = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x4000)
    c = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32, valid_shape=[-1, -1]), addr=0x8000)
    r = pl.make_tile(pl.TileType([16, 1], pl.DT_FP32, layout=pl.DN), addr=0xC000)
    ha = pl.make_tile(pl.TileType([16, 64], pl.DT_FP16), addr=0xD000)
    hb = pl.make_tile(pl.TileType([16, 64], pl.DT_FP16), addr=0xF000)
    with pl.section_vector():
        for i in pl.range(4):
{groups}
"""

GROUP = """            pl.load(a, x, [i * 16, 0])
            pl.mul(b, a, {s})
            pl.add(b, b, a)
            pl.exp(b, b)
            pl.store(out, b, [i * 16, 0])
            pl.load(ha, h, [i * 16, 0])
            pl.mul(hb, ha, ha)
            pl.sub(hb, hb, 0.5)
            pl.store(hout, hb, [i * 16, 0])
            pl.load(a, out, [i * 16, 0])
            pl.row_sum(r, a)
            pl.store(rows, r, [i * 16, 0])
            pl.set_validshape(c, [16, {w}])
            pl.load(c, x, [i * 16, 0])
            pl.add(c, c, b)
            pl.store(out, c, [i * 16, 0])
"""


def _source(repeats: int) -> str:
    return KERNEL.format(backend="{backend}", groups="".join(
        GROUP.format(s=0.25 + k, w=64 - 3 * k) for k in range(repeats)))


def _run(tmp_path, backend, src):
    k = load_kernels(tmp_path, src.format(backend=backend)).blocks
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((64, 64)) * 0.5).astype(np.float32)
    h = rng.standard_normal((64, 64)).astype(np.float16)
    outs = [np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float16), np.zeros((64, 1), np.float32)]
    k(x, h, *outs)
    return outs


@pytest.mark.parametrize("limit", ["0", "1"])
def test_big_kernels_give_the_interpreter_bits(tmp_path, monkeypatch, limit):
    src = _source(3)
    ref = _run(tmp_path, "interp", src)
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    monkeypatch.setenv("PYPTO_CPU_BIG_KERNEL_LINES", limit)
    got = _run(tmp_path, "cpu", src)
    for want, have in zip(ref, got):
        assert np.array_equal(want.view(np.uint8), have.view(np.uint8))
    source = "".join(p.read_text() for p in build.glob("blocks__*/*/kernel.cpp"))
    defined = source.count("static __attribute__((noinline)) void fused_loop_")
    calls = source.count("// the fused loop, defined above core_main")
    if limit == "0":
        assert defined == calls == 0 and "optimize(" not in source
    else:  # 3 x 4 groups, 4 distinct loops (the scalar and the window differ, not the loop)
        assert calls == 12 and defined == 4
        assert 'static __attribute__((optimize("Og"))) void core_main' in source
        assert "fused_loop_0(w_, " in source


def test_the_threshold_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("PYPTO_CPU_BIG_KERNEL_LINES", raising=False)
    assert bigkernel.big_lines() == bigkernel.BIG_LINES
    assert not bigkernel.is_big(["x;"] * (bigkernel.BIG_LINES - 1))
    assert bigkernel.is_big(["x;"] * bigkernel.BIG_LINES)
    monkeypatch.setenv("PYPTO_CPU_BIG_KERNEL_LINES", "0")
    assert not bigkernel.is_big(["x;"] * 100000)
    monkeypatch.setenv("PYPTO_CPU_BIG_KERNEL_LINES", "big")
    with pytest.raises(ValueError, match="PYPTO_CPU_BIG_KERNEL_LINES"):
        bigkernel.big_lines()


def _group(loop_line: str):
    return ["    {  // fused element-wise group (line 3): 2 ops in one pass: mul add",
            "      pto::fz::Window w_;",
            "      pto::fz::Run<float> m0_;  // the GM windows of fused loads and stores",
            "      if (ok_ && w_.fits(16, 64)) {",
            "        const float k0_ = pto::scal<float>(2.0);",
            "        float* const p1_ = C.ptr<float>(kTiles[3]);  // t3",
            "        pto::fz::each(w_.vr, w_.vc, false, [&](auto lanes_, int64_t r_, int64_t c_) {",
            "          using V = decltype(lanes_);",
            f"          {loop_line}",
            "        });",
            "      }",
            "    }"]


def test_a_loop_binds_its_group_names_as_the_lambda_did():
    body = _group("fz::store_gm(m0_, m0_.p + c_, fz::mul(fz::load<V>(p1_ + c_), fz::splat<V>(k0_)));")
    defs, out = bigkernel.share_loops(body + body)
    assert ("static __attribute__((noinline)) void fused_loop_0(pto::fz::Window& w_, "
            "pto::fz::Run<float>& m0_, float* const p1_, const float k0_) {") in defs
    assert sum("fused_loop_0(w_, m0_, p1_, k0_);" in line for line in out) == 2
    assert not any("fz::each" in line for line in out) and sum("fz::each" in line for line in defs) == 1


def test_a_loop_that_reads_a_name_its_group_does_not_declare_stays_in_place():
    body = _group("fz::store_gm(m0_, m0_.p + c_, fz::load<V>(q9_ + c_));")
    defs, out = bigkernel.share_loops(body)
    assert defs == [] and out == body
