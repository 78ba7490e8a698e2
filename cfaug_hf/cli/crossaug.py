"""``cfaug crossaug``: removed; it reads its old options and prints the equivalent ``cfaug augment --method crossaug``
line (kept for one release so that scripts say what to run instead)."""

from __future__ import annotations

import argparse
import shlex

from .base import Command, UsageError, add_data_options, positive_int


class CrossAugCommand(Command):
    name = "crossaug"
    summary = "Removed: prints the equivalent `cfaug augment --method crossaug` line."
    description = ("`cfaug crossaug` was a second, hand-written CrossAug command; `cfaug augment DATA --method "
                   "crossaug` does the same with every CrossAug option. Given the old options, this prints the "
                   "equivalent line and exits with status 2.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        old = "an option of the removed command, translated into the cfaug augment line printed"
        parser.add_argument("data", help="the dataset (as for cfaug augment)")
        add_data_options(parser)
        parser.add_argument("--generator", default="default", help=old)
        checker = parser.add_mutually_exclusive_group()
        checker.add_argument("--checker", help=old)
        checker.add_argument("--no-checker", action="store_true", help=old)
        parser.add_argument("--out", required=True, help=old)
        parser.add_argument("--overwrite", action="store_true", help=old)
        for flag, default in (("--claim-column", "claim"), ("--evidence-column", "evidence"),
                              ("--label-column", "label"), ("--id-column", None), ("--backend", "auto")):
            parser.add_argument(flag, default=default, help=old)
        for flag in ("--max-span-tokens", "--candidates", "--batch-size", "--num-proc"):
            parser.add_argument(flag, type=positive_int, default=None, help=old)
        for flag in ("--nei", "--allow-deletions", "--allow-same-meaning", "--reject-deletions",
                     "--counterfactuals-only"):
            parser.add_argument(flag, action="store_true", help=old)
        parser.add_argument("--seed", type=int, default=None, help=old)

    def run(self, args: argparse.Namespace) -> None:
        line, dropped = augment_line(args)
        note = f" ({'; '.join(dropped)})" if dropped else ""
        raise UsageError(f"`cfaug crossaug` was removed; run instead:\n  {line}{note}")


def augment_line(args: argparse.Namespace) -> tuple[str, list[str]]:
    """The ``cfaug augment`` command line that does what the old options asked, and notes on those it drops."""
    line = ["cfaug", "augment", args.data, "--method", "crossaug", "--out", args.out]
    if args.generator != "default":
        line += ["--generator", args.generator]
    if args.no_checker or args.checker:
        line += ["--checker", "none" if args.no_checker else args.checker]
    if (args.claim_column, args.evidence_column) != ("claim", "evidence"):
        line += ["--task", "fact-verification", "--columns", f"{args.claim_column},{args.evidence_column}"]
    values = {"--split": args.split, "--limit": args.limit, "--label-column": None if args.label_column == "label"
              else args.label_column, "--id-column": args.id_column, "--max-span-tokens": args.max_span_tokens,
              "--batch-size": args.batch_size, "--num-proc": args.num_proc, "--seed": args.seed,
              "--backend": None if args.backend == "auto" else args.backend}
    line += [str(x) for flag, value in values.items() if value is not None for x in (flag, value)]
    switches = {"--overwrite": args.overwrite, "--nei": args.nei, "--no-reject-deletions": args.allow_deletions,
                "--no-reject-same-meaning": args.allow_same_meaning, "--no-keep-original": args.counterfactuals_only}
    line += [flag for flag, on in switches.items() if on]
    dropped = []
    if args.reject_deletions:
        dropped.append("--reject-deletions is the default")
    if args.candidates:
        dropped.append("--candidates: set num_return_sequences and num_beams in the generator's config")
    return shlex.join(line), dropped
