"""``cfaug demo``: the main job, CrossAug on the embedded FEVEROUS sample, offline."""

from __future__ import annotations

import argparse

from .base import Command, UsageError, add_backend_option, add_out_options, positive_int


class DemoCommand(Command):
    name = "demo"
    summary = "CrossAug on the embedded FEVEROUS sample, offline (the main job)."
    description = ("Load the negative-claim generator shipped in the package (or one trained earlier in "
                   "OUT/generator; --retrain trains one), augment --rows claims of the 300-row FEVEROUS sample "
                   "shipped in the package with CrossAug, and write the augmented dataset, JSONL, stats and a report "
                   "into OUT. No Hub access is needed.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        add_out_options(parser, "the demo's data, statistics and report", default="runs/demo")
        parser.add_argument("--generator-steps", type=positive_int, default=60,
                            help="training steps for the generator (default 60)")
        parser.add_argument("--retrain", action="store_true",
                            help="train a generator (--generator-steps) into OUT/generator instead of using the "
                                 "shipped one")
        parser.add_argument("--rows", type=positive_int, default=100,
                            help="claims to augment, a seeded sample of the 300 shipped (default 100; 300 takes "
                                 "about three times as long)")
        parser.add_argument("--seed", type=int, default=0, help="seed for training and augmentation (default 0)")
        add_backend_option(parser)

    def run(self, args: argparse.Namespace) -> None:
        from ..demo import run_demo
        from ..sharing.folders import FolderNotEmptyError

        try:
            run_demo(args.out, generator_steps=args.generator_steps, retrain=args.retrain, seed=args.seed,
                     backend=args.backend, rows=args.rows, overwrite=args.overwrite)
        except FolderNotEmptyError as err:
            raise UsageError(f"--out {err}") from None
