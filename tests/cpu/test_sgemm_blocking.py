"""The cpu float matmul's contract: every C element is one fp32 FMA chain over k in ascending order, so
the result does not depend on how pto_rt_sgemm blocks the columns (6 x 32 AVX-512 blocks over two
panels, 6 x 16 blocks, padded edge blocks): a 48- or 80-column product equals its 16-column slices
computed separately, bit for bit, for row counts with and without a 6-row edge."""
import numpy as np
import pytest

import pypto_pro.language as pl

from tests.pro.kernels import run_matmul


@pytest.mark.parametrize("m,k,n", [(12, 64, 48), (13, 32, 80), (32, 128, 64)])
def test_columns_blocked_any_way_give_the_same_bits(m, k, n, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "cpu")
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    full = run_matmul(a, b, pl.DT_FP32, pl.DT_FP32)
    for j in range(0, n, 16):
        part = run_matmul(a, np.ascontiguousarray(b[:, j:j + 16]), pl.DT_FP32, pl.DT_FP32)
        assert np.array_equal(full[:, j:j + 16].view(np.uint32), part.view(np.uint32)), f"columns {j}..{j + 15}"
