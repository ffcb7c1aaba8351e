"""Programs whose fused lowering would overflow a5's on-chip buffers run (lower/spill.py,
lower/cube_fit.py): a reduction whose fused input keeps more full FP32 tiles live than the 248 KB
Vec holds is split into passes through GM workspace, and cube tiles whose K does not fit L0 take K in
smaller L0 steps.  Both give the same bits on interp and cpu, and the numbers of numpy."""
import numpy as np
import pytest
import torch

import pypto

ROWS, COLS = 24, 4096


def _chain_sum(backend: str):
    # seven FP32 operands of one fused expression, reduced along a 2048-column tile: at least eight
    # live [8, 2048] FP32 tiles (64 KB each); the reduction's column tiles keep their width
    @pypto.frontend.jit(backend=backend)
    def chain_sum(a: pypto.Tensor([ROWS, COLS], pypto.DT_BF16), b: pypto.Tensor([ROWS, COLS], pypto.DT_BF16),
                  c: pypto.Tensor([ROWS, COLS], pypto.DT_FP32), d: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  e: pypto.Tensor([ROWS, COLS], pypto.DT_FP32), f: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  g: pypto.Tensor([ROWS, COLS], pypto.DT_FP32), out: pypto.Tensor([ROWS, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 2048)
        af, bf = pypto.cast(a, pypto.DT_FP32), pypto.cast(b, pypto.DT_FP32)
        mixed = (af * c + bf * d) * (e - f) + pypto.abs(g) * af
        out[:] = pypto.sum(mixed, dim=1, keepdim=True)

    return chain_sum


def _operands(seed: int):
    rng = np.random.default_rng(seed)
    # small integers: every product and sum is exact in FP32, whatever the order
    ints = [rng.integers(-4, 5, (ROWS, COLS)).astype(np.float32) for _ in range(7)]
    return ints, [torch.from_numpy(ints[0]).bfloat16(), torch.from_numpy(ints[1]).bfloat16()] + \
        [torch.from_numpy(x) for x in ints[2:]]


def test_a_reduction_over_too_many_live_tiles_is_split_into_passes():
    ints, args = _operands(1)
    a, b, c, d, e, f, g = ints
    want = ((a * c + b * d) * (e - f) + np.abs(g) * a).sum(axis=1, keepdims=True)
    outs = {}
    for backend in ("interp", "cpu"):
        outs[backend] = torch.empty(ROWS, 1)
        _chain_sum(backend)(*args, outs[backend])
    assert torch.equal(outs["interp"], outs["cpu"])
    assert np.array_equal(outs["cpu"].numpy(), want)


def test_random_values_agree_bitwise_between_interp_and_cpu():
    rng = np.random.default_rng(2)
    args = [torch.from_numpy(rng.standard_normal((ROWS, COLS)).astype(np.float32)) for _ in range(7)]
    args[0], args[1] = args[0].bfloat16(), args[1].bfloat16()
    outs = {}
    for backend in ("interp", "cpu"):
        outs[backend] = torch.empty(ROWS, 1)
        _chain_sum(backend)(*args, outs[backend])
    assert torch.equal(outs["interp"], outs["cpu"])
    a, b = args[0].float(), args[1].float()
    c, d, e, f, g = args[2:]
    want = ((a * c + b * d) * (e - f) + g.abs() * a).sum(dim=1, keepdim=True)
    torch.testing.assert_close(outs["cpu"], want, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_cube_tiles_whose_k_overflows_l0_take_smaller_k_steps(backend):
    # m=16, k=512, n=128 with an FP32 B: 256 KB of L0B (a5 has 64 KB)
    @pypto.frontend.jit(backend=backend)
    def mm(x: pypto.Tensor([16, 1024], pypto.DT_FP32), w: pypto.Tensor([128, 1024], pypto.DT_FP32),
           out: pypto.Tensor([16, 128], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128])
        out[:] = pypto.matmul(x, w, pypto.DT_FP32, b_trans=True)

    rng = np.random.default_rng(3)
    x = rng.integers(-8, 9, (16, 1024)).astype(np.float32)
    w = rng.integers(-8, 9, (128, 1024)).astype(np.float32)
    out = torch.empty(16, 128)
    mm(torch.from_numpy(x), torch.from_numpy(w), out)
    assert np.array_equal(out.numpy(), x @ w.T)  # exact: integer products and sums below 2**24


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_an_element_wise_pass_over_more_operands_than_vec_holds_is_split(backend):
    # 260 windows of one tensor in one expression: 260 live [8, 32] FP32 tiles even at the smallest
    # tiles (1 KB each; a5's Vec holds 248 KB)
    n = 260

    @pypto.frontend.jit(backend=backend)
    def many_terms(x: pypto.Tensor([n * 8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        acc = pypto.view(x, [8, 32], [0, 0])
        for i in range(1, n):
            acc = acc + pypto.view(x, [8, 32], [i * 8, 0]) * float(i % 5)
        out[:] = acc

    x = np.random.default_rng(5).integers(-3, 4, (n * 8, 32)).astype(np.float32)
    out = torch.empty(8, 32)
    many_terms(torch.from_numpy(x), out)
    parts = x.reshape(n, 8, 32)
    want = parts[0] + sum(parts[i] * float(i % 5) for i in range(1, n))
    assert np.array_equal(out.numpy(), want)  # exact: small integers
