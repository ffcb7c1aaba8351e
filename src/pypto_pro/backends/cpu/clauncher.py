"""The cached-launch fast path in C (``runtime/pto_launch.cpp``, a CPython extension).

``kernel[None, n](...)`` with the arguments of the kernel's latest frozen signature (torch tensors and
Python scalars) then runs without Python code: the C ``Bound`` checks the launch environment, every
tensor's type, dtype, shape and device and every scalar's type, fills the argument array and calls the
compiled kernel.  Everything else takes the Python launcher, which does every check with its usual
messages (:mod:`pypto_pro.runtime.fastpath`): so does a tensor torch gives no sizes or data pointer
for (nested, sparse), a negative or conjugate view (through the data-pointer accessor of
:mod:`.torchaccess`, once built) and a tensor the kernel writes whose elements share memory (``expand``).

The extension is one module for all kernels, built once per Python and toolchain in the per-user cache
(like the runtime library: ``make venv`` builds it), else on a background thread the first time a
signature is frozen, so no launch waits for it; until it is loaded (or where there are no Python
headers) launches take the Python path.
``PYPTO_C_LAUNCHER=0`` turns it off.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sysconfig
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, Optional, Sequence

from ... import __version__
from ...log import logger
from ...runtime import cache
from ...runtime.args import ParamSpec, check_scalar, written_params
from ...runtime.fastpath import _LAUNCH_ENV, _RAW_ENV, torch_tensor_type
from . import torchaccess
from .toolchain import Toolchain, compile_shared, find_toolchain

SOURCE = Path(__file__).parent / "runtime" / "pto_launch.cpp"

_lock = threading.Lock()
_module: Optional[ModuleType] = None
_state = "new"  # new -> building -> ready | unavailable


def enabled() -> bool:
    return os.environ.get("PYPTO_C_LAUNCHER", "1") != "0" and _RAW_ENV is not None


def module() -> Optional[ModuleType]:
    """The loaded extension, or None (not built yet: starts the build in the background)."""
    global _state
    if _module is not None or _state != "new":
        return _module
    with _lock:
        if _state != "new":
            return _module
        _state = "building"
    threading.Thread(target=_build_and_load, name="pypto-c-launcher-build", daemon=True).start()
    return None


def state() -> str:
    """"ready" (loaded), "building" (or not started: starts it), or "off" (disabled or unavailable)."""
    if not enabled():
        return "off"
    if module() is not None:
        return "ready"
    return "off" if _state == "unavailable" else "building"


def wait_built() -> Optional[ModuleType]:
    """The extension, building it on this thread if needed (tests, benchmarks)."""
    global _state
    with _lock:
        if _state == "new":
            _state = "building"
            build_here = True
        else:
            build_here = False
    if build_here:
        _build_and_load()
    else:
        while _state == "building":
            threading.Event().wait(0.01)
    return _module


def build_extension(tc: Optional[Toolchain] = None) -> Optional[Path]:
    """The extension for this Python and toolchain, compiled if missing (None: no compiler or no Python
    headers).  It lives in the per-user cache next to the runtime library (``prebuilt``), so a new build
    directory does not compile it again; ``make venv`` builds it (``python -m pypto_pro.backends.cpu``)."""
    include = sysconfig.get_paths().get("include")
    tc = tc or find_toolchain()
    if not include or not (Path(include) / "Python.h").exists() or tc is None:
        return None
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    key = cache.digest(SOURCE.read_text(), tc.identity, include, suffix, __version__)
    entry = cache.CacheEntry(cache.user_cache_root() / "pylaunch" / key[:16])
    name = f"pto_launch{suffix}"

    def produce(tmp: Path):
        compile_shared(tc, SOURCE, tmp / name, opt="-O2", extra=(f"-I{include}",))
        return {name: name}

    entry.build(produce)
    return entry.path(name)


def _build_and_load() -> None:
    global _module, _state
    try:
        path = build_extension()
        if path is None:
            _state = "unavailable"
            return
        loader = importlib.machinery.ExtensionFileLoader("pto_launch", str(path))
        spec = importlib.util.spec_from_loader("pto_launch", loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        mod.setup(_RAW_ENV, tuple(n.encode() for n in _LAUNCH_ENV))
        _module = mod
        _state = "ready"
    except Exception as e:  # noqa: BLE001 - the Python launcher keeps working
        logger.info("C launcher unavailable (%s: %s); launches use the Python path", type(e).__name__, e)
        _state = "unavailable"


_torch_hooked = False


def _hook_torch(mod: ModuleType) -> None:
    """Hand the extension torch's C accessor of a tensor's data pointer, the one torch.compile's C++
    launchers call (``torch._C._dynamo.guards._torchinductor_pyobject_tensor_data_ptr``, an address):
    about 0.1 us less per tensor than ``data_ptr()``.  Where torch lacks it, launches call ``data_ptr()``.
    Once :mod:`.torchaccess` has its accessor (loaded from the cache, or built in the background), that
    one replaces both: as fast, and it refuses negative and conjugate views."""
    global _torch_hooked
    _torch_hooked = True
    try:
        import torch

        addr = getattr(torch._C._dynamo.guards, "_torchinductor_pyobject_tensor_data_ptr", 0)
    except Exception:  # noqa: BLE001 - an optimisation only
        addr = 0
    mod.set_data_ptr(addr if type(addr) is int and addr > 0 else 0)
    torchaccess.when_ready(mod.set_plain_data_ptr)


def frozen(kernel_name: str, compiled, specs: Sequence[ParamSpec], args: Sequence[Any], env: tuple):
    """The C description of a frozen signature (None where the C path does not apply: the extension is
    not loaded yet, a tensor is not a torch tensor, the kernel writes a log)."""
    mod = _module if enabled() else None
    if mod is None or compiled.log_sink is not None:
        return None
    tt = torch_tensor_type()
    if tt is not None and not _torch_hooked:
        _hook_torch(mod)
    tensors, scalars = [], []
    gen = compiled.gen
    written = written_params(compiled.kernel)
    for p in specs:
        a = args[p.index]
        if p.tensor is not None:
            if tt is None or type(a) is not tt:
                return None
            tensors.append((p.index, gen.tensor_slots[p.index], a.dtype, tuple(a.shape), p.index in written))
        elif p.tiling is None and p.pointer is None:
            slot, kind = gen.scalar_slots[p.index]
            scalars.append((p.index, slot, kind == "f", type(a), p))
        else:
            return None
    address = ctypes.cast(compiled.fn, ctypes.c_void_p).value
    return mod.Frozen(address, len(specs), max(1, gen.nslots), tensors, scalars, tt, env, check_scalar,
                      kernel_name, lambda raw: compiled.raise_error(type(compiled.buffers()[2]).from_buffer_copy(raw)),
                      compiled)


def slot():
    """A kernel's latest-signature slot, or None without the extension."""
    mod = module() if enabled() else None
    return mod.Slot() if mod is not None else None


def bound(slot_obj, fallback, jit, block_dim: int):
    """``kernel[None, block_dim]`` with the C fast path in front of ``fallback``."""
    return _module.Bound(slot_obj, fallback, jit, block_dim)


def subscript(getitem: Callable, capture_flags: Dict[str, Any], bound_attr: str, capturing_key: str):
    """``getitem`` (a kernel class's ``__getitem__``) with the cached ``kernel[None, n]`` looked up in C:
    where ``capture_flags[capturing_key]`` is 0 and the key is ``n`` or ``(None, n)`` with ``n`` in the
    kernel's ``bound_attr`` dict, that entry; anything else calls ``getitem``.  None without the extension."""
    mod = _module if enabled() else None
    return mod.Subscript(getitem, capture_flags, bound_attr, capturing_key) if mod is not None else None
