"""The ``arboretum`` command.

Each subcommand is one ``_add_<name>`` function that builds its parser and sets a handler;
a handler imports its implementation lazily, so ``arboretum --help`` stays fast and this
module never imports torch. To add a subcommand, write an ``_add_...`` function and list it
in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from arboretum_env import __version__
from arboretum_env.errors import UserError

PROG = "arboretum"


def _add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score a position document (JSON)",
        description="Score every player's arboretum in a position document.",
    )
    p.add_argument("path", help="position document (JSON)")
    p.add_argument("--text", action="store_true", help="print a text rendering of the arboretums")

    def run(args: argparse.Namespace) -> int:
        from arboretum_env.engine.position import score_command

        print(score_command(args.path, text=args.text))
        return 0

    p.set_defaults(handler=run)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_score,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Arboretum: rules engine, RL environment, training and evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 on bad usage, 0 on --help
    try:
        return args.handler(args)
    except UserError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
