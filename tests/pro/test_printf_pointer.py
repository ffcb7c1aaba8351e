"""printf("%p", ptr) of a pl.Ptr parameter prints the pointer's value: the host address of the argument's
data (what the kernel's GM accesses go through on this machine) plus the byte offset addptr/make_ptr
moved it by; None passed for a pl.Ptr is the null pointer (0x0), which holds no element."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]


def show_pointers(data: pl.Ptr[pl.DT_FP16], out: pl.Tensor[[1], pl.DT_INT32], k: pl.DT_INT32):
    with pl.section_vector():
        moved = pl.addptr(data, k)
        pl.printf("base=%p moved=%p as_fp32=%p\n", data, moved, pl.make_ptr(moved, pl.DT_FP32))
        out[0] = 1


def reads_pointer(data: pl.Ptr[pl.DT_FP32], out: pl.Tensor[[1, 8], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([1, 8], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.printf("data=%p\n", data)
        pl.load(t, pl.make_tensor(data, [1, 8], [8, 1]), [0, 0])
        pl.store(out, t, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_percent_p_prints_the_argument_address_plus_the_offset(backend, capfd):
    data = np.arange(16, dtype=np.float16)
    out = np.zeros(1, np.int32)
    pl.jit(show_pointers, backend=backend)(data, out, 3)
    base = data.ctypes.data
    text = capfd.readouterr().out
    assert f"base={hex(base)} moved={hex(base + 6)} as_fp32={hex(base + 6)}\n" in text
    assert out[0] == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_none_is_the_null_pointer(backend, capfd):
    out = np.zeros(1, np.int32)
    pl.jit(show_pointers, backend=backend)(None, out, 0)
    assert "base=0x0 moved=0x0 as_fp32=0x0\n" in capfd.readouterr().out
    with pytest.raises(KernelRuntimeError):  # and has no element to read
        pl.jit(reads_pointer, backend=backend)(None, np.zeros((1, 8), np.float32))
