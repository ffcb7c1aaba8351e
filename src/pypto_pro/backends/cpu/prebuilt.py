"""What every kernel build needs and no kernel owns: the runtime library and the precompiled tile header.

Both depend only on the sources shipped with the package and the toolchain, so they are built once per
install into a per-user cache keyed by content (``$PYPTO_CACHE_DIR``, else ``$XDG_CACHE_HOME/pypto_pro``,
else ``~/.cache/pypto_pro``), not once per build directory:

* the runtime library ``libpto_rt_<key>.so`` (thread pool, fibers, events), linked by every kernel;
* the ops library ``libpto_ops_<key>.so``: the per-op functions of ``pto/prebuilt_ops.h`` (element-wise
  binary ops, loads, stores of the common dtypes) compiled once at the kernels' level; a kernel compiled
  while it is in the cache includes that header and calls them instead of compiling them (their loops
  were most of a small kernel's compile time at -O3).  Same headers, same value flags: same results;
* the precompiled ``pto/pto.h`` (GCC only): a ``pto/pto.h.gch/`` directory holding one PCH per
  variant of the header a kernel can ask for (with and without ``PTO_SIMD_MATH``), built with exactly the
  flags kernels are compiled with.  A kernel compiles with that directory first on its include path;
  GCC takes the matching PCH (or, if none is valid, silently reads the header: same result, slower).
  The header's content, the toolchain identity and the flags are in the key, so an edited header or a
  new flag builds a new PCH.  Parsing the header is most of a small kernel's compile time.

``python -m pypto_pro.backends.cpu`` builds both (``make venv`` runs it after installing).  Without it,
the first kernel a process compiles starts that build in a detached background process when the cache
lacks them (the kernel itself builds the runtime library it needs, and compiles without the PCH until it
exists).
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ... import __version__
from ...runtime import cache
from .toolchain import INCLUDE_DIR, RUNTIME_SOURCE, CompileError, Toolchain, compile_shared, find_toolchain

#: Bump when what is built here changes meaning without its sources changing.
PREBUILT_VERSION = "1"

#: The optimisation level kernels are compiled at: what users get (the PCH is built for the level in use,
#: flags must match the kernel's exactly).
KERNEL_OPT = "-O3"

#: Another level for every kernel and trace program of this process, e.g. ``PYPTO_KERNEL_OPT=-O1``: the
#: same results (the value-affecting flags are level-independent: no FMA contraction, no fast-math) from
#: about half the compile time, slower code.  The test suite compiles most kernels at -O0 (docs/testing.md).
OPT_ENV = "PYPTO_KERNEL_OPT"

_OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os")

#: Variants of ``pto/pto.h`` a generated kernel.cpp selects with macros defined before the include.
PCH_VARIANTS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (("plain", ()), ("simd", ("-DPTO_SIMD_MATH=1",)))

#: Set to "0" to disable the PCH (kernels then parse the header; the results are the same).
PCH_ENV = "PYPTO_PCH"

#: Set to "0" to compile every per-op function into each kernel instead of calling the ops library's.
OPS_ENV = "PYPTO_PREBUILT_OPS"

OPS_SOURCE = RUNTIME_SOURCE.parent / "pto_ops.cpp"
#: The line a kernel.cpp gets after its ``#include "pto/pto.h"`` when it calls the ops library.
OPS_INCLUDE = '#include "pto/prebuilt_ops.h"  // per-op functions of the ops library (prebuilt.py)'


def kernel_opt() -> str:
    """The -O level of kernel compiles: ``$PYPTO_KERNEL_OPT`` (``-O1`` or ``1``, levels 0-3 and s), else
    :data:`KERNEL_OPT`.  Read at every compile and part of every kernel's cache key."""
    value = os.environ.get(OPT_ENV, "").strip()
    if not value:
        return KERNEL_OPT
    opt = value if value.startswith("-O") else f"-O{value}"
    if opt not in _OPT_LEVELS:
        raise CompileError(f"${OPT_ENV}={value!r} is not an optimisation level: use one of "
                           f"{', '.join(_OPT_LEVELS)} (or unset it for {KERNEL_OPT}, what users get)")
    return opt


@functools.lru_cache(maxsize=1)
def header_digest() -> str:
    """Content hash of the tile headers (every ``include/**/*.h``)."""
    parts: List[str] = []
    for h in sorted(INCLUDE_DIR.rglob("*.h")):
        parts += [str(h.relative_to(INCLUDE_DIR)), h.read_text()]
    return cache.digest(*parts)


@functools.lru_cache(maxsize=1)
def runtime_digest() -> str:
    """Content hash of the runtime and ops libraries' sources (their .cpp and the headers), part of every
    kernel's key."""
    return cache.digest(RUNTIME_SOURCE.read_text(), OPS_SOURCE.read_text(), header_digest())


