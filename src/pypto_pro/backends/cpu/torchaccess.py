"""The C launcher's accessor of a torch tensor's data pointer, built against the installed torch.

``runtime/pto_torch.cpp`` exports ``pto_plain_data_ptr(tensor, &ptr)``: the data pointer of a strided
tensor whose memory holds its values, else 0 (a negative or conjugate view, a tensor without storage),
so the C launcher (:mod:`.clauncher`) sends such a tensor to the Python launcher, which says what is wrong
-- at no cost per launch: it replaces the data-pointer accessor the launcher calls anyway.  Without it
(no torch headers, a failed build, or while it builds) the launcher uses torch's own accessor and does not
see the negative bit (docs/language.md "Unusual tensor arguments").

It is compiled once per torch, Python and toolchain into the per-user cache (``make venv`` builds it;
torch's headers make it a ~15 CPU-second compile), else on a background thread when a launch first
needs it, so no launch waits.
"""
from __future__ import annotations

import ctypes
import sysconfig
import threading
from pathlib import Path
from typing import Callable, List, Optional

from ... import __version__
from ...log import logger
from ...runtime import cache
from .toolchain import Toolchain, compile_shared, find_toolchain

SOURCE = Path(__file__).parent / "runtime" / "pto_torch.cpp"
SYMBOL = "pto_plain_data_ptr"

_lock = threading.Lock()
_state = "new"  # new -> building -> ready | unavailable
_address = 0
_waiters: List[Callable[[int], None]] = []
_libs: List[ctypes.CDLL] = []  # the loaded accessor library, kept for the process's lifetime


def _torch_flags(torch) -> Optional[List[str]]:
    """Compiler flags for torch's headers and libraries (None where the installed torch has no headers)."""
    root = Path(torch.__file__).parent
    include = root / "include"
    py_include = sysconfig.get_paths().get("include")
    if not (include / "torch" / "csrc" / "autograd" / "python_variable.h").exists() or not py_include:
        return None
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
    lib = root / "lib"
    return [f"-D_GLIBCXX_USE_CXX11_ABI={abi}", f"-I{py_include}", f"-I{include}",
            f"-I{include / 'torch' / 'csrc' / 'api' / 'include'}", f"-L{lib}", "-lc10", "-ltorch_cpu",
            "-ltorch_python", f"-Wl,-rpath,{lib}"]


def build(tc: Optional[Toolchain] = None) -> Optional[Path]:
    """The accessor library for the installed torch, compiled if missing (None: no compiler, no torch or
    no torch headers)."""
    try:
        import torch
    except ImportError:
        return None
    tc = tc or find_toolchain()
    flags = _torch_flags(torch)
    if tc is None or flags is None:
        return None
    key = cache.digest(SOURCE.read_text(), tc.identity, torch.__version__, str(Path(torch.__file__).parent),
                       " ".join(flags), __version__)
    entry = cache.CacheEntry(cache.user_cache_root() / "torchaccess" / key[:16])
    name = "pto_torch.so"

    def produce(tmp: Path):
        compile_shared(tc, SOURCE, tmp / name, opt="-O2", extra=tuple(flags))
        return {name: name}

    entry.build(produce)
    return entry.path(name)


def _build_and_load() -> None:
    global _state, _address
    address = 0
    try:
        path = build()
        if path is not None:
            lib = ctypes.CDLL(str(path))
            address = ctypes.cast(getattr(lib, SYMBOL), ctypes.c_void_p).value or 0
            _libs.append(lib)
    except Exception as e:  # noqa: BLE001 - the launcher keeps torch's accessor
        logger.info("torch accessor for the C launcher unavailable (%s: %s)", type(e).__name__, e)
    with _lock:
        _address = address
        _state = "ready" if address else "unavailable"
        waiters = list(_waiters)
        _waiters.clear()
    for notify in waiters:
        notify(address)


def when_ready(notify: Callable[[int], None]) -> None:
    """Call ``notify(address)`` with the accessor's address (0: unavailable) once known: now where it is
    loaded or known unavailable, else from the background build, which this starts."""
    global _state
    with _lock:
        if _state in ("ready", "unavailable"):
            address = _address
        else:
            _waiters.append(notify)
            start = _state == "new"
            _state = "building"
            address = None
    if address is not None:
        notify(address)
    elif start:
        threading.Thread(target=_build_and_load, name="pypto-torch-accessor-build", daemon=True).start()


def wait_ready() -> int:
    """The accessor's address (0: unavailable), building it on this thread if needed (tests, benchmarks)."""
    global _state
    with _lock:
        build_here = _state == "new"
        if build_here:
            _state = "building"
    if build_here:
        _build_and_load()
    while _state == "building":
        threading.Event().wait(0.01)
    return _address
