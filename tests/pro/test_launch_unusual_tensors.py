"""Unusual torch tensors (and non-tensors) as launch arguments of tile kernels: each is either used with
its ordinary meaning or refused with a KernelLaunchError that names the argument and says what to pass --
never a raw torch error, never a wrong result -- on every backend and on every launch path: the checked
launch, the Python frozen relauncher (``kernel.launch`` after a launch of the same signature) and, on
cpu, the C launcher (``kernel[None, n]``).  docs/language.md "Unusual tensors"."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pypto_pro.language as pl  # noqa: E402
from pypto_pro.backends import cpu  # noqa: E402
from pypto_pro.errors import KernelLaunchError  # noqa: E402
from unusual_inputs import Shadow, refused_inputs  # noqa: E402

pytestmark = [pytest.mark.every_backend,
              pytest.mark.filterwarnings("ignore::UserWarning")]  # torch's beta/prototype notes (sparse, nested)

ROWS = 16


@pl.jit()
def add_rows(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
             out: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], s: float):
    tt = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    b = pl.make_tile_group(type=tt, addrs=0x1000, mutex_ids=[1])
    with pl.section_vector():
        for r in pl.range(0, x.shape[0], 8):
            pl.load(a.current(), x, [r, 0])
            pl.load(b.current(), y, [r, 0])
            pl.mul(a.current(), a.current(), s)
            pl.add(a.current(), a.current(), b.current())
            pl.store(out, a.current(), [r, 0])


@pl.jit()
def copy_fixed(x: pl.Tensor[[8, 64], pl.DT_FP32], out: pl.Tensor[[8, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        pl.load(a.current(), x, [0, 0])
        pl.store(out, a.current(), [0, 0])


BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]
#: checked: no frozen signature; python: JitKernel.launch with a frozen one; c: kernel[None, 1] (the C
#: launcher on cpu, else the Python path again)
PATHS = ["checked", "python", "c"]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", request.param)
    return request.param


def _launch(kernel, path, args, good):
    """Launch ``args`` on ``path``; ``good``: arguments of the same signature that freeze it first."""
    kernel._compiled_by_signature.clear()
    if path != "checked":
        kernel[None, 1](*good)
        kernel[None, 1](*good)  # the second launch finds the frozen signature (and, on cpu, the C one)
    if path == "python":
        kernel.launch(tuple(args), block_dim=1)
    else:
        kernel[None, 1](*args)


def _dense(rows=ROWS):
    return torch.randn(rows, 64)


def _good():
    return (_dense(), _dense(), torch.zeros(ROWS, 64), 2.0)


# (id, the 'x' argument, words the message must contain): the inputs both levels refuse, then the tile
# level's own
REFUSED_INPUTS = refused_inputs(ROWS) + [
    ("float8", lambda: torch.zeros(ROWS, 64, dtype=torch.float8_e4m3fn), "expected dtype FP32, got FP8E4M3FN"),
    ("float64", lambda: torch.zeros(ROWS, 64, dtype=torch.float64), "expected dtype FP32, got float64"),
    ("wrong_width", lambda: torch.zeros(ROWS, 32), "dim 1 must be 64"),
    ("wrong_rank", lambda: torch.zeros(ROWS, 64, 1), "expected a 2-D tensor"),
    ("numpy_float64", lambda: np.zeros((ROWS, 64)), "expected dtype FP32, got float64"),
]

#: the C launcher sees the negative bit through the data-pointer accessor of backends/cpu/torchaccess.py,
#: where it can be built (torch's headers): without it a negative view is read as its memory there
NEG_BITS = {"neg_view", "conj_imag"}


@pytest.fixture(scope="module")
def c_misses_neg_bits() -> bool:
    """Whether kernel[None, n] runs in C without the torch accessor (built now if missing: make venv
    prebuilds it); without the C launcher the Python relauncher checks the bit itself."""
    from pypto_pro.backends.cpu import clauncher, torchaccess

    if not cpu.available() or not clauncher.enabled() or clauncher.wait_built() is None:
        return False
    return not torchaccess.wait_ready()


def _params(cases, paths=PATHS):
    return [pytest.param(*case, path, id=f"{case[0]}-{path}") for case in cases for path in paths]


@pytest.mark.parametrize("name, make, words, path", _params(REFUSED_INPUTS))
def test_refused_input_names_the_argument(request, backend, name, make, words, path):
    if path == "c" and backend == "cpu" and name in NEG_BITS and request.getfixturevalue("c_misses_neg_bits"):
        pytest.skip("no torch accessor for the C launcher here (it needs torch's headers)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = make()
    good = _good()
    out = torch.zeros(ROWS, 64)
    with pytest.raises(KernelLaunchError) as err:
        _launch(add_rows, path, (x, _dense(), out, 2.0), good)
    text = str(err.value)
    assert "argument 'x'" in text and words in text, text
    assert not out.any()  # nothing ran


def _expand():
    return torch.randn(1, 64).expand(ROWS, 64)


# (id, the 'x' argument) used with its values
ACCEPTED_INPUTS = [
    ("expand", _expand),
    ("transposed", lambda: torch.randn(64, ROWS).t()),
    ("every_other_column", lambda: torch.randn(ROWS, 128)[:, ::2]),
    ("requires_grad", lambda: torch.randn(ROWS, 64, requires_grad=True)),
    ("view_of_requires_grad", lambda: torch.randn(ROWS, 64, requires_grad=True)[:, :]),
    ("parameter", lambda: torch.nn.Parameter(torch.randn(ROWS, 64))),
    ("subclass", lambda: torch.randn(ROWS, 64).as_subclass(Shadow)),
    ("resolved_neg", lambda: torch._neg_view(torch.randn(ROWS, 64)).resolve_neg()),
    ("numpy", lambda: np.random.randn(ROWS, 64).astype(np.float32)),
    ("numpy_reversed_rows", lambda: np.random.randn(ROWS, 64).astype(np.float32)[::-1]),
]


def _values(x) -> torch.Tensor:
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x.copy())
    return x.detach().as_subclass(torch.Tensor).clone()


@pytest.mark.parametrize("name, make, path", _params(ACCEPTED_INPUTS))
def test_accepted_input_is_read_as_its_values(backend, name, make, path):
    x, y, out = make(), _dense(), torch.zeros(ROWS, 64)
    _launch(add_rows, path, (x, y, out, 2.0), _good())
    assert torch.equal(out, _values(x) * 2.0 + y)


def test_zero_rows_and_a_zero_dim_scalar(backend):
    empty = torch.zeros(0, 64)
    add_rows[None, 1](torch.zeros(0, 64), torch.zeros(0, 64), empty, 2.0)  # nothing to do, nothing fails
    x, y, out = _dense(), _dense(), torch.zeros(ROWS, 64)
    add_rows[None, 1](x, y, out, torch.tensor(0.5))  # a 0-dim tensor for a scalar parameter is its value
    assert torch.equal(out, x * 0.5 + y)


# (id, the 'out' argument): the kernel writes it, and two of its elements share an address
OVERLAPPING_OUTPUTS = [
    ("expand", lambda: torch.zeros(1, 64).expand(ROWS, 64)),
    ("as_strided", lambda: torch.zeros(ROWS + 63).as_strided((ROWS, 64), (1, 1))),
    ("numpy_broadcast_writeable", lambda: np.lib.stride_tricks.as_strided(np.zeros(64, np.float32), (ROWS, 64),
                                                                         (0, 4))),
]


@pytest.mark.parametrize("name, make, path", _params(OVERLAPPING_OUTPUTS))
def test_written_tensor_whose_elements_share_memory_is_refused(backend, name, make, path):
    out = make()
    with pytest.raises(KernelLaunchError) as err:
        _launch(add_rows, path, (_dense(), _dense(), out, 2.0), _good())
    text = str(err.value)
    assert "argument 'out'" in text and "share memory" in text, text
    assert not np.asarray(out).any()


# (id, the 'out' argument): written with the kernel's values
ACCEPTED_OUTPUTS = [
    ("transposed", lambda: torch.zeros(64, ROWS).t()),
    ("every_other_column", lambda: torch.zeros(ROWS, 128)[:, ::2]),
    ("parameter", lambda: torch.nn.Parameter(torch.zeros(ROWS, 64), requires_grad=False)),
    # a launch is not recorded by autograd (as the NPU launch, which writes through the pointer)
    ("requires_grad_leaf", lambda: torch.zeros(ROWS, 64, requires_grad=True)),
]


@pytest.mark.parametrize("name, make, path", _params(ACCEPTED_OUTPUTS))
def test_accepted_output_receives_the_values(backend, name, make, path):
    x, y, out = _dense(), _dense(), make()
    _launch(add_rows, path, (x, y, out, 2.0), _good())
    assert torch.equal(out.detach(), x * 2.0 + y)


@pytest.mark.parametrize("path", PATHS)
def test_fixed_shape_kernel_errors_name_the_argument(backend, path):
    good = (torch.randn(8, 64), torch.zeros(8, 64))
    for bad, words in [(torch.zeros(0, 64), "dim 0 must be 8"), (torch.zeros(8, 64).to_sparse(), "sparse_coo"),
                       (torch.zeros(8, 64, dtype=torch.float16), "expected dtype FP32, got FP16")]:
        with pytest.raises(KernelLaunchError, match="argument 'x'") as err:
            _launch(copy_fixed, path, (bad, torch.zeros(8, 64)), good)
        assert words in str(err.value)


def _copy_kernel(dtype):
    @pl.jit(name=f"copy_{dtype.name.lower()}")
    def copy(x: pl.Tensor[[8, 64], dtype], out: pl.Tensor[[8, 64], dtype]):
        tt = pl.TileType(shape=[8, 64], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
        with pl.section_vector():
            pl.load(a.current(), x, [0, 0])
            pl.store(out, a.current(), [0, 0])
    return copy


# torch dtypes with a PyPTO counterpart, given to a parameter of that dtype: the bytes go through unchanged
MATCHING_DTYPES = [
    (pl.DT_UINT16, lambda: torch.randint(0, 65536, (8, 64), dtype=torch.int32).to(torch.uint16)),
    (pl.DT_UINT32, lambda: torch.randint(0, 2 ** 32, (8, 64), dtype=torch.int64).to(torch.uint32)),
    (pl.DT_BOOL, lambda: torch.rand(8, 64) > 0.5),
    (pl.DT_FP8E4M3FN, lambda: torch.randn(8, 64).to(torch.float8_e4m3fn)),
    (pl.DT_FP8E5M2, lambda: torch.randn(8, 64).to(torch.float8_e5m2)),
]


@pytest.mark.parametrize("dtype, make", MATCHING_DTYPES, ids=[d.name for d, _ in MATCHING_DTYPES])
def test_torch_dtypes_with_a_counterpart_are_taken_bit_for_bit(backend, dtype, make):
    kernel = _copy_kernel(dtype)
    x = make()
    for _ in range(3):  # checked, then frozen (and on cpu the C launcher)
        out = torch.zeros_like(x)
        kernel[None, 1](x, out)
        assert torch.equal(out.view(torch.uint8), x.view(torch.uint8))
