"""The AI-Core simulator backend (``backend="sim"``; docs/contract.md "The simulator's report", docs/simulator.md).

Values come from the reference interpreter; its instruction stream is replayed on a per-core pipe
model that finds races, deadlocks and uninitialised reads, and estimates cycles per pipe.  Kernels the
compiled fast path covers (:mod:`.fast`) run there instead, with the same values and report.
"""
from __future__ import annotations

from .options import SimOptions, resolve_options
from .report import SimReport
from .simulate import simulate

#: blocks of an SPMD launch whose size the caller leaves to the backend (capped by the arch's cores):
#: enough to exercise the cross-core synchronisation the simulator checks, while keeping replays short
LAUNCH_BLOCKS = 4


def launch_blocks(arch, work: int) -> int:
    """Blocks to launch an SPMD kernel with when the caller does not choose (see :mod:`pypto_pro.backends`)."""
    return min(LAUNCH_BLOCKS, arch.core_num)


def run(kernel, tensors, scalars, block_dim, *, jit=None) -> SimReport:
    """Backend entry point (see :mod:`pypto_pro.backends`): returns the :class:`SimReport`."""
    options = resolve_options(getattr(jit, "sim_options", None))
    return simulate(kernel, tensors, scalars, block_dim, options)


__all__ = ["LAUNCH_BLOCKS", "launch_blocks", "run", "simulate", "SimOptions", "SimReport", "resolve_options"]
