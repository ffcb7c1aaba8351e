"""Helpers for tile-level tests that run each kernel on all three backends.

``backend`` (a fixture to import into a test module) runs a test on the numpy interpreter (the oracle),
the compiled cpu backend (skipped without a C++ compiler; a silent fallback to the interpreter is turned
into an error) and the strict simulator (any race, deadlock or uninitialised read raises).  It also sets
``$PYPTO_BACKEND``, so kernels jitted without ``backend=`` follow it.

``jit_on(fn, backend)`` jits a plain kernel function once per backend; ``run_on(fn, backend, *args)``
launches it on copies of the array arguments and returns the copies.  ``vec_op(...)`` builds the common
shape of these tests -- load some Vec tiles, run a few ops, store one result -- from a step function.
"""
import functools
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends import cpu

BACKENDS = ("interp",
            pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim")

#: module marks: the backend is chosen per test (so `make test` does not rerun it under PYPTO_BACKEND=interp),
#: and a kernel the cpu backend would hand to the interpreter fails instead of passing unnoticed
EVERY_BACKEND = [pytest.mark.every_backend,
                 pytest.mark.filterwarnings("error:.*is not supported by the cpu backend:RuntimeWarning")]

NP_OF = {pl.DT_FP16: np.float16, pl.DT_BF16: ml_dtypes.bfloat16, pl.DT_FP32: np.float32, pl.DT_INT8: np.int8,
         pl.DT_INT16: np.int16, pl.DT_INT32: np.int32, pl.DT_INT64: np.int64, pl.DT_UINT8: np.uint8,
         pl.DT_UINT16: np.uint16, pl.DT_UINT32: np.uint32, pl.DT_UINT64: np.uint64}


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch) -> str:
    monkeypatch.setenv("PYPTO_BACKEND", request.param)
    return request.param


@functools.lru_cache(maxsize=None)
def _jitted(fn: Callable, backend: str, options: Tuple) -> pl.jit:
    return pl.jit(fn, backend=backend, **dict(options))


def jit_on(fn: Callable, backend: str, **options):
    """``fn`` as a kernel on ``backend`` (cached, so each backend compiles it once)."""
    return _jitted(fn, backend, tuple(sorted(options.items())))


def run_on(fn: Callable, backend: str, *args, blocks: int = 1, **options):
    """Launch ``fn`` on ``backend`` over ``blocks`` blocks; array arguments are copied first and returned
    (in order, scalars included as given), so a test sees what the kernel wrote without aliasing."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jit_on(fn, backend, **options)[blocks](*copies)
    return copies


def poison(shape, dtype) -> np.ndarray:
    """An output buffer the kernel must overwrite wherever a test compares it."""
    dtype = np.dtype(dtype)
    return np.full(shape, np.nan if dtype.kind == "f" else 99, dtype)


# ------------------------------------------------------------------------------------------------------
# vec_op: a vector kernel from a description
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Vec:
    """A Vec tile of a generated kernel: shape, dtype, layout, pad and an optional valid window set with
    ``set_validshape`` before it is loaded."""

    shape: Tuple[int, int]
    dtype: pl.DataType
    layout: Optional[pl.Layout] = None
    pad: Optional[pl.TilePad] = None
    valid: Optional[Tuple[int, int]] = None


_UNUSED = Vec((1, 8), pl.DT_INT32)


def _ub_offsets(tiles: Sequence[Vec]) -> Tuple[int, ...]:
    """UB byte offsets for ``tiles`` placed one after another, each on a 1 KiB boundary."""
    out, at = [], 0
    for t in tiles:
        out.append(at)
        at += -(-t.shape[0] * t.shape[1] * t.dtype.nbytes // 1024) * 1024
    return tuple(out)


@functools.lru_cache(maxsize=None)
def vec_op(step: Callable, srcs: Tuple[Vec, ...], dst: Vec, scratch: Tuple[Vec, ...] = (),
           dst_is_input: bool = False) -> Callable:
    """A kernel ``k(s0, s1, s2, d)``: loads up to three source tensors into Vec tiles ``srcs``, calls
    ``step(d_tile, [source tiles], [scratch tiles])`` (a plain function, inlined) and stores ``d_tile``
    into ``d``.  ``dst_is_input`` loads ``d`` into the destination tile first (in-place ops).  Unused
    source slots take a dummy ``[1, 8]`` INT32 array; :func:`vec_run` passes them."""
    n = len(srcs)
    S = tuple(srcs) + (_UNUSED,) * (3 - n)
    where = _ub_offsets(tuple(srcs) + (dst,) + tuple(scratch))

    def tile_of(spec: Vec, slot: int):
        # a one-slot group with its own mutex id: auto_mutex orders the pipes that touch it
        ring = pl.make_tile_group(type=pl.TileType(list(spec.shape), spec.dtype, pl.MemorySpace.Vec,
                                                   layout=spec.layout, pad=spec.pad),
                                  addrs=where[slot], mutex_ids=[slot])
        return ring[0]

    def kernel(s0: pl.Tensor[list(S[0].shape), S[0].dtype], s1: pl.Tensor[list(S[1].shape), S[1].dtype],
               s2: pl.Tensor[list(S[2].shape), S[2].dtype], d: pl.Tensor[list(dst.shape), dst.dtype]):
        tensors = [s0, s1, s2]
        ins = []
        for k in range(n):
            ins = ins + [tile_of(S[k], k)]
        out = tile_of(dst, n)
        tmps = []
        for k in range(len(scratch)):
            tmps = tmps + [tile_of(scratch[k], n + 1 + k)]
        with pl.section_vector():
            for k in range(n):
                if pl.constexpr(S[k].valid is not None):
                    pl.set_validshape(ins[k], list(S[k].valid))
                pl.load(ins[k], tensors[k], [0, 0])
            if pl.constexpr(dst.valid is not None):
                pl.set_validshape(out, list(dst.valid))
            if pl.constexpr(dst_is_input):
                pl.load(out, d, [0, 0])
            step(out, ins, tmps)
            pl.store(d, out, [0, 0])

    kernel.__name__ = f"vec_{getattr(step, '__name__', 'step')}"
    return kernel


def vec_run(backend: str, step: Callable, srcs: Sequence[np.ndarray], dst, *, scratch: Sequence[Vec] = (),
            src_specs: Optional[Sequence[Vec]] = None, dst_spec: Optional[Vec] = None) -> np.ndarray:
    """Run :func:`vec_op` on ``backend``.  ``dst`` is either an array (loaded first: an in/out operand)
    or a :class:`Vec` (a pure output, poisoned before the launch).  Returns the destination array."""
    specs = tuple(src_specs) if src_specs is not None else tuple(Vec(a.shape, _pl_dtype(a)) for a in srcs)
    if isinstance(dst, Vec):
        spec, out, inplace = dst, poison(dst.shape, NP_OF[dst.dtype]), False
    else:
        spec, out, inplace = dst_spec or Vec(dst.shape, _pl_dtype(dst)), dst.copy(), True
    kernel = vec_op(step, specs, spec, tuple(scratch), inplace)
    dummies = [np.zeros((1, 8), np.int32) for _ in range(3 - len(srcs))]
    jit_on(kernel, backend)(*srcs, *dummies, out)
    return out


def _pl_dtype(a: np.ndarray) -> pl.DataType:
    return next(k for k, v in NP_OF.items() if np.dtype(v) == a.dtype)
