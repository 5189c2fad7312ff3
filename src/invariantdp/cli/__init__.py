"""The ``invariantdp`` command.

Every module of this package that defines ``_register(subparsers)`` adds one
sub-command (the modules have no Python API of their own); ``main`` dispatches
to the function it sets as ``func``.

Bad input (a value out of range, an unreadable or malformed file, a path that
cannot be written) ends the command with one line
``invariantdp <command>: error: ...`` on stderr and exit status 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from .. import __version__
from ._common import Parser, bounded

__all__ = ["build_parser", "main"]


def build_parser() -> Parser:
    parser = Parser(
        prog="invariantdp",
        description="Inference for differentially private releases with invariants.",
    )
    parser.add_argument("--version", action="version", version=f"invariantdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "_register"):
            module._register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    # The documented failures of bad input: the library's InvariantDPError and
    # TypeError; ValueError also covers pandas' parser errors, JSON decode
    # errors and UnicodeDecodeError; OSError covers missing, unreadable and
    # unwritable paths and directories given as files.
    except (ValueError, TypeError, OSError) as exc:
        print(f"invariantdp {args.command}: error: {bounded(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
