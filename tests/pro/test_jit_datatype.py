"""@pl.jit(datatype={param: "var"}) (runtime/datatype.py): dtype variables of the kernel body chosen per launch
(kernel[stream, block_dim, {param: pl.DT_*}], after the tiling key when there is one); each choice is its own
compiled variant, and the schema and launch dicts are checked as the official runtime checks them."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelLaunchError, KernelLaunchValueError, KernelValueError
from pypto_pro.backends import cpu
from pypto_pro.runtime.tilingkey import TilingKeyField

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]

N = 64


def tile_of(dtype):  # an inlined helper sees the dtype variable as its argument
    return pl.TileType(shape=[1, N], dtype=dtype, target_memory=pl.MemorySpace.Vec)


def axpy_any(x: pl.Ptr[pl.DT_UINT8], y: pl.Ptr[pl.DT_UINT8], out: pl.Ptr[pl.DT_UINT8]):
    """out = 2 * x + y in the element type the launch names (x, y: "elem"; out: "acc")."""
    xt = pl.make_tensor(x, [1, N], [N, 1], dtype=elem)  # noqa: F821
    yt = pl.make_tensor(y, [1, N], [N, 1], dtype=elem)  # noqa: F821
    ot = pl.make_tensor(out, [1, N], [N, 1], dtype=acc)  # noqa: F821
    a = pl.make_tile(tile_of(elem), addr=0)  # noqa: F821
    b = pl.make_tile(tile_of(elem), addr=0x400)  # noqa: F821
    r = pl.make_tile(tile_of(acc), addr=0x800)  # noqa: F821
    with pl.section_vector():
        pl.load(a, xt, [0, 0])
        pl.load(b, yt, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(a, a, a)
        pl.add(a, a, b)
        pl.cast(r, a)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(ot, r, [0, 0])


SCHEMA = {"x": "elem", "y": "elem", "out": "acc"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("elem,acc,np_elem,np_acc", [
    (pl.DT_FP16, pl.DT_FP32, np.float16, np.float32),
    (pl.DT_INT32, pl.DT_INT32, np.int32, np.int32),
    (pl.DT_FP32, pl.DT_FP16, np.float32, np.float16),
])
def test_each_launch_compiles_the_types_it_names(backend, elem, acc, np_elem, np_acc):
    k = pl.jit(axpy_any, backend=backend, auto_mutex=False, datatype=SCHEMA)
    x = (np.arange(N) % 9 - 4).astype(np_elem)
    y = (np.arange(N) % 5).astype(np_elem)
    out = np.zeros(N, np_acc)
    k[None, 1, {"x": elem, "y": elem, "out": acc}](x, y, out)
    np.testing.assert_array_equal(out, (2 * x + y).astype(np_acc))


def test_variants_are_cached_per_dtype_binding():
    k = pl.jit(axpy_any, backend="interp", auto_mutex=False, datatype=SCHEMA)
    x = np.ones(N, np.float32)
    for _ in range(2):
        k[None, 1, {"x": pl.DT_FP32, "y": pl.DT_FP32, "out": pl.DT_FP32}](x, x, x.copy())
        k[None, 1, {"x": pl.DT_FP32, "y": pl.DT_FP32, "out": pl.DT_FP16}](x, x, np.zeros(N, np.float16))
    assert len(k._compiled_by_signature) == 2


class Mode:
    Double = TilingKeyField(bits=1, values=[0, 1])


def scaled(x: pl.Ptr[pl.DT_UINT8], out: pl.Ptr[pl.DT_UINT8]):
    xt = pl.make_tensor(x, [1, N], [N, 1], dtype=T)  # noqa: F821
    ot = pl.make_tensor(out, [1, N], [N, 1], dtype=T)  # noqa: F821
    g = pl.make_tile_group(type=tile_of(T), addrs=0, mutex_ids=[0])  # noqa: F821
    with pl.section_vector():
        a = g.current()
        pl.load(a, xt, [0, 0])
        if Double == 1:  # noqa: F821
            pl.add(a, a, a)
        pl.store(ot, a, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_dtype_dict_follows_the_tiling_key(backend):
    k = pl.jit(scaled, backend=backend, tiling_key=Mode, datatype={"x": "T", "out": "T"})
    x = np.arange(N, dtype=np.int16)
    out = np.zeros(N, np.int16)
    k[None, 1, {"Double": 1}, {"x": pl.DT_INT16, "out": pl.DT_INT16}](x, out)
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("mapping,message", [
    ({}, "non-empty dict"),
    ({"x": "not an identifier"}, "must be a valid Python identifier"),
    ({"nope": "T"}, r"datatype params \['nope'\] do not match kernel function"),
    ({"x": "y"}, r"conflict with kernel params: \['y'\]"),
])
def test_schema_errors(mapping, message):
    with pytest.raises(KernelValueError, match=message):
        pl.jit(axpy_any, datatype=mapping)


def test_schema_variable_clashing_with_a_tiling_key_field():
    with pytest.raises(KernelValueError, match=r"conflict with tiling_key fields: \['Double'\]"):
        pl.jit(scaled, tiling_key=Mode, datatype={"x": "Double"})


def test_launch_errors():
    k = pl.jit(axpy_any, backend="interp", datatype=SCHEMA)
    x = np.ones(N, np.float32)
    with pytest.raises(KernelLaunchValueError, match="cannot be called directly"):
        k(x, x, x)
    with pytest.raises(KernelLaunchValueError, match="cannot be called directly"):
        k[None, 1](x, x, x)
    with pytest.raises(KernelLaunchValueError, match=r"datatype keys \['x'\] do not match schema params"):
        k[None, 1, {"x": pl.DT_FP32}](x, x, x)
    with pytest.raises(KernelLaunchValueError, match="mapped to variable 'elem' disagree: FP32 vs FP16"):
        k[None, 1, {"x": pl.DT_FP32, "y": pl.DT_FP16, "out": pl.DT_FP32}](x, x, x)
    with pytest.raises(KernelLaunchError, match=r"datatype\['out'\] must be a pypto_pro.DataType, got str"):
        k[None, 1, {"x": pl.DT_FP32, "y": pl.DT_FP32, "out": "FP32"}](x, x, x)
    plain = pl.jit(scaled, backend="interp", tiling_key=Mode)
    with pytest.raises(KernelLaunchValueError, match="no @pl.jit\\(datatype=...\\) schema"):
        plain[None, 1, {"Double": 0}, {"x": pl.DT_FP32}](x, x)
