"""Outlining long statement runs into separately compiled lambdas (backends/cpu/outline.py) only cuts
g++'s compile time: the kernel gives the interpreter's bits at any threshold, and a run is never cut
where the cut would change meaning (an escaping break/continue, a declaration later code may read)."""
import numpy as np
import pytest

from kernels import load_kernels
from pypto_pro.backends.cpu import outline

KERNEL = """
@pl.jit(backend="{backend}")
def steps(x: pl.Tensor[[64, 64], pl.DT_FP32], out: pl.Tensor[[64, 64], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x0)
    b = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x4000)
    with pl.section_vector():
        for i in pl.range(4):
            pl.load(a, x, [i * 16, 0])
            pl.mul(b, a, a)
            pl.add(b, b, 0.5)
            if i % 2 == 0:
                pl.sub(b, b, a)
            else:
                pl.exp(b, a)
                pl.mul(b, b, 0.25)
            pl.store(out, b, [i * 16, 0])
"""


def _run(tmp_path, backend, x):
    k = load_kernels(tmp_path, KERNEL.format(backend=backend)).steps
    out = np.zeros((64, 64), np.float32)
    k(x.copy(), out)
    return out


@pytest.mark.parametrize("limit", ["0", "1", "6"])
def test_outlined_kernels_give_the_interpreter_bits(tmp_path, monkeypatch, limit):
    x = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    ref = _run(tmp_path, "interp", x)
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    monkeypatch.setenv("PYPTO_CPU_OUTLINE_LINES", limit)
    got = _run(tmp_path, "cpu", x)
    assert np.array_equal(ref.view(np.uint32), got.view(np.uint32))
    source = "".join(p.read_text() for p in build.glob("steps__*/*/kernel.cpp"))
    assert ("__attribute__((noinline))" in source) == (limit != "0")


def test_the_threshold_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("PYPTO_CPU_OUTLINE_LINES", raising=False)
    assert outline.chunk_lines() == outline.CHUNK_LINES
    monkeypatch.setenv("PYPTO_CPU_OUTLINE_LINES", "0")
    assert outline.chunk_lines() == 0
    monkeypatch.setenv("PYPTO_CPU_OUTLINE_LINES", "many")
    with pytest.raises(ValueError, match="PYPTO_CPU_OUTLINE_LINES"):
        outline.chunk_lines()


@pytest.mark.parametrize("lines,ok", [
    (["C.site = 1;", "pto::add(C, T_<float>(C, 1), T_<float>(C, 0), 1.0);"], True),
    (["v_i = 3;", "if (v_i > 2) {", "  break;", "}"], False),  # would leave the lambda, not the loop
    (["if (v_i > 2) continue;"], False),
    (["{", "  const auto d_ = T_<float>(C, 8);", "}"], True),  # scoped: nothing later reads it
    (["const auto d_ = T_<float>(C, 8);"], False),  # later statements might
    (["pto::fz::each_row(C, [&](auto v_, int64_t r_) {", "  return v_;", "});"], True),  # the lambda's own
    (["pto::fz::each(w_.vr, w_.vc, false, ahead_, [=](auto lanes_, int64_t r_, int64_t c_) {", "  return v0;",
      "});"], True),  # a fused group's body, captured by value
])
def test_a_run_is_cut_only_where_the_meaning_stays(lines, ok):
    assert outline.can_outline(lines) is ok


def test_wrapping_keeps_the_lines_in_place():
    lines = ["a;", "b;", "c;"]
    outline.wrap(lines, 1, "  ")
    assert lines[0] == "a;" and lines[-1] == "  }();" and "noinline" in lines[1]
    assert [s.strip() for s in lines[2:-1]] == ["b;", "c;"]
