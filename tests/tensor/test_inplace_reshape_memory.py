"""An in-place reshape sees its parameter's memory, and an explicit ``valid_shape`` is taken as given.

``pypto.reshape(x, [n, c], inplace=True)`` with ``n`` another tensor's DYNAMIC dim keeps ``x``'s
address and checks no size: when ``x`` holds more rows than ``n``, a ``pypto.view`` of the result with
an explicit ``valid_shape`` reads those rows (a packed variable-length batch whose Q and KV totals
differ reshapes K with the Q total and reads K's last sequence past that row count).  A view without
``valid_shape`` is still clipped at the reshaped tensor's end, and every view stops where the memory
does.  An explicit ``valid_shape`` of a view of a view is likewise not cut at the inner view's valid
region.  Interp and cpu alike (cpu bit-identical)."""
import numpy as np
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
D = pypto.DYNAMIC
T = 8  # rows per block


def reshape_then_blocks(explicit: bool):
    """out[block] = view(x seen as [rows(y), 32], block of T rows) * 2 + 1, over ceil(rows(out) / T) blocks,
    the view's valid rows ``min(T, rows(out) - off)`` given explicitly or left to the clipping."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([D, 4, 8], pypto.DT_FP32), y: pypto.Tensor([D, 32], pypto.DT_FP32),
          out: pypto.Tensor([D, 32], pypto.DT_FP32)):
        seen = pypto.reshape(x, [y.shape[0], 32], inplace=True)
        total = out.shape[0]
        pypto.set_vec_tile_shapes(T, 32)
        for i in pypto.loop((total + T - 1) // T):
            off = i * T
            if explicit:
                w = pypto.view(seen, [T, 32], [off, 0], valid_shape=[(total - off).min(T), 32])
            else:
                w = pypto.view(seen, [T, 32], [off, 0])
            pypto.assemble(w * 2.0 + 1.0, [off, 0], out)
    return k


def _run(kernel, x_rows: int, y_rows: int, out_rows: int):
    x = torch.randn(x_rows, 4, 8)
    y = torch.zeros(y_rows, 32)
    out = torch.full((out_rows, 32), -7.0)
    kernel(x, y, out)
    return x.reshape(x_rows, 32) * 2.0 + 1.0, out


@BOTH
@pytest.mark.parametrize("x_rows, y_rows", [(20, 12), (20, 3), (17, 9)])
def test_explicit_valid_shape_reads_the_rows_past_the_reshaped_end(x_rows, y_rows):
    want, out = _run(reshape_then_blocks(True), x_rows, y_rows, x_rows)
    assert torch.equal(out, want)


@BOTH
def test_explicit_valid_shape_stops_where_the_memory_ends():
    want, out = _run(reshape_then_blocks(True), 12, 16, 16)  # the reshape claims more rows than x holds
    assert torch.equal(out[:12], want)
    assert (out[12:] == -7.0).all()


@BOTH
def test_without_valid_shape_a_view_is_clipped_at_the_reshaped_end():
    want, out = _run(reshape_then_blocks(False), 16, 10, 16)
    assert torch.equal(out[:10], want[:10])
    assert (out[10:] == -7.0).all()


@BOTH
def test_equal_row_counts_are_unchanged():
    want, out = _run(reshape_then_blocks(True), 19, 19, 19)
    assert torch.equal(out, want)


@BOTH
def test_valid_shape_of_a_view_of_a_view_is_not_cut_at_the_inner_valid_region():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([4, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        inner = pypto.view(x, [8, 32], [4, 0], valid_shape=[3, 32])  # rows 4..7 valid
        outer = pypto.view(inner, [4, 32], [2, 0], valid_shape=[4, 32])  # rows 6..10 of x
        pypto.assemble(outer + 0.5, [0, 0], out)

    x = torch.randn(16, 32)
    out = torch.full((4, 32), -7.0)
    k(x, out)
    np.testing.assert_array_equal(out.numpy(), (x[6:10] + 0.5).numpy())