def _entry(kind: str, key: str) -> cache.CacheEntry:
    return cache.CacheEntry(cache.user_cache_root() / kind / key[:16])


# ---------------------------------------------------------------------------------------- runtime library
def runtime_entry(tc: Toolchain) -> Tuple[cache.CacheEntry, str]:
    """The cache entry of the runtime library for ``tc`` and the library's file name."""
    key = cache.digest(runtime_digest(), tc.identity, __version__, PREBUILT_VERSION)
    return _entry("runtime", key), f"libpto_rt_{key[:12]}.so"


def build_runtime(tc: Toolchain) -> Path:
    """The runtime library of ``tc``, compiled if the cache lacks it (builders serialise on a lock)."""
    entry, name = runtime_entry(tc)

    def produce(tmp: Path) -> Dict[str, str]:
        compile_shared(tc, RUNTIME_SOURCE, tmp / name, opt="-O2", extra=("-lpthread",))
        return {name: name}

    entry.build(produce)
    return entry.path(name)


# ---------------------------------------------------------------------------------------- ops library
def ops_entry(tc: Toolchain) -> Tuple[cache.CacheEntry, str]:
    """The cache entry of the ops library for ``tc`` and the library's file name."""
    key = cache.digest(OPS_SOURCE.read_text(), header_digest(), tc.identity, KERNEL_OPT, __version__,
                       PREBUILT_VERSION)
    return _entry("ops", key), f"libpto_ops_{key[:12]}.so"


def build_ops(tc: Toolchain) -> Path:
    """The ops library of ``tc``, compiled at :data:`KERNEL_OPT` if the cache lacks it.  Hidden visibility
    but for the instantiations themselves, so the library interposes nothing else a kernel defines."""
    entry, name = ops_entry(tc)

    def produce(tmp: Path) -> Dict[str, str]:
        compile_shared(tc, OPS_SOURCE, tmp / name, opt=KERNEL_OPT, extra=("-fvisibility=hidden",))
        return {name: name}

    entry.build(produce)
    return entry.path(name)


def ops_library(tc: Toolchain) -> Optional[Path]:
    """The ops library if it is built and in use (never waits for or starts a build)."""
    if os.environ.get(OPS_ENV, "1") == "0":
        return None
    entry, name = ops_entry(tc)
    return entry.path(name) if _published(entry) else None


def with_ops(source: str) -> str:
    """A generated kernel.cpp that calls the ops library: :data:`OPS_INCLUDE` after its pto/pto.h."""
    head = '#include "pto/pto.h"\n'
    at = source.index(head) + len(head)
    return source[:at] + OPS_INCLUDE + "\n" + source[at:]


# ---------------------------------------------------------------------------------------- precompiled header
def pch_supported(tc: Toolchain) -> bool:
    """GCC's ``.gch`` directory lookup is what kernels rely on; clang uses another mechanism."""
    return "clang" not in tc.version.lower() and os.environ.get(PCH_ENV, "1") != "0"


def pch_entry(tc: Toolchain, opt: Optional[str] = None) -> cache.CacheEntry:
    opt = opt or kernel_opt()
    key = cache.digest(header_digest(), tc.identity, opt, __version__, PREBUILT_VERSION)
    return _entry("pch", key)


def _pch_files() -> Dict[str, str]:
    return {f"pto/pto.h.gch/{variant}.gch": f"{variant}.gch" for variant, _ in PCH_VARIANTS}


def pch_command(tc: Toolchain, output: Path, defines: Tuple[str, ...], opt: Optional[str] = None) -> List[str]:
    """The compiler command that precompiles ``pto/pto.h``: the kernel's flags plus ``-x c++-header``."""
    return [tc.path, opt or kernel_opt(), *tc.flags, f"-I{INCLUDE_DIR}", *defines, "-x", "c++-header",
            str(INCLUDE_DIR / "pto" / "pto.h"), "-o", str(output)]


