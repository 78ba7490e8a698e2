"""The ``cfaug`` command line.

    cfaug demo [--out runs/demo]                    the main job on the embedded data (see cfaug_hf.demo)
    cfaug crossaug DATA --generator DIR --out DIR   CrossAug on a local JSON/JSONL/CSV/Parquet file or saved dataset
    cfaug push FOLDER REPO_ID [--private]           push a saved component, augmenter or augmented dataset
    cfaug pull REPO_ID FOLDER [--repo-type dataset] download a repository into a folder
    cfaug report ORIGINAL AUGMENTED --out DIR       metrics, shortcut diagnostics and plots of an augmentation

Tokens come from --token, the HF_TOKEN variable or `hf auth login`.
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


def _cmd_push(args: argparse.Namespace) -> None:
    import json

    from .augmenter import AUGMENTER_CONFIG, Augmenter
    from .components import COMPONENT_TYPES

    folder = Path(args.folder)
    if not folder.is_dir():
        raise SystemExit(f"{folder} is not a folder.")
    for cls in COMPONENT_TYPES.values():
        if (folder / cls.config_name).is_file():
            sha = cls.from_pretrained(folder).push_to_hub(args.repo_id, private=args.private, token=args.token)
            print(f"Pushed {cls.__name__} to {args.repo_id} (commit {sha}).")
            return
    if (folder / AUGMENTER_CONFIG).is_file():
        sha = Augmenter.from_pretrained(folder).push_to_hub(args.repo_id, private=args.private, token=args.token)
        print(f"Pushed augmenter to {args.repo_id} (commit {sha}).")
        return
    if any((folder / f).is_file() for f in ("dataset_info.json", "dataset_dict.json", "state.json")):
        from datasets import load_from_disk

        from hub_cards import push_augmented

        augmenter = Augmenter.from_pretrained(args.augmenter) if args.augmenter else None
        if augmenter is None and (folder / "cfaug_augmenter.json").is_file():
            augmenter = Augmenter.from_pretrained(folder)
        dataset = load_from_disk(str(folder))
        sha = push_augmented(dataset, args.repo_id, augmenter=augmenter, source=args.source, private=args.private,
                             token=args.token, license=args.license)
        print(f"Pushed augmented dataset to https://huggingface.co/datasets/{args.repo_id} (card commit {sha}).")
        return
    found = sorted(p.name for p in folder.iterdir())[:10]
    raise SystemExit(f"{folder} is not a saved cfaug component (cfaug_generator.json, cfaug_checker.json), augmenter "
                     f"(cfaug_augmenter.json) or dataset (save_to_disk); it holds {json.dumps(found)}.")


_PRESETS = {"fact-verification": ("fact_verification", ("claim", "evidence")),
            "nli": ("nli", ("premise", "hypothesis")), "sentiment": ("sentiment", ("text",))}


def _schema_from_args(args: argparse.Namespace) -> Any:
    from .schema import TaskSchema

    factory, names = _PRESETS[args.task]
    columns = args.columns.split(",") if args.columns else list(names)
    if len(columns) != len(names):
        raise SystemExit(f"--columns for {args.task} names {len(names)} columns ({','.join(names)}), got "
                         f"{args.columns!r}.")
    kwargs = dict(zip(names, columns), label=args.label_column, id_column=args.id_column)
    if args.task == "fact-verification":
        kwargs["nei"] = args.nei
    return getattr(TaskSchema, factory)(**kwargs)


def _cmd_report(args: argparse.Namespace) -> None:
    from .report import augmentation_report

    schema = _schema_from_args(args)
    original, augmented = _load_local(args.original), _load_local(args.augmented)
    checker = None
    if args.checker:
        from .components import LabelChecker

        checker = LabelChecker.from_pretrained(args.checker)
    models = {} if args.models else {"fluency_model": None, "embedder": None}
    report = augmentation_report(original, augmented, schema, checker=checker, out_dir=args.out,
                                 max_pairs=args.max_pairs, **models)
    print(report.to_markdown())
    print(f"Wrote {', '.join(sorted(report.files.values()))}")


def _cmd_pull(args: argparse.Namespace) -> None:
    from hub_cards import pull

    path = pull(args.repo_id, args.folder, repo_type=args.repo_type, revision=args.revision, token=args.token)
    print(f"Downloaded {args.repo_type} {args.repo_id} to {path}.")


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

    push = sub.add_parser("push", help="Push a saved component, augmenter or augmented dataset to the Hub.")
    push.add_argument("folder", help="a folder written by save_pretrained or Dataset.save_to_disk")
    push.add_argument("repo_id", help="namespace/name on the Hub")
    push.add_argument("--private", action="store_true", default=None, help="create the repository as private")
    push.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the saved login)")
    push.add_argument("--augmenter", help="datasets: folder or repo of the augmenter that made the data")
    push.add_argument("--source", help="datasets: Hub id of the source dataset, as id or id@revision")
    push.add_argument("--license", help="datasets: licence identifier for the card (e.g. cc-by-sa-3.0)")
    push.set_defaults(func=_cmd_push)

    rp = sub.add_parser("report", help="Counts, counterfactual quality and shortcut diagnostics of an augmentation.")
    rp.add_argument("original", help="the input dataset: saved folder or .json/.jsonl/.csv/.tsv/.parquet file")
    rp.add_argument("augmented", help="the augmenter's output (with the cf_* provenance columns)")
    rp.add_argument("--out", required=True, help="folder for report.json, report.md and the competency plots")
    rp.add_argument("--task", choices=sorted(_PRESETS), default="fact-verification")
    rp.add_argument("--columns", help="the text columns in preset order, comma-separated (default claim,evidence / "
                                      "premise,hypothesis / text)")
    rp.add_argument("--label-column", default="label")
    rp.add_argument("--id-column", default=None)
    rp.add_argument("--nei", action="store_true", help="fact verification labels include NOT ENOUGH INFO")
    rp.add_argument("--checker", help="saved LabelChecker (folder or Hub id) for the flip rate")
    rp.add_argument("--no-models", dest="models", action="store_false",
                    help="skip MoverScore, perplexity and multi-hop coherence (no MiniLM/SmolLM2 needed)")
    rp.add_argument("--max-pairs", type=int, default=400, help="pairs sampled for the model-based metrics")
    rp.set_defaults(func=_cmd_report)

    pl = sub.add_parser("pull", help="Download a repository into a folder (it appears only when complete).")
    pl.add_argument("repo_id")
    pl.add_argument("folder")
    pl.add_argument("--repo-type", choices=["model", "dataset"], default="model")
    pl.add_argument("--revision", default=None)
    pl.add_argument("--token", default=None)
    pl.set_defaults(func=_cmd_pull)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
