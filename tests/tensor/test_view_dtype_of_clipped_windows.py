"""``pypto.view(input=w, dtype=d)`` of a window ``w`` clipped to a smaller valid region: the result
reports ``w``'s declared shape with its last dim scaled by the element sizes, so a reshape of the whole
declared shape that follows reads the valid values where the NPU's tile of that shape holds them (the
official sparse-attention kernel passes its arguments by keyword, ``input=``)."""
import numpy as np
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
D = pypto.DYNAMIC
TILE = 8


def _valid(r: int) -> int:
    return min(r + 3, TILE)


@BOTH
def test_an_int8_window_with_16_valid_bytes_is_an_fp32_window_of_8_with_4_valid():
    @pypto.frontend.jit
    def scales_of(raw: pypto.Tensor([D, 32], pypto.DT_INT8), out: pypto.Tensor([D, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE, 32)
        for r in pypto.loop(0, raw.shape[0] // TILE, 1, name="rows", idx_name="r"):
            cur = (r + 3).min(TILE)
            window = pypto.view(input=raw, shape=[TILE, 32], offsets=[r * TILE, 0], valid_shape=[cur, 16])
            as_f32 = pypto.view(input=window, dtype=pypto.DT_FP32)
            assert list(as_f32.shape) == [TILE, 8]
            flat = pypto.reshape(input=pypto.add(as_f32, 0), shape=[TILE * 8, 1])
            pypto.set_vec_tile_shapes(TILE * 8, 1)
            pypto.assemble(pypto.mul(flat, 3.0), [r * TILE * 8, 0], out)

    blocks = 5
    rng = np.random.default_rng(7)
    floats = rng.standard_normal((blocks * TILE, 8)).astype(np.float32)
    raw = floats.view(np.int8)                      # [rows, 32] bytes, 4 bytes per float
    out = torch.zeros((blocks * TILE * 8, 1))
    scales_of(torch.from_numpy(raw.copy()), out)
    got = out.numpy().reshape(blocks, TILE, 8)
    for r in range(blocks):
        n = _valid(r)   # rows past the valid region and columns 4..7 are unspecified (the tile's pad)
        assert np.array_equal(got[r, :n, :4], floats[r * TILE:r * TILE + n, :4] * 3)


def test_a_declared_last_dim_that_does_not_fill_whole_elements_is_refused():
    @pypto.frontend.jit
    def odd(raw: pypto.Tensor([D, 30], pypto.DT_INT8), out: pypto.Tensor([D, 4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE, 32)
        for r in pypto.loop(0, raw.shape[0] // TILE, 1, name="rows", idx_name="r"):
            window = pypto.view(raw, [TILE, 30], [r * TILE, 0], valid_shape=[(r + 3).min(TILE), 16])
            pypto.assemble(pypto.view(window, dtype=pypto.DT_FP32), [r * TILE, 0], out)

    with pytest.raises(pypto.KernelTypeError, match="declared last dim"):
        odd(torch.zeros((16, 30), dtype=torch.int8), torch.zeros((16, 4)))
