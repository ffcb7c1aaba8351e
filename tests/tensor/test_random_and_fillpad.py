"""``pypto.uniform`` / ``pypto.normal`` (Philox4x32-10, the official stream) and ``pypto.fillpad``.

The official pages' 4x4 examples are reproduced to their printed digits; beyond them every value is
a pure function of (key, counter, flat index), so backends, tile shapes and core counts must agree
bit for bit, and the statistics must be those of the distribution."""
import math
import os

import numpy as np
import pytest
import torch

import pypto
from pypto_pro.ops.random import philox_words

F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
BACKENDS = ("interp", "cpu", "sim")
TILINGS = ((4, 16), (2, 32), (8, 64))
FULL_MATRIX = os.environ.get("PYPTO_FULL_MATRIX", "") not in ("", "0")
DTYPES = {"fp32": (F32, torch.float32), "fp16": (F16, torch.float16), "bf16": (BF16, torch.bfloat16)}

# the official pypto-uniform.md / pypto-normal.md examples: shape [4, 4], key [1234], counter [0, 1], alg [1]
OFFICIAL_UNIFORM = [[0.1689806, 0.9725481, 0.90036285, 0.16582811],
                    [0.1454581, 0.48029935, 0.02495587, 0.99239147],
                    [0.02835405, 0.10649502, 0.45283175, 0.87260246],
                    [0.6877538, 0.24809706, 0.95886254, 0.24039495]]
OFFICIAL_NORMAL = [[-0.32364845, 1.8577391, 0.39556974, 0.2311697],
                   [0.24243996, -1.9485782, -0.12983137, 2.7137496],
                   [1.6558666, 2.0938187, -0.90338254, 0.8765667],
                   [0.86518306, 0.01034508, 0.2893259, 0.01748212]]


def random_kernel(backend: str):
    @pypto.frontend.jit(backend=backend)
    def k(u: pypto.Tensor(), n: pypto.Tensor(), key: int = 1234, counter: tuple = (0, 1), dtype: str = "fp32",
          tile: tuple = (4, 4)):
        pypto.set_vec_tile_shapes(*tile)
        shape, d = list(u.shape), DTYPES[dtype][0]
        u[:] = pypto.uniform(shape, [key], list(counter), [1], d)
        n[:] = pypto.normal(shape, [key], list(counter), [3], d)
    return k


def backend_tilings(backend: str, dtype: str):
    """The tilings test_backends_and_tilings_agree draws on ``backend``: all on the interpreter (and with
    ``PYPTO_FULL_MATRIX=1``), else all for FP32 and one per other dtype (each tiling once per backend)."""
    if backend == "interp" or FULL_MATRIX or dtype == "fp32":
        return TILINGS
    return (TILINGS[list(DTYPES).index(dtype)],)


def draw(backend: str, shape, dtype: str = "fp32", **kw):
    t = DTYPES[dtype][1]
    u, n = torch.full(shape, -9.0, dtype=t), torch.full(shape, -9.0, dtype=t)
    random_kernel(backend)(u, n, dtype=dtype, **kw)
    return u, n


@pytest.mark.parametrize("backend", BACKENDS)
def test_official_examples(backend):
    """Uniform: exact to the page's 8 digits; normal: within the FP32 sin/cos/log error (2e-6 abs)."""
    u, n = draw(backend, (4, 4))
    np.testing.assert_allclose(u.numpy(), OFFICIAL_UNIFORM, rtol=0, atol=6e-8)
    np.testing.assert_allclose(n.numpy(), OFFICIAL_NORMAL, rtol=0, atol=2e-6)


def test_words_match_a_scalar_philox():
    """The vectorised generator against a plain-integer Philox4x32-10 (counter block, 0, counter lo, hi)."""
    def block(ctr, key):
        c, k = list(ctr), [key & 0xFFFFFFFF, key >> 32]
        for _ in range(10):
            p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
            c = [((p1 >> 32) ^ c[1] ^ k[0]) & 0xFFFFFFFF, p1 & 0xFFFFFFFF,
                 ((p0 >> 32) ^ c[3] ^ k[1]) & 0xFFFFFFFF, p0 & 0xFFFFFFFF]
            k = [(k[0] + 0x9E3779B9) & 0xFFFFFFFF, (k[1] + 0xBB67AE85) & 0xFFFFFFFF]
        return c
    key, counter = (7 << 32) | 99, (3 << 32) | 5
    words = [2 ** 40 + 3, 17, 0, 4 * 2 ** 33 + 2]
    got = philox_words(np.array(words, dtype=np.int64), key, counter)
    want = [block([(w >> 2) & 0xFFFFFFFF, w >> 34, 5, 3], key)[w & 3] for w in words]
    assert got.tolist() == want


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_backends_and_tilings_agree(dtype):
    """A [6, 10] result (tails on both axes, a last dim that is not a multiple of 4) under three tile
    shapes: uniform is the same bits everywhere; normal is the same bits under every tiling of one
    backend, and across backends within the FP32 error of log/exp (the interpreter's numpy vs the
    cpu backend's C library and polynomial, docs/performance.md).

    The interpreter draws every tiling of every dtype.  Each cpu draw is a C++ compile, so cpu and sim
    draw all three tilings for FP32 (bit-equal tilings of one compiled backend) and one tiling each for
    FP16 / BF16, a different one per dtype (``PYPTO_FULL_MATRIX=1``: all of them)."""
    reference = None
    for backend in BACKENDS:
        runs = [draw(backend, (6, 10), dtype, tile=t) for t in backend_tilings(backend, dtype)]
        for u, n in runs[1:]:
            assert torch.equal(u, runs[0][0]) and torch.equal(n, runs[0][1])
        reference = reference or runs[0]
        for u, n in runs:
            assert torch.equal(u, reference[0])
            torch.testing.assert_close(n.float(), reference[1].float(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(64,), (3, 5, 16), (2, 3, 4, 8)])