def build_pch(tc: Toolchain, opt: Optional[str] = None) -> Optional[Path]:
    """The include directory holding the PCHs of ``pto/pto.h`` for ``opt`` (default: the level in use),
    built if missing; ``None`` if unsupported."""
    if not pch_supported(tc):
        return None
    opt = opt or kernel_opt()
    entry = pch_entry(tc, opt)

    def produce(tmp: Path) -> Dict[str, str]:
        (entry.dir / "pto" / "pto.h.gch").mkdir(parents=True, exist_ok=True)
        for variant, defines in PCH_VARIANTS:
            proc = subprocess.run(pch_command(tc, tmp / f"{variant}.gch", defines, opt), capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                raise CompileError(f"precompiling pto/pto.h failed:\n{proc.stderr.strip()[-4000:]}")
        return _pch_files()

    entry.build(produce)
    return entry.dir


def _published(entry: cache.CacheEntry) -> bool:
    """A published entry (its meta.json, written last, and every file it lists, non-empty).

    Cheaper than :meth:`CacheEntry.valid`, which would hash ~100 MB on every first kernel of a process; a
    damaged PCH that GCC refuses to read makes the compile fail, and :func:`drop_pch` plus a compile without
    it (launcher) recover from that."""
    import json

    try:
        files = json.loads((entry.dir / "meta.json").read_text()).get("files", {})
        return bool(files) and all((entry.dir / name).stat().st_size > 0 for name in files)
    except (OSError, ValueError, AttributeError):
        return False


_pch_seen: Dict[str, Path] = {}


def pch_include_dir(tc: Toolchain, opt: Optional[str] = None) -> Optional[Path]:
    """The PCH include directory for ``opt`` (default: the level in use) if it is already built (never
    waits for or starts a build)."""
    if not pch_supported(tc):
        return None
    entry = pch_entry(tc, opt)
    key = str(entry.dir)
    if key in _pch_seen:
        return _pch_seen[key]
    if not _published(entry):
        return None
    _pch_seen[key] = entry.dir
    return entry.dir


def drop_pch(include_dir: Path) -> None:
    """Forget a PCH that made a compile fail (unpublish it: the next prebuild makes a new one)."""
    _pch_seen.pop(str(include_dir), None)
    try:
        (include_dir / "meta.json").unlink()
    except OSError:
        pass


def compile_kernel(tc: Toolchain, source: Path, output: Path, extra: Sequence[str] = ()) -> None:
    """Compile a generated kernel.cpp (or the simulator's trace program of one) into ``output``, from the
    PCH when it is built; ``extra``: further compiler arguments.

    The PCH holds exactly what parsing the header would produce, so the library is the same either way; a
    compile that fails with the PCH is retried without it (and the PCH dropped) before reporting."""
    opt = kernel_opt()
    pch = pch_include_dir(tc, opt)
    if pch is None:
        compile_shared(tc, source, output, opt=opt, extra=extra)
        return
    try:
        compile_shared(tc, source, output, opt=opt, extra=extra, include_first=[pch])
    except CompileError:
        drop_pch(pch)
        compile_shared(tc, source, output, opt=opt, extra=extra)


# ---------------------------------------------------------------------------------------- once per install
def missing(tc: Toolchain) -> List[str]:
    """Which install-wide artifacts the cache lacks ("runtime", "pch" of the level in use, "ops")."""
    out = []
    entry, _ = runtime_entry(tc)
    if entry.valid() is None:
        out.append("runtime")
    if pch_supported(tc) and not _published(pch_entry(tc)):
        out.append("pch")
    if not _published(ops_entry(tc)[0]):
        out.append("ops")
    return out


def prebuild(tc: Optional[Toolchain] = None) -> List[Path]:
    """Build the runtime library, the PCH (for the level in use) and the ops library for the system
    compiler; returns what exists afterwards."""
    tc = tc or find_toolchain()
    if tc is None:
        return []
    built = [build_runtime(tc)]
    pch = build_pch(tc)
    if pch is not None:
        built.append(pch)
    built.append(build_ops(tc))
    return built


_background_started = False
_background_lock = threading.Lock()


def start_background_prebuild() -> None:
    """If the cache lacks the runtime library or the PCH, build them in a detached process (once per
    process; the check runs on a thread, so the caller never waits for it).

    A detached process, not a thread: it finishes even when this program exits first.
    ``PYPTO_PREBUILD=0`` turns this off."""
    global _background_started
    if os.environ.get("PYPTO_PREBUILD", "1") == "0":
        return
    with _background_lock:
        if _background_started:
            return
        _background_started = True

    def check_and_spawn() -> None:
        try:
            tc = find_toolchain()
            if tc is None or not missing(tc):
                return
            env = dict(os.environ, PYPTO_PREBUILD="0")
            subprocess.Popen([sys.executable, "-m", "pypto_pro.backends.cpu", "--quiet"], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except Exception:  # noqa: BLE001  (an optimisation only: the first kernel builds what it needs)
            pass

    threading.Thread(target=check_and_spawn, name="pypto-prebuild-check", daemon=True).start()


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quiet = "--quiet" in argv
    tc = find_toolchain()
    if tc is None:
        if not quiet:
            print("pypto_pro: no C++ compiler found; nothing to prebuild (the cpu backend is unavailable)")
        return 0
    from ..sim.fast.replaylib import build_replay  # the simulator's fast path links it (same toolchain)
    from .clauncher import build_extension  # the C launcher (once per Python and toolchain)

    from .torchaccess import build as build_torch_access  # its torch data-pointer accessor (once per torch)

    launcher = build_extension(tc)
    extra = [p for p in (launcher, build_torch_access(tc) if launcher is not None else None) if p is not None]
    for path in prebuild(tc) + [build_replay(tc)] + extra:
        if not quiet:
            print(f"pypto_pro: prebuilt {path}")
    return 0

