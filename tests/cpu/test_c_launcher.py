"""The C launch fast path (backends/cpu/clauncher.py, runtime/pto_launch.cpp): ``kernel[None, n]`` is one
cached object per block count, and a launch with the latest frozen signature runs without Python code,
with the same results, errors and fallbacks as the Python launcher."""
import os
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pypto_pro.backends.cpu import clauncher  # noqa: E402
from pypto_pro.errors import KernelError  # noqa: E402
from kernels import load_kernels  # noqa: E402

SRC = """
@pl.jit(backend="cpu", name="{name}")
def axpy(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
         row: int, s: float):
    a = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [row, 0])
        pl.mul(a, a, s)
        pl.store(out, a, [row, 0])
"""


def _kernel(tmp_path, name):
    return load_kernels(tmp_path, SRC.format(name=name)).axpy


def _error(fn) -> str:
    with pytest.raises(KernelError) as e:
        fn()
    return str(e.value)


def test_bound_is_cached_and_runs_in_c(tmp_path, mod, monkeypatch):
    k = _kernel(tmp_path, "c_axpy_a")
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    k[None, 1](x, out, 8, 2.0)  # freezes the signature
    b = k[None, 1]
    assert type(b).__name__ == "Bound" and k[None, 1] is b and k[1] is b
    out.zero_()

    def python_path(*args, **kwargs):
        raise AssertionError("the frozen signature took the Python launcher")

    monkeypatch.setattr(k, "launch", python_path)
    b(x, out, 0, 3.0)  # runs entirely in C
    monkeypatch.undo()
    assert torch.equal(out[:8], x[:8] * 3.0) and not out[8:].any()
    # another signature, then back: both run, through C or Python
    y, out2 = torch.randn(24, 64), torch.zeros(24, 64)
    b(y, out2, 16, -1.5)
    assert torch.equal(out2[16:], y[16:] * -1.5)
    b(x, out, 8, 0.5)
    assert torch.equal(out[8:], x[8:] * 0.5)
    # non-contiguous tensors of the frozen shape: their strides are passed
    xt = torch.randn(64, 16).t()
    outt = torch.zeros(64, 16).t()
    b(xt, outt, 8, 2.0)
    assert torch.equal(outt[8:], xt[8:] * 2.0)


def test_errors_match_the_python_path(tmp_path, mod):
    k = _kernel(tmp_path, "c_axpy_b")
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    k[None, 1](x, out, 0, 1.0)
    c_path = _error(lambda: k[None, 1](x, out, 12, 1.0))  # window past the tensor's end: kernel error
    py_path = _error(lambda: k.launch((x, out, 12, 1.0), block_dim=1))
    assert c_path == py_path and "axpy" in c_path
    # a scalar check (bool for float), a wrong dtype, a keyword launch: the checked path's messages
    for bad in ((x, out, 0, "a"), (x.double(), out, 0, 1.0)):
        assert _error(lambda: k[None, 1](*bad)) == _error(lambda: k.launch(bad, block_dim=1))
    k[None, 1](x, out=out, row=8, s=2.0)
    assert torch.equal(out[8:], x[8:] * 2.0)


def test_environment_and_cache_clear_take_the_full_path(tmp_path, mod, monkeypatch):
    k = _kernel(tmp_path, "c_axpy_c")
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    k[None, 1](x, out, 0, 1.0)
    monkeypatch.setenv("PYPTO_BACKEND", "interp")  # the frozen environment no longer matches
    out.zero_()
    k[None, 1](x, out, 8, 2.0)
    assert torch.equal(out[8:], x[8:] * 2.0)
    monkeypatch.delenv("PYPTO_BACKEND")
    k._compiled_by_signature.clear()
    k[None, 1](x, out, 0, 4.0)  # parsed again after the clear
    assert len(k._compiled_by_signature) == 1 and torch.equal(out[:8], x[:8] * 4.0)


def test_threads_share_the_c_path(tmp_path, mod):
    k = _kernel(tmp_path, "c_axpy_d")
    xs = [torch.randn(16, 64) for _ in range(4)]
    outs = [torch.zeros(16, 64) for _ in range(4)]
    k[None, 1](xs[0], outs[0], 0, 1.0)
    b = k[None, 1]

    def go(i):
        for r in range(50):
            b(xs[i], outs[i], 8 * (r % 2), float(i + 1))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        assert torch.equal(outs[i], xs[i] * float(i + 1))


def test_numpy_arguments_keep_the_python_path(tmp_path, mod):
    k = _kernel(tmp_path, "c_axpy_e")
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    out = np.zeros_like(x)
    for _ in range(2):
        k[None, 1](x, out, 8, 2.0)
    assert np.array_equal(out[8:], x[8:] * np.float32(2.0))
    assert os.environ.get("PYPTO_C_LAUNCHER", "1") != "0"


def test_a_signature_frozen_while_the_extension_loads_is_frozen_in_c_later(tmp_path, mod, monkeypatch):
    # the first freeze finds no extension (it finished loading just after): the next launch freezes again
    k = _kernel(tmp_path, "c_axpy_f")
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    real = clauncher.frozen
    monkeypatch.setattr(clauncher, "frozen", lambda *a: None)
    k[None, 1](x, out, 0, 1.0)
    monkeypatch.setattr(clauncher, "frozen", real)
    k[None, 1](x, out, 0, 1.0)  # the frozen Python launcher retries the C freeze

    def python_path(*args, **kwargs):
        raise AssertionError("the frozen signature took the Python launcher")

    monkeypatch.setattr(k, "launch", python_path)
    k[None, 1](x, out, 8, 3.0)
    monkeypatch.undo()
    assert torch.equal(out[8:], x[8:] * 3.0)
