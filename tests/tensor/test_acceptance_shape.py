"""Layout ops found wrong by acceptance testing: reshape of transposed / permuted / sliced tensors
(torch copies them in logical order), ``clone``, and views at a tensor boundary, whose valid region
is clipped there (statically or at run time), computed on and assembled (docs/tensor.md "Ops")."""
import numpy as np
import pytest
import torch

import pypto

D = pypto.DYNAMIC
F32 = pypto.DT_FP32
X48 = torch.arange(32.).reshape(4, 8)


# ----------------------------------------------------------------------------------------------
# reshape of a non-contiguous tensor reads it in logical (row-major) order
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def reshape_layouts(x: pypto.Tensor((4, 8), F32), t: pypto.Tensor((32,), F32), e: pypto.Tensor((8, 4), F32),
                    s: pypto.Tensor((16,), F32), u: pypto.Tensor((8, 1, 4), F32)):
    pypto.set_vec_tile_shapes(8, 32)
    t[:] = pypto.reshape(pypto.transpose(x, 0, 1), [32])
    e[:] = pypto.reshape(pypto.transpose(x + 0, 0, 1), [4, 8]).reshape([8, 4])
    s[:] = pypto.reshape(x[:, 2:6], [16])
    u[:] = pypto.unsqueeze(pypto.transpose(x, 0, 1), 1)


@pytest.mark.both_backends
def test_reshape_of_transposed_and_sliced_tensors_copies_in_logical_order():
    outs = [torch.zeros(32), torch.zeros(8, 4), torch.zeros(16), torch.zeros(8, 1, 4)]
    reshape_layouts(X48, *outs)
    torch.testing.assert_close(outs[0], X48.t().reshape(32), rtol=0, atol=0)
    torch.testing.assert_close(outs[1], X48.t().reshape(4, 8).reshape(8, 4), rtol=0, atol=0)
    torch.testing.assert_close(outs[2], X48[:, 2:6].reshape(16), rtol=0, atol=0)
    torch.testing.assert_close(outs[3], X48.t().unsqueeze(1), rtol=0, atol=0)


