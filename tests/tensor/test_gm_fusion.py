"""The lowering marks tiles dead (``discard`` right after their last use in a loop iteration), and the
cpu backend then runs an element-wise pass GM -> registers -> GM: its loads and store join the fused
loop and tiles that only carry values between ops are never written."""
import re

import numpy as np
import pytest
import torch

import pypto


def chain_kernel():
    @pypto.frontend.jit
    def chain(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.sigmoid(a * b + 1.0) * a
    return chain


def test_each_tile_is_discarded_right_after_its_last_use():
    k = chain_kernel()
    a, b, y = torch.randn(40, 100), torch.randn(40, 100), torch.empty(40, 100)
    k(a, b, y)
    torch.testing.assert_close(y, torch.sigmoid(a * b + 1.0) * a)
    body = k.lowered_text().split("section_vector:")[1].splitlines()
    tiles = sorted({m for line in body for m in re.findall(r"\bt\d+\b", line)})
    assert tiles and len([line for line in body if "discard" in line]) == len(tiles)
    for t in tiles:
        uses = [i for i, line in enumerate(body) if re.search(rf"\b{t}\b", line)]
        assert "discard" in body[uses[-1]] and "discard" not in body[uses[-2]], t


def _kernel_cpp(build) -> str:
    (path,) = build.glob("chain__*/*/kernel.cpp")
    return path.read_text()


@pytest.mark.parametrize("shape", [(40, 100), (64, 64), (3, 7)])
def test_cpu_chain_goes_from_gm_to_gm_in_registers(tmp_path, monkeypatch, shape):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BACKEND", "cpu")
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    k = chain_kernel()
    a, b, y = torch.randn(*shape), torch.randn(*shape), torch.empty(*shape)
    k(a, b, y)
    torch.testing.assert_close(y, torch.sigmoid(a * b + 1.0) * a)
    cpp = _kernel_cpp(build)
    assert cpp.count("fused element-wise group") == 1 and "load load mul add neg exp add recip mul + store" in cpp
    loop = cpp[cpp.index("pto::fz::each("):cpp.index("} else {  // the original per-op code")]
    assert len(re.findall(r"fz::load<V>\(m\d_", loop)) == 2 and len(re.findall(r"fz::store_gm\(m\d_", loop)) == 1
    assert "(p" not in loop  # no tile is read or written


def test_cpu_in_place_update_stays_exact(monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "cpu")

    @pypto.frontend.jit
    def scale_in_place(x: pypto.Tensor(), s: float):
        pypto.set_vec_tile_shapes(8, 128)
        x[:] = x * s + 1.0

    x = torch.randn(50, 300)
    want = x * 0.25 + 1.0
    scale_in_place(x, 0.25)
    torch.testing.assert_close(x, want, rtol=0, atol=0)


def test_cpu_norms_keep_only_the_tiles_read_again(tmp_path, monkeypatch):
    """rms_norm: x is read twice (sum of squares, then scaling): its tile is written once, in the
    fused load; x*x only feeds the row sum and is never stored; the result goes straight to GM."""
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BACKEND", "cpu")
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))

    @pypto.frontend.jit
    def rms(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 256)
        y[:] = pypto.rms_norm(x, g, 1e-6)

    x, g, y = torch.randn(37, 256), torch.rand(256) + 0.5, torch.empty(37, 256)
    rms(x, g, y)
    torch.testing.assert_close(y, torch.nn.functional.rms_norm(x, (256,), g, 1e-6))
    (path,) = build.glob("rms__*/*/kernel.cpp")
    cpp = path.read_text()
    assert "2 ops in one pass: load mul + row_sum" in cpp
    first = cpp[cpp.index("load mul + row_sum"):]
    first = first[:first.index("} else {")]
    assert len(re.findall(r"fz::store\(p", first)) == 1  # x's tile; not x*x
    assert re.search(r"expand_mul expand_mul \+ store", cpp)
