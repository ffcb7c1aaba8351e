"""Streaming (non-temporal) stores of fused element-wise loops into large GM tensors.

A fused loop's store into a GM tensor of at least ``pto::fz::kStreamMinBytes`` (16 MiB) bypasses the
caches when every 8-lane store of the window is aligned; the group then ends with an ``sfence``.
These tests check the decision itself (a C++ checker calling ``fz::gm_run``) and, end to end, that
results into large tensors are exact for aligned and misaligned windows, fp32/fp16/bf16, and when
another pass reads a streamed tensor back.
"""
import ctypes

import pytest
import torch

import pypto
from kernels import compile_checker

CHECKER = r"""
#define PTO_SIMD_MATH 1
#include "pto/pto.h"
#include "pto/fuse.h"

// Run::stream of a rows x cols window at (r0, c0) of a 2-D tensor rows_total x row_stride whose
// element 0 is `shift` elements past a 64-byte boundary; -1 where gm_run refuses the window.
template <class T> static int decide(int64_t rows_total, int64_t row_stride, int64_t shift, int64_t r0, int64_t c0,
                                     int rows, int cols) {
  alignas(64) static T dummy[64];
  const int64_t shape[2] = {rows_total, row_stride}, stride[2] = {row_stride, 1};
  pto::Gm<T> g{dummy + shift, 2, shape, stride, "y"};  // never dereferenced
  pto::fz::Window w;
  w.vr = rows;
  w.vc = cols;
  const int64_t offs[2] = {r0, c0};
  pto::fz::Run<T> run;
  if (!pto::fz::gm_run(g, offs, 0, 1, w, run)) return -1;
  return run.stream ? 1 : 0;
}
extern "C" int decide_f32(int64_t a, int64_t b, int64_t s, int64_t r0, int64_t c0, int r, int c) {
  return decide<float>(a, b, s, r0, c0, r, c);
}
extern "C" int decide_f16(int64_t a, int64_t b, int64_t s, int64_t r0, int64_t c0, int r, int c) {
  return decide<pto::half>(a, b, s, r0, c0, r, c);
}
"""

MIB = 1 << 20


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    lib = compile_checker(tmp_path_factory.mktemp("streaming"), CHECKER)
    for f in (lib.decide_f32, lib.decide_f16):
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_int64] * 5 + [ctypes.c_int, ctypes.c_int]
    return lib


@pytest.mark.parametrize("dtype, rows, row_stride, shift, r0, c0, want", [
    ("f32", 4096, 1024, 0, 8, 0, 1),        # 16 MiB, aligned rows: streamed
    ("f32", 4095, 1024, 0, 8, 0, 0),        # one row short of 16 MiB: cached stores
    ("f32", 4096, 1024, 1, 8, 0, 0),        # base not 32-byte aligned
    ("f32", 4096, 1024, 0, 8, 4, 0),        # window starts mid-vector
    ("f32", 4096, 1028, 0, 8, 0, 0),        # rows 4112 bytes apart: row 1 is misaligned
    ("f32", 4096, 1032, 0, 8, 8, 1),        # rows 4128 bytes apart (a multiple of 32), column 8
    ("f16", 4096, 2048, 0, 0, 0, 1),        # 16 MiB of fp16: 16-byte stores
    ("f16", 4096, 2048, 8, 0, 0, 1),        # 16 bytes past a boundary is aligned for fp16
    ("f16", 4096, 2048, 4, 0, 0, 0),
])
def test_stream_decision(checker, dtype, rows, row_stride, shift, r0, c0, want):
    decide = checker.decide_f32 if dtype == "f32" else checker.decide_f16
    assert decide(rows, row_stride, shift, r0, c0, 8, 64) == want


@pytest.fixture
def on_cpu(monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "cpu")


@pypto.frontend.jit
def _chain(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 512)
    y[:] = pypto.sigmoid((a * b + 1.0) * 0.5 - b) * a


@pytest.mark.parametrize("dtype, cols", [(torch.float32, 1024), (torch.float32, 1030), (torch.float16, 2048),
                                         (torch.bfloat16, 2050)])
def test_large_outputs_are_exact(on_cpu, dtype, cols):
    """4096 rows of >= 16 MiB: streamed where rows are aligned, cached where cols leaves rows
    misaligned; either way the same values as the unfused-free reference (fp16/bf16: rounded once
    per op, so compared with the dtype's tolerance)."""
    torch.manual_seed(0)
    a, b = torch.randn(4096, cols).to(dtype), torch.randn(4096, cols).to(dtype)
    y = torch.full((4096, cols), float("nan"), dtype=dtype)
    assert y.numel() * y.element_size() >= 16 * MIB
    _chain(a, b, y)
    want = torch.sigmoid((a.float() * b.float() + 1.0) * 0.5 - b.float()) * a.float()
    tol = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 5e-2}[dtype]
    torch.testing.assert_close(y.float(), want, rtol=tol, atol=tol)


def test_streamed_window_of_a_wider_tensor(on_cpu):
    """Writing a column window of a 16 MiB tensor: only the window changes."""
    a, b = torch.randn(4096, 512), torch.randn(4096, 512)
    big = torch.zeros(4096, 1024)
    _chain(a, b, big[:, 256:768])
    want = torch.sigmoid((a * b + 1.0) * 0.5 - b) * a
    torch.testing.assert_close(big[:, 256:768], want)
    assert not big[:, :256].any() and not big[:, 768:].any()


def test_streamed_tensor_read_back_by_the_next_pass(on_cpu):
    """Softmax over rows wider than the tile runs in passes through GM workspaces larger than
    16 MiB: stores streamed by one pass are read by the next (after the group's sfence)."""
    @pypto.frontend.jit
    def softmax(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 512)
        y[:] = pypto.softmax(x, -1)

    x = torch.randn(2048, 2048)
    y = torch.empty_like(x)
    softmax(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)
