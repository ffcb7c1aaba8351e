"""The project's error hierarchy (docs/contract.md "Errors").

Every problem a kernel developer can cause is reported as a subclass of :class:`KernelError`.
Errors tied to kernel code carry the kernel name and a :class:`SourceLoc` so the message shows
``file:line`` and the offending source line.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class SourceLoc:
    """A position in a kernel's Python source."""

    filename: str
    lineno: int
    source_line: str = ""

    def __str__(self) -> str:
        text = f"{self.filename}:{self.lineno}"
        if self.source_line:
            text += f"\n    {self.source_line.strip()}"
        return text


class KernelError(Exception):
    """Base class of every PyPTO error raised for a kernel or its launch."""

    def __init__(self, message: str, *, loc: Optional[SourceLoc] = None, kernel: Optional[str] = None):
        self.message = message
        self.loc = loc
        self.kernel = kernel
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"[kernel {self.kernel}] " if self.kernel else ""
        text = head + self.message
        if self.loc is not None:
            text += f"\n  at {self.loc}"
        return text

    def attach(self, *, loc: Optional[SourceLoc] = None, kernel: Optional[str] = None) -> "KernelError":
        """Fill in location/kernel if they are still unknown and refresh the message."""
        if self.loc is None and loc is not None:
            self.loc = loc
        if self.kernel is None and kernel is not None:
            self.kernel = kernel
        self.args = (self._render(),)
        return self


class ParserError(KernelError):
    """A kernel the frontend rejects before it runs (the official ``parser.diagnostics`` base class)."""


class KernelSyntaxError(ParserError):
    """A Python construct that is not allowed inside a kernel."""


class KernelTypeError(KernelSyntaxError, TypeError):
    """An op's operands are ill-typed: dtype, shape, memory space or move path.  The official parser reports
    an op call its builder rejects as a ``ParserSyntaxError``, so this is one too (``except ParserSyntaxError``
    and ``pytest.raises(ParserSyntaxError)`` catch it); the official ``ParserTypeError`` is this class."""


class KernelValueError(KernelTypeError, ValueError):
    """An illegal descriptor value inside a kernel (the official API raises ``ValueError`` here)."""


class KernelMemoryError(KernelError):
    """An on-chip buffer exceeds its memory's capacity or is misaligned."""


class KernelLaunchError(KernelError, TypeError):
    """The arguments of a launch do not match the kernel's signature."""


class KernelLaunchValueError(KernelLaunchError, ValueError):
    """A launch argument of the right kind with an illegal value (the official API raises
    ``ValueError`` here, e.g. a TilingData array of the wrong length)."""


class KernelRuntimeError(KernelError):
    """A failure while the kernel runs: out-of-bounds access, failed strict assertion, ..."""


class KernelRaceError(KernelRuntimeError):
    """The simulator found two unordered accesses to the same bytes, at least one a write."""


class KernelDeadlockError(KernelRuntimeError):
    """Every remaining core waits on an event nobody will signal."""


class KernelUninitError(KernelRuntimeError):
    """A read of on-chip bytes never written in this launch."""


__all__ = [
    "SourceLoc", "KernelError", "KernelSyntaxError", "KernelTypeError", "KernelValueError", "KernelMemoryError",
    "KernelLaunchError", "KernelLaunchValueError", "KernelRuntimeError", "KernelRaceError", "KernelDeadlockError",
    "KernelUninitError",
]


#: The official diagnostics' names (``pypto_pro.language.parser.diagnostics``) for the same classes.
ParserSyntaxError = KernelSyntaxError
ParserTypeError = KernelTypeError
