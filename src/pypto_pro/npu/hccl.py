"""``torch.distributed`` backend ``hccl`` under the stand-in: gloo on the CPU.

NPU programs create their groups with ``backend='hccl'`` and name a group to PyPTO kernels with
``group._get_backend(torch.device('npu')).get_hccl_comm_name(rank)``.  Here ``hccl`` is registered as
a backend whose process groups are gloo's (same members, store and timeout), and
``get_hccl_comm_name`` returns the group's c10d name, which ``pypto.distributed`` resolves back to the
group (``pypto_pro/comm/groups.py``).
"""
from __future__ import annotations

from typing import Dict, List

_names: Dict[int, str] = {}
_alive: List[object] = []  # keeps each backend's Python object, so later lookups return that object


def _comm_name(backend, rank: int = 0) -> str:
    """``get_hccl_comm_name(rank)``: the name of the group this backend serves (the same on every rank)."""
    try:
        return _names[id(backend)]
    except KeyError:
        raise RuntimeError("get_hccl_comm_name: this process group was not created with backend 'hccl' "
                           "under the torch_npu stand-in") from None


def _create(opts, backend_options=None):
    from torch.distributed import ProcessGroupGloo

    pg = ProcessGroupGloo(opts.store, opts.group_rank, opts.group_size, opts.timeout)
    _alive.append(pg)
    _names[id(pg)] = str(opts.group_id)
    return pg


def register() -> None:
    """Make ``hccl`` a torch.distributed backend (idempotent)."""
    import torch.distributed as dist

    if not dist.is_available() or "hccl" in dist.Backend.backend_list:
        return
    from torch.distributed import ProcessGroupGloo

    ProcessGroupGloo.get_hccl_comm_name = _comm_name
    dist.Backend.register_backend("hccl", _create, extended_api=True, devices=["cpu", "npu"])
