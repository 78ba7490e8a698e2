"""``cfaug amplify``: annotate a few rows, let an editor learned from them write the rest."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .base import (Command, add_out_options, add_schema_options, check_out, nonnegative_int, positive_float, positive_int,
                   schema_options, writing_out)
from .data import DATA_FILES, load_local


class AmplifyCommand(Command):
    name = "amplify"
    summary = "Annotate a few rows, let an editor learned from them write the rest."
    description = ("Train a counterfactual editor (SmolLM2-135M with LoRA by default) on the rows of DATA that have "
                   "a human counterfactual in --counterfactual-column (empty or null elsewhere), then write "
                   "counterfactuals for the other rows, checked by the flip checker shipped for the task. Writes "
                   "OUT/data (originals, human and editor counterfactuals, with provenance) and OUT/report.json.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        parser.add_argument("data", help=f"saved dataset folder, {DATA_FILES} or a Hub dataset id")
        parser.add_argument("--split", default=None,
                            help="the split to read from a saved DatasetDict folder or a Hub dataset (default train)")
        add_out_options(parser, "data/ and report.json")
        add_schema_options(parser, tasks=("sentiment", "nli"), task="sentiment", label="label", nei=False)
        parser.add_argument("--counterfactual-column", default="counterfactual",
                            help="column with each annotated row's human counterfactual (default counterfactual)")
        parser.add_argument("--target-column", help="column with each human counterfactual's label (needed with "
                                                    "more than two labels)")
        parser.add_argument("--editor", default="HuggingFaceTB/SmolLM2-135M-Instruct",
                            help="causal LM to train the editor from, or a saved Editor folder (default SmolLM2-135M)")
        parser.add_argument("--epochs", type=positive_float, default=1.0, help="editor training epochs (default 1)")
        parser.add_argument("--max-steps", type=nonnegative_int, default=None,
                            help="stop editor training after this many steps (0: use --editor as it is)")
        parser.add_argument("--train-batch-size", type=positive_int, default=8,
                            help="editor training batch (default 8)")
        parser.add_argument("--edit-sentences", type=nonnegative_int, default=None,
                            help="sentences rewritten per text (default 3; 0 rewrites whole texts; NLI edits "
                                 "hypotheses)")
        parser.add_argument("--limit", type=positive_int, default=None, help="edit a seeded sample of this many rows")
        parser.add_argument("--folds", type=positive_int, default=None,
                            help="cross-fitting: split the rows into this many folds (at least 2) and let the editor "
                                 "trained on the other folds' annotations write for each fold, so every row gets a "
                                 "machine counterfactual from an editor that never saw its human pair (trains that "
                                 "many editors)")
        parser.add_argument("--no-human", action="store_true",
                            help="leave the annotators' counterfactuals out of the output (the fully automatic set)")
        checker = parser.add_mutually_exclusive_group()
        checker.add_argument("--checker", help="folder or Hub id of the flip checker (default: the one shipped for "
                                               "the task)")
        checker.add_argument("--no-checker", action="store_true", help="keep the editor's first candidate unchecked")
        parser.add_argument("--seed", type=int, default=0, help="seed for training and editing (default 0)")

    def run(self, args: argparse.Namespace) -> None:
        from ..amplify import amplify
        from ..sharing.folders import save_dataset
        from ..schema import TaskSchema

        schema = TaskSchema.from_dict(schema_options(args))
        check_out(args.out, args.data, kind="amplify output", overwrite=args.overwrite)
        dataset = load_local(args.data, split=args.split)  # amplify's --limit is the sample it edits
        checker = None if args.no_checker else args.checker or "default"
        options: dict[str, Any] = {"num_train_epochs": args.epochs, "batch_size": args.train_batch_size}
        if args.max_steps is not None:
            options["max_steps"] = args.max_steps
        augmented, report = amplify(dataset, schema, counterfactual_column=args.counterfactual_column,
                                    target_column=args.target_column, editor=args.editor, checker=checker,
                                    edit_sentences=args.edit_sentences, limit=args.limit, seed=args.seed,
                                    folds=args.folds, include_human=not args.no_human, train_options=options)
        out = Path(args.out)
        with writing_out(args, "amplify output") as tmp:
            save_dataset(augmented, tmp / "data")
            (tmp / "report.json").write_text(json.dumps(report.to_dict(), indent=1, default=str) + "\n")
        print("\n".join(report.summary_lines()))
        print(f"Saved {len(augmented)} rows to {out / 'data'} and the report to {out / 'report.json'}")
