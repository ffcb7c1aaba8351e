"""``import pypto_pro.language as pl`` — the tile-level PyPTO Pro language.

Kernels are Python functions decorated with :func:`jit`; inside them ``pl.*`` ops are parsed
into the tile IR (they cannot be called directly).  See ``docs/language.md`` for the surface and
``README.md`` for what is not implemented yet.
"""
from __future__ import annotations

from .. import ops as _ops  # noqa: F401  (registers the op table)
from ..dtypes import (DT_BF16, DT_BOOL, DT_FP4, DT_FP4E1M2, DT_FP4E2M1, DT_FP8, DT_FP8E4M3FN, DT_FP8E5M2,  # noqa
                      DT_FP8E8M0, DT_FP16, DT_FP32, DT_HF4, DT_HF8, DT_INT4, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                      DT_UINT4, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DataType)
from ..errors import (KernelDeadlockError, KernelError, KernelLaunchError, KernelLaunchValueError,  # noqa: F401
                      KernelMemoryError,
                      KernelRaceError, KernelRuntimeError, KernelSyntaxError, KernelTypeError, KernelUninitError,
                      KernelValueError)
from ..ir.types import (AccPhase, AccToVecMode, AtomicType, CacheLine, CrossCoreSyncMode, DcciDst,  # noqa: F401
                        FillPadMode, Layout, MemorySpace, PipeType, ReluPreMode, RoundMode, STPhase, SyncAllMode,
                        QuantMode, SyncCoreType, TilePad, TileType)
from . import pipeline  # noqa: F401  (pl.pipeline.stage, pl.pipeline.PipelineConfig)
from .annotations import DYNAMIC, STATIC, Ptr, Scalar, Tensor, Tile  # noqa: F401
from .intrinsics import (addptr, const, constexpr, function, get_block_idx, get_block_num, get_spr,  # noqa: F401
                         get_subblock_idx, get_subblock_num, inline, make_ptr, make_tensor, make_tile, make_tile_group,
                         make_tuple, max, min, range, section_cube, section_vector, set_stride, ssbuf_load,
                         ssbuf_store, struct, struct_array)
from .intrinsics import NOT_IMPLEMENTED_STUBS
from .spellings import build_spellings
from .vf import ENUMS as _VF_ENUMS
from .vf import MaskReg, RegTensor, Vf, vector_function  # noqa: F401
from .simt import simt  # noqa: F401
from .stubs import build_namespaces

ND, DN, NZ, ZN, ZZ, NN = Layout.ND, Layout.DN, Layout.NZ, Layout.ZN, Layout.ZZ, Layout.NN
TileLayout = TensorLayout = Layout  # the official names of the layout enum (pl.ND is TensorLayout.ND)

globals().update(NOT_IMPLEMENTED_STUBS)
globals().update(_VF_ENUMS)
globals().update(build_namespaces())
globals().update({k: v for k, v in build_spellings().items() if k not in globals()})
del build_namespaces, build_spellings, NOT_IMPLEMENTED_STUBS


def __getattr__(name: str):
    """``pl.jit`` and ``pl.JitKernel`` resolve on first use: the runtime imports this package's
    annotation module, so importing it here eagerly would make ``import pypto_pro.runtime.jit`` (before
    the language) circular."""
    if name in ("jit", "JitKernel"):
        from ..runtime import jit as runtime_jit
        return getattr(runtime_jit, name)
    raise AttributeError(f"module 'pypto_pro.language' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"jit", "JitKernel"})
