"""Bounded messages of the command line: a hostile argument never floods the terminal."""

from __future__ import annotations

__all__ = ["MAX_ECHO", "MAX_MESSAGE", "bounded", "short"]

#: Longest error message the command prints (characters).
MAX_MESSAGE = 400
#: Longest echo of a user-supplied value inside a message (characters).
MAX_ECHO = 60


# --- bounded messages ---------------------------------------------------------


def short(value, limit: int = MAX_ECHO) -> str:
    """``repr(value)``, cut after ``limit`` characters with the full length stated.

    A hostile or mistaken argument can be megabytes long; echoing it whole
    would bury the rule the message states.

    >>> short("1,2,3")
    "'1,2,3'"
    >>> short("x" * 1000, limit=12)
    "'xxxxxxxxxxx... (1000 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    n = len(value) if isinstance(value, str | bytes) else len(text)
    return f"{text[:limit]}... ({n} characters)"


def bounded(message: str, limit: int = MAX_MESSAGE) -> str:
    r"""One line of at most about ``limit`` characters: whitespace runs collapsed.

    >>> bounded("a\n  b")
    'a b'
    >>> len(bounded("y" * 10_000)) < 450
    True
    """
    text = " ".join(str(message).split())
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [message cut: {len(text)} characters]"
