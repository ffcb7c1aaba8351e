"""The ops library (backends/cpu/prebuilt.py, runtime/pto_ops.cpp, include/pto/prebuilt_ops.h): where it is in
the per-user cache, kernels call its per-op functions (element-wise binary ops, loads, stores; for
fp16 / fp32 also tile-scalar, unary, row-broadcast, reduction and fill ops and casts) instead of compiling them,
with the same results as kernels that compile them and as the interpreter."""
import re

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

# the float types' per-op functions: every output slot of `out` is one op's result over x (and the row
# statistics of x); 24 slots
FLOAT_SRC = """
@pl.jit(backend="{backend}", name="{name}")
def floatops(x: pl.Tensor[[16, 64], pl.{dt}], out: pl.Tensor[[24, 16, 64], pl.{dt}]):
    a = pl.make_tile(pl.TileType([16, 64], pl.{dt}), addr=0x0)
    c = pl.make_tile(pl.TileType([16, 64], pl.{dt}), addr=0x2000)
    r = pl.make_tile(pl.TileType([16, 1], pl.{dt}), addr=0x4000)
    w = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x6000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.add(c, a, 1.5)
        pl.store(out, c, [0, 0, 0])
        pl.sub(c, a, 1.5)
        pl.store(out, c, [1, 0, 0])
        pl.mul(c, a, 0.75)
        pl.store(out, c, [2, 0, 0])
        pl.div(c, a, 3.0)
        pl.store(out, c, [3, 0, 0])
        pl.maximum(c, a, 0.5)
        pl.store(out, c, [4, 0, 0])
        pl.minimum(c, a, 0.5)
        pl.store(out, c, [5, 0, 0])
        pl.neg(c, a)
        pl.store(out, c, [6, 0, 0])
        pl.abs(c, a)
        pl.store(out, c, [7, 0, 0])
        pl.exp(c, a)
        pl.store(out, c, [8, 0, 0])
        pl.log(c, a)
        pl.store(out, c, [9, 0, 0])
        pl.sqrt(c, a)
        pl.store(out, c, [10, 0, 0])
        pl.rsqrt(c, a)
        pl.store(out, c, [11, 0, 0])
        pl.recip(c, a)
        pl.store(out, c, [12, 0, 0])
        pl.relu(c, a)
        pl.store(out, c, [13, 0, 0])
        pl.row_max(r, a)
        pl.row_expand_sub(c, a, r)
        pl.store(out, c, [14, 0, 0])
        pl.row_expand_max(c, a, r)
        pl.store(out, c, [15, 0, 0])
        pl.row_sum(r, a)
        pl.row_expand_div(c, a, r)
        pl.store(out, c, [16, 0, 0])
        pl.row_expand_mul(c, a, r)
        pl.store(out, c, [17, 0, 0])
        pl.row_min(r, a)
        pl.row_expand_min(c, a, r)
        pl.store(out, c, [18, 0, 0])
        pl.expands(c, 3.25)
        pl.store(out, c, [19, 0, 0])
        pl.cast(w, a)
        pl.mul(w, w, 1.0009765625)
        pl.cast(c, w)
        pl.store(out, c, [20, 0, 0])
        pl.add(c, a, c)
        pl.store(out, c, [21, 0, 0])
        pl.row_expand_sub(c, a, r)
        pl.exp(c, c)
        pl.store(out, c, [22, 0, 0])
        pl.div(c, c, a)
        pl.store(out, c, [23, 0, 0])
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


def _lib_own_interp(tc, tmp_path, monkeypatch, run, prefix, dt):
    """``run(backend, kernel name)`` with the ops library, without it, and on the interpreter (fusion off:
    the per-op code, the functions the library holds); the library's and the kernel's own instantiations
    give the same bytes.  Returns the library run's output, the interpreter's, and the library build's
    directory."""
    monkeypatch.setenv("PYPTO_CPU_FUSION", "0")
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    assert prebuilt.ops_library(tc) is not None
    with_lib = run("cpu", f"{prefix}_lib_{dt}")
    lib_dir = next(build.glob(f"{prefix}_lib_{dt}__*/*/"))
    assert prebuilt.OPS_INCLUDE in (lib_dir / "kernel.cpp").read_text()
    monkeypatch.setenv(prebuilt.OPS_ENV, "0")
    assert prebuilt.ops_library(tc) is None
    compiled = run("cpu", f"{prefix}_own_{dt}")
    assert prebuilt.OPS_INCLUDE not in next(build.glob(f"{prefix}_own_{dt}__*/*/kernel.cpp")).read_text()
    ref = run("interp", f"{prefix}_ref_{dt}")
    assert with_lib.tobytes() == compiled.tobytes()
    return with_lib, ref, lib_dir


@pytest.mark.parametrize("dt", ["DT_FP16", "DT_FP32", "DT_INT32"])
def test_per_op_functions_from_the_library_match_compiled_ones_and_interp(tc, tmp_path, monkeypatch, dt):
    with_lib, ref, _ = _lib_own_interp(tc, tmp_path, monkeypatch, lambda b, n: _run(tmp_path, b, n, dt), "ops", dt)
    np.testing.assert_array_equal(with_lib, ref)


def _nm(lib, which):
    """The demangled names of ``lib``'s dynamic symbols (``which``: "--defined-only" or "--undefined-only");
    None where there is no nm."""
    import subprocess

    nm = subprocess.run(["nm", "-D", which, "-C", str(lib)], capture_output=True, text=True)
    if nm.returncode != 0:
        return None
    rows = (re.match(r"\s*(?:[0-9a-fA-F]+\s+)?[A-Za-z]\s+(.+)", line) for line in nm.stdout.splitlines())
    return [m.group(1) for m in rows if m]  # "<address> T <name>" or "U <name>"


def _run_float(tmp_path, backend, name, dt):
    k = load_kernels(tmp_path, FLOAT_SRC.format(backend=backend, name=name, dt=dt)).floatops
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((16, 64)) * 3).astype(NP[dt])
    x.flat[:6] = [0.0, -0.0, np.inf, np.nan, -np.inf, 1e-3]
    x[1:] = np.abs(x[1:]) + np.asarray(0.25, NP[dt])  # rows without inf / NaN: finite statistics
    out = np.zeros((24, 16, 64), NP[dt])
    k(x, out)
    return out


@pytest.mark.parametrize("dt", ["DT_FP16", "DT_FP32"])
def test_float_per_op_functions_from_the_library_match_compiled_ones_and_interp(tc, tmp_path, monkeypatch, dt):
    with_lib, ref, lib_dir = _lib_own_interp(tc, tmp_path, monkeypatch,
                                             lambda b, n: _run_float(tmp_path, b, n, dt), "fops", dt)
    called = _nm(next(lib_dir.glob("call_kernel*.so")), "--undefined-only")
    if called is not None:  # the kernel calls the library's functions: it did not compile its own
        casts = ("cast<float, _Float16>", "cast<_Float16, float>") if dt == "DT_FP16" else ()  # pto::half
        for op in ("unary<pto::UExp", "reduce<", "expand<pto::OpSub", "binary<pto::OpMul", "expands<", *casts):
            assert any(n.startswith("void pto::" + op) for n in called), op
    np.testing.assert_array_equal(with_lib.astype(np.float32), ref.astype(np.float32))
    assert np.isfinite(with_lib[19]).all() and (with_lib[19].astype(np.float32) == 3.25).all()


def test_the_library_exports_only_its_instantiations(tc):
    path = prebuilt.ops_library(tc)
    assert path is not None
    names = _nm(path, "--defined-only")
    if names is None:
        pytest.skip("no nm here")
    names = [n for n in names if n.startswith(("void pto::", "pto::"))]
    ours = ("void pto::binary_tiles<", "void pto::load<", "void pto::store<", "void pto::binary<", "void pto::unary<",
            "void pto::expand<", "void pto::expands<", "void pto::reduce<", "void pto::cast<")
    assert names and all(n.startswith(ours) for n in names)
    assert any(n.startswith("void pto::unary<pto::UExp, float>") for n in names)


def test_the_include_goes_after_the_tile_header():
    src = '// x\n#define PTO_SIMD_MATH 1\n#include "pto/pto.h"\nint k;\n'
    assert prebuilt.with_ops(src) == f'// x\n#define PTO_SIMD_MATH 1\n#include "pto/pto.h"\n{prebuilt.OPS_INCLUDE}\nint k;\n'
