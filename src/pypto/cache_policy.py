"""``Tensor.set_cache_policy`` / ``get_cache_policy``: L2 cache hints (``pypto.CachePolicy``, datatype.py).

A tensor may be marked to be prefetched into the NPU's L2 cache (``PREFETCH``) or to bypass it
(``NONE_CACHEABLE``).  Caching never changes a value, so the hints are recorded per tensor, read back by
``get_cache_policy`` and have no effect here (the team's rule for NPU tuning knobs; logged once at INFO).
As officially, the two cannot both be on: enabling one while the other is on keeps the first and warns.
"""
from __future__ import annotations

import weakref
from typing import Any, Dict, Tuple

from pypto_pro.errors import KernelTypeError
from pypto_pro.log import logger

from .datatype import CachePolicy


_FLAGS: Dict[int, Tuple[Any, Dict[CachePolicy, bool]]] = {}  # id(tensor) -> (weakref, flags)
_logged = [False]


def _flags(tensor: Any) -> Dict[CachePolicy, bool]:
    entry = _FLAGS.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        key = id(tensor)
        entry = (weakref.ref(tensor, lambda _ref: _FLAGS.pop(key, None)), {p: False for p in CachePolicy})
        _FLAGS[key] = entry
    return entry[1]


def _policy(policy: Any) -> CachePolicy:
    try:
        return CachePolicy(policy)
    except ValueError:
        raise KernelTypeError(f"cache policy must be a pypto.CachePolicy, got {policy!r}") from None


def set_policy(tensor: Any, policy: Any, value: bool) -> None:
    """``t.set_cache_policy(policy, value)``."""
    if not isinstance(value, bool):
        raise KernelTypeError(f"set_cache_policy: value must be a bool, got {value!r}")
    policy = _policy(policy)
    flags = _flags(tensor)
    other = CachePolicy.NONE_CACHEABLE if policy == CachePolicy.PREFETCH else CachePolicy.PREFETCH
    if value and flags[other]:
        logger.warning("set_cache_policy: %s and %s cannot both apply; %s (set first) is kept",
                       other.name, policy.name, other.name)
        return
    flags[policy] = value
    if not _logged[0]:
        _logged[0] = True
        logger.info("Tensor.set_cache_policy: an NPU L2 cache hint, recorded; it has no effect here")


def get_policy(tensor: Any, policy: Any) -> bool:
    """``t.get_cache_policy(policy)``: whether the policy is on (off unless set)."""
    return _flags(tensor)[_policy(policy)]
