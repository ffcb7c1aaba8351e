"""How compiled (cpu backend) kernels run communication ops: a call back into Python.

The generated C++ of a comm op evaluates the op's run-time scalars (PEs, offsets, extents, signal
values) and the address, shape and strides of its GM tensor operand, and calls :func:`dispatch`
through a C function pointer with the kernel's handle and the op's index.  ``dispatch`` rebuilds
the op's arguments from those values and runs the op's reference ``run`` (``ops/comm.py``) -- the
same code the interpreter runs, so the transport is one implementation.  The function pointer and
the kernel handle reach the kernel as two scalar parameters bound at launch (they are not part of
the generated source, so the compiled library is the same in every process).
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..errors import KernelError, KernelRuntimeError
from ..ir import nodes as ir

CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                                 ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
#: the C declaration the generated code casts the pointer to
C_SIGNATURE = "int (*)(int64_t, int64_t, const int64_t*, int64_t, char*, int64_t)"
ERROR_BYTES = 800

_handles = itertools.count(1)
_kernels: Dict[int, Tuple[ir.KernelIR, List[ir.OpStmt]]] = {}
_errors: Dict[int, BaseException] = {}
_lock = threading.Lock()


def is_comm(s) -> bool:
    return isinstance(s, ir.OpStmt) and s.op.pipe == "COMM"


def comm_stmts(kernel: ir.KernelIR) -> List[ir.OpStmt]:
    """The kernel's comm ops in program (walk) order: the index the generated code passes."""
    found = getattr(kernel, "comm_stmt_list", None)
    if found is None:
        found = kernel.comm_stmt_list = [s for s in ir.walk(kernel.body) if is_comm(s)]
    return found


def handle_of(kernel: ir.KernelIR) -> int:
    h = getattr(kernel, "comm_handle", None)
    if h is None:
        with _lock:
            h = kernel.comm_handle = next(_handles)
            _kernels[h] = (kernel, comm_stmts(kernel))
    return h


def take_error(kernel: ir.KernelIR) -> Optional[BaseException]:
    """The exception a comm op of ``kernel`` raised in the last compiled launch (then forgotten)."""
    h = getattr(kernel, "comm_handle", None)
    return _errors.pop(h, None) if h is not None else None


class _Ctx:
    """The part of the interpreter's ExecCtx the comm ops use, over values the C++ passed."""

    observed = False  #: compiled launches are not traced (ExecCtx.observed)

    def __init__(self, stmt: ir.OpStmt, arrays: Dict[int, np.ndarray]):
        self.stmt = stmt
        self.arrays = arrays

    def scalar(self, value):
        return value

    def tensor(self, param) -> np.ndarray:
        return self.arrays[id(param)]

    def note_gm(self, *args, **kwargs) -> None:
        pass

    def error(self, message: str) -> KernelRuntimeError:
        return KernelRuntimeError(message, loc=self.stmt.loc)


def _decode(stmt: ir.OpStmt, values: List[int]) -> Tuple[Dict[str, Any], Dict[int, np.ndarray]]:
    args = dict(stmt.args)
    arrays: Dict[int, np.ndarray] = {}
    pos = 0
    for p in stmt.op.params:
        v = stmt.args[p.name]
        if p.kind == "tensor":
            nd = v.ndim
            ptr, shape, strides = values[pos], values[pos + 1:pos + 1 + nd], values[pos + 1 + nd:pos + 1 + 2 * nd]
            pos += 1 + 2 * nd
            dtype = np.dtype(v.dtype.require_numpy())
            span = 1 + sum((d - 1) * s for d, s in zip(shape, strides)) if all(shape) else 0
            raw = (ctypes.c_char * max(1, span * dtype.itemsize)).from_address(ptr)
            base = np.frombuffer(raw, dtype, max(1, span))
            arrays[id(v)] = np.lib.stride_tricks.as_strided(base, shape, [s * dtype.itemsize for s in strides])
        elif p.kind == "scalar":
            args[p.name] = values[pos]
            pos += 1
        elif p.kind == "index_list" and v is not None:
            args[p.name] = list(values[pos:pos + len(v)])
            pos += len(v)
    return args, arrays


def dispatch(handle: int, index: int, argv, n: int, err, err_len: int) -> int:
    """Run comm op ``index`` of kernel ``handle``; 0 on success, else 1 with the message in ``err``."""
    kernel, stmts = _kernels[handle]
    stmt = stmts[index]
    try:
        args, arrays = _decode(stmt, [argv[i] for i in range(n)])
        stmt.op.run(_Ctx(stmt, arrays), args)
        return 0
    except BaseException as e:  # noqa: BLE001 - reported to the kernel, re-raised after the launch
        if isinstance(e, KernelError):
            e.attach(loc=stmt.loc, kernel=kernel.name)
        _errors[handle] = e
        text = str(e).encode(errors="replace")[:max(0, err_len - 1)] + b"\0"
        ctypes.memmove(err, text, len(text))
        return 1


_callback = CALLBACK_TYPE(dispatch)
CALLBACK_ADDRESS = ctypes.cast(_callback, ctypes.c_void_p).value
