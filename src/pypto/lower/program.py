"""A lowered tensor-level kernel: the tile kernel plus how to bind its GM buffers at launch."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from pypto_pro import backends
from pypto_pro.comm.launch import launch_error, launch_values
from pypto_pro.errors import KernelError, KernelLaunchError
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.printer import format_kernel
from pypto_pro.ir.verify import verify
from pypto_pro.runtime.jit import execute, select_backend

from ..graph import Buffer, Graph
from .lowerer import Lowerer


def eval_expr(e: ir.Expr, values: Dict[int, Any]):
    """Evaluate an integer IR expression on the host (dims of workspace buffers)."""
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.Var):
        return values[e.uid]
    if isinstance(e, ir.BinOp):
        a, b = eval_expr(e.lhs, values), eval_expr(e.rhs, values)
        ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
               "%": lambda: a % b, "min": lambda: min(a, b), "max": lambda: max(a, b), "/": lambda: a / b,
               "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
               ">": lambda: a > b, ">=": lambda: a >= b, "and": lambda: a and b, "or": lambda: a or b}
        return ops[e.op]()
    raise TypeError(f"cannot evaluate {e!r} on the host")


def _leading(base: np.ndarray, shape) -> np.ndarray:
    """``base`` reshaped to ``shape``; a workspace allocated at a bound on its first axis (a value whose
    extent there depends on a loop index) may be longer: then its leading elements."""
    n = int(np.prod(shape))
    if base.size > n:
        base = base.reshape(-1)[:n]
    return base.reshape(shape)


def _as_dtype(base: np.ndarray, dtype) -> np.ndarray:
    """``base``'s bytes as ``dtype`` (a ``pypto.view(x, dtype=)`` alias), flat; ``base`` itself when the
    dtype is the same.  A non-contiguous base is copied by the reshape, which the caller rejects."""
    want = dtype.require_numpy()
    return base if base.dtype == want else base.reshape(-1).view(want)


class LoweredProgram:
    """The tile kernel of one recorded graph."""

    def __init__(self, graph: Graph, name: str, arch):
        self.graph = graph
        b = Lowerer(graph, name, arch).run()
        self.kernel: ir.KernelIR = verify(b.kernel())  # the tile IR rules, before any backend sees it
        self.buffers: List[Buffer] = b.buffers
        self.dim_exprs = b.dim_exprs

    def text(self) -> str:
        return format_kernel(self.kernel)

    def bind(self, user: Dict[int, np.ndarray], dyn: Dict[int, int]) -> Dict[int, np.ndarray]:
        """Arrays for every GM parameter: user arguments, fresh workspaces, zero-copy reshapes."""
        values = dict(dyn)
        for var, e in self.dim_exprs:
            values[var.uid] = int(eval_expr(e, values))
        values.update(launch_values(self.kernel))  # PEs of communicating kernels (pypto.distributed)
        self._values = values
        arrays: Dict[int, np.ndarray] = {}
        by_uid: Dict[int, np.ndarray] = {}
        for p, buf in zip(self.kernel.params, self.buffers):
            shape = tuple(d if isinstance(d, int) else values[d.uid] for d in p.dims)
            if buf.kind == "param":
                arr = user[buf.index]
            elif buf.kind == "temp":
                arr = np.zeros(shape, dtype=buf.dtype.require_numpy())
            else:
                base = by_uid.get(buf.base.uid)
                if base is None:
                    raise KernelLaunchError(f"reshape of {buf.base.name} before it exists")
                arr = _leading(_as_dtype(base, buf.dtype), shape)
                if not np.shares_memory(arr, base):
                    raise KernelLaunchError(f"tensor '{buf.base.name}' must be contiguous to be reshaped or "
                                            f"reinterpreted (pypto.view(x, dtype=))", kernel=self.kernel.name)
            by_uid[buf.uid] = arr
            if arr.dtype == np.bool_:
                arr = arr.view(np.uint8)
            arrays[p.index] = arr
        return arrays

    def blocks(self, backend: Optional[str], arrays: Dict[int, np.ndarray]) -> int:
        """The block count to launch with on ``backend`` for these bound arrays."""
        work = max((a.size for a in arrays.values()), default=0)
        return backends.launch_blocks(select_backend(backend), self.kernel.arch, work)

    def run(self, user: Dict[int, np.ndarray], dyn: Dict[int, int], backend: Optional[str], jit=None):
        arrays = self.bind(user, dyn)
        try:
            return execute(self.kernel, arrays, dict(self._values), self.blocks(backend, arrays), backend, jit=jit)
        except KernelError as e:  # a comm op's own error (KernelDeadlockError ...) out of compiled code
            raise launch_error(self.kernel, e) from None
