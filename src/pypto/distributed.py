"""``pypto.distributed``: the official multi-device shared-memory API (hicann/pypto
``docs/zh/api/distributed/``).  The portable implementation runs one device, so every function raises
``NotImplementedError`` naming itself."""
from __future__ import annotations

from .stubs import not_implemented

_NAMES = ("create_shmem_signal", "create_shmem_tensor", "my_symbolic_pe", "shmem_barrier_all", "shmem_clear_data",
          "shmem_clear_signal", "shmem_get", "shmem_put", "shmem_signal", "shmem_view", "shmem_wait_until")

for _name in _NAMES:
    globals()[_name] = not_implemented(f"pypto.distributed.{_name}", "multi-device shared memory; one device here")

__all__ = list(_NAMES)
