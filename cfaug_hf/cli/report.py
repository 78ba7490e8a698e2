"""``cfaug report``: counts, counterfactual quality and shortcut diagnostics of an augmentation."""

from __future__ import annotations

import argparse

from .base import Command, add_out_options, add_schema_options, check_out, positive_int, schema_options
from .data import DATA_FILES, load_local


class ReportCommand(Command):
    name = "report"
    summary = "Counts, counterfactual quality and shortcut diagnostics of an augmentation."
    description = ("Compare an augmenter's output with its input: counts by label and kind, skip reasons, edit "
                   "distance, BLEU diversity, perturbation types, MoverScore and perplexity (unless --no-models), and "
                   "the competency test and claim-only probe before and after.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        parser.add_argument("original", help=f"the input dataset: saved folder or {DATA_FILES}")
        parser.add_argument("augmented", help="the augmenter's output (with the cf_* provenance columns)")
        add_out_options(parser, "report.json, report.md and the plots")
        add_schema_options(parser, tasks=("fact-verification", "nli", "sentiment"), task="fact-verification",
                           label="label", id_help="the id column the augmenter used for cf_source_id")
        parser.add_argument("--checker", help="saved LabelChecker (folder or Hub id) that judges the flip rate; best one that did not pick "
                                 "the rows (e.g. a judge built by scripts/build_judge.py), whose ceiling (its score "
                                 "on human counterfactuals) the report prints beside it")
        parser.add_argument("--no-models", dest="models", action="store_false",
                            help="skip MoverScore, perplexity and multi-hop coherence (no MiniLM/SmolLM2 needed)")
        parser.add_argument("--full", action="store_true",
                            help="print the whole report (the Markdown of report.md) instead of its summary")
        parser.add_argument("--max-pairs", type=positive_int, default=400,
                            help="pairs sampled for the model-based metrics (default 400)")

    def run(self, args: argparse.Namespace) -> None:
        from ..report import augmentation_report
        from ..schema import TaskSchema

        schema = TaskSchema.from_dict(schema_options(args))
        check_out(args.out, args.original, args.augmented, kind="report", overwrite=args.overwrite)
        original, augmented = load_local(args.original), load_local(args.augmented)
        checker = None
        if args.checker:
            from ..components import LabelChecker

            checker = LabelChecker.from_pretrained(args.checker)
        models = {} if args.models else {"fluency_model": None, "embedder": None}
        report = augmentation_report(original, augmented, schema, checker=checker, out_dir=args.out,
                                     max_pairs=args.max_pairs, overwrite=args.overwrite, **models)
        print(report.to_markdown() if args.full else report.summary())
        print(f"The whole report: {report.files['markdown']} (and report.json"
              + (", plots)" if any(str(f).endswith(".png") for f in report.files.values()) else ")")
              + ("" if args.full else "; --full prints it here."))
