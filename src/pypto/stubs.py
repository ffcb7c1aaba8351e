"""Official names the portable tensor level has no implementation for: each is a function that raises
``NotImplementedError`` naming itself (and why), so a program using one fails at that call, clearly."""
from __future__ import annotations

from typing import Callable


def not_implemented(qualified_name: str, why: str = "") -> Callable:
    """A stub for ``qualified_name`` (e.g. ``"pypto.sort32"``) that raises ``NotImplementedError``."""
    reason = f" ({why})" if why else ""
    short = qualified_name.rsplit(".", 1)[-1]

    def fn(*args, **kwargs):
        raise NotImplementedError(f"{qualified_name}{reason}")

    fn.__name__ = fn.__qualname__ = short
    fn.__doc__ = f"{qualified_name}: not implemented in the portable tensor level{reason}; raises NotImplementedError."
    return fn
