"""How many blocks a lowered tensor-level kernel launches with.

Lowered programs are SPMD (every pass spreads its tile iterations over the launch's cores), so
the result does not depend on the block count; only the speed does.

* ``cpu``: ``$PYPTO_NUM_THREADS`` blocks if set (> 0); else one block per
  :data:`CPU_MIN_BLOCK_ELEMENTS` elements of the kernel's largest GM tensor, at least one and at
  most one per core this process may run on (the runtime's worker count).  Waking a worker costs
  about as much as a simple op on 64K elements, so small kernels run on the calling thread alone.
* ``sim``: :data:`SIM_BLOCKS` blocks (capped by the arch's core count), enough to exercise the
  cross-core synchronisation the simulator checks while keeping replays short.
* ``interp``: :data:`INTERP_BLOCKS` blocks: the interpreter runs cores one after another, so more
  blocks only add per-core setup; two still exercise the distribution and ``sync_all``.
"""
from __future__ import annotations

import os

SIM_BLOCKS = 4
INTERP_BLOCKS = 2
#: the least work (elements of the largest GM tensor) worth one more cpu block
CPU_MIN_BLOCK_ELEMENTS = 65536


def _requested_threads() -> int:
    """``$PYPTO_NUM_THREADS`` as a positive int, else 0."""
    try:
        n = int(os.environ.get("PYPTO_NUM_THREADS", ""))
    except ValueError:
        return 0
    return max(n, 0)


def cpu_workers() -> int:
    """The CPU runtime's worker-thread count."""
    n = _requested_threads()
    if n > 0:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def block_dim(backend: str, arch, work: int = 0) -> int:
    """Blocks to launch on ``backend`` (a resolved backend name) for a kernel of ``arch`` whose
    largest GM tensor has ``work`` elements."""
    if backend == "cpu":
        return _requested_threads() or max(1, min(cpu_workers(), work // CPU_MIN_BLOCK_ELEMENTS))
    if backend == "sim":
        return min(SIM_BLOCKS, arch.core_num)
    return INTERP_BLOCKS
