"""Unusual torch tensors (and non-tensors) as arguments of tensor-level kernels: each is either used with its
ordinary meaning or refused with a KernelLaunchError naming the function's parameter and what to pass --
never a raw torch error, never a wrong result -- on the full call path and on the frozen one (a repeat of
an earlier call's argument key, pypto/frontend/fastcall.py).  docs/tensor.md "Calling"."""
import warnings

import numpy as np
import pytest
import torch

import pypto
from pypto_pro.errors import KernelLaunchError
from unusual_inputs import Shadow, refused_inputs

pytestmark = [pytest.mark.both_backends, pytest.mark.filterwarnings("ignore::UserWarning")]

ROWS = 16


@pypto.frontend.jit
def scaled_sum(a: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), b: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
               y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    y[:] = a * 3.0 + b


def _call(path, args):
    """Call ``scaled_sum`` with ``args`` on the full path, or on the frozen one after two calls of the
    same key (dense tensors of the first argument's shape)."""
    scaled_sum._fast.clear()
    if path == "frozen":
        for _ in range(2):
            scaled_sum(torch.randn(ROWS, 64), torch.randn(ROWS, 64), torch.zeros(ROWS, 64))
    scaled_sum(*args)


def _dense():
    return torch.randn(ROWS, 64)


# the inputs both levels refuse, then the tensor level's own
REFUSED = refused_inputs(ROWS) + [
    ("float8", lambda: torch.zeros(ROWS, 64, dtype=torch.float8_e5m2), "expected dtype FP32, got FP8E5M2"),
    ("wrong_width", lambda: torch.zeros(ROWS, 48), "dim 1 must be 64"),
]


@pytest.mark.parametrize("path", ["full", "frozen"])
@pytest.mark.parametrize("name, make, words", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_argument_names_the_parameter(name, make, words, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = make()
    y = torch.zeros(ROWS, 64)
    with pytest.raises(KernelLaunchError) as err:
        _call(path, (a, _dense(), y))
    text = str(err.value)
    assert "argument 'a'" in text and words in text, text
    assert not y.any()


ACCEPTED = [
    ("expand", lambda: torch.randn(1, 64).expand(ROWS, 64)),
    ("transposed", lambda: torch.randn(64, ROWS).t()),
    ("requires_grad", lambda: torch.randn(ROWS, 64, requires_grad=True)),
    ("parameter", lambda: torch.nn.Parameter(torch.randn(ROWS, 64))),
    ("subclass", lambda: torch.randn(ROWS, 64).as_subclass(Shadow)),
    ("numpy_reversed_rows", lambda: np.random.randn(ROWS, 64).astype(np.float32)[::-1]),
]


@pytest.mark.parametrize("path", ["full", "frozen"])
@pytest.mark.parametrize("name, make", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted_argument_is_read_as_its_values(name, make, path):
    a, b, y = make(), _dense(), torch.zeros(ROWS, 64)
    _call(path, (a, b, y))
    values = torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a.detach().as_subclass(torch.Tensor)
    torch.testing.assert_close(y, values * 3.0 + b, rtol=0, atol=0)


@pytest.mark.parametrize("path", ["full", "frozen"])
@pytest.mark.parametrize("make", [lambda: torch.zeros(1, 64).expand(ROWS, 64),
                                  lambda: torch.zeros(ROWS + 63).as_strided((ROWS, 64), (1, 1))],
                         ids=["expand", "as_strided"])
def test_written_tensor_whose_elements_share_memory_is_refused(make, path):
    y = make()
    with pytest.raises(KernelLaunchError) as err:
        _call(path, (_dense(), _dense(), y))
    assert "argument 'y'" in str(err.value) and "share memory" in str(err.value)
    assert not y.any()


@pytest.mark.parametrize("path", ["full", "frozen"])
def test_negative_view_output_is_refused(path):
    y = torch._neg_view(torch.zeros(ROWS, 64))
    with pytest.raises(KernelLaunchError, match="argument 'y'.*resolve_neg"):
        _call(path, (_dense(), _dense(), y))


def test_zero_rows_run_nothing():
    y = torch.zeros(0, 64)
    scaled_sum(torch.zeros(0, 64), torch.zeros(0, 64), y)
    assert y.shape == (0, 64)
