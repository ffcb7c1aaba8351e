"""On-disk build cache (docs/contract.md): ``$PYPTO_BUILD_DIR`` (default ``./build``) / ``<kernel>__<arch>/<key>/``.

An entry is published atomically: artifacts are written under temporary names and renamed into
place, a ``meta.json`` recording the SHA-256 of each artifact is renamed last, and builders of one
entry serialise on a file lock, so any number of processes compiling the same kernel at once all
succeed.  A truncated or corrupted artifact fails its hash check and is rebuilt.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional

try:  # POSIX file locks; elsewhere builders fall back to atomic renames only
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None


def build_root() -> Path:
    """The root of all build directories (``$PYPTO_BUILD_DIR`` or ``./build``), absolute."""
    return Path(os.environ.get("PYPTO_BUILD_DIR") or "build").absolute()


def user_cache_root() -> Path:
    """The per-user cache of install-wide artifacts: the runtime library, the precompiled tile header and
    the compiler probe (``$PYPTO_CACHE_DIR``, else ``$XDG_CACHE_HOME/pypto_pro``, else
    ``~/.cache/pypto_pro``).  Unlike ``build_root`` it does not change with the build directory."""
    explicit = os.environ.get("PYPTO_CACHE_DIR")
    if explicit:
        return Path(explicit).absolute()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base).absolute() / "pypto_pro"


def sanitize(name: str) -> str:
    """A kernel name made safe as one path component."""
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "kernel"
    return clean[:80]


def digest(*parts: str) -> str:
    """SHA-256 over the given strings (length-prefixed, so boundaries matter)."""
    h = hashlib.sha256()
    for p in parts:
        data = p.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def file_sha256(path: Path) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest() if hasattr(hashlib, "file_digest") else \
                hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


@contextlib.contextmanager
def file_lock(directory: Path) -> Iterator[None]:
    """Exclusive lock on ``directory/.lock`` (held while one process builds an entry)."""
    directory.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(directory / ".lock", "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class CacheEntry:
    """One build directory holding named artifacts and their hashes."""

    def __init__(self, directory: Path):
        self.dir = directory

    def path(self, name: str) -> Path:
        return self.dir / name

    def valid(self) -> Optional[Dict[str, str]]:
        """The artifacts of a complete, uncorrupted entry (name -> sha256), else ``None``."""
        try:
            meta = json.loads((self.dir / "meta.json").read_text())
        except (OSError, ValueError):
            return None
        files = meta.get("files", {})
        for name, sha in files.items():
            if file_sha256(self.dir / name) != sha:
                return None
        return files

    def build(self, produce: Callable[[Path], Dict[str, str]]) -> Dict[str, str]:
        """Return the entry's artifacts, building them under the lock if missing or corrupted.

        ``produce(tmpdir)`` writes artifacts into a private temporary directory and returns
        ``{final_name: temp_file_name}``; they are then renamed into the entry."""
        files = self.valid()
        if files is not None:
            return files
        with file_lock(self.dir):
            files = self.valid()  # another process may have finished while we waited
            if files is not None:
                return files
            with tempfile.TemporaryDirectory(prefix=".build-", dir=self.dir) as tmp:
                produced = produce(Path(tmp))
                hashes = {}
                for final, temp in produced.items():
                    os.replace(Path(tmp) / temp, self.dir / final)
                    hashes[final] = file_sha256(self.dir / final)
            write_atomic(self.dir / "meta.json", json.dumps({"files": hashes}, indent=1).encode())
            return hashes


def publish_latest(entry: CacheEntry, name: str) -> None:
    """Copy an artifact of ``entry`` to its kernel directory (``<root>/<kernel>__<arch>/<name>``).

    The seed documents ``./build/<kernel>__<arch>/kernel.cpp`` as the place to read the generated code;
    with several specializations it holds the one used most recently."""
    data = entry.path(name).read_bytes()
    latest = entry.dir.parent / name
    try:
        if latest.read_bytes() == data:
            return
    except OSError:
        pass
    write_atomic(latest, data)


def entry(kernel_name: str, arch: str, key: str) -> CacheEntry:
    """The cache entry of one specialization: ``<root>/<kernel>__<arch>/<key[:16]>``."""
    return CacheEntry(build_root() / f"{sanitize(kernel_name)}__{sanitize(arch)}" / key[:16])
