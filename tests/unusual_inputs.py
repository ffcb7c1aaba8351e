"""Unusual launch arguments shared by the tile level's launch tests (tests/pro/test_launch_unusual_tensors.py)
and the tensor level's call tests (tests/tensor/test_call_unusual_tensors.py): both levels bind their
arguments through pypto_pro.runtime.args, so they refuse the same inputs with the same words."""
import torch


class Shadow(torch.Tensor):
    """A user subclass that sees every torch call (and changes nothing)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


def refused_inputs(rows: int) -> list:
    """(id, a maker of the argument given for a [rows, 64] FP32 parameter, words the message must contain)."""
    def dense():
        return torch.randn(rows, 64)

    def cplx():
        return torch.randn(rows, 64, dtype=torch.complex64)

    return [
        ("sparse_coo", lambda: dense().to_sparse(), "sparse_coo tensor"),
        ("sparse_csr", lambda: dense().to_sparse_csr(), "sparse_csr tensor"),
        ("nested", lambda: torch.nested.nested_tensor([torch.randn(64)] * rows), "nested tensor"),
        ("meta", lambda: torch.empty(rows, 64, device="meta"), "on device 'meta'"),
        ("quantized", lambda: torch.quantize_per_tensor(dense(), 0.1, 0, torch.qint8), "int_repr()"),
        ("neg_view", lambda: torch._neg_view(dense()), "resolve_neg()"),
        ("conj_imag", lambda: cplx().conj().imag, "resolve_neg()"),
        ("complex", cplx, "expected dtype FP32, got complex64"),
        ("uint16", lambda: torch.zeros(rows, 64, dtype=torch.uint16), "expected dtype FP32, got UINT16"),
        ("float8_fnuz", lambda: torch.zeros(rows, 64, dtype=torch.float8_e4m3fnuz),
         "float8_e4m3fnuz has no PyPTO dtype"),
        ("bool", lambda: torch.zeros(rows, 64, dtype=torch.bool), "expected dtype FP32, got BOOL"),
        ("zero_dim", lambda: torch.tensor(1.0), "expected a 2-D tensor"),
        ("list", lambda: [[0.0] * 64] * rows, "expected a torch tensor or numpy array, got list"),
        ("none", lambda: None, "got NoneType"),
    ]
