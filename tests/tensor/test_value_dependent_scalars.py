"""Value-dependent scalars: ``t[i]`` / ``t[i, j]`` of an integer tensor (every axis indexed) is the element's
run-time value as a SymbolicScalar (the official ``GetTensorData``).  It can be a view offset (a paged
gather driven by a block table), a loop trip count, a valid extent, a runtime ``if`` condition; the same
on interp, cpu and sim (no hazards)."""
import numpy as np
import pytest
import torch

import pypto

F32, I32 = pypto.DT_FP32, pypto.DT_INT32
BACKENDS = ["interp", "cpu", "sim"]


def _clean(kernel, backend):
    if backend == "sim":
        assert not kernel.last_report.hazards


@pytest.mark.parametrize("backend", BACKENDS)
def test_block_table_drives_a_paged_gather(backend):
    """Page ``table[b, j]`` of a cache of 4-row pages lands at rows [4 * (b * 2 + j), +4) of the output."""
    @pypto.frontend.jit(backend=backend)
    def gather_pages(cache: pypto.Tensor([40, 16], F32), table: pypto.Tensor([3, 2], I32),
                     out: pypto.Tensor([24, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        for b in pypto.loop(0, 3, 1, name="B", idx_name="b"):
            for j in pypto.loop(0, 2, 1, name="J", idx_name="j"):
                page = table[b, j]
                rows = pypto.view(cache, [4, 16], [page * 4, 0])
                pypto.assemble(rows * 2.0 - 1.0, [(b * 2 + j) * 4, 0], out)

    cache = torch.randn(40, 16)
    table = torch.tensor([[9, 0], [4, 4], [7, 2]], dtype=torch.int32)
    out = torch.zeros(24, 16)
    gather_pages(cache, table, out)
    want = torch.cat([cache[p * 4:p * 4 + 4] * 2.0 - 1.0 for p in table.flatten().tolist()])
    assert torch.equal(out, want)
    _clean(gather_pages, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_trip_count_read_from_a_tensor(backend):
    """``n = counts[k]`` bounds a pypto.loop: row k of ``out`` accumulates the first n rows of ``x``
    (n = 0 leaves the zero it starts from)."""
    @pypto.frontend.jit(backend=backend)
    def prefix_rows(x: pypto.Tensor([8, 32], F32), counts: pypto.Tensor([3], I32), out: pypto.Tensor([3, 32], F32)):
        pypto.set_vec_tile_shapes(1, 32)
        for k in pypto.loop(0, 3, 1, name="K", idx_name="k"):
            n = counts[k]
            out[k:k + 1, :] = pypto.full([1, 32], 0.0, F32)
            for r in pypto.loop(0, n, 1, name="R", idx_name="r"):
                out[k:k + 1, :] = out[k:k + 1, :] + x[r:r + 1, :]

    x = torch.randn(8, 32)
    counts = torch.tensor([3, 0, 8], dtype=torch.int32)
    out = torch.full((3, 32), 5.0)
    prefix_rows(x, counts, out)
    want = torch.zeros(3, 32)
    for k, n in enumerate(counts.tolist()):
        for r in range(n):
            want[k] = want[k] + x[r]
    assert torch.equal(out, want)
    _clean(prefix_rows, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ragged_lengths_as_valid_extents(backend):
    """Sequence b starts at ``starts[b]`` and has ``lens[b]`` rows (at most 8): its row sum over the valid
    rows of an 8-row window, a runtime ``if`` on the length zeroes empty sequences."""
    @pypto.frontend.jit(backend=backend)
    def ragged_sum(x: pypto.Tensor([32, 16], F32), starts: pypto.Tensor([4], I32), lens: pypto.Tensor([4], I32),
                   out: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        for b in pypto.loop(0, 4, 1, name="B", idx_name="b"):
            n = lens[b]
            if n > 0:
                win = pypto.view(x, [8, 16], [starts[b], 0], valid_shape=[n.min(8), 16])
                out[b:b + 1, :] = pypto.sum(win, dim=0, keepdim=True)
            else:
                out[b:b + 1, :] = pypto.full([1, 16], 0.0, F32)

    x = torch.randn(32, 16)
    starts = torch.tensor([0, 5, 20, 24], dtype=torch.int32)
    lens = torch.tensor([5, 8, 0, 3], dtype=torch.int32)
    out = torch.full((4, 16), 9.0)
    ragged_sum(x, starts, lens, out)
    want = np.zeros((4, 16), np.float32)
    for b, (s, n) in enumerate(zip(starts.tolist(), lens.tolist())):
        if n:
            want[b] = x.numpy()[s:s + n].sum(axis=0)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    _clean(ragged_sum, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_read_of_a_computed_tensor_sees_earlier_writes(backend):
    """The read is ordered after the statements recorded before it: an index tensor computed in the kernel
    (``idx + shift``) and a parameter rewritten in the kernel are read with their new values."""
    @pypto.frontend.jit(backend=backend)
    def shifted(x: pypto.Tensor([16, 8], F32), idx: pypto.Tensor([4], I32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        moved = idx + 2
        idx[:] = idx * 3
        for i in pypto.loop(0, 4, 1, name="I", idx_name="i"):
            a = moved[i]
            b = idx[i]
            out[i:i + 1, :] = pypto.view(x, [1, 8], [a, 0]) + pypto.view(x, [1, 8], [b, 0])

    x = torch.randn(16, 8)
    idx = torch.tensor([0, 1, 4, 3], dtype=torch.int32)
    orig = idx.clone()
    out = torch.zeros(4, 8)
    shifted(x, idx, out)
    want = torch.stack([x[int(v) + 2] + x[int(v) * 3] for v in orig])
    assert torch.equal(out, want)
    assert torch.equal(idx, orig * 3)
    _clean(shifted, backend)


def test_scalar_arithmetic_and_official_spellings():
    """The read is a SymbolicScalar: arithmetic, ``.min``/``.max``, ``as_variable()`` and ``pypto.cond`` work on
    it; a float tensor indexed on every axis stays a one-element tensor."""
    seen = {}

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), n: pypto.Tensor([2], I32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        rows = (n[0] + 3) // 4
        rows.as_variable()
        seen["kind"] = type(rows).__name__
        seen["elem"] = type(x[1, 2]).__name__
        out[:] = x
        for r in pypto.loop(0, rows.max(0).min(4), 1, name="R", idx_name="r"):
            if pypto.cond(n[1] == r):
                out[r:r + 1, :] = x[r:r + 1, :] * 0.0

    x = torch.randn(4, 8)
    out = torch.zeros(4, 8)
    k(x, torch.tensor([9, 1], dtype=torch.int32), out)
    want = x.clone()
    want[1] = 0.0
    assert torch.equal(out, want)
    assert seen == {"kind": "SymbolicScalar", "elem": "Tensor"}


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_an_index_read_outside_the_tensor_is_a_run_time_error(backend):
    @pypto.frontend.jit(backend=backend)
    def k(x: pypto.Tensor([4, 8], F32), idx: pypto.Tensor([2], I32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        out[:] = pypto.view(x, [1, 8], [idx[5 - 4 + 2], 0])

    with pytest.raises(pypto.KernelError, match="idx"):
        k(torch.randn(4, 8), torch.tensor([0, 1], dtype=torch.int32), torch.zeros(1, 8))


def test_pass_verification_evaluates_the_read():
    """enable_pass_verify compares against the numpy evaluation of the graph, which binds the read too."""
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def k(x: pypto.Tensor([8, 8], F32), idx: pypto.Tensor([2], I32), out: pypto.Tensor([2, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(0, 2, 1, name="I", idx_name="i"):
            out[i:i + 1, :] = pypto.view(x, [1, 8], [idx[i], 0]) * 2.0

    x = torch.randn(8, 8)
    out = torch.zeros(2, 8)
    k(x, torch.tensor([6, 3], dtype=torch.int32), out)
    assert torch.equal(out, torch.stack([x[6] * 2.0, x[3] * 2.0]))


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_read_values_written_into_a_kernel_tensor(backend):
    """``pypto.Tensor(shape, dtype)`` inside a kernel is a new GM tensor; element writes of constants and of read
    values (``info[0, 1] = idx[1]``), and a loop storing ``idx[i] * 2 + i`` element by element."""
    @pypto.frontend.jit(backend=backend)
    def k(idx: pypto.Tensor([4], I32), out: pypto.Tensor([4], I32), info_out: pypto.Tensor([1, 3], I32)):
        pypto.set_vec_tile_shapes(4)
        for i in pypto.loop(0, 4, 1, name="L", idx_name="i"):
            out[i] = idx[i] * 2 + i
        info = pypto.Tensor([1, 3], I32)
        pypto.set_vec_tile_shapes(1, 3)
        info[0, 0] = 7
        info[0, 1] = idx[1]
        info[0, 2] = idx[2] + 1
        info_out[:] = info

    idx = torch.tensor([3, 1, 4, 1], dtype=torch.int32)
    out, info = torch.zeros(4, dtype=torch.int32), torch.zeros(1, 3, dtype=torch.int32)
    k(idx, out, info)
    assert out.tolist() == [6, 3, 10, 5] and info.tolist() == [[7, 1, 5]]
