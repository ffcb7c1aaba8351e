"""The cpu backend's own per-op registry: how each tile op becomes C++, keyed by op name.

The op table (:mod:`pypto_pro.ir.optable`) says what an op means; this registry says how the cpu backend
emits it.  The ``emit*`` modules fill it with :func:`register` when they are imported, and
:func:`table` imports all of them, so every user (the code generator, the completeness test) sees the
whole registry regardless of import order.  Nothing here writes into ``OPS``.

An entry holds the emitter (``(KernelCodegen, OpStmt) -> C++ text``), optionally ``peer_dst`` (for ops
that write into another core's memory: ``stmt -> the destination TileRef or None``, so the code
generator can share the scalars that select the destination slot) and ``simd_math`` (the op's C++ has
AVX2 code paths that need ``<immintrin.h>``).  Ops the cpu backend cannot run are listed in
:data:`NOT_IMPLEMENTED` with the reason; ``tests/design/test_op_registries.py`` checks that every op
of the table has exactly one of the two and that neither names an op the table does not have.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Optional

if TYPE_CHECKING:
    from ...ir import nodes as ir
    from ...ir.optable import OpDef
    from .codegen import KernelCodegen

Emitter = Callable[["KernelCodegen", "ir.OpStmt"], str]
PeerDst = Callable[["ir.OpStmt"], Optional["ir.TileRef"]]


@dataclass(frozen=True)
class CppOp:
    """How the cpu backend emits one op."""

    emit: Emitter
    peer_dst: Optional[PeerDst] = None
    simd_math: bool = False


_ENTRIES: Dict[str, CppOp] = {}
_loaded = False

#: ops without C++ emission: op name -> why (the code generator raises NotImplementedError with it)
NOT_IMPLEMENTED: Dict[str, str] = {}


def register(name: str, emit: Emitter, *, peer_dst: Optional[PeerDst] = None, simd_math: bool = False) -> None:
    """Declare the C++ emission of op ``name`` (once per op)."""
    if name in _ENTRIES:
        raise RuntimeError(f"cpu emitter for op {name} registered twice")
    _ENTRIES[name] = CppOp(emit, peer_dst, simd_math)


def not_implemented(name: str, why: str) -> None:
    """Declare that the cpu backend cannot emit op ``name``, and why (kernels using it fall back to the
    interpreter when no backend was asked for explicitly)."""
    NOT_IMPLEMENTED[name] = why


def emitter_of(name: str) -> Emitter:
    """The emitter of op ``name`` (for ops whose C++ is another op's, e.g. the SIMT element accesses)."""
    return _ENTRIES[name].emit


def table() -> Dict[str, CppOp]:
    """The whole registry: imports every emitter module first (once)."""
    global _loaded
    if not _loaded:
        from . import emit, emit_comm, emit_extra, emit_quant, emit_simt, emit_ssbuf, emit_vf  # noqa: F401
        _loaded = True
    return _ENTRIES


def lookup(op: "OpDef") -> CppOp:
    """The entry of ``op``; NotImplementedError naming the op (and why, if recorded) when it has none."""
    entry = table().get(op.name)
    if entry is None:
        why = NOT_IMPLEMENTED.get(op.name)
        raise NotImplementedError(f"pl.{op.aliases[0]}" + (f" on the cpu backend: {why}" if why else ""))
    return entry