def test_element_i_is_word_i_whatever_the_rank(shape):
    """The flat row-major index names the word: a 1-D, 3-D and 4-D draw equals the [N] draw reshaped,
    bit for bit on the interpreter; the cpu draw of the shape (one compile) equals it too (normal within
    the cross-backend FP32 error, as above)."""
    flat_u, flat_n = draw("interp", (math.prod(shape),), tile=(64,))
    for backend in ("interp", "cpu"):
        u, n = draw(backend, shape, tile=(1, 4, 4, 16)[-len(shape):])
        assert torch.equal(u.flatten(), flat_u)
        if backend == "interp":
            assert torch.equal(n.flatten(), flat_n)
        torch.testing.assert_close(n.flatten(), flat_n, rtol=1e-5, atol=1e-6)


def test_uniform_fp32_is_the_low_23_bits_and_halves_the_low_10_or_7():
    """FP32: (word & 0x7FFFFF) / 2**23; FP16 / BF16 use the low 10 / 7 bits of the same word.  (On the
    interpreter: the cpu backend's uniform is bit-equal to it for every dtype, test_backends_and_tilings_agree.)"""
    u32, _ = draw("interp", (16, 32), tile=(16, 32))
    words = philox_words(np.arange(16 * 32), 1234, 1).reshape(16, 32)
    assert np.array_equal(u32.numpy(), (words & 0x7FFFFF).astype(np.float32) / 2 ** 23)
    for dtype, bits in (("fp16", 10), ("bf16", 7)):
        u, _ = draw("interp", (16, 32), dtype, tile=(16, 32))
        assert torch.equal(u.float(), torch.from_numpy((words & ((1 << bits) - 1)).astype(np.float32) / 2 ** bits))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_normal_halves_are_the_fp32_values_rounded_once(dtype):
    """On cpu, with the kernels test_backends_and_tilings_agree compiled (the build cache has them)."""
    tile = backend_tilings("cpu", dtype)[0]
    _, n32 = draw("cpu", (6, 10), tile=tile)
    _, n = draw("cpu", (6, 10), dtype, tile=tile)
    assert torch.equal(n, n32.to(DTYPES[dtype][1]))


def test_statistics():
    """256K draws: uniform in [0, 1) with mean 1/2 and variance 1/12; normal with mean 0, variance 1 and
    the normal's tail mass.  Bounds are >= 6 standard errors wide."""
    u, n = draw("cpu", (512, 512), tile=(16, 512))
    u, n = u.double(), n.double()
    N = u.numel()
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 6 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 6 * math.sqrt(1 / 180 / N)
    assert abs(n.mean()) < 6 / math.sqrt(N) and abs(n.var() - 1) < 6 * math.sqrt(2 / N)
    tail = (n.abs() > 2).double().mean().item()  # P(|Z| > 2) = 0.0455
    assert abs(tail - 0.0455) < 6 * math.sqrt(0.0455 * 0.9545 / N)
    # distinct values of N draws from 2**23 equally likely ones: M (1 - exp(-N / M)), give or take the
    # square root of the ~4K expected collisions
    M = 2 ** 23
    distinct = M * (1 - math.exp(-N / M))
    assert abs(len(torch.unique(u)) - distinct) < 6 * math.sqrt(N - distinct)


def test_key_and_counter_change_the_stream_and_counter0_is_ignored():
    """On the interpreter; the cpu backend (each key / counter is a compile) draws one other key and
    counter, which must be the interpreter's stream for them."""
    base = draw("interp", (8, 64), tile=(8, 64))[0]
    assert torch.equal(draw("interp", (8, 64), tile=(8, 64), counter=(5, 1))[0], base)  # counter[0] is fixed at 0
    assert not torch.equal(draw("interp", (8, 64), tile=(8, 64), counter=(0, 2))[0], base)
    assert not torch.equal(draw("interp", (8, 64), tile=(8, 64), key=1235)[0], base)
    other = dict(key=1235, counter=(5, 2))
    assert torch.equal(draw("cpu", (8, 64), tile=(8, 64), **other)[0], draw("interp", (8, 64), tile=(8, 64), **other)[0])


