"""Loop-invariant tile loads (lower/hoist.py): a load whose GM window does not move with a pass's loop,
and the vector ops on it, run once before the loop.  Checked here: which loads move (gamma/beta of the
norms, a broadcast full tile over a leading axis, an operand of a reduction's inner loop), which stay
(a tensor the loop writes, a tile that would no longer fit on chip, a window that moves), and that the
results keep their bits on interp and cpu, for any block count, with no hazard under the simulator."""
import numpy as np
import pytest
import torch

import pypto
from pypto_pro.backends import interp


def _enclosing(text: str, src: str) -> list:
    """For every ``load`` from tensor ``src`` in the lowered text: the header of the block holding it
    ("for" or "if")."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.strip().startswith("load[") and f"src={src}," in line:
            depth = len(line) - len(line.lstrip())
            head = next(ln for ln in reversed(lines[:i]) if len(ln) - len(ln.lstrip()) < depth)
            out.append(head.split()[0])
    return out


def _hoisted(text: str, src: str) -> bool:
    heads = _enclosing(text, src)
    return bool(heads) and all(h == "if" for h in heads)


def _kept(text: str, src: str) -> bool:
    heads = _enclosing(text, src)
    return bool(heads) and all(h == "for" for h in heads)


@pypto.frontend.jit
def layer_norm_k(x: pypto.Tensor(), g: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 256)
    y[:] = pypto.layer_norm(x, g, b, 1e-5)


@pypto.frontend.jit
def rms_norm_k(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 256)
    y[:] = pypto.rms_norm(x, g, 1e-6)


def _np_layer_norm(x, g, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def _run_blocks(monkeypatch, blocks: int, fn):
    monkeypatch.setattr(interp, "LAUNCH_BLOCKS", blocks)
    monkeypatch.setenv("PYPTO_NUM_THREADS", str(blocks))  # the cpu backend's block count
    return fn()


def _on(monkeypatch, backend: str):
    monkeypatch.setenv("PYPTO_BACKEND", backend)


@pytest.mark.parametrize("blocks", [1, 3, 7])
def test_norm_weights_are_loaded_once_and_bits_agree(monkeypatch, blocks):
    rng = np.random.default_rng(blocks)
    x = torch.from_numpy(rng.standard_normal((45, 256)).astype(np.float32))  # a tail tile of 5 rows
    g = torch.from_numpy(rng.standard_normal(256).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal(256).astype(np.float32))
    outs = {}
    for backend in ("interp", "cpu"):
        _on(monkeypatch, backend)
        ln, rms = torch.empty_like(x), torch.empty_like(x)
        _run_blocks(monkeypatch, blocks, lambda: (layer_norm_k(x, g, b, ln), rms_norm_k(x, g, rms)))
        outs[backend] = (ln, rms)
    assert all(torch.equal(a, c) for a, c in zip(outs["interp"], outs["cpu"]))
    np.testing.assert_allclose(outs["cpu"][0].numpy(), _np_layer_norm(x.numpy(), g.numpy(), b.numpy(), 1e-5),
                               rtol=1e-4, atol=1e-4)
    want_rms = x.numpy() / np.sqrt((x.numpy() ** 2).mean(-1, keepdims=True) + 1e-6) * g.numpy()
    np.testing.assert_allclose(outs["cpu"][1].numpy(), want_rms, rtol=1e-4, atol=1e-4)
    text = layer_norm_k.lowered_text(x, g, b, outs["cpu"][0])
    assert _hoisted(text, "g") and _hoisted(text, "b") and _kept(text, "x")
    # beta's negation moved with it: no neg inside the row loop
    loop = text[text.index("for w"):]
    assert "neg[" not in loop and "neg[" in text
    assert _hoisted(rms_norm_k.lowered_text(x, g, outs["cpu"][1]), "g")


@pytest.mark.parametrize("rows", [45, 16])  # 16: two row tiles, so two of the four cores have none
def test_norm_kernels_have_no_hazard_under_the_simulator(monkeypatch, rows):
    x, g, b = torch.randn(rows, 256), torch.randn(256), torch.randn(256)
    _on(monkeypatch, "interp")
    want = torch.empty_like(x)
    layer_norm_k(x, g, b, want)
    _on(monkeypatch, "sim")
    y = torch.empty_like(x)
    layer_norm_k(x, g, b, y)
    assert torch.equal(y, want)
    report = layer_norm_k.last_report
    assert len(report.per_core) >= 2 and not report.hazards
    rms_norm_k(x, g, y)
    assert not rms_norm_k.last_report.hazards


def test_a_tensor_the_loop_writes_is_loaded_in_every_iteration(monkeypatch):
    @pypto.frontend.jit
    def bump(x: pypto.Tensor([32, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        x[:] = x + x[0:1, :]  # row 0 changes with the first row tile

    x = torch.randn(32, 64)
    want = x.numpy().copy()
    for r0 in range(0, 32, 8):  # tile order on one core: later tiles add the updated row 0
        want[r0:r0 + 8] = want[r0:r0 + 8] + want[0:1]
    for backend in ("interp", "cpu"):
        _on(monkeypatch, backend)
        y = x.clone()
        _run_blocks(monkeypatch, 1, lambda: bump(y))
        np.testing.assert_array_equal(y.numpy(), want)
    assert _kept(bump.lowered_text(x.clone()), "x")


def _broadcast_add(tr: int, tc: int):
    @pypto.frontend.jit
    def badd(x: pypto.Tensor(), w: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, tr, tc)
        # w [tr, tc] is the same full tile for every x[i]; the product keeps up to four tiles live
        y[:] = (x + w) + (x * 2.0) * (x * 3.0)

    return badd


@pytest.mark.parametrize("tr, tc, moves", [(8, 128, True), (16, 896, False)])
def test_a_full_invariant_tile_moves_only_while_it_fits(monkeypatch, tr, tc, moves):
    # [16, 896] FP32 is 56 KiB: four such tiles fit a5's Vec buffer, five (w live over the loop) do not
    x, w = torch.randn(3, tr, tc), torch.randn(tr, tc)
    outs = []
    for backend in ("interp", "cpu"):
        _on(monkeypatch, backend)
        y = torch.empty_like(x)
        _broadcast_add(tr, tc)(x, w, y)
        outs.append(y)
    assert torch.equal(outs[0], outs[1])
    torch.testing.assert_close(outs[1], (x + w) + (x * 2) * (x * 3))
    text = _broadcast_add(tr, tc).lowered_text(x, w, outs[1])
    assert (_hoisted if moves else _kept)(text, "w") and _kept(text, "x")


def test_a_window_that_moves_with_the_loop_stays_in_it():
    @pypto.frontend.jit
    def wide(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)  # 256 columns: g's window moves with the column tile
        y[:] = x * g

    x, g = torch.randn(16, 256), torch.randn(256)
    y = torch.empty_like(x)
    wide(x, g, y)
    torch.testing.assert_close(y, x * g)
    assert _kept(wide.lowered_text(x, g, y), "g")


@pypto.frontend.jit
def col_sum(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 128)
    y[:] = pypto.sum(x * g, dim=0, keepdim=True)  # an inner loop over the row tiles of x


@pypto.frontend.jit
def looped_norm(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 128)
    for i in pypto.loop(2):
        y[i * 24:(i + 1) * 24, :] = pypto.rms_norm(x[i * 24:(i + 1) * 24, :], g, 1e-6)


@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_nested_loops(monkeypatch, backend):
    _on(monkeypatch, backend)
    x, g = torch.randn(64, 128), torch.randn(128)
    # integers: the column sums are exact whatever the order
    xi, gi = torch.randint(-4, 5, (64, 128)).float(), torch.randint(-4, 5, (128,)).float()
    y = torch.empty(1, 128)
    col_sum(xi, gi, y)
    assert torch.equal(y, (xi * gi).sum(0, keepdim=True))
    text = col_sum.lowered_text(xi, gi, y)
    assert _hoisted(text, "g") and _kept(text, "x")
    if backend == "sim":
        assert not col_sum.last_report.hazards
    y2 = torch.empty(48, 128)
    looped_norm(x[:48], g, y2)
    torch.testing.assert_close(y2, x[:48] / torch.sqrt((x[:48] ** 2).mean(-1, keepdim=True) + 1e-6) * g)
    assert _hoisted(looped_norm.lowered_text(x[:48], g, y2), "g")
    if backend == "sim":
        assert not looped_norm.last_report.hazards


@pypto.frontend.jit
def dyn_rms(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32), g: pypto.Tensor([256], pypto.DT_FP32),
            y: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 256)
    y[:] = pypto.rms_norm(x, g, 1e-6)


@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_dynamic_rows_down_to_none(monkeypatch, backend):
    # the load runs under `if block_idx < n_tiles`: with no rows no core loads gamma
    _on(monkeypatch, backend)
    g = torch.randn(256)
    for rows in (0, 5, 37):
        x, y = torch.randn(rows, 256), torch.empty(rows, 256)
        dyn_rms(x, g, y)
        torch.testing.assert_close(y, x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) * g)
        if backend == "sim":
            assert not dyn_rms.last_report.hazards
    text = dyn_rms.lowered_text(torch.randn(37, 256), g, torch.empty(37, 256))
    assert _hoisted(text, "g") and "if (get_block_idx() <" in text
