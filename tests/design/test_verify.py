"""The IR verifier (src/pypto_pro/ir/verify.py): section and placement rules on tile IR from either frontend.

Kernels are parsed (valid), then their IR is changed the way a faulty frontend or pass could (a tile moved,
an op put in the other side's section, a wrong kernel kind), and :func:`verify` must reject it with the
rule's KernelError.  The tensor-level lowering's kernels go through the same verifier.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import KernelMemoryError, KernelSyntaxError, KernelTypeError
from pypto_pro.arch import resolve_arch
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.verify import verify
from pypto_pro.language.parser import parse_kernel


def _scale_rows(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x0)
    b = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x1000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.mul(b, a, 3.0)
        pl.store(y, b, [0, 0])


def _cube_then_vector(x: pl.Tensor[[16, 16], pl.DT_FP16], w: pl.Tensor[[16, 16], pl.DT_FP16],
                      y: pl.Tensor[[16, 16], pl.DT_FP32]):
    ma = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Mat), addr=0x0)
    mb = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Mat), addr=0x200)
    left = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Left), addr=0x0)
    right = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Right), addr=0x0)
    acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Acc), addr=0x0)
    with pl.section_cube():
        pl.load(ma, x, [0, 0])
        pl.load(mb, w, [0, 0])
        pl.move(left, ma)
        pl.move(right, mb)
        pl.matmul(acc, left, right)
        pl.store(y, acc, [0, 0])


def _parse(fn, arch="a3") -> ir.KernelIR:
    return parse_kernel(fn, name=fn.__name__, arch=resolve_arch(arch), auto_mutex=False, static_dims={})


def test_parsed_kernels_verify():
    for fn in (_scale_rows, _cube_then_vector):
        k = _parse(fn)
        assert verify(k) is k


def test_misaligned_tile_is_rejected():
    k = _parse(_scale_rows)
    k.tiles[1].addr = 0x1004  # not a multiple of the Vec alignment
    with pytest.raises(KernelMemoryError, match="must be a non-negative multiple of 32 bytes"):
        verify(k)


def test_tile_beyond_capacity_is_rejected():
    k = _parse(_scale_rows)
    cap = k.arch.capacity["Vec"]
    k.tiles[1].addr = cap - 1024  # aligned, but the 4 KiB tile runs past the end of UB
    with pytest.raises(KernelMemoryError, match=f"beyond the {cap}-byte Vec"):
        verify(k)


def test_undersized_tile_is_rejected():
    k = _parse(_scale_rows)
    k.tiles[0].size = 16 * 64 * 4 - 4
    with pytest.raises(KernelMemoryError, match="is smaller than the tile"):
        verify(k)


def _sections(k):
    return [s for s in k.body if isinstance(s, ir.Section)]


def test_op_in_the_other_sides_section_is_rejected():
    k = _parse(_cube_then_vector)
    (cube,) = _sections(k)
    vec = _parse(_scale_rows)
    mul = next(s for s in ir.walk(vec.body) if isinstance(s, ir.OpStmt) and s.op.name == "mul")
    cube.body.append(mul)  # a vector op inside pl.section_cube()
    with pytest.raises(KernelTypeError, match=r"pl.mul runs on the vector core; it cannot stand in pl.section_cube"):
        verify(k)


def test_kernel_kind_must_cover_its_sections():
    k = dataclasses.replace(_parse(_cube_then_vector), kind="vector")  # a cube section in a "vector" kernel
    with pytest.raises(KernelTypeError, match="a vector kernel holds cube work"):
        verify(k)


def test_op_outside_sections_of_a_mix_kernel_is_rejected():
    k = _parse(_cube_then_vector)
    vec = _parse(_scale_rows)
    (vsec,) = _sections(vec)
    k.body.append(vsec)  # now mix: both sections
    k.tiles += vec.tiles
    for t in vec.tiles:  # keep placement legal: vector tiles live in UB, apart from the cube's memories
        assert t.space == pl.MemorySpace.Vec
    k.kind = "mix"
    verify(k)
    k.body.append(vsec.body[1])  # the mul, outside every section
    with pytest.raises(KernelTypeError, match="stands outside every section of a mix kernel"):
        verify(k)


def test_mixed_sides_without_sections_is_a_syntax_error():
    k = _parse(_cube_then_vector)
    vec = _parse(_scale_rows)
    k.body = list(_sections(k)[0].body) + list(_sections(vec)[0].body)
    k.tiles += vec.tiles
    with pytest.raises(KernelSyntaxError, match="both cube and vector tiles without sections"):
        verify(k)


def test_tensor_level_lowering_is_verified(monkeypatch):
    """The lowering's kernels pass through the verifier: a lowering that misplaces a tile fails there."""
    import pypto
    from pypto.lower import builder, program

    calls = []
    real = program.verify
    monkeypatch.setattr(program, "verify", lambda k: calls.append(k.name) or real(k))

    @pypto.frontend.jit
    def double(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + x

    x = torch.arange(16 * 64, dtype=torch.float32).reshape(16, 64)
    y = torch.zeros_like(x)
    double(x, y)
    np.testing.assert_array_equal(y.numpy(), (x + x).numpy())
    assert calls

    real_assign = builder.Builder.assign_addresses

    def misplace(self, tiles):
        real_assign(self, tiles)
        for t in tiles:
            t.addr += 4  # off the alignment grid

    monkeypatch.setattr(builder.Builder, "assign_addresses", misplace)

    @pypto.frontend.jit
    def triple(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + x + x

    with pytest.raises(KernelMemoryError, match="non-negative multiple"):
        triple(x, y)


def _matmul_in_vector_section(x: pl.Tensor[[16, 16], pl.DT_FP16], y: pl.Tensor[[16, 16], pl.DT_FP32]):
    left = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Left), addr=0x0)
    right = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Right), addr=0x0)
    acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Acc), addr=0x0)
    with pl.section_vector():
        pl.matmul(acc, left, right)


def _misaligned_tile(x: pl.Tensor[[16, 64], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x10)
    with pl.section_vector():
        pl.load(a, x, [0, 0])


def test_parser_applies_the_verifier_rules_at_the_line():
    """The parser uses the verifier's rule functions while parsing: the error names the kernel and the line."""
    with pytest.raises(KernelTypeError, match="pl.matmul runs on the cube core; it cannot stand in "
                                              "pl.section_vector") as e:
        _parse(_matmul_in_vector_section)
    assert "[kernel _matmul_in_vector_section]" in str(e.value) and "pl.matmul(acc, left, right)" in str(e.value)
    with pytest.raises(KernelMemoryError, match="pl.make_tile: address 0x10 of a Vec tile") as e:
        _parse(_misaligned_tile)
    assert "[kernel _misaligned_tile]" in str(e.value)


def _group_from_base(x: pl.Tensor[[16, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0x0, depth=2)
    with pl.section_vector():
        pl.load(g[0], x, [0, 0])


def test_group_slots_from_a_base_address_must_not_overlap():
    k = _parse(_group_from_base)
    verify(k)
    g = k.groups[0]
    g.slots[1].addr = g.slots[0].addr + 1024  # inside slot 0's 4 KiB
    with pytest.raises(KernelMemoryError, match="slots .* overlap"):
        verify(k)
    g.may_alias = True  # explicit addrs=[...] may share bytes on purpose
    verify(k)
