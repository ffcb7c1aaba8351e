"""The official pass configuration API (``pypto.set_pass_config`` and friends): switches of the NPU
compiler's graph passes, today only ``PassConfigKey.KEY_DUMP_GRAPH`` (dump a pass's graph to files).

The portable backends run no such passes, so these are NPU knobs in the sense of docs/tensor.md
"Options": values are validated, recorded and read back (``get_pass_config`` /
``get_pass_configs``), the first ``True`` is logged once at INFO on the ``pypto`` logger, and they
change nothing.  ``pypto.reset_options()`` forgets them with the other options.
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Dict, Tuple

_LOG = logging.getLogger("pypto")


class PassConfigKey(enum.Enum):
    """The configurable pass switches (the official enum has this one member)."""

    KEY_DUMP_GRAPH = "dumpGraph"


@dataclass(frozen=True)
class PassConfigs:
    """A pass's switches as ``get_pass_configs`` reports them (read-only, the official attribute names)."""

    printGraph: bool = False  # noqa: N815 - official attribute names
    dumpGraph: bool = False  # noqa: N815
    dumpPassTimeCost: bool = False  # noqa: N815
    preCheck: bool = False  # noqa: N815
    postCheck: bool = False  # noqa: N815
    disablePass: bool = False  # noqa: N815
    healthCheck: bool = False  # noqa: N815


_DEFAULTS: Dict[PassConfigKey, bool] = {}
_PER_PASS: Dict[Tuple[str, str, PassConfigKey], bool] = {}
_logged = [False]


def _key(key, fn: str) -> PassConfigKey:
    if not isinstance(key, PassConfigKey):
        raise ValueError(f"pypto.{fn}: key must be a pypto.PassConfigKey member, got {key!r}")
    return key


def _flag(value, fn: str, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"pypto.{fn}: {what} must be a bool, got {value!r}")
    return value


def _names(strategy, identifier, fn: str) -> Tuple[str, str]:
    if not isinstance(strategy, str) or not isinstance(identifier, str):
        raise ValueError(f"pypto.{fn}: strategy and identifier are strings (e.g. 'PVC2_OOO', 'ExpandFunction'), "
                         f"got {strategy!r}, {identifier!r}")
    return strategy, identifier


def _record(value: bool, what: str) -> None:
    if value and not _logged[0]:
        _logged[0] = True
        _LOG.info("%s: an NPU compiler pass switch; recorded, no effect on the portable backends", what)


def set_pass_default_config(key: PassConfigKey, value: bool) -> None:
    """Set ``key`` for every pass that has no value of its own."""
    k = _key(key, "set_pass_default_config")
    _DEFAULTS[k] = _flag(value, "set_pass_default_config", "value")
    _record(value, f"set_pass_default_config({k.name})")


def get_pass_default_config(key: PassConfigKey, default_value: bool) -> bool:
    """The value ``set_pass_default_config`` gave ``key``, else ``default_value``."""
    k = _key(key, "get_pass_default_config")
    return _DEFAULTS.get(k, _flag(default_value, "get_pass_default_config", "default_value"))


def set_pass_config(strategy: str, identifier: str, key: PassConfigKey, value: bool) -> None:
    """Set ``key`` for the pass ``identifier`` of the pass strategy ``strategy``."""
    s, i = _names(strategy, identifier, "set_pass_config")
    k = _key(key, "set_pass_config")
    _PER_PASS[(s, i, k)] = _flag(value, "set_pass_config", "value")
    _record(value, f"set_pass_config({s!r}, {i!r}, {k.name})")


def get_pass_config(strategy: str, identifier: str, key: PassConfigKey, default_value: bool) -> bool:
    """The pass's own value of ``key``, else the default ``set_pass_default_config`` set, else
    ``default_value``."""
    s, i = _names(strategy, identifier, "get_pass_config")
    k = _key(key, "get_pass_config")
    fallback = _flag(default_value, "get_pass_config", "default_value")
    return _PER_PASS.get((s, i, k), _DEFAULTS.get(k, fallback))


def get_pass_configs(strategy: str, identifier: str) -> PassConfigs:
    """All switches of one pass (unset ones ``False``)."""
    s, i = _names(strategy, identifier, "get_pass_configs")
    values = {k.value: get_pass_config(s, i, k, False) for k in PassConfigKey}
    return PassConfigs(**values)


def reset() -> None:
    """Forget every pass switch (``pypto.reset_options``)."""
    _DEFAULTS.clear()
    _PER_PASS.clear()


__all__ = ["PassConfigKey", "PassConfigs", "set_pass_default_config", "get_pass_default_config", "set_pass_config",
           "get_pass_config", "get_pass_configs"]
