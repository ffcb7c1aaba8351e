"""What the cpu backend builds once per install (backends/cpu/prebuilt.py): the runtime library and the
precompiled tile header live in the per-user cache, a fresh build directory reuses them, kernels compile
from the PCH, and the PCH changes nothing in the library a kernel compiles to."""
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pypto_pro.backends.cpu import prebuilt
from pypto_pro.backends.cpu.toolchain import CompileError, INCLUDE_DIR, find_toolchain

from kernels import load_kernels

ADD = """
@pl.jit(backend="cpu", name="{name}")
def add(x: pl.Tensor[[16, 64], pl.DT_FP16], y: pl.Tensor[[16, 64], pl.DT_FP16], out: pl.Tensor[[16, 64], pl.DT_FP16]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_FP16), addr=0x0)
    b = pl.make_tile(pl.TileType([16, 64], pl.DT_FP16), addr=0x800)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.load(b, y, [0, 0])
        pl.{op}(a, a, b)
        pl.store(out, a, [0, 0])
"""


@pytest.fixture(scope="module")
def tc():
    tc = find_toolchain()
    if tc is None or not prebuilt.pch_supported(tc):
        pytest.skip("needs GCC (the PCH is GCC's .gch lookup)")
    prebuilt.prebuild(tc)  # what `make venv` does; a no-op when the per-user cache has them
    return tc


def _kernel_source(tmp_path, build_dir, monkeypatch, op: str) -> Path:
    """Compile the ADD kernel with ``op`` in ``build_dir`` and return its kernel.cpp."""
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build_dir))
    k = load_kernels(tmp_path, ADD.format(name=f"pch_{op}", op=op)).add
    x = np.arange(16 * 64, dtype=np.float16).reshape(16, 64) / 64
    out = np.zeros_like(x)
    k(x, x, out)
    want = {"add": x + x, "maximum": np.maximum(x, x)}[op]
    assert (out == want).all()
    return next(build_dir.glob(f"pch_{op}__*/*/kernel.cpp"))


def test_a_fresh_build_dir_builds_no_runtime_library(tc, tmp_path, monkeypatch):
    _kernel_source(tmp_path, tmp_path / "build", monkeypatch, "add")
    assert not list((tmp_path / "build").rglob("libpto_rt_*.so"))
    entry, name = prebuilt.runtime_entry(tc)
    assert entry.valid() is not None and name in entry.valid()


@pytest.mark.parametrize("op", ["add", "maximum"])
def test_kernels_compile_from_the_pch_to_the_same_library(tc, tmp_path, monkeypatch, op):
    src = _kernel_source(tmp_path, tmp_path / "build", monkeypatch, op)
    pch = prebuilt.pch_include_dir(tc)
    assert pch is not None
    base = [tc.path, prebuilt.KERNEL_OPT, *tc.flags]
    used = subprocess.run(base + [f"-I{pch}", f"-I{INCLUDE_DIR}", str(src), "-o", str(tmp_path / "with.so"), "-H"],
                          capture_output=True, text=True, check=True).stderr
    assert any(line.startswith("! ") and "pto.h.gch" in line for line in used.splitlines())  # "!": a PCH used
    subprocess.run(base + [f"-I{INCLUDE_DIR}", str(src), "-o", str(tmp_path / "without.so")], check=True)
    assert (tmp_path / "with.so").read_bytes() == (tmp_path / "without.so").read_bytes()


def test_the_pch_key_follows_the_flags(tc):
    other = type(tc)(tc.path, tc.version, tc.flags + ("-DPTO_SOMETHING_NEW=1",))
    assert prebuilt.pch_entry(other).dir != prebuilt.pch_entry(tc).dir
    assert prebuilt.pch_entry(tc, "-O2").dir != prebuilt.pch_entry(tc).dir


def test_a_compile_that_fails_with_the_pch_is_retried_without_it(tc, tmp_path, monkeypatch):
    calls = []
    real = prebuilt.compile_shared

    def flaky(tc_, source, output, opt="-O3", extra=(), include_first=()):
        calls.append(list(include_first))
        if include_first:
            raise CompileError("a damaged PCH")
        return real(tc_, source, output, opt=opt, extra=extra)

    monkeypatch.setattr(prebuilt, "compile_shared", flaky)
    monkeypatch.setattr(prebuilt, "drop_pch", lambda d: calls.append("dropped"))
    src = tmp_path / "k.cpp"
    src.write_text('#include "pto/pto.h"\nextern "C" int answer() { return 42; }\n')
    prebuilt.compile_kernel(tc, src, tmp_path / "k.so")
    assert calls[0] and calls[1] == "dropped" and calls[2] == [] and (tmp_path / "k.so").exists()


def test_a_new_install_gets_both_in_its_own_cache(tc, tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "user"))
    assert sorted(prebuilt.missing(tc)) == ["ops", "pch", "runtime"]
    runtime = prebuilt.build_runtime(tc)
    assert runtime.parent.parent.parent == tmp_path / "user"
    assert sorted(prebuilt.missing(tc)) == ["ops", "pch"]
    assert prebuilt.ops_library(tc) is None  # not built: kernels compile their per-op functions
