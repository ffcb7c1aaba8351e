"""How many blocks a lowered tensor-level kernel launches with.

Lowered programs are SPMD (every pass spreads its tile iterations over the launch's cores), so
the result does not depend on the block count; only the speed does.

* ``cpu``: one block per worker thread of the CPU runtime's pool: ``$PYPTO_NUM_THREADS`` if set
  (> 0), else the cores this process may run on (the rule the runtime itself uses).
* ``sim``: :data:`SIM_BLOCKS` blocks (capped by the arch's core count), enough to exercise the
  cross-core synchronisation the simulator checks while keeping replays short.
* ``interp``: :data:`INTERP_BLOCKS` blocks: the interpreter runs cores one after another, so more
  blocks only add per-core setup; two still exercise the distribution and ``sync_all``.
"""
from __future__ import annotations

import os

SIM_BLOCKS = 4
INTERP_BLOCKS = 2


def cpu_workers() -> int:
    """The CPU runtime's worker-thread count."""
    env = os.environ.get("PYPTO_NUM_THREADS", "")
    try:
        n = int(env)
    except ValueError:
        n = 0
    if n > 0:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def block_dim(backend: str, arch) -> int:
    """Blocks to launch on ``backend`` (a resolved backend name) for a kernel of ``arch``."""
    if backend == "cpu":
        return cpu_workers()
    if backend == "sim":
        return min(SIM_BLOCKS, arch.core_num)
    return INTERP_BLOCKS
