"""What a launch of a communicating kernel needs: its shared-memory tensors allocated (collectively,
in program order, the same on every PE) and the values of its PE parameters."""
from __future__ import annotations

from typing import Dict

from ..ir import nodes as ir
from . import callback, heap


def communicates(kernel: ir.KernelIR) -> bool:
    """Whether ``kernel`` takes PE parameters or runs communication ops: each of its launches needs
    :func:`launch_values` and reports through :func:`launch_error`."""
    return bool(getattr(kernel, "comm_pes", None)) or getattr(kernel, "comm_callback", None) is not None


def launch_values(kernel: ir.KernelIR) -> Dict[int, int]:
    """Var uid -> value of the kernel's PE parameters (``my_symbolic_pe``); allocates its shmem tensors on
    first launch.  Empty for kernels that do not communicate."""
    pes: Dict[int, str] = getattr(kernel, "comm_pes", None) or {}
    slots = getattr(kernel, "comm_slots", None)
    if slots is None:
        slots = kernel.comm_slots = [s.args["slot"] for s in ir.walk(kernel.body)
                                     if isinstance(s, ir.OpStmt) and "slot" in s.args
                                     and isinstance(s.args["slot"], heap.ShmemSlot)]
    for slot in slots:
        heap.bind(slot)
    values = {uid: heap.my_pe(group) for uid, group in pes.items()}
    fn_var, kernel_var = getattr(kernel, "comm_callback", None) or (None, None)
    if fn_var is not None:
        values[fn_var.uid] = callback.CALLBACK_ADDRESS
        values[kernel_var.uid] = callback.handle_of(kernel)
    return values


def launch_error(kernel: ir.KernelIR, error: BaseException) -> BaseException:
    """The exception to report for a failed launch: the one a comm op raised in compiled code (its
    type and message, e.g. ``KernelDeadlockError``), else ``error`` itself."""
    return callback.take_error(kernel) or error
