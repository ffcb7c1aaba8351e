"""The native front of ``kernel[None, n]`` and the tensor reads of the C launcher (runtime/pto_launch.cpp):
``JitKernel.__getitem__`` finds the cached launcher in C and leaves every other key, and any key during a
launch capture, to the Python ``__getitem__``; tensor attributes are read through descriptors resolved on
torch.Tensor and torch's data pointer accessor, with the Python path for whatever they do not cover."""
import pytest

torch = pytest.importorskip("torch")

from pypto_pro.backends.cpu import clauncher  # noqa: E402
from pypto_pro.errors import KernelLaunchError  # noqa: E402
from pypto_pro.runtime import capture  # noqa: E402
from pypto_pro.runtime.jit import JitKernel  # noqa: E402
from kernels import load_kernels  # noqa: E402

SRC = """
@pl.jit(backend="cpu", name="{name}")
def scale(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[16, 64], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.mul(a, a, 3.0)
        pl.store(out, a, [0, 0])
"""


def _kernel(tmp_path, name):
    k = load_kernels(tmp_path, SRC.format(name=name)).scale
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    k[None, 1](x, out)  # freezes the signature (and installs the native __getitem__)
    return k, x, out


def test_cached_launcher_comes_from_the_native_getitem(tmp_path, mod):
    k, x, out = _kernel(tmp_path, "sub_a")
    assert type(JitKernel.__dict__["__getitem__"]).__name__ == "Subscript"
    b = k[None, 1]
    assert k[None, 1] is b and k[1] is b and k.__getitem__((None, 1)) is b
    # keys it does not cache go to the Python __getitem__, with its errors
    with pytest.raises(KernelLaunchError, match="block_dim must be an int"):
        k[None, 0](x, out)
    with pytest.raises(KernelLaunchError, match="got 5 items"):
        k[None, 1, 2, 3, 4]
    assert k[True] is not b  # bool is not int: the Python path makes a launcher (not cached under 1)
    k[None, 2](x, out)
    assert k[None, 2] is k[2] and k[None, 2] is not b


def test_a_capture_defers_even_cached_launchers(tmp_path, mod):
    k, x, out = _kernel(tmp_path, "sub_b")
    cached = k[None, 1]
    cap = capture.LaunchCapture()
    capture.begin(cap)
    try:
        recorder = k[None, 1]
        assert recorder is not cached
        out.zero_()
        recorder(x, out)
    finally:
        capture.end()
    assert not out.any() and len(cap.launches) == 1  # recorded, not run
    cap.replay()
    assert torch.equal(out, x * 3.0)
    assert k[None, 1] is cached


def test_tensor_reads_match_the_python_reads(tmp_path, mod):
    k, x, out = _kernel(tmp_path, "sub_c")
    b = k[None, 1]
    for accessor in (0, None):  # data_ptr() through Python, then torch's accessor again
        if accessor == 0:
            mod.set_data_ptr(0)
        else:
            clauncher._hook_torch(mod)
        out.zero_()
        b(x, out)
        assert torch.equal(out, x * 3.0)
        # a view into a larger buffer: its data pointer is the view's first element
        big = torch.randn(32, 64)
        view, out_view = big[16:], torch.zeros(32, 64)[8:24]
        b(view, out_view)
        assert torch.equal(out_view, view * 3.0)


def test_a_changed_tensor_type_is_read_again(tmp_path, mod):
    k, x, out = _kernel(tmp_path, "sub_d")
    torch.Tensor._pypto_test_marker = 1  # a new version tag for torch.Tensor: the descriptors are looked up again
    try:
        out.zero_()
        k[None, 1](x, out)
        assert torch.equal(out, x * 3.0)
    finally:
        del torch.Tensor._pypto_test_marker
    out.zero_()
    k[None, 1](x, out)
    assert torch.equal(out, x * 3.0)


def test_a_tensor_without_data_pointer_takes_the_python_path(tmp_path, mod):
    k, x, out = _kernel(tmp_path, "sub_e")
    sparse = x.to_sparse()  # torch.Tensor, fp32, [16, 64], on the cpu: torch's accessor refuses it
    with pytest.raises(Exception) as c_error:
        k[None, 1](sparse, out)
    with pytest.raises(Exception) as py_error:
        k.launch((sparse, out), block_dim=1)
    assert type(c_error.value) is type(py_error.value) and str(c_error.value) == str(py_error.value)