def test_pass_verify_accepts_random_kernels():
    """The numpy reference of the recorded graph evaluates the same stream."""
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def k(u: pypto.Tensor(), n: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        u[:] = pypto.uniform([8, 32], [42], [0, 7], [1], F32) * 2.0
        n[:] = pypto.normal([8, 32], [42], [0, 7], [1], F32)

    u, n = torch.empty(8, 32), torch.empty(8, 32)
    k(u, n)
    assert torch.equal(u, draw("interp", (8, 32), key=42, counter=(0, 7), tile=(8, 32))[0] * 2)


@pytest.mark.parametrize("call, error, match", [
    (lambda: pypto.uniform([4, 4], [1], [0, 1], [2], F32), pypto.KernelValueError, "alg 2"),
    (lambda: pypto.uniform([4, 4], [1, 2], [0, 1], [1], F32), pypto.KernelValueError, "key must be a list of 1"),
    (lambda: pypto.normal([4, 4], [1], [1], [1], F32), pypto.KernelValueError, "counter must be a list of 2"),
    (lambda: pypto.uniform([4, 4], [1], [0, 1], [1], pypto.DT_INT32), pypto.KernelTypeError, "DT_FP32, DT_FP16"),
    (lambda: pypto.normal([1, 1, 1, 1, 4], [1], [0, 1], [1], F32), pypto.KernelValueError, "1 to 4 dims"),
    (lambda: pypto.uniform([4, 0], [1], [0, 1], [1], F32), pypto.KernelValueError, "positive"),
])
def test_argument_errors(call, error, match):
    @pypto.frontend.jit
    def k(y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 4)
        y[:] = call()

    with pytest.raises(error, match=match):
        k(torch.empty(4, 4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_shapes_draw_the_static_stream(backend):
    """A DYNAMIC dim (an INT64 flat index) gives the rows of the static draw, compiling once: the
    interpreter's static draw, bit for bit on the interpreter, and on cpu / sim uniform bit for bit and
    normal within the cross-backend FP32 error (each run of the one compiled kernel bit-equal to the others)."""
    @pypto.frontend.jit(backend=backend)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], F32), u: pypto.Tensor([pypto.DYNAMIC, 16], F32),
          n: pypto.Tensor([pypto.DYNAMIC, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        u[:] = x + pypto.uniform([x.shape[0], 16], [1234], [0, 1], [1], F32)
        n[:] = pypto.normal([x.shape[0], 16], [1234], [0, 1], [3], F32)

    want_u, want_n = draw("interp", (7, 16), tile=(4, 16))
    first = None
    for rows in (7, 3):
        u, n = torch.empty(rows, 16), torch.empty(rows, 16)
        k(torch.zeros(rows, 16), u, n)
        first = first or (u, n)
        assert torch.equal(u, want_u[:rows]) and torch.equal(n, first[1][:rows])
        torch.testing.assert_close(n, want_n[:rows], rtol=0 if backend == "interp" else 1e-5,
                                   atol=0 if backend == "interp" else 1e-6)
    assert k.compile_count == 1


# ============================================================================ fillpad
@pytest.mark.parametrize("backend", BACKENDS)
def test_fillpad_official_example(backend):
    """pypto-fillpad.md: a [4, 4] tensor whose valid region is [2, 2], filled with "-inf" beyond it."""
    @pypto.frontend.jit(backend=backend)
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        a = pypto.view(x, [4, 4], [0, 0], valid_shape=[2, 2])
        y[:] = pypto.fillpad(a, "constant", "-inf")

    x = torch.tensor([[1.0, 2.0, 9.0, 9.0], [3.0, 4.0, 9.0, 9.0], [9.0] * 4, [9.0] * 4])
    y = torch.zeros(4, 4)
    k(x, y)
    inf = float("-inf")
    assert y.tolist() == [[1.0, 2.0, inf, inf], [3.0, 4.0, inf, inf], [inf] * 4, [inf] * 4]


@pytest.mark.both_backends
def test_fillpad_boundary_views_of_a_dynamic_tensor():
    """The ragged last block of a DYNAMIC loop: the view is clipped at the tensor's end, fillpad gives a
    full block (value 7 beyond the data, converted to INT32), which then computes at full size."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_INT32), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 16)
        for i in pypto.loop(0, x.shape[0], 4):
            block = pypto.fillpad(pypto.view(x, [4, 16], [i, 0]), value=7.0)
            assert block.shape == block.valid_shape == [4, 16]
            y[i:i + 4, :] = block + 1

    x = torch.arange(6 * 16, dtype=torch.int32).reshape(6, 16)
    y = torch.zeros(8, 16, dtype=torch.int32)
    k(x, y)
    assert torch.equal(y[:6], x + 1) and torch.equal(y[6:], torch.full((2, 16), 8, dtype=torch.int32))


def test_fillpad_of_a_full_tensor_is_a_copy_and_modes_are_checked():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 16)
        y[:] = pypto.fillpad(x, value=1.0) * 2.0

    x = torch.randn(8, 16)
    y = torch.empty(8, 16)
    k(x, y)
    assert torch.equal(y, x * 2)

    @pypto.frontend.jit
    def bad(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 16)
        y[:] = pypto.fillpad(x, "reflect")

    with pytest.raises(NotImplementedError, match="mode='reflect'"):
        bad(x, y)
