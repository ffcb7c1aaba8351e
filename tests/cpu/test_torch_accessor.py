"""The C launcher's data-pointer accessor built against the installed torch (backends/cpu/torchaccess.py,
runtime/pto_torch.cpp): the data pointer of a tensor whose memory holds its values, 0 for the tensors the
launch must send to the checked path."""
import ctypes
import warnings

import pytest

torch = pytest.importorskip("torch")

from pypto_pro.backends.cpu import torchaccess  # noqa: E402


@pytest.fixture(scope="module")
def plain_data_ptr():
    address = torchaccess.wait_ready()
    if not address:
        pytest.skip("no torch headers or no compiler: the launcher uses torch's accessor")
    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_int64))(address)

    def call(t):
        out = ctypes.c_int64(-1)
        return fn(t, ctypes.byref(out)), out.value

    return call


@pytest.mark.parametrize("make", [lambda: torch.randn(4, 8), lambda: torch.randn(8, 4).t(),
                                  lambda: torch.randn(4, 8)[1:, 2:], lambda: torch.randn(1, 8).expand(4, 8),
                                  lambda: torch.zeros(4, 8, dtype=torch.bfloat16),
                                  lambda: torch._neg_view(torch.randn(4)).resolve_neg()],
                         ids=["dense", "transposed", "offset_view", "expand", "bf16", "resolved_neg"])
def test_plain_tensors_give_their_data_pointer(plain_data_ptr, make):
    t = make()
    assert plain_data_ptr(t) == (1, t.data_ptr())


@pytest.mark.parametrize("make", [lambda: torch._neg_view(torch.randn(4)),
                                  lambda: torch._neg_view(torch.randn(4)).detach(),
                                  lambda: torch.randn(4, dtype=torch.complex64).conj().imag,
                                  lambda: torch.randn(4, dtype=torch.complex64).conj(),
                                  lambda: torch.randn(4, 4).to_sparse(),
                                  lambda: torch.randn(4, 4).to_sparse_csr()],
                         ids=["neg_view", "detached_neg_view", "conj_imag", "conj", "sparse_coo", "sparse_csr"])
def test_tensors_whose_memory_is_not_their_values_are_refused(plain_data_ptr, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = make()
    assert plain_data_ptr(t)[0] == 0
