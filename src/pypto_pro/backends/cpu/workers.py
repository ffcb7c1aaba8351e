"""How many blocks the cpu backend launches an SPMD kernel with when the caller does not choose
(the backend protocol's ``launch_blocks``; lowered tensor-level programs, whose results do not depend
on the block count, only their speed).

``$PYPTO_NUM_THREADS`` blocks if set (> 0); else one block per :data:`MIN_BLOCK_ELEMENTS` elements of
the kernel's largest GM tensor, at least one and at most one per core this process may run on (the
runtime's worker count, ``runtime/pto_runtime.cpp``).  Waking a worker costs about as much as a simple
op on 64K elements, so small kernels run on the calling thread alone.
"""
from __future__ import annotations

import os
from typing import Any

#: the least work (elements of the largest GM tensor) worth one more block
MIN_BLOCK_ELEMENTS = 65536


def requested_threads() -> int:
    """``$PYPTO_NUM_THREADS`` as a positive int, else 0."""
    try:
        n = int(os.environ.get("PYPTO_NUM_THREADS", ""))
    except ValueError:
        return 0
    return max(n, 0)


def cpu_workers() -> int:
    """The runtime's worker-thread count (``$PYPTO_NUM_THREADS``, else the cores of the affinity mask)."""
    n = requested_threads()
    if n > 0:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


#: blocks per worker thread at most (see :func:`launch_blocks`)
BLOCKS_PER_THREAD = 4
#: the least work per block when a launch is split into more blocks than threads
MIN_SHARED_BLOCK_ELEMENTS = 1 << 19


def launch_blocks(arch: Any, work: int) -> int:
    """Blocks for a kernel whose largest GM tensor has ``work`` elements (``arch`` does not matter here).

    With more than one thread, a large launch gets up to :data:`BLOCKS_PER_THREAD` blocks per thread
    (each at least :data:`MIN_SHARED_BLOCK_ELEMENTS`): the runtime's threads claim blocks one by one,
    so a thread the OS runs late (another process on its core) leaves its later blocks to the others
    instead of holding the whole launch back, as one static block per thread would."""
    n = requested_threads() or max(1, min(cpu_workers(), work // MIN_BLOCK_ELEMENTS))
    if n == 1:
        return 1
    return n * max(1, min(BLOCKS_PER_THREAD, work // (n * MIN_SHARED_BLOCK_ELEMENTS)))
