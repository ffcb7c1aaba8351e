"""Communication groups: the ``torch.distributed`` process groups a program created, found by name.

A kernel names its group by a string (``group_name``).  That string is the c10d name of a process
group (``ProcessGroup.group_name``; under the NPU stand-in ``get_hccl_comm_name`` returns it), or
``"WORLD"`` / ``"default"`` for the default group.  PEs are the ranks within that group.  No
rendezvous of our own: the group's members, store and collectives are torch.distributed's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from ..errors import KernelValueError

_WORLD_NAMES = ("WORLD", "world", "default", "")


@dataclass(frozen=True)
class GroupInfo:
    """One process group as this process sees it."""

    name: str
    pg: Any
    rank: int  # this process's PE (rank within the group)
    size: int
    global_ranks: List[int]


def _dist():
    import torch.distributed as dist

    return dist


def resolve(name: str) -> GroupInfo:
    """The group called ``name``; ``KernelValueError`` when torch.distributed has none of that name or
    this process is not a member."""
    dist = _dist()
    if not (dist.is_available() and dist.is_initialized()):
        raise KernelValueError(f"communication group '{name}': torch.distributed is not initialised in this "
                               "process; call torch.distributed.init_process_group (backend 'gloo' on the CPU, "
                               "'hccl' under the NPU stand-in) before launching a kernel that communicates")
    from torch.distributed import distributed_c10d as c10d

    pg = None
    if name in _WORLD_NAMES:
        pg = dist.group.WORLD
    else:
        for group, group_name in c10d._world.pg_names.items():
            if group_name == name:
                pg = group
                break
    if pg is None:
        known = sorted(str(n) for n in c10d._world.pg_names.values())
        raise KernelValueError(f"no torch.distributed process group is named '{name}' (known: {known}); pass "
                               "ProcessGroup.group_name (or get_hccl_comm_name(rank) under the NPU stand-in)")
    rank = dist.get_rank(pg)
    if rank < 0:
        raise KernelValueError(f"this process (global rank {dist.get_rank()}) is not a member of group '{name}'")
    size = dist.get_world_size(pg)
    ranks = [dist.get_global_rank(pg, r) for r in range(size)] if pg is not dist.group.WORLD else list(range(size))
    return GroupInfo(name, pg, rank, size, ranks)
