"""The fast path's replay library (``replay.cpp`` + ``simfast.h``): built once per install and toolchain.

The replay (pipe-model schedule, race / uninitialised-read / bound / deadlock checks) takes the statement
table and the trace records as arguments, so no kernel owns it.  It lives in the per-user cache of
install-wide artifacts (next to the cpu backend's runtime library, keyed by its sources, the toolchain and
the package version); the first fast-path launch of an install builds it (builders serialise on the
entry's lock), ``python -m pypto_pro.backends.cpu`` builds it ahead.  A kernel's trace program then only
compiles the kernel's control flow (~0.6 instead of ~2 CPU-s).
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path
from typing import Dict

from .... import __version__
from ....runtime import cache
from ...cpu.toolchain import Toolchain, compile_shared

HERE = Path(__file__).parent
SOURCE = HERE / "replay.cpp"
HEADER = HERE / "simfast.h"


def replay_entry(tc: Toolchain):
    """The cache entry of the replay library for ``tc`` and the library's file name."""
    key = cache.digest(SOURCE.read_text(), HEADER.read_text(), tc.identity, __version__, "simreplay-2")
    return cache.CacheEntry(cache.user_cache_root() / "simreplay" / key[:16]), f"libsimreplay_{key[:12]}.so"


def build_replay(tc: Toolchain) -> Path:
    """The replay library of ``tc``, compiled if the cache lacks it."""
    entry, name = replay_entry(tc)

    def produce(tmp: Path) -> Dict[str, str]:
        compile_shared(tc, SOURCE, tmp / name, opt="-O2", extra=(f"-I{HERE}",))
        return {name: name}

    entry.build(produce)
    return entry.path(name)


@functools.lru_cache(maxsize=None)
def replay_function(tc: Toolchain):
    """``simfast_replay`` of the loaded replay library (loaded once per process and toolchain)."""
    lib = ctypes.CDLL(str(build_replay(tc)))
    fn = lib.simfast_replay
    fn.argtypes = ([ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 2
                   + [ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3)
    fn.restype = None
    return fn
