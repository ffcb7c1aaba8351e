"""A move out of the Acc (L0C) may read the alignment padding of what the matmul wrote, nothing more.

The official framework aligns an Acc's valid shape (columns up to 32, rows to the 16-row fractal) before a
dual-split Acc -> Vec move, so the move reads Acc elements the matmul never wrote; the simulator accepts that
padding (docs/sim.md) but still reports a move whose window reaches past it, or reads an Acc nothing wrote.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelUninitError

F16, F32 = pl.DT_FP16, pl.DT_FP32
S = pl.MemorySpace
M, K, N = 16, 32, 64


def _slot(shape, dtype, space, addr, mutex, **kw):
    return pl.make_tile_group(type=pl.TileType(shape, dtype, space, **kw), addrs=addr, mutex_ids=[mutex])[0]


def _kernel(written_cols: int, read_cols: int, rows_read: int = M, matmul: bool = True, stale_rows: int = 0):
    """Cube: C[:, :written_cols] = A @ B[:, :written_cols]; then the Acc's valid shape becomes
    [rows_read, read_cols] and a DualModeSplitN move hands each AIV half of it; the AIVs store only
    the columns the matmul wrote.  With ``stale_rows``, an earlier matmul first fills the Acc's first
    ``stale_rows`` rows across all N columns (a slot reused with another shape)."""
    half = read_cols // 2

    @pl.jit(backend="sim")
    def acc_pad(a: pl.Tensor[[M, K], F16], b: pl.Tensor[[K, N], F16], c: pl.Tensor[[M, N], F32]):
        a1 = _slot([M, K], F16, S.Mat, 0x00000, 0)
        b1 = _slot([K, N], F16, S.Mat, 0x10000, 1, valid_shape=[-1, -1])
        a0 = _slot([M, K], F16, S.Left, 0x0000, 2, valid_shape=[-1, -1])
        b0 = _slot([K, N], F16, S.Right, 0x0000, 3, valid_shape=[-1, -1])
        acc = _slot([M, N], F32, S.Acc, 0x0000, 4, valid_shape=[-1, -1])
        part = _slot([M, N // 2], F32, S.Vec, 0x0000, 5, valid_shape=[-1, -1])
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=7)
            me = pl.get_subblock_idx()
            keep = pl.max(pl.min(written_cols - me * half, half), 0)
            if keep > 0:
                pl.set_validshape(part, [M, keep])
                pl.store(c, part, [0, me * half])
        with pl.section_cube():
            if pl.constexpr(stale_rows > 0):
                pl.load(a1, a, [0, 0])
                pl.load(b1, b, [0, 0])
                pl.set_validshape(a0, [stale_rows, K])
                pl.move(a0, a1)
                pl.move(b0, b1)
                pl.set_validshape(acc, [stale_rows, N])
                pl.matmul(acc, a0, b0)
                pl.set_validshape(a0, [M, K])
            if pl.constexpr(matmul):
                pl.load(a1, a, [0, 0])
                pl.set_validshape(b1, [K, written_cols])
                pl.load(b1, b, [0, 0])
                pl.move(a0, a1)
                pl.set_validshape(b0, [K, written_cols])
                pl.move(b0, b1)
                pl.set_validshape(acc, [M, written_cols])
                pl.matmul(acc, a0, b0)
            pl.set_validshape(acc, [rows_read, read_cols])
            pl.set_validshape(part, [rows_read, half])
            pl.move(part, acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitN)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=7)

    return acc_pad


def _run(kernel):
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel(a, b, c)
    return a.astype(np.float32) @ b.astype(np.float32), c


def test_a_split_move_may_read_the_32_column_padding():
    want, c = _run(_kernel(34, 64))  # 34 columns written, the valid shape aligned up to 64
    np.testing.assert_array_equal(c[:, :34], want[:, :34])


def test_bytes_an_earlier_matmul_left_beside_the_written_part_do_not_matter():
    """Rows 0..7 hold all 64 columns from an earlier matmul; the last one writes 16 rows x 34 columns, so the
    window's unwritten bytes (rows 8..15, columns 34..63) are padding of the last write, not a hole."""
    want, c = _run(_kernel(34, 64, stale_rows=8))
    np.testing.assert_array_equal(c[:, :34], want[:, :34])


def test_a_move_reading_past_the_padding_is_an_uninitialised_read():
    with pytest.raises(KernelUninitError, match="pl.move"):
        _run(_kernel(16, 64))  # 16 columns written: 32..63 are beyond the alignment padding


def test_stale_bytes_do_not_hide_a_read_past_the_padding():
    with pytest.raises(KernelUninitError, match="pl.move"):
        _run(_kernel(16, 64, stale_rows=8))  # rows 8..15 of columns 32..63: beyond the padding of the last write


def test_a_move_of_an_acc_nothing_wrote_is_an_uninitialised_read():
    with pytest.raises(KernelUninitError, match="pl.move"):
        _run(_kernel(34, 64, matmul=False))
