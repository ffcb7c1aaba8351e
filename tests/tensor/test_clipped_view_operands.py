"""Element-wise ops and matmuls between a view clipped to a run-time valid region and a full operand.

An op on such a view computes on its valid region: the result's valid extent is the clipped one, the
full operand is read over that region only, and ``assemble`` / ``out[...] =`` write that region (the
rest of the destination keeps what it held).  Two clipped operands meet on the smaller region.  A
matmul whose K is clipped on one side reduces over the valid K only (the other operand's rows or
columns beyond it contribute nothing).  Checked against numpy over the valid region, interp and cpu."""
import numpy as np
import pytest
import torch

import pypto
from pypto_pro.errors import KernelTypeError

F32 = pypto.DT_FP32
B, R, C = 3, 8, 64
SENTINEL = -123.0
LENS = torch.tensor([5, 8, 1], dtype=torch.int32)  # valid rows of each batch's [8, 64] block

NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "maximum": np.maximum, "minimum": np.minimum}


def _blocks_kernel(fn: str, clipped_left: bool):
    """out block b = fn(x block b clipped to lens[b] rows, w) (or with the operands swapped)."""
    op = getattr(pypto, fn)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([B * R, C], F32), w: pypto.Tensor([R, C], F32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for b in pypto.loop(B):
            v = lens[b]
            xv = pypto.view(x, [R, C], [b * R, 0], valid_shape=[v, C])
            r = op(xv, w) if clipped_left else op(w, xv)
            pypto.assemble(r, [b * R, 0], out)

    return k


def _inputs():
    g = torch.Generator().manual_seed(7)
    x = torch.rand(B * R, C, generator=g) + 0.5
    w = torch.rand(R, C, generator=g) + 0.5
    return x, w


def _expected(fn: str, x: torch.Tensor, w: torch.Tensor, clipped_left: bool) -> np.ndarray:
    want = np.full((B * R, C), SENTINEL, np.float32)
    for b, v in enumerate(LENS.tolist()):
        xs, ws = x[b * R:b * R + v].numpy(), w[:v].numpy()
        want[b * R:b * R + v] = NUMPY[fn](xs, ws) if clipped_left else NUMPY[fn](ws, xs)
    return want


@pytest.mark.both_backends
@pytest.mark.parametrize("fn", sorted(NUMPY))
@pytest.mark.parametrize("clipped_left", [True, False], ids=["clipped-left", "clipped-right"])
def test_binary_op_computes_on_the_valid_region(fn, clipped_left):
    x, w = _inputs()
    out = torch.full((B * R, C), SENTINEL)
    _blocks_kernel(fn, clipped_left)(x, w, LENS, out)
    np.testing.assert_array_equal(out.numpy(), _expected(fn, x, w, clipped_left))


@pytest.mark.both_backends
def test_where_with_a_clipped_mask_selects_over_its_region():
    """A clipped boolean mask with full value operands: the select covers the mask's valid rows."""
    @pypto.frontend.jit
    def k(m: pypto.Tensor([B * R, C], pypto.DT_BOOL), a: pypto.Tensor([R, C], F32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for b in pypto.loop(B):
            mv = pypto.view(m, [R, C], [b * R, 0], valid_shape=[lens[b], C])
            pypto.assemble(pypto.where(mv, a, float("-inf")), [b * R, 0], out)

    g = torch.Generator().manual_seed(3)
    m, a = torch.rand(B * R, C, generator=g) > 0.5, torch.randn(R, C, generator=g)
    out = torch.full((B * R, C), SENTINEL)
    k(m, a, LENS, out)
    want = np.full((B * R, C), SENTINEL, np.float32)
    for b, v in enumerate(LENS.tolist()):
        want[b * R:b * R + v] = np.where(m[b * R:b * R + v].numpy(), a[:v].numpy(), -np.inf)
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.both_backends
def test_compare_and_bitwise_ops_on_a_clipped_view():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([B * R, C], pypto.DT_INT32), w: pypto.Tensor([R, C], pypto.DT_INT32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * R, C], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 64)
        for b in pypto.loop(B):
            xv = pypto.view(x, [R, C], [b * R, 0], valid_shape=[lens[b], C])
            bits = pypto.bitwise_and(w, xv)
            pypto.assemble(pypto.where(pypto.gt(xv, w), bits, w), [b * R, 0], out)

    g = torch.Generator().manual_seed(5)
    x = torch.randint(0, 1000, (B * R, C), generator=g, dtype=torch.int32)
    w = torch.randint(0, 1000, (R, C), generator=g, dtype=torch.int32)
    out = torch.full((B * R, C), -1, dtype=torch.int32)
    k(x, w, LENS, out)
    want = np.full((B * R, C), -1, np.int32)
    for b, v in enumerate(LENS.tolist()):
        xs, ws = x[b * R:b * R + v].numpy(), w[:v].numpy()
        want[b * R:b * R + v] = np.where(xs > ws, xs & ws, ws)
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.both_backends
def test_two_clipped_views_meet_on_the_smaller_region():
    """Rows valid to lens[b] against rows valid to 8 - lens[b] (+ 1): the result covers the smaller."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([B * R, C], F32), y: pypto.Tensor([B * R, C], F32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for b in pypto.loop(B):
            v = lens[b]
            xv = pypto.view(x, [R, C], [b * R, 0], valid_shape=[v, C])
            yv = pypto.view(y, [R, C], [b * R, 0], valid_shape=[pypto.max(R - v, 1), C])
            pypto.assemble(xv * yv, [b * R, 0], out)

    x, y = torch.randn(B * R, C), torch.randn(B * R, C)
    out = torch.full((B * R, C), SENTINEL)
    k(x, y, LENS, out)
    want = torch.full((B * R, C), SENTINEL)
    for b, v in enumerate(LENS.tolist()):
        n = min(v, max(R - v, 1))
        want[b * R:b * R + n] = x[b * R:b * R + n] * y[b * R:b * R + n]
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.both_backends
def test_a_statically_clipped_view_and_broadcast_operands():
    """A view clipped to 5 of 8 rows when recorded, a [1, C] row and a [R, 1] column: the result
    covers the 5 rows, the row broadcasts over them, the column is read over them."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([R, C], F32), row: pypto.Tensor([1, C], F32), col: pypto.Tensor([R, 1], F32),
          out: pypto.Tensor([R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        xv = pypto.view(x, [R, C], [0, 0], valid_shape=[5, C])
        out[:] = xv * row + col

    x, row, col = torch.randn(R, C), torch.randn(1, C), torch.randn(R, 1)
    out = torch.full((R, C), SENTINEL)
    k(x, row, col, out)
    want = torch.full((R, C), SENTINEL)
    want[:5] = x[:5] * row + col[:5]
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.both_backends
def test_a_clipped_3d_view_meets_a_full_2d_operand():
    """As the compressor block: a [1, S, D] view (its row clipped at run time) plus a [S, D] view of a
    table clipped at its end: the sum covers both valid regions."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([B, 2, C], F32), table: pypto.Tensor([R, C], F32),
          pos: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B, 2, C], F32)):
        pypto.set_vec_tile_shapes(1, 2, 64)
        for b in pypto.loop(B):
            xv = pypto.view(x, [1, 2, C], [b, 0, 0])
            tv = pypto.view(table, [2, C], [pos[b], 0])  # clipped at the table's end when pos[b] = R - 1
            pypto.assemble(pypto.add(xv, tv), [b, 0, 0], out)

    x, table = torch.randn(B, 2, C), torch.randn(R, C)
    pos = torch.tensor([0, 7, 3], dtype=torch.int32)
    out = torch.full((B, 2, C), SENTINEL)
    k(x, table, pos, out)
    want = torch.full((B, 2, C), SENTINEL)
    for b, p in enumerate(pos.tolist()):
        n = min(2, R - p)
        want[b, :n] = x[b, :n] + table[p:p + n]
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.both_backends
def test_fillpad_fixes_what_lies_beyond_the_region():
    """Beyond the valid region a result holds nothing defined; ``pypto.fillpad`` gives it a value."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([B * R, C], F32), w: pypto.Tensor([R, C], F32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for b in pypto.loop(B):
            xv = pypto.view(x, [R, C], [b * R, 0], valid_shape=[lens[b], C])
            pypto.assemble(pypto.fillpad(xv - w, value=0.0), [b * R, 0], out)

    x, w = _inputs()
    out = torch.full((B * R, C), SENTINEL)
    k(x, w, LENS, out)
    want = np.zeros((B * R, C), np.float32)
    for b, v in enumerate(LENS.tolist()):
        want[b * R:b * R + v] = x[b * R:b * R + v].numpy() - w[:v].numpy()
    np.testing.assert_array_equal(out.numpy(), want)


def test_unclipped_operands_of_different_sizes_still_do_not_broadcast():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([5, C], F32), w: pypto.Tensor([R, C], F32), out: pypto.Tensor([R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x + w

    with pytest.raises(KernelTypeError, match="do not broadcast"):
        k(torch.zeros(5, C), torch.zeros(R, C), torch.zeros(R, C))


def test_requested_shapes_of_a_clipped_view_must_broadcast():
    """A view of 8 rows (valid 5) and a full operand of 4 rows: the requested shapes disagree."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([R, C], F32), w: pypto.Tensor([4, C], F32), out: pypto.Tensor([R, C], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.view(x, [R, C], [0, 0], valid_shape=[5, C]) + w

    with pytest.raises(KernelTypeError, match="do not broadcast"):
        k(torch.zeros(R, C), torch.zeros(4, C), torch.zeros(R, C))


# ------------------------------------------------------------------------------ matmul
L, N = 16, 32


@pytest.mark.both_backends
def test_fixed_operand_times_a_k_clipped_operand():
    """``tril @ g`` with g's rows (K) valid to lens[b]: the product sums over the valid K only."""
    @pypto.frontend.jit
    def k(tri: pypto.Tensor([L, L], F32), g: pypto.Tensor([B * L, N], F32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * L, N], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
        for b in pypto.loop(B):
            gv = pypto.view(g, [L, N], [b * L, 0], valid_shape=[lens[b] * 2, N])
            pypto.assemble(pypto.matmul(tri, gv, F32), [b * L, 0], out)

    tri = torch.ones(L, L).tril()
    g = torch.randn(B * L, N)
    out = torch.full((B * L, N), SENTINEL)
    k(tri, g, LENS, out)
    want = torch.empty(B * L, N)
    for b, v in enumerate(LENS.tolist()):
        kv = 2 * v
        want[b * L:(b + 1) * L] = tri[:, :kv] @ g[b * L:b * L + kv]
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.both_backends
@pytest.mark.parametrize("a_trans", [False, True])
def test_k_clipped_operand_times_a_fixed_operand(a_trans):
    """``a @ w`` with a's columns (K) valid to lens[b] * 2 and its rows full: w's rows beyond the valid
    K are not read (their values do not matter)."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([B * L, L], F32), w: pypto.Tensor([L, N], F32),
          lens: pypto.Tensor([B], pypto.DT_INT32), out: pypto.Tensor([B * L, N], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
        for b in pypto.loop(B):
            av = pypto.view(a, [L, L], [b * L, 0], valid_shape=[L, lens[b] * 2])
            if a_trans:
                av = pypto.transpose(av, 0, 1)
            pypto.assemble(pypto.matmul(av, w, F32, a_trans=a_trans), [b * L, 0], out)

    a, w = torch.randn(B * L, L), torch.randn(L, N)
    out = torch.full((B * L, N), SENTINEL)
    want = torch.empty(B * L, N)
    for b, v in enumerate(LENS.tolist()):
        kv = 2 * v
        want[b * L:(b + 1) * L] = a[b * L:(b + 1) * L, :kv] @ w[:kv]
    k(a, w, LENS, out)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.both_backends
@pytest.mark.parametrize("b_trans", [False, True])
def test_the_fixed_operand_beyond_the_valid_k_is_not_read(b_trans):
    """The rows of w past the valid K hold NaN: the product stays finite and exact."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([L, L], F32), w: pypto.Tensor([L, N] if not b_trans else [N, L], F32),
          kv: pypto.Tensor([1], pypto.DT_INT32), out: pypto.Tensor([L, N], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
        for _ in pypto.loop(1):
            av = pypto.view(a, [L, L], [0, 0], valid_shape=[L, kv[0]])
            out[:] = pypto.matmul(av, w, F32, b_trans=b_trans)

    a, w = torch.randn(L, L), torch.randn(L, N)
    w[6:] = float("nan")
    out = torch.full((L, N), SENTINEL)
    k(a, w.t().contiguous() if b_trans else w, torch.tensor([6], dtype=torch.int32), out)
    torch.testing.assert_close(out, a[:, :6] @ w[:6], rtol=1e-5, atol=1e-5)
