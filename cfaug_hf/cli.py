"""The ``cfaug`` command line.

    cfaug demo [--out runs/demo]                 the main job on the embedded data (see cfaug_hf.demo)
    cfaug crossaug DATA --generator DIR --out DIR   CrossAug on a local JSON/JSONL/CSV/Parquet file or saved dataset
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _load_local(path: str) -> Any:
    from datasets import load_dataset, load_from_disk

    p = Path(path)
    if p.is_dir():
        return load_from_disk(str(p))
    suffix = p.suffix.lower().lstrip(".")
    builder = {"jsonl": "json", "json": "json", "csv": "csv", "tsv": "csv", "parquet": "parquet"}.get(suffix)
    if builder is None or not p.is_file():
        raise SystemExit(f"{path}: expected a saved dataset folder or a .json/.jsonl/.csv/.tsv/.parquet file.")
    kwargs = {"delimiter": "\t"} if suffix == "tsv" else {}
    return load_dataset(builder, data_files=str(p), split="train", **kwargs)


def _cmd_demo(args: argparse.Namespace) -> None:
    from .demo import run_demo

    run_demo(args.out, generator_steps=args.generator_steps, retrain=args.retrain, seed=args.seed)


def _cmd_crossaug(args: argparse.Namespace) -> None:
    from .components import Generator, LabelChecker
    from .methods.crossaug import CrossAugAugmenter
    from .schema import TaskSchema

    dataset = _load_local(args.data)
    schema = TaskSchema.fact_verification(claim=args.claim_column, evidence=args.evidence_column,
                                          label=args.label_column, nei=args.nei, id_column=args.id_column)
    generator = Generator.from_pretrained(args.generator)
    if args.candidates:
        generator.config.num_return_sequences = args.candidates
        generator.config.num_beams = max(generator.config.num_beams, args.candidates)
    checker = LabelChecker.from_pretrained(args.checker) if args.checker else None
    augmenter = CrossAugAugmenter(generator, schema, checker=checker, max_span_tokens=args.max_span_tokens,
                                  reject_deletions=args.reject_deletions,
                                  keep_original=not args.counterfactuals_only, seed=args.seed)
    augmented = augmenter.augment(dataset, batch_size=args.batch_size, num_proc=args.num_proc)
    augmented.save_to_disk(args.out)
    print("\n".join(augmenter.stats.summary_lines()))
    print(f"Saved {len(augmented)} rows to {args.out}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cfaug", description="Counterfactual data augmentation for HF datasets.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="CrossAug on the embedded FEVEROUS sample, offline (the main job).")
    demo.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    demo.add_argument("--generator-steps", type=int, default=90, help="training steps for the generator")
    demo.add_argument("--retrain", action="store_true", help="train the generator even if OUT/generator exists")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_cmd_demo)

    ca = sub.add_parser("crossaug", help="CrossAug on a local fact-verification dataset.")
    ca.add_argument("data", help="saved dataset folder or a .json/.jsonl/.csv/.tsv/.parquet file")
    ca.add_argument("--generator", required=True, help="folder or Hub id of a saved cfaug Generator")
    ca.add_argument("--checker", help="folder or Hub id of a saved LabelChecker used as a post-filter")
    ca.add_argument("--out", required=True, help="where to save the augmented dataset")
    ca.add_argument("--claim-column", default="claim")
    ca.add_argument("--evidence-column", default="evidence")
    ca.add_argument("--label-column", default="label")
    ca.add_argument("--id-column", default=None)
    ca.add_argument("--nei", action="store_true", help="labels include NOT ENOUGH INFO")
    ca.add_argument("--max-span-tokens", type=int, default=3, help="tau, the span limit for evidence edits")
    ca.add_argument("--candidates", type=int, default=None,
                    help="outputs per claim from the beam (first acceptable one is used); default the generator's")
    ca.add_argument("--reject-deletions", action="store_true",
                    help="skip rewrites that only delete non-negation words (not in the paper)")
    ca.add_argument("--counterfactuals-only", action="store_true", help="do not emit the original rows")
    ca.add_argument("--batch-size", type=int, default=32)
    ca.add_argument("--num-proc", type=int, default=None)
    ca.add_argument("--seed", type=int, default=0)
    ca.set_defaults(func=_cmd_crossaug)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
