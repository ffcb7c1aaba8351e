"""``pypto.matmul`` sums K in blocks of ``gcd(kAL1, kBL1)`` of ``set_cube_tile_shapes``'s ``k`` (``[kL0, kL1]``
or ``[kL0, kAL1, kBL1]``): each block's product is an FP32 chain of its own, added to the accumulated value
with one rounding, in block order.  The data makes the block boundaries visible: the row
``1, 0 ... 0, 2^24, -2^24, 0 ...`` with the pair at k = 16, 17 sums to 1 when a block starts at 16 (the
pair cancels on its own) and to 0 when the 1 and the pair share a block (1 + 2^24 rounds to 2^24)."""
import numpy as np
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
K = 64


def _product(k_tiles) -> float:
    @pypto.frontend.jit
    def mm(a: pypto.Tensor([16, K], pypto.DT_FP32), b: pypto.Tensor([K, 16], pypto.DT_FP32),
           out: pypto.Tensor([16, 16], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], k_tiles, [16, 16])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a = np.zeros((16, K), np.float32)
    a[:, 0], a[:, 16], a[:, 17] = 1.0, 2.0 ** 24, -(2.0 ** 24)
    out = torch.zeros((16, 16))
    mm(torch.from_numpy(a), torch.ones((K, 16)), out)
    assert torch.all(out == out[0, 0])
    return float(out[0, 0])


@BOTH
@pytest.mark.parametrize("k_tiles, want", [
    ([16, 16], 1.0),          # blocks of 16: 1, then 2^24 - 2^24 = 0 on its own
    ([16, 32], 0.0),          # blocks of 32: 1 + 2^24 - 2^24 in one chain
    ([16, 32, 16], 1.0),      # gcd(kAL1=32, kBL1=16) = 16
    ([16, 64, 32], 0.0),      # gcd(64, 32) = 32
])
def test_the_k_block_is_the_gcd_of_the_l1_k_tiles(k_tiles, want):
    assert _product(k_tiles) == want
