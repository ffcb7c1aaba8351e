"""Where the official tests import the parser's exception classes from (``diagnostics._exceptions``)."""
from . import ParserError, ParserSyntaxError, ParserTypeError  # noqa: F401
