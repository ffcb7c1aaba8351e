"""``pypto.experimental.gather_in_ub`` / ``gather_in_l1`` on the views paged-attention kernels pass
(ops/paged.py): indices declared ``[1, tile]`` whose one row is clipped at run time (a view of a
``[rows, topk]`` id table at a loop-index row), a source view that covers fewer rows than the page
table reaches (rows are addressed through the whole cache), and a result that reports the declared
``[tile, cols]`` shape to a following ``pypto.reshape``."""
import numpy as np
import pytest
import torch

import pypto
import pypto.experimental as E

BOTH = pytest.mark.both_backends
D = pypto.DYNAMIC
TILE, HIDDEN, BLOCK = 8, 16, 4


def _paged(ids_row: np.ndarray, table_row: np.ndarray) -> np.ndarray:
    return table_row[ids_row // BLOCK] * BLOCK + ids_row % BLOCK


def _data(rows: int, seed: int):
    rng = np.random.default_rng(seed)
    cache = rng.standard_normal((40, HIDDEN)).astype(np.float32)
    table = np.stack([rng.permutation(10)[:4] for _ in range(rows)]).astype(np.int32)  # 4 blocks of 4 per row
    ids = rng.integers(0, 16, (rows, TILE)).astype(np.int32)
    return cache, table, ids


def _valid(r: int) -> int:
    return min(r + 3, TILE)


@BOTH
def test_gather_in_ub_reads_the_first_row_of_a_clipped_index_view():
    @pypto.frontend.jit
    def gather_rows(cache: pypto.Tensor([D, HIDDEN], pypto.DT_FP32), ids: pypto.Tensor([D, TILE], pypto.DT_INT32),
                    table: pypto.Tensor([D, 4], pypto.DT_INT32), out: pypto.Tensor([D, HIDDEN], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE, HIDDEN)
        for r in pypto.loop(0, ids.shape[0], 1, name="rows", idx_name="r"):
            cur = (r + 3).min(TILE)
            idx = pypto.view(ids, [1, TILE], [r, 0], valid_shape=[1, cur])
            tab = pypto.view(table, [1, 4], [r, 0])
            # an 8-row window of the 40-row cache: the page table sends rows far beyond it
            src = pypto.view(cache, [TILE, HIDDEN], [0, 0], valid_shape=[cur, HIDDEN])
            pypto.assemble(E.gather_in_ub(src, idx, tab, BLOCK, -2), [r * TILE, 0], out)

    rows = 7
    cache, table, ids = _data(rows, 1)
    out = torch.full((rows * TILE, HIDDEN), -7.0)
    gather_rows(torch.from_numpy(cache), torch.from_numpy(ids), torch.from_numpy(table), out)
    want = np.full((rows * TILE, HIDDEN), -7.0, np.float32)
    for r in range(rows):
        n = _valid(r)
        want[r * TILE:r * TILE + n] = cache[_paged(ids[r, :n], table[r])]
    assert np.array_equal(out.numpy(), want)


@BOTH
def test_gather_in_l1_takes_the_same_index_views():
    @pypto.frontend.jit
    def gather_cols(cache: pypto.Tensor([D, HIDDEN], pypto.DT_FP16), ids: pypto.Tensor([D, TILE], pypto.DT_INT32),
                    table: pypto.Tensor([D, 4], pypto.DT_INT32), out: pypto.Tensor([D, 8], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(TILE, HIDDEN)
        for r in pypto.loop(0, ids.shape[0], 1, name="rows", idx_name="r"):
            cur = (r + 3).min(TILE)
            idx = pypto.view(ids, [1, TILE], [r, 0], valid_shape=[1, cur])
            tab = pypto.view(table, [1, 4], [r, 0])
            pypto.assemble(E.gather_in_l1(cache, idx, tab, BLOCK, 8, True, True), [r * TILE, 0], out)

    rows = 5
    cache, table, ids = _data(rows, 2)
    cache16 = cache.astype(np.float16)
    out = torch.zeros((rows * TILE, 8), dtype=torch.float16)
    gather_cols(torch.from_numpy(cache16), torch.from_numpy(ids), torch.from_numpy(table), out)
    for r in range(rows):
        n = _valid(r)
        assert np.array_equal(out.numpy()[r * TILE:r * TILE + n], cache16[_paged(ids[r, :n], table[r]), :8])
        assert not out.numpy()[r * TILE + n:(r + 1) * TILE].any()


@BOTH
def test_a_gather_result_reshapes_with_its_declared_shape():
    """A source view declared [rows, 8] with 4 valid columns: the result is declared [TILE, 8] (valid
    [cur, 4]), and a reshape to [TILE * 8, 1] puts element (j, c) at j * 8 + c."""
    @pypto.frontend.jit
    def gather_scales(scales: pypto.Tensor([D, 8], pypto.DT_FP32), ids: pypto.Tensor([D, TILE], pypto.DT_INT32),
                      table: pypto.Tensor([D, 4], pypto.DT_INT32), out: pypto.Tensor([D, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE, 8)
        for r in pypto.loop(0, ids.shape[0], 1, name="rows", idx_name="r"):
            cur = (r + 3).min(TILE)
            idx = pypto.view(ids, [1, TILE], [r, 0], valid_shape=[1, cur])
            tab = pypto.view(table, [1, 4], [r, 0])
            src = pypto.view(scales, [scales.shape[0], 8], [0, 0], valid_shape=[scales.shape[0], 4])
            g = E.gather_in_ub(src, idx, tab, BLOCK, -2)
            assert list(g.shape) == [TILE, 8]
            flat = pypto.reshape(g, [TILE * 8, 1])
            pypto.set_vec_tile_shapes(TILE * 8, 1)
            pypto.assemble(pypto.mul(flat, 2.0), [r * TILE * 8, 0], out)

    rows = 6
    _, table, ids = _data(rows, 3)
    scales = np.random.default_rng(4).standard_normal((40, 8)).astype(np.float32)
    out = torch.zeros((rows * TILE * 8, 1))
    gather_scales(torch.from_numpy(scales), torch.from_numpy(ids), torch.from_numpy(table), out)
    got = out.numpy().reshape(rows, TILE, 8)
    for r in range(rows):
        n = _valid(r)
        assert np.array_equal(got[r, :n, :4], scales[_paged(ids[r, :n], table[r]), :4] * 2)


def test_indices_declared_with_more_than_one_row_are_refused():
    @pypto.frontend.jit
    def two_rows(cache: pypto.Tensor([40, HIDDEN], pypto.DT_FP32), ids: pypto.Tensor([4, TILE], pypto.DT_INT32),
                 table: pypto.Tensor([1, 4], pypto.DT_INT32), out: pypto.Tensor([TILE, HIDDEN], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE, HIDDEN)
        out[:] = E.gather_in_ub(cache, pypto.view(ids, [2, TILE], [0, 0]), table, BLOCK, -2)

    cache, table, ids = _data(4, 5)
    with pytest.raises(pypto.KernelTypeError, match=r"indices must be a \[1, n\]"):
        two_rows(torch.from_numpy(cache), torch.from_numpy(ids), torch.from_numpy(table[:1]),
                 torch.empty(TILE, HIDDEN))
