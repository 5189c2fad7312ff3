"""Figures people would rather look at than read (needs the ``plot`` extra).

Each function takes an optional matplotlib ``ax`` and returns it, like
ArviZ's plotting functions; nothing is shown or saved implicitly.
"""

__all__: list[str] = []
