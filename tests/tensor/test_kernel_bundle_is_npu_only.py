"""Packing kernels into a kernel bundle (``PYPTO_ENABLE_KERNEL_BUNDLE=1``: NPU device binaries for
the C launch ABI) is an NPU-only facility: compiling then raises one error naming it."""
import pytest
import torch

import pypto
from pypto_pro.npu import NpuOnlyFacilityError


def test_kernel_bundle_packing_raises_naming_the_facility(monkeypatch):
    @pypto.frontend.jit
    def add_one(x: pypto.Tensor([4, 32], pypto.DT_FP32), y: pypto.Tensor([4, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        y[:] = x + 1.0

    x, y = torch.zeros(4, 32), torch.zeros(4, 32)
    monkeypatch.setenv("PYPTO_ENABLE_KERNEL_BUNDLE", "1")
    with pytest.raises(NpuOnlyFacilityError, match="kernel bundle"):
        add_one(x, y)
    assert not y.any()
    monkeypatch.delenv("PYPTO_ENABLE_KERNEL_BUNDLE")
    add_one(x, y)
    assert torch.equal(y, x + 1.0)
