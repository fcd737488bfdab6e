"""Exceptions shared by all layers."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from a user (a file, an option, a position).

    The message is one line and is shown as is: ``arboretum: error: <message>``.
    """


def unreadable_reason(exc: BaseException) -> str:
    """Why a parser gave up on input, in a few words: a document nested too deeply
    (``RecursionError``), an integer with thousands of digits (``ValueError`` from Python's
    limit on integer conversion) or the parser's own first line."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = str(exc)
    if isinstance(exc, ValueError) and "integer string conversion" in text:
        return "an integer with too many digits"
    first = text.splitlines()[0] if text else type(exc).__name__
    return first if len(first) <= 120 else first[:117] + "..."
