"""Row-tile loops on cpu fetch the next tile's GM window while they compute or store (fuse.h
``note_ahead`` / ``fetch_ahead``): the load group notes the window, every later group without loads
fetches it.  Prefetches never change a value, so the results stay bit-equal to the interpreter,
tail tiles and several blocks per thread included."""
import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto
from pypto_pro.backends import cpu
from pypto_pro.backends.cpu import workers

pytestmark = pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")


def _kernels():
    def softmax(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 128)
        y[:] = pypto.softmax(x, -1)

    def layer_norm(x: pypto.Tensor(), g: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 128)
        y[:] = pypto.layer_norm(x, g, b, 1e-5)

    def rms_norm(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 128)
        y[:] = pypto.rms_norm(x, g, 1e-6)

    return {"softmax": softmax, "layer_norm": layer_norm, "rms_norm": rms_norm}


def _run(name: str, backend: str, rows: int) -> np.ndarray:
    fn = _kernels()[name]
    k = pypto.frontend.jit(fn, backend=backend)
    gen = torch.Generator().manual_seed(rows)
    x = torch.randn(rows, 128, generator=gen) * 4
    g, b = torch.rand(128, generator=gen) + 0.5, torch.randn(128, generator=gen)
    y = torch.empty(rows, 128)
    args = {"softmax": (x, y), "layer_norm": (x, g, b, y), "rms_norm": (x, g, y)}[name]
    k(*args)
    return y.numpy().copy()


@pytest.mark.parametrize("name", ["softmax", "layer_norm", "rms_norm"])
@pytest.mark.parametrize("rows", [5, 203])  # one partial tile; 25 full tiles and a tail
def test_row_tile_loops_stay_bit_equal_to_the_interpreter(name, rows):
    np.testing.assert_array_equal(_run(name, "cpu", rows), _run(name, "interp", rows))


@pytest.mark.parametrize("name", ["softmax", "layer_norm"])
def test_several_blocks_per_thread_stay_bit_equal(name, monkeypatch):
    """8 blocks (2 threads x 4): each block's tiles are 8 apart, its first prefetch a wrong guess."""
    monkeypatch.setenv("PYPTO_NUM_THREADS", "2")
    monkeypatch.setattr(workers, "MIN_SHARED_BLOCK_ELEMENTS", 1024)
    assert workers.launch_blocks(None, 203 * 128) == 8
    np.testing.assert_array_equal(_run(name, "cpu", 203), _run(name, "interp", 203))


def test_the_load_group_notes_the_next_window_and_the_others_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(tmp_path))
    _run("softmax", "cpu", 64)
    (path,) = tmp_path.glob("softmax__*/*/kernel.cpp")
    text = path.read_text()
    assert "pto::fz::Ahead ahead_;" in text  # one fetch state per core, a local of core_main
    groups = text.split("// fused element-wise group")[1:]
    assert len(groups) == 3  # load + row_max; expand_sub exp + row_sum; expand_mul + store
    for text in groups:
        loop = text[:text.index("} else {  // the original per-op code")]
        if "load + row_max" in text.splitlines()[0]:
            assert re.search(r"note_ahead\(ahead_, C\.ptr<float>\(kTiles\[\d+\]\), m0_, w_\)", loop)
            assert re.search(r"each_row_minmax<pto::RMax>\(.*, pto::fz::NoAhead\(\), \[=\]", loop)
        else:
            # the loop function copies the fetch state and the by-value body into its own frame; the
            # store group fetches two lines per step, the arithmetic before it one
            lines = 2 if "+ store" in text.splitlines()[0] else 1
            assert re.search(rf"pto::fz::each(_row_sum)?\(.*, pto::fz::fetching\(ahead_, {lines}\), \[=\]", loop)


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(["softmax", "layer_norm", "rms_norm"]), rows=st.integers(1, 70),
       cols=st.sampled_from([8, 40, 96, 136]), tile_rows=st.sampled_from([1, 2, 4, 8]),
       seed=st.integers(0, 2 ** 16))
def test_row_tile_loops_of_any_shape_stay_bit_equal(name, rows, cols, tile_rows, seed):
    """Any window shape through the fused loops (fuse.h Body: the by-value body, the fetch state in
    registers, one or two lines fetched per step, 8-lane and scalar tails): cpu bits == interpreter."""
    def softmax(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(tile_rows, cols)
        y[:] = pypto.softmax(x, -1)

    def layer_norm(x: pypto.Tensor(), g: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(tile_rows, cols)
        y[:] = pypto.layer_norm(x, g, b, 1e-5)

    def rms_norm(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(tile_rows, cols)
        y[:] = pypto.rms_norm(x, g, 1e-6)

    fn = {"softmax": softmax, "layer_norm": layer_norm, "rms_norm": rms_norm}[name]
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=gen) * 4
    g, b = torch.rand(cols, generator=gen) + 0.5, torch.randn(cols, generator=gen)
    out = {}
    for backend in ("interp", "cpu"):
        y = torch.empty(rows, cols)
        k = pypto.frontend.jit(fn, backend=backend)
        k(*{"softmax": (x, y), "layer_norm": (x, g, b, y), "rms_norm": (x, g, y)}[name])
        out[backend] = y.numpy().copy()
    np.testing.assert_array_equal(out["cpu"], out["interp"])
