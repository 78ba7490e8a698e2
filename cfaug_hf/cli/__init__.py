"""The ``cfaug`` command line: one module per command, each a `Command` listed in `COMMANDS`.

    cfaug demo [--out runs/demo]                    the main job on the embedded data (see cfaug_hf.demo)
    cfaug augment DATA --method NAME --out DIR      any method (--recipe FILE, --augmenter PATH), here or on Ray
    cfaug amplify DATA --out DIR                    an editor learned from a few human counterfactuals writes the rest
    cfaug train KIND DATA --out DIR                 train a generator, checker, editor, retriever or selector
    cfaug push FOLDER REPO_ID [--private]           push a saved component, augmenter or augmented dataset
    cfaug pull REPO_ID FOLDER [--repo-type dataset] download a repository into a folder
    cfaug report ORIGINAL AUGMENTED --out DIR       metrics, shortcut diagnostics and plots of an augmentation

Tokens come from --token, the HF_TOKEN variable or `hf auth login`. A user error (a missing file, a bad column, a
folder that is not empty) prints one line and exits with status 2; --debug (or CFAUG_DEBUG=1) shows the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator

from .._version import __version__
from .amplify import AmplifyCommand
from .augment import AugmentCommand
from .base import Command, Parser, UsageError
from .crossaug import CrossAugCommand
from .demo import DemoCommand
from .errors import in_flag_terms, message, missing_input, user_error_types
from .pull import PullCommand
from .push import PushCommand
from .report import ReportCommand
from .train import TrainCommand

__all__ = ["main", "build_parser", "COMMANDS", "Command", "UsageError"]

#: The commands, in the order ``cfaug --help`` lists them.
COMMANDS: list[Command] = [DemoCommand(), AugmentCommand(), AmplifyCommand(), TrainCommand(), PushCommand(),
                           ReportCommand(), PullCommand(), CrossAugCommand()]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``cfaug`` parser; ``argv`` lets ``augment --method NAME`` (or ``--recipe FILE``) add that method's
    options."""
    parser = Parser(
        prog="cfaug", description="Counterfactual data augmentation for Hugging Face datasets: run a method, report "
                                  "on its output, share components and data on the Hub.")
    parser.add_argument("--debug", action="store_true", default=os.environ.get("CFAUG_DEBUG") == "1",
                        help="show the full traceback of an error (also CFAUG_DEBUG=1)")
    parser.add_argument("--version", action="version", version=f"cfaug {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log more (-v info, -vv debug); CFAUG_VERBOSITY sets the default")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(sub, list(argv or []))
    return parser


@contextlib.contextmanager
def _holding_out(args: argparse.Namespace) -> Iterator[None]:
    """The lock of ``--out`` for the whole command: a second run writing the same folder stops at once, before any
    work, instead of losing hours of it at the end."""
    out = getattr(args, "out", None)
    if not out:
        yield
        return
    from ..sharing.folders import FolderBusyError, folder_lock

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(folder_lock(out, wait=False))
        except FolderBusyError as err:
            holder = str(err).partition("another run is writing it")[2].partition(";")[0]
            raise UsageError(f"another run is writing {out}{holder}; wait for it to finish, or choose another "
                             f"--out.") from None
        yield


def _few_malloc_arenas() -> None:
    """Keep glibc's malloc to one arena, as ``MALLOC_ARENA_MAX=1`` would, unless the user set that variable.

    The generator's CTranslate2 threads and torch's threads each take an arena of their own by default (up to 8 per
    core), and each batch's freed memory stays spread over them: the demo's peak was 2.01 GB with 16 arenas (glibc's
    default on 2 cores) and 1.81 GB with 2, at the same wall time (100 rows; ``benchmarks/demo_time_memory.py``,
    2026-11-28); on 2026-12-07's machine 2.14-2.20 GB with 2 and 2.06-2.07 GB with 1, 2 s faster (the threads
    contend for that arena less than they lose to memory spread over two)."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(-8, 1)  # -8 is M_ARENA_MAX in glibc's malloc.h
    except (OSError, AttributeError):  # another C library (musl): nothing to cap
        pass


def main(argv: list[str] | None = None) -> int:
    """Run ``cfaug`` with ``argv`` (default: the process's arguments); returns the exit status."""
    if argv is None:  # the cfaug program itself, not a caller's process
        _few_malloc_arenas()
    argv = sys.argv[1:] if argv is None else argv
    missing = missing_input(argv)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.verbose:
        from ..verbosity import set_verbosity

        set_verbosity("debug" if args.verbose > 1 else "info")
    try:
        with _holding_out(args):
            args.func(args)
    except KeyboardInterrupt:
        print("cfaug: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if args.debug:
            raise
        user = isinstance(err, user_error_types())
        text = in_flag_terms(message(err), parser, args.command) if user else message(err)
        print(f"cfaug {args.command}: error: {text}", file=sys.stderr)
        if not user:
            print(f"cfaug {args.command}: this looks like a bug ({type(err).__name__}); rerun with --debug for the "
                  f"traceback and report it.", file=sys.stderr)
        return 2 if user else 1
    return 0
