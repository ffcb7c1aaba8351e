"""The ops library (backends/cpu/prebuilt.py, runtime/pto_ops.cpp, include/pto/prebuilt_ops.h): where it is in
the per-user cache, kernels call its per-op functions (element-wise binary ops, loads, stores) instead of
compiling them, with the same results as kernels that compile them and as the interpreter."""
import numpy as np
import pytest

from pypto_pro.backends.cpu import prebuilt
from pypto_pro.backends.cpu.toolchain import find_toolchain
from kernels import load_kernels

SRC = """
@pl.jit(backend="{backend}", name="{name}")
def binops(x: pl.Tensor[[16, 64], pl.{dt}], y: pl.Tensor[[16, 64], pl.{dt}], out: pl.Tensor[[6, 16, 64], pl.{dt}]):
    a = pl.make_tile(pl.TileType([16, 64], pl.{dt}), addr=0x0)
    b = pl.make_tile(pl.TileType([16, 64], pl.{dt}), addr=0x2000)
    c = pl.make_tile(pl.TileType([16, 64], pl.{dt}), addr=0x4000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.load(b, y, [0, 0])
        pl.add(c, a, b)
        pl.store(out, c, [0, 0, 0])
        pl.sub(c, a, b)
        pl.store(out, c, [1, 0, 0])
        pl.mul(c, a, b)
        pl.store(out, c, [2, 0, 0])
        pl.div(c, a, b)
        pl.store(out, c, [3, 0, 0])
        pl.maximum(c, a, b)
        pl.store(out, c, [4, 0, 0])
        pl.minimum(c, a, b)
        pl.store(out, c, [5, 0, 0])
"""

NP = {"DT_FP16": np.float16, "DT_FP32": np.float32, "DT_INT32": np.int32}


@pytest.fixture(scope="module")
def tc():
    tc = find_toolchain()
    if tc is None:
        pytest.skip("no C++ compiler")
    prebuilt.prebuild(tc)  # what `make venv` does; a no-op when the per-user cache has them
    return tc


def _inputs(dt):
    rng = np.random.default_rng(7)
    if dt == "DT_INT32":
        x = rng.integers(-1000, 1000, (16, 64)).astype(np.int32)
        y = rng.integers(1, 50, (16, 64)).astype(np.int32) * rng.choice([-1, 1], (16, 64)).astype(np.int32)
        return x, y
    x = (rng.standard_normal((16, 64)) * 3).astype(NP[dt])
    y = (rng.standard_normal((16, 64)) * 3).astype(NP[dt])
    y.flat[:5] = [0.0, -0.0, np.inf, np.nan, -np.inf]
    return x, y


def _run(tmp_path, backend, name, dt):
    k = load_kernels(tmp_path, SRC.format(backend=backend, name=name, dt=dt)).binops
    x, y = _inputs(dt)
    out = np.zeros((6, 16, 64), NP[dt])
    k(x, y, out)
    return out


@pytest.mark.parametrize("dt", ["DT_FP16", "DT_FP32", "DT_INT32"])
def test_per_op_functions_from_the_library_match_compiled_ones_and_interp(tc, tmp_path, monkeypatch, dt):
    monkeypatch.setenv("PYPTO_CPU_FUSION", "0")  # the per-op code: the functions the library holds
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    assert prebuilt.ops_library(tc) is not None
    with_lib = _run(tmp_path, "cpu", f"ops_lib_{dt}", dt)
    cpp = next(build.glob(f"ops_lib_{dt}__*/*/kernel.cpp")).read_text()
    assert prebuilt.OPS_INCLUDE in cpp
    monkeypatch.setenv(prebuilt.OPS_ENV, "0")
    assert prebuilt.ops_library(tc) is None
    compiled = _run(tmp_path, "cpu", f"ops_own_{dt}", dt)
    assert prebuilt.OPS_INCLUDE not in next(build.glob(f"ops_own_{dt}__*/*/kernel.cpp")).read_text()
    ref = _run(tmp_path, "interp", f"ops_ref_{dt}", dt)
    assert with_lib.tobytes() == compiled.tobytes()
    np.testing.assert_array_equal(with_lib, ref)


def test_the_library_exports_only_its_instantiations(tc):
    path = prebuilt.ops_library(tc)
    assert path is not None
    import subprocess

    nm = subprocess.run(["nm", "-D", "--defined-only", "-C", str(path)], capture_output=True, text=True)
    if nm.returncode != 0:
        pytest.skip("no nm here")
    names = [line.split(" ", 2)[2] for line in nm.stdout.splitlines() if line.count(" ") >= 2]
    names = [n for n in names if n.startswith(("void pto::", "pto::"))]
    assert names and all(n.startswith(("void pto::binary_tiles<", "void pto::load<", "void pto::store<")) for n in names)


def test_the_include_goes_after_the_tile_header():
    src = '// x\n#define PTO_SIMD_MATH 1\n#include "pto/pto.h"\nint k;\n'
    assert prebuilt.with_ops(src) == f'// x\n#define PTO_SIMD_MATH 1\n#include "pto/pto.h"\n{prebuilt.OPS_INCLUDE}\nint k;\n'
