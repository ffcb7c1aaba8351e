"""``pypto.set_verify_golden_data``: under pass verify the tensor-graph result of each parameter with a
golden is compared with it; the outcome is logged (PASS / FAILED / NO_COMPARE), kept as
``kernel.last_verify`` and written to interpreter.log when tensors are saved (pypto/frontend/verify.py)."""
import logging

import pytest
import torch

import pypto


def _kernel(save_dir=None):
    opts = {"enable_pass_verify": True}
    if save_dir:
        opts.update(pass_verify_save_tensor=True, pass_verify_save_tensor_dir=str(save_dir))

    @pypto.frontend.jit(verify_options=opts)
    def fma(a: pypto.Tensor([16, 32], pypto.DT_FP32), b: pypto.Tensor([16, 32], pypto.DT_FP32),
            out: pypto.Tensor([16, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = a * b + a

    return fma


def test_golden_pass_and_no_compare(tmp_path):
    a, b = torch.randn(16, 32), torch.randn(16, 32)
    out = torch.zeros(16, 32)
    pypto.set_verify_golden_data(goldens=[None, None, a * b + a])
    k = _kernel(tmp_path)
    k(a, b, out)
    assert k.last_verify == [("a", "NO_COMPARE"), ("b", "NO_COMPARE"), ("out", "PASS")]
    assert torch.allclose(out, a * b + a)
    log = (tmp_path / "interpreter.log").read_text()
    assert "result PASS" in log and log.count("NO_COMPARE") == 2


def test_wrong_golden_is_reported_not_raised(caplog):
    a, b = torch.randn(16, 32), torch.randn(16, 32)
    out = torch.zeros(16, 32)
    pypto.set_verify_golden_data([a, b, out], [None, None, a * b])
    k = _kernel()
    with caplog.at_level(logging.INFO, logger="pypto"):
        k(a, b, out)
    assert k.last_verify[2] == ("out", "FAILED")
    assert any(r.levelno == logging.ERROR and "FAILED" in r.getMessage() for r in caplog.records)
    assert torch.allclose(out, a * b + a)  # the kernel's result is untouched


def test_golden_checks():
    with pytest.raises(pypto.KernelValueError, match="list"):
        pypto.set_verify_golden_data(goldens=torch.ones(2))
    pypto.set_verify_golden_data(goldens=[None, pypto.from_torch(torch.ones(2))])
    pypto.set_verify_golden_data(goldens=[])