@pytest.mark.both_backends
def test_reshape_of_permuted_3d_tensor():
    x = torch.arange(64.).reshape(2, 4, 8)
    o = torch.zeros(4, 16)

    @pypto.frontend.jit
    def k(a: pypto.Tensor((2, 4, 8), F32), y: pypto.Tensor((4, 16), F32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = pypto.reshape(pypto.permute(a, [1, 0, 2]), [4, 16]) * 2

    k(x, o)
    torch.testing.assert_close(o, x.permute(1, 0, 2).reshape(4, 16) * 2, rtol=0, atol=0)


def test_reshape_with_another_element_count_is_a_type_error():
    @pypto.frontend.jit
    def k(a: pypto.Tensor((4, 8), F32), y: pypto.Tensor((12,), F32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = pypto.reshape(a[:, 2:5], [16])

    with pytest.raises(pypto.KernelTypeError, match=r"cannot reshape \[4, 3\], 12 elements, into \[16\]"):
        k(X48, torch.zeros(12))


def test_reshape_valid_shape_must_hold_the_valid_elements():
    """``valid_shape`` is the input's valid region seen with the new shape (tests/tensor/
    test_windowed_ops_and_names.py): 32 valid elements cannot be a valid region of 16."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor((4, 8), F32), y: pypto.Tensor((32,), F32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = pypto.reshape(a, [32], valid_shape=[16])

    with pytest.raises(pypto.KernelTypeError, match="cannot be seen as valid_shape"):
        k(X48, torch.zeros(32))


# ----------------------------------------------------------------------------------------------
# clone
# ----------------------------------------------------------------------------------------------
@pytest.mark.both_backends
def test_clone_copies_and_does_not_follow_later_writes():
    x = torch.randn(8, 64)
    c, o = torch.zeros(8, 64), torch.zeros(8, 64)
    original = x.clone()

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        kept = pypto.clone(a)
        a[:] = a * 2
        y[:] = kept
        z[:, :32] = pypto.clone(a[:, 8:40]) + 1

    k(x, c, o)
    torch.testing.assert_close(c, original, rtol=0, atol=0)
    torch.testing.assert_close(x, original * 2, rtol=0, atol=0)
    torch.testing.assert_close(o[:, :32], original[:, 8:40] * 2 + 1, rtol=0, atol=0)


# ----------------------------------------------------------------------------------------------
# views at a tensor boundary track their valid region
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def tiled_double(x: pypto.Tensor[[D, D], pypto.DT_FP16], out: pypto.Tensor[[D, D], pypto.DT_FP16], bm: int,
                 bn: int):
    """The official basic_ops dynamic_add_kernel pattern: ceil-divided loops, view, assemble."""
    pypto.set_vec_tile_shapes(32, 32)
    for m in pypto.loop((x.shape[0] + bm - 1) // bm):
        for n in pypto.loop((x.shape[1] + bn - 1) // bn):
            t = pypto.view(x, shape=[bm, bn], offsets=[m * bm, n * bn])
            assert t.shape == [bm, bn]
            pypto.assemble(t * 2, [m * bm, n * bn], out)


@pytest.mark.both_backends
@pytest.mark.parametrize("rows, cols", [(200, 300), (64, 96), (5, 7)])
def test_dynamic_boundary_views_are_clipped_at_run_time(rows, cols):
    x = torch.randn(rows, cols, dtype=torch.float16)
    out = torch.zeros_like(x)
    tiled_double(x, out, 64, 96)
    torch.testing.assert_close(out, x * 2, rtol=0, atol=0)


@pytest.mark.both_backends
def test_static_boundary_view_computes_and_assembles_its_valid_region():
    x = torch.randn(20, 64)
    out, sums = torch.zeros(20, 64), torch.zeros(1, 64)
    seen = {}

    @pypto.frontend.jit
    def k(a: pypto.Tensor((20, 64), F32), y: pypto.Tensor((20, 64), F32), s: pypto.Tensor((1, 64), F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for r in range(0, 20, 8):
            t = pypto.view(a, [8, 64], [r, 0])
            seen[r] = (t.shape, t.valid_shape, (t + 1).shape)
            pypto.assemble(pypto.exp(t) + 1, [r, 0], y)
        s[:] = pypto.sum(pypto.view(a, [8, 64], [16, 0]), dim=0, keepdim=True)

    k(x, out, sums)
    torch.testing.assert_close(out, torch.exp(x) + 1)
    torch.testing.assert_close(sums, x[16:].sum(0, keepdim=True))
    assert seen[0] == ([8, 64], [8, 64], [8, 64])
    assert seen[16] == ([8, 64], [4, 64], [8, 64])


@pytest.mark.both_backends
def test_explicit_valid_shape_keeps_the_shape():
    x = torch.randn(16, 64)
    out = torch.full((16, 64), -1.0)
    seen = []

    @pypto.frontend.jit
    def k(a: pypto.Tensor((16, 64), F32), y: pypto.Tensor((16, 64), F32)):
        pypto.set_vec_tile_shapes(8, 64)
        t = pypto.view(a, [8, 64], [4, 0], valid_shape=[4, 64])
        seen.append((t.shape, t.valid_shape, pypto.view(t, [4, 64], [2, 0]).valid_shape))
        pypto.assemble(t * 3, [4, 0], y)

    k(x, out)
    want = torch.full((16, 64), -1.0)
    want[4:8] = x[4:8] * 3
    torch.testing.assert_close(out, want)
    assert seen == [([8, 64], [4, 64], [2, 64])]


@pytest.mark.both_backends
def test_boundary_view_of_a_transposed_tensor():
    x = torch.randn(40, 24)
    out = torch.zeros(24, 40)

    @pypto.frontend.jit
    def k(a: pypto.Tensor((40, 24), F32), y: pypto.Tensor((24, 40), F32)):
        pypto.set_vec_tile_shapes(8, 32)
        at = pypto.transpose(a, 0, 1)
        for c in range(0, 40, 32):
            pypto.assemble(pypto.view(at, [24, 32], [0, c]) - 1, [0, c], y)

    k(x, out)
    torch.testing.assert_close(out, x.t() - 1)


def test_clipped_view_meeting_a_full_size_operand_computes_on_the_valid_region():
    """The boundary view of the last block holds 4 of its 8 rows: the sum with a full [8, 64] operand
    covers those 4 rows (the full operand is read over them) and assemble writes them only."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([D, 64], F32), w: pypto.Tensor((8, 64), F32), y: pypto.Tensor([D, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for i in pypto.loop((a.shape[0] + 7) // 8):
            pypto.assemble(pypto.view(a, [8, 64], [i * 8, 0]) + w, [i * 8, 0], y)

    a, w, y = torch.randn(20, 64), torch.randn(8, 64), torch.zeros(20, 64)
    k(a, w, y)
    torch.testing.assert_close(y, a + w.repeat(3, 1)[:20], rtol=0, atol=0)


@pytest.mark.parametrize("offsets, valid, match", [
    ([20, 0], None, "offset 20 is outside"), ([-1, 0], None, "offset -1 is outside"),
    ([0, 0], [9, 64], "valid_shape 9 exceeds"), ([0, 0], [0, 64], "valid_shape must be positive")])
def test_view_arguments_are_checked(offsets, valid, match):
    @pypto.frontend.jit
    def k(a: pypto.Tensor((20, 64), F32), y: pypto.Tensor((20, 64), F32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.assemble(pypto.view(a, [8, 64], offsets, valid_shape=valid), [0, 0], y)

    with pytest.raises(pypto.KernelTypeError, match=match):
        k(torch.randn(20, 64), torch.zeros(20, 64))


def test_assemble_outside_the_destination_is_a_type_error():
    @pypto.frontend.jit
    def k(a: pypto.Tensor((8, 64), F32), y: pypto.Tensor((12, 64), F32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.assemble(a, [8, 0], y)

    with pytest.raises(pypto.KernelTypeError, match=r"pypto.assemble: the source's valid region \[8, 64\]"):
        k(torch.randn(8, 64), torch.zeros(12, 64))


# ============================================================================ view(x, dtype=): bit reinterpretation
@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_view_dtype_reinterprets_bytes(backend):
    """docs/tensor.md "Ops" / the official view page: ``pypto.view(x, dtype=DT_INT8)`` of an FP32 [2, 2] tensor is
    its bytes as INT8 [2, 8] (the page prints [57 -59 112 63 ...] for 0.9405094); back and forth
    through INT32 of a computed value gives the value again."""
    @pypto.frontend.jit(backend=backend)
    def k(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        v = pypto.view(x, dtype=pypto.DT_INT8)
        assert v.shape == [2, 8] and v.dtype == pypto.DT_INT8
        y[:] = v
        z[:] = pypto.view(pypto.view(x * 2.0, dtype=pypto.DT_INT32), dtype=F32)

    x = torch.tensor([[0.9405094, 0.20237109], [0.99819463, 0.13246714]])
    y, z = torch.empty(2, 8, dtype=torch.int8), torch.empty(2, 2)
    k(x, y, z)
    assert y.tolist()[0] == [57, -59, 112, 63, 94, 58, 79, 62]
    assert torch.equal(y, x.view(torch.int8)) and torch.equal(z, x * 2)


@pytest.mark.both_backends
def test_view_dtype_to_a_wider_type_and_of_a_slice():
    """INT8 -> FP32 divides the last dim by 4; a view of a slice (not a whole buffer) is reinterpreted
    from a copy; FP16 -> INT16 keeps the shape; DYNAMIC rows never recompile."""
    @pypto.frontend.jit
    def k(b: pypto.Tensor([D, 32], pypto.DT_INT8), h: pypto.Tensor([D, 16], pypto.DT_FP16),
          f: pypto.Tensor([D, 8], F32), part: pypto.Tensor([D, 4], F32), bits: pypto.Tensor([D, 16], pypto.DT_INT16)):
        pypto.set_vec_tile_shapes(8, 32)
        f[:] = pypto.view(b, dtype=F32)
        part[:] = pypto.view(b[:, 16:], dtype=F32)
        bits[:] = pypto.view(h, dtype=pypto.DT_INT16)

    for rows in (3, 9):
        b = torch.randint(-128, 127, (rows, 32), dtype=torch.int8)
        h = torch.randn(rows, 16).half()
        f, part, bits = torch.empty(rows, 8), torch.empty(rows, 4), torch.empty(rows, 16, dtype=torch.int16)
        k(b, h, f, part, bits)
        assert torch.equal(f.view(torch.int32), b.view(torch.int32))  # NaN bit patterns compare as ints
        assert torch.equal(part.view(torch.int32), b[:, 16:].contiguous().view(torch.int32))
        assert torch.equal(bits, h.view(torch.int16))
    assert k.compile_count == 1


def test_view_dtype_errors():
    def kernel(make):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 6], pypto.DT_INT8), y: pypto.Tensor([4, 6], pypto.DT_INT8)):
            pypto.set_vec_tile_shapes(8, 32)
            y[:] = make(x)
        return k

    x, y = torch.zeros(4, 6, dtype=torch.int8), torch.zeros(4, 6, dtype=torch.int8)
    with pytest.raises(pypto.KernelTypeError, match="must be a fixed multiple of 4 bytes"):
        kernel(lambda x: pypto.view(x, dtype=F32))(x, y)
    with pytest.raises(pypto.KernelTypeError, match="BOOL"):
        kernel(lambda x: pypto.view(x > 0, dtype=pypto.DT_INT8))(x, y)
    with pytest.raises(NotImplementedError, match="two pypto.view calls"):
        kernel(lambda x: pypto.view(x, [4, 6], [0, 0], dtype=pypto.DT_UINT8))(x, y)


# ============================================================================ interleave / deinterleave
@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_interleave_and_deinterleave_official_examples(backend):
    """The official pages' examples: interleave builds input[0], other[0], input[1], ... and splits the
    stream at its middle; deinterleave (two inputs, or one whole stream) takes the even and odd
    positions back."""
    @pypto.frontend.jit(backend=backend)
    def k(a: pypto.Tensor(), b: pypto.Tensor(), stream: pypto.Tensor(), o0: pypto.Tensor(), o1: pypto.Tensor(),
          d0: pypto.Tensor(), d1: pypto.Tensor(), e0: pypto.Tensor(), e1: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o0[:], o1[:] = pypto.interleave(a, b)
        d0[:], d1[:] = pypto.deinterleave(o0, o1)
        e0[:], e1[:] = pypto.deinterleave(stream)

    a = torch.tensor([[0., 1, 2, 3], [4, 5, 6, 7]])
    b = a + 10
    stream = torch.tensor([[0., 10, 1, 11, 2, 12, 3, 13], [4, 14, 5, 15, 6, 16, 7, 17]])
    outs = [torch.empty(2, 4) for _ in range(6)]
    k(a, b, stream, *outs)
    assert outs[0].tolist() == [[0, 10, 1, 11], [4, 14, 5, 15]]
    assert outs[1].tolist() == [[2, 12, 3, 13], [6, 16, 7, 17]]
    for got, want in zip(outs[2:], (a, b, a, b)):
        assert torch.equal(got, want)


@pytest.mark.both_backends
def test_interleave_round_trip_3d_fp16_dynamic():
    """[B, DYNAMIC, C] FP16 with tails in every tiled dim: deinterleave(interleave(x, y)) == (x, y),
    and interleave matches torch's stack-and-flatten split at the middle."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, D, 40], pypto.DT_FP16), y: pypto.Tensor([2, D, 40], pypto.DT_FP16),
          i0: pypto.Tensor([2, D, 40], pypto.DT_FP16), i1: pypto.Tensor([2, D, 40], pypto.DT_FP16),
          r0: pypto.Tensor([2, D, 40], pypto.DT_FP16), r1: pypto.Tensor([2, D, 40], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(1, 8, 32)
        i0[:], i1[:] = pypto.interleave(x, y)
        r0[:], r1[:] = pypto.deinterleave(i0, i1)

    for rows in (5, 13):
        x, y = torch.randn(2, rows, 40).half(), torch.randn(2, rows, 40).half()
        outs = [torch.empty(2, rows, 40, dtype=torch.float16) for _ in range(4)]
        k(x, y, *outs)
        stream = torch.stack([x, y], -1).reshape(2, rows, 80)
        assert torch.equal(outs[0], stream[..., :40]) and torch.equal(outs[1], stream[..., 40:])
        assert torch.equal(outs[2], x) and torch.equal(outs[3], y)
    assert k.compile_count == 1


def test_interleave_errors():
    def kernel(make):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 6], F32), y: pypto.Tensor([4, 6], F32), z: pypto.Tensor([4, 6], F32)):
            pypto.set_vec_tile_shapes(8, 32)
            z[:] = make(x, y)
        return k

    x = torch.zeros(4, 6)
    with pytest.raises(pypto.KernelTypeError, match="one shape and dtype"):
        kernel(lambda x, y: pypto.interleave(x, y[:, :4])[0])(x, x, x)
    with pytest.raises(pypto.KernelTypeError, match="must be even"):
        kernel(lambda x, y: pypto.deinterleave(x[:, :5])[0])(x, x, x)


@pytest.mark.both_backends
def test_two_reshapes_of_one_tensor_in_one_kernel():
    """Regression: two zero-copy reshapes of ``x`` are two GM parameters of one name; the cpu backend
    declared both under that name and failed to compile."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), a: pypto.Tensor(), b: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        a[:] = pypto.reshape(x, [4, 32]) + 1.0
        b[:] = pypto.reshape(x, [2, 64]) * 2.0

    x = torch.randn(8, 16)
    a, b = torch.empty(4, 32), torch.empty(2, 64)
    k(x, a, b)
    assert torch.equal(a, x.reshape(4, 32) + 1) and torch.equal(b, x.reshape(2, 64) * 2)


# ============================================================================ pack / unpack / gathermask
@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_pack_unpack_gathermask_official_examples(backend):
    """pypto-pack.md: INT32 [[0x03040506, 0x01050608]] packs to UINT8 [6 5 4 3 8 6 5 1]; pypto-unpack.md:
    that back to INT32; pypto-gathermask.md: pattern 1 of a [3, 6] arange keeps the even columns."""
    @pypto.frontend.jit(backend=backend)
    def k(x: pypto.Tensor(), m: pypto.Tensor(), packed: pypto.Tensor(), back: pypto.Tensor(), even: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        packed[:] = pypto.pack(x)
        back[:] = pypto.unpack(pypto.pack(x), pypto.DT_INT32)
        even[:] = pypto.gathermask(m, 1)

    x = torch.tensor([[0x03040506, 0x01050608]], dtype=torch.int32)
    m = torch.arange(18, dtype=torch.int32).reshape(3, 6)
    packed, back = torch.zeros(8, dtype=torch.uint8), torch.zeros(2, dtype=torch.int32)
    even = torch.zeros(3, 3, dtype=torch.int32)
    k(x, m, packed, back, even)
    assert packed.tolist() == [6, 5, 4, 3, 8, 6, 5, 1]
    assert back.tolist() == [0x03040506, 0x01050608]
    assert even.tolist() == [[0, 2, 4], [6, 8, 10], [12, 14, 16]]


#: gathermask's pattern modes and the elements of the last axis each keeps
GATHERMASK_PATTERNS = [(1, np.s_[..., 0::2]), (2, np.s_[..., 1::2]), (3, np.s_[..., 0::4]), (4, np.s_[..., 1::4]),
                       (5, np.s_[..., 2::4]), (6, np.s_[..., 3::4]), (7, np.s_[...])]


@pytest.mark.parametrize("mode, sl", GATHERMASK_PATTERNS)
def test_gathermask_patterns_on_fp16_3d(mode, sl):
    """Each pattern in a kernel of its own, on the interpreter (the cpu backend: the next test)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), mode: int = 1):
        pypto.set_vec_tile_shapes(2, 4, 32)
        y[:] = pypto.gathermask(x, mode) * 2.0

    x = torch.randn(3, 5, 24).half()
    want = x[sl] * 2
    y = torch.empty(want.shape, dtype=torch.float16)
    k(x, y, mode)
    assert torch.equal(y, want)


@pytest.mark.both_backends
def test_gathermask_every_pattern_in_one_kernel():
    """The seven patterns of the previous test in one kernel (one cpu compile instead of seven)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y1: pypto.Tensor(), y2: pypto.Tensor(), y3: pypto.Tensor(), y4: pypto.Tensor(),
          y5: pypto.Tensor(), y6: pypto.Tensor(), y7: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2, 4, 32)
        for mode, y in enumerate((y1, y2, y3, y4, y5, y6, y7), start=1):
            y[:] = pypto.gathermask(x, mode) * 2.0

    x = torch.randn(3, 5, 24).half()
    wants = [x[sl] * 2 for _, sl in GATHERMASK_PATTERNS]
    ys = [torch.empty(w.shape, dtype=torch.float16) for w in wants]
    k(x, *ys)
    for (mode, _), y, want in zip(GATHERMASK_PATTERNS, ys, wants):
        assert torch.equal(y, want), f"pattern {mode}"


def test_pack_of_fp16_and_unpack_to_every_width():
    """BF16 packs little-endian (low byte first); UINT8 bytes unpack to 1-, 2-, 4- and 8-byte types."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), p: pypto.Tensor(), i16: pypto.Tensor(), f32: pypto.Tensor(), i64: pypto.Tensor(),
          i8: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        packed = pypto.pack(x)
        p[:] = packed
        i16[:] = pypto.unpack(packed, pypto.DT_INT16)
        f32[:] = pypto.unpack(packed, F32)
        i64[:] = pypto.unpack(packed, pypto.DT_INT64)
        i8[:] = pypto.unpack(packed, pypto.DT_INT8)

    x = torch.randn(4, 8).bfloat16()
    raw = x.flatten().view(torch.uint8)
    outs = [torch.empty(64, dtype=torch.uint8), torch.empty(32, dtype=torch.int16), torch.empty(16),
            torch.empty(8, dtype=torch.int64), torch.empty(64, dtype=torch.int8)]
    k(x, *outs)
    assert torch.equal(outs[0], raw)
    for got in outs[1:]:
        assert torch.equal(got, raw.view(got.dtype))


@pytest.mark.parametrize("body, error, match", [
    (lambda x: pypto.gathermask(x, 8), pypto.KernelValueError, "pattern_mode must be an int in 1..7"),
    (lambda x: pypto.gathermask(x[:, :6], 3), pypto.KernelTypeError, "divisible by 4"),
    (lambda x: pypto.unpack(x, pypto.DT_INT32), pypto.KernelTypeError, "1-D DT_UINT8"),
    (lambda x: pypto.unpack(pypto.pack(x)[:6], pypto.DT_INT32), pypto.KernelTypeError, "multiple of 4 bytes"),
])
def test_pack_unpack_gathermask_errors(body, error, match):
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        y[:] = body(x)

    with pytest.raises(error, match=match):
        k(torch.randn(4, 8), torch.empty(4, 8))
