"""The kernel optimisation level (``$PYPTO_KERNEL_OPT``, backends/cpu/prebuilt.py ``kernel_opt``) changes
how fast a kernel compiles and runs, never its results: the value-affecting flags (no FMA contraction, no
fast-math, wrapping integers) are the same at every level.  The test suite relies on it: it compiles most
kernels at -O0, a few big-data tests at -O1, and keeps tests/cpu at the users' -O3 (docs/testing.md)."""
import numpy as np
import pytest

from kernels import load_kernels
from pypto_pro.backends.cpu import prebuilt
from pypto_pro.backends.cpu.toolchain import CompileError

# fp32 products and sums (an FMA would round once instead of twice), exp / sqrt / div (library and
# AVX2 paths), a row reduction and a row broadcast, over a 48 x 80 window: the fused 32-column loop, its 8-lane
# remainder and the per-op code all run.
KERNEL = """
@pl.jit(backend="{backend}")
def chain(x: pl.Tensor[[48, 80], pl.DT_{dt}], y: pl.Tensor[[48, 80], pl.DT_{dt}],
          out: pl.Tensor[[2, 48, 80], pl.DT_{dt}], sums: pl.Tensor[[48, 1], pl.DT_{dt}]):
    a = pl.make_tile(pl.TileType([48, 80], pl.DT_{dt}), addr=0x0)
    b = pl.make_tile(pl.TileType([48, 80], pl.DT_{dt}), addr=0x4000)
    c = pl.make_tile(pl.TileType([48, 80], pl.DT_{dt}), addr=0x8000)
    rs = pl.make_tile(pl.TileType([48, 1], pl.DT_{dt}, layout=pl.DN), addr=0xC000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.load(b, y, [0, 0])
        pl.mul(c, a, b)
        pl.add(c, c, a)
        pl.mul(c, c, 0.3)
        pl.exp(a, c)
        pl.abs(b, b)
        pl.sqrt(b, b)
        pl.div(b, a, b)
        pl.sub(c, b, c)
        pl.row_sum(rs, c)
        pl.expand_div(a, c, rs, dim=0)
        pl.store(out, a, [0, 0, 0])
        pl.store(out, b, [1, 0, 0])
        pl.store(sums, rs, [0, 0])
"""

DTYPES = {"FP32": (np.float32, np.uint32), "FP16": (np.float16, np.uint16)}
#: every level on fp32; fp16 at the two the test suite uses
LEVELS = {"FP32": ("-O0", "-O1", "-O2", "-O3"), "FP16": ("-O0", "-O1", "-O3")}


@pytest.mark.parametrize("value,opt", [("", "-O3"), ("1", "-O1"), ("-O2", "-O2"), ("0", "-O0"), ("s", "-Os")])
def test_the_level_comes_from_the_environment(monkeypatch, value, opt):
    monkeypatch.setenv(prebuilt.OPT_ENV, value)
    assert prebuilt.kernel_opt() == opt


def test_a_wrong_level_names_the_variable(monkeypatch):
    monkeypatch.setenv(prebuilt.OPT_ENV, "fast")
    with pytest.raises(CompileError, match="PYPTO_KERNEL_OPT='fast'.*-O3"):
        prebuilt.kernel_opt()


def _run(tmp_path, backend: str, dt: str, data):
    k = load_kernels(tmp_path, KERNEL.format(backend=backend, dt=dt)).chain
    npdt = DTYPES[dt][0]
    out, sums = np.zeros((2, 48, 80), npdt), np.zeros((48, 1), npdt)
    k(*(d.copy() for d in data), out, sums)
    return np.concatenate([out.ravel(), sums.ravel()])


@pytest.mark.parametrize("dt", sorted(DTYPES))
def test_every_level_gives_the_interpreter_bits(tmp_path, monkeypatch, dt):
    npdt, bits = DTYPES[dt]
    rng = np.random.default_rng(7)
    data = [(rng.standard_normal((48, 80)) * 2).astype(npdt) for _ in range(2)]
    data[0][0, :4] = [np.inf, -np.inf, -0.0, 0.0]
    ref = _run(tmp_path, "interp", dt, data)
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(tmp_path / "build"))
    for opt in LEVELS[dt]:
        monkeypatch.setenv(prebuilt.OPT_ENV, opt)
        got = _run(tmp_path, "cpu", dt, data)
        nan = np.isnan(ref.astype(np.float32))
        assert np.array_equal(nan, np.isnan(got.astype(np.float32))), opt
        assert np.array_equal(ref[~nan].view(bits), got[~nan].view(bits)), opt
    # one cache entry per level: the level is part of the key
    assert len(list((tmp_path / "build").glob("chain__*/*/kernel.cpp"))) == len(LEVELS[dt])
