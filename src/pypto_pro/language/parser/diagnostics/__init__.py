"""The parser's diagnostics under their official names.

``ParserSyntaxError`` and ``ParserTypeError`` are :class:`~pypto_pro.errors.KernelSyntaxError` and
:class:`~pypto_pro.errors.KernelTypeError` themselves, so ``pytest.raises(ParserSyntaxError)`` catches
what the tile frontend raises for a construct it rejects.
"""
from ....errors import ParserError, ParserSyntaxError, ParserTypeError  # noqa: F401

__all__ = ["ParserError", "ParserSyntaxError", "ParserTypeError"]
