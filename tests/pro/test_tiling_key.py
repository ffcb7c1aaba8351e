"""Tiling keys (docs/language.md, tutorials/.../tiling_key.md): ``@pl.jit(tiling_key=Schema)`` compiles one specialised
kernel per concrete key, chosen at launch with ``kernel[stream, block_dim, {field: value}]``."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelLaunchError, KernelLaunchValueError, KernelSyntaxError
from pypto_pro.backends import cpu
from pypto_pro.runtime.tilingkey import TilingKeyField, TilingKeySchema

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]


class AttentionKey:
    # the page's schema: a switch and two tile templates, with a combination rule
    HasAtten = TilingKeyField(bits=1, values=[0, 1])
    BlockM = TilingKeyField(bits=8, values=[64, 128])

    def is_valid(self, key):
        has_atten, block_m = key
        return has_atten == 0 or block_m == 128


def causal_rows(x: pl.Tensor[[128, 32], pl.DT_FP32], y: pl.Tensor[[128, 32], pl.DT_FP32]):
    """Row block r of y = x's rows, scaled by (rows kept): HasAtten keeps only blocks 0..r (a causal mask)."""
    t = pl.make_tile_group(type=pl.TileType([BlockM, 32], pl.DT_FP32), addrs=0, mutex_ids=[0, 1])  # noqa: F821
    with pl.section_vector():
        for r in pl.range(0, 128 // BlockM):  # noqa: F821
            kv_end = 128 // BlockM  # noqa: F821
            if HasAtten == 1:  # noqa: F821
                kv_end = r + 1
            buf = t.next()
            pl.load(buf, x, [r * BlockM, 0])  # noqa: F821
            pl.mul(buf, buf, pl.const(1.0, pl.DT_FP32) * kv_end)
            pl.store(y, buf, [r * BlockM, 0])  # noqa: F821


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("has_atten,block_m", [(0, 64), (0, 128), (1, 128)])
def test_each_key_is_its_own_kernel(backend, has_atten, block_m):
    k = pl.jit(causal_rows, backend=backend, tiling_key=AttentionKey)
    x = np.random.default_rng(0).standard_normal((128, 32)).astype(np.float32)
    y = np.zeros_like(x)
    k[None, 1, {"HasAtten": has_atten, "BlockM": block_m}](x, y)
    blocks = 128 // block_m
    scale = np.repeat(np.arange(1, blocks + 1) if has_atten else np.full(blocks, blocks), block_m)
    np.testing.assert_array_equal(y, x * scale[:, None].astype(np.float32))
    text = k.ir_text(x, y, tiling_key={"HasAtten": has_atten, "BlockM": block_m})
    assert "HasAtten" not in text and "BlockM" not in text  # folded: no runtime test of the key


def test_variants_are_compiled_once_per_key():
    k = pl.jit(causal_rows, backend="interp", tiling_key=AttentionKey)
    x = np.ones((128, 32), np.float32)
    for _ in range(2):
        k[None, 1, {"HasAtten": 0, "BlockM": 64}](x, x.copy())
        k[None, 1, {"HasAtten": 1, "BlockM": 128}](x, x.copy())
    assert len(k._variants) == 2


def test_packing_stores_value_indices_in_definition_order():
    class MaskKey:
        NeedAttnMask = TilingKeyField(bits=1, values=[1, 0])
        Template = TilingKeyField(bits=3, values=[16, 64, 128])

    schema = TilingKeySchema(MaskKey)
    assert schema.names == ["NeedAttnMask", "Template"]
    assert schema.resolve({"NeedAttnMask": 1, "Template": 16}, "k")[0] == 0
    assert schema.resolve({"NeedAttnMask": 0, "Template": 16}, "k")[0] == 1  # the page's table: value 0 -> bit 1
    assert schema.resolve({"NeedAttnMask": 0, "Template": 128}, "k") == (1 | 2 << 1, {"NeedAttnMask": 0,
                                                                                       "Template": 128})


@pytest.mark.parametrize("bits,values,match", [
    (0, [0], "bits must be a positive int"), (1, [], "non-empty"), (1, [True, False], "not bools"),
    (2, [1, 1], "distinct"), (1, [0, 1, 2], "3 values do not fit 1 bits"), (1.0, [0], "bits must be a positive int"),
])
def test_field_declaration_errors(bits, values, match):
    with pytest.raises(ValueError, match=match):
        TilingKeyField(bits=bits, values=values)


def test_schema_errors_at_decoration():
    class Empty:
        pass

    class TooWide:
        A = TilingKeyField(bits=40, values=[0])
        B = TilingKeyField(bits=25, values=[0])

    class BadValid:
        A = TilingKeyField(bits=1, values=[0])
        is_valid = 3

    with pytest.raises(TypeError, match="declares no TilingKeyField"):
        pl.jit(causal_rows, tiling_key=Empty)
    with pytest.raises(ValueError, match="65 bits, more than 64"):
        pl.jit(causal_rows, tiling_key=TooWide)
    with pytest.raises(TypeError, match="is_valid must be callable"):
        pl.jit(causal_rows, tiling_key=BadValid)
    with pytest.raises(TypeError, match="takes a class"):
        pl.jit(causal_rows, tiling_key=AttentionKey())


def test_launch_errors():
    k = pl.jit(causal_rows, backend="interp", tiling_key=AttentionKey)
    x = np.ones((128, 32), np.float32)
    with pytest.raises(KernelLaunchError, match=r"launch it with kernel\[stream, block_dim, \{'HasAtten': ..., "):
        k(x, x)
    with pytest.raises(KernelLaunchError, match="launch it with"):
        k[None, 1](x, x)
    with pytest.raises(KernelLaunchValueError, match="rejected by AttentionKey.is_valid"):
        k[None, 1, {"HasAtten": 1, "BlockM": 64}](x, x)
    with pytest.raises(KernelLaunchValueError, match=r"missing \['BlockM'\]; unknown \['blockm'\]"):
        k[None, 1, {"HasAtten": 1, "blockm": 128}](x, x)
    with pytest.raises(KernelLaunchValueError, match=r"BlockM=1 is not one of its values \[64, 128\]"):
        k[None, 1, {"HasAtten": 0, "BlockM": 1}](x, x)  # an index is not a value
    with pytest.raises(KernelLaunchValueError, match="must be a dict"):
        k[None, 1, (0, 64)](x, x)
    with pytest.raises(KernelLaunchValueError, match=r"no @pl.jit\(datatype=...\) schema"):
        k[None, 1, {"HasAtten": 0, "BlockM": 64}, {"T": pl.DT_FP16}](x, x)
    plain = pl.jit(lambda_free_kernel, backend="interp")
    with pytest.raises(KernelLaunchError, match="has no @pl.jit\\(tiling_key=...\\) schema"):
        plain[None, 1, {"HasAtten": 0}](x)


def lambda_free_kernel(x: pl.Tensor[[128, 32], pl.DT_FP32]):
    pass


def clashing_kernel(BlockM: pl.DT_INT64):
    pass


def test_field_names_must_not_clash(monkeypatch):
    key = {"HasAtten": 0, "BlockM": 64}
    with pytest.raises(KernelSyntaxError, match="tiling-key field 'BlockM' is also a kernel parameter"):
        pl.jit(clashing_kernel, backend="interp", tiling_key=AttentionKey)[None, 1, key](3)
    monkeypatch.setitem(globals(), "HasAtten", 5)  # a module-level name of the kernel's module
    with pytest.raises(KernelSyntaxError, match="tiling-key field 'HasAtten' is also a module-level name"):
        pl.jit(lambda_free_kernel, backend="interp", tiling_key=AttentionKey)[None, 1, key](
            np.ones((128, 32), np.float32))
