"""The ``cfaug`` command line.

    cfaug demo [--out runs/demo]                    the main job on the embedded data (see cfaug_hf.demo)
    cfaug crossaug DATA --generator DIR --out DIR   CrossAug on a local JSON/JSONL/CSV/Parquet file or saved dataset
    cfaug augment DATA --method NAME --out DIR      any method (--recipe FILE, --augmenter PATH), here or on Ray
    cfaug train KIND DATA --out DIR                 train a generator, checker, editor, retriever or selector
    cfaug push FOLDER REPO_ID [--private]           push a saved component, augmenter or augmented dataset
    cfaug pull REPO_ID FOLDER [--repo-type dataset] download a repository into a folder
    cfaug report ORIGINAL AUGMENTED --out DIR       metrics, shortcut diagnostics and plots of an augmentation

Tokens come from --token, the HF_TOKEN variable or `hf auth login`. A user error (a missing file, a bad column, a
folder that is not empty) prints one line and exits with status 2; --debug (or CFAUG_DEBUG=1) shows the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from . import registry
from ._version import __version__
from .cli_common import (_AUGMENT_PRESETS, UsageError, add_data_options, load_input, _augment_schema, _check_out, _load_local, _positive_int,
                         add_out_options, parquet_rows, writing_out)


def _cmd_demo(args: argparse.Namespace) -> None:
    from .demo import run_demo

    from .hub import FolderNotEmptyError

    try:
        run_demo(args.out, generator_steps=args.generator_steps, retrain=args.retrain, seed=args.seed,
                 backend=args.backend, rows=args.rows, overwrite=args.overwrite)
    except FolderNotEmptyError as err:
        raise UsageError(f"--out {err}") from None


def _add_backend_option(parser: argparse.ArgumentParser) -> None:
    from .engines import AUTO, engine_names

    parser.add_argument("--backend", choices=(AUTO, *engine_names()), default=AUTO,
                        help="generation engine (cfaug_hf.engines): auto (default) picks, per call, the fastest "
                             "installed one that gives the transformers outputs (CTranslate2 float32 for beams, "
                             "transformers' shared-prefix sampler for sampled candidates)")


def _cmd_crossaug(args: argparse.Namespace) -> None:
    from .components import Generator, LabelChecker
    from .hub import save_dataset
    from .methods.crossaug import CrossAugAugmenter
    from .schema import TaskSchema

    _check_out(args.out, args.data, overwrite=args.overwrite)
    dataset = load_input(args)
    schema = TaskSchema.fact_verification(claim=args.claim_column, evidence=args.evidence_column,
                                          label=args.label_column, nei=args.nei, id_column=args.id_column)
    if args.generator == "default":
        from .methods.crossaug.recipes import default_claim_generator

        generator = default_claim_generator()
    else:
        generator = Generator.from_pretrained(args.generator)
    if args.candidates:
        if generator.config.do_sample:
            raise UsageError(f"--candidates {args.candidates} asks for that many beam-search candidates, but the "
                             f"generator samples (do_sample=True in its config), and sampling with beams is not "
                             f"reproducible per row. Drop --candidates, or use a beam-search generator.")
        generator.configure(num_return_sequences=args.candidates,
                            num_beams=max(generator.config.num_beams, args.candidates))
    generator.use_backend(args.backend)
    checker = None if args.no_checker else LabelChecker.from_pretrained(args.checker) if args.checker else "default"
    augmenter = CrossAugAugmenter(generator, schema, checker=checker, max_span_tokens=args.max_span_tokens,
                                  reject_deletions=not args.allow_deletions,
                                  reject_same_meaning=not args.allow_same_meaning,
                                  keep_original=not args.counterfactuals_only, seed=args.seed)
    augmented = augmenter.augment(dataset, batch_size=args.batch_size, num_proc=args.num_proc)
    save_dataset(augmented, args.out, overwrite=args.overwrite)
    print("\n".join(augmenter.stats.summary_lines()))
    print(f"Saved {len(augmented)} rows to {args.out}")


def _recipe(args: argparse.Namespace) -> tuple[dict[str, Any], Path, str]:
    """The recipe of --method or --recipe with the schema and preset options applied, its folder (component paths
    are relative to it) and how errors name it."""
    from .saving import read_recipe

    if args.recipe:
        recipe, folder, where = read_recipe(args.recipe), Path(args.recipe).resolve().parent, args.recipe
    else:
        recipe, folder, where = {"method": args.method}, Path.cwd(), f"--method {args.method}"
    try:
        entry = registry.method_entry(recipe["method"])
    except KeyError as err:
        raise UsageError(f"{where}: {err.args[0]}") from None
    schema = _augment_schema(args, recipe.get("schema") is None and entry.task or None)
    if schema is not None:
        recipe["schema"] = schema
    if args.preset:
        recipe["preset"] = args.preset
    return recipe, folder, where


def _check_columns(recipe: dict[str, Any], dataset: Any) -> None:
    """Refuse data the method's schema does not fit before the method's models load (seconds, not a minute)."""
    from .provenance import refuse_augmented
    from .schema import TaskSchema

    task = registry.method_entry(recipe["method"]).task
    if dataset.features is None or not (recipe.get("schema") or task):
        return
    refuse_augmented(list(dataset.features))
    schema = TaskSchema.from_dict(recipe["schema"]) if recipe.get("schema") else TaskSchema.preset(task)
    schema.validate_features(dataset.features)


def _build_augmenter(args: argparse.Namespace, dataset: Any, recipe: dict[str, Any], folder: Path,
                     where: str) -> Any:
    """The augmenter of a recipe (see `_recipe`), with the config options and components the user gave."""
    from .augmenter import Augmenter
    from .cli_options import config_values, endpoint_options, given_components, load_component
    from .saving import build_augmenter
    from .schema import TaskSchema

    overrides = config_values(args, getattr(args, "config_fields", {}))
    target = registry.augmenter_class(recipe["method"])
    components = {}
    for role, value in given_components(args, getattr(args, "component_roles", [])).items():
        default = target.roles[role].cli_default if role in target.roles else None
        if value == default and (role in (recipe.get("components") or {}) or "preset" in recipe):
            continue  # an option with a value when not given: the recipe's or the preset's own component stays
        components[role] = load_component(target, role, value, **endpoint_options(args))
    given = {**(recipe.get("config") or {}), **overrides}
    from_data = target.config_from_data(dataset, TaskSchema.from_dict(recipe["schema"])
                                        if recipe.get("schema") else None)
    overrides.update({k: v for k, v in from_data.items() if given.get(k) is None})
    return build_augmenter(Augmenter, recipe, folder, where, **components, **overrides)


def _cmd_augment(args: argparse.Namespace) -> None:
    chosen = [x for x in (args.method, args.augmenter, args.recipe) if x]
    if len(chosen) != 1:
        raise UsageError("give exactly one of --method NAME, --augmenter PATH_OR_HUB_ID and --recipe FILE "
                         "(cfaug augment --method NAME --help lists a method's options).")
    _check_out(args.out, args.data, kind=_AUGMENT_KIND, overwrite=args.overwrite)
    with writing_out(args, _AUGMENT_KIND) as tmp:
        _augment_into(args, tmp)


#: The kind of folder ``cfaug augment`` writes (see cfaug_hf.hub.write_folder).
_AUGMENT_KIND = "augment output"


def _augment_into(args: argparse.Namespace, tmp: Path) -> None:
    """``cfaug augment``'s work, written into ``tmp`` (which becomes --out when it succeeds)."""
    import json

    from .augmenter import Augmenter
    from .hub import save_dataset

    out = Path(args.out)
    if args.augmenter:
        if args.preset:
            raise UsageError("--preset applies to --method and --recipe; a saved augmenter (--augmenter) keeps the "
                             "settings it was saved with.")
        if args.task or args.columns or args.label_column or args.id_column or args.nei:
            raise UsageError("--task, --columns, --label-column, --id-column and --nei apply to --method and "
                             "--recipe; a saved augmenter (--augmenter) keeps the schema it was saved with.")
        augmenter_path = args.augmenter
        augmenter = None if args.engine == "ray" else Augmenter.from_pretrained(args.augmenter)
        dataset = None
    else:
        recipe, folder, where = _recipe(args)
        dataset = load_input(args)
        _check_columns(recipe, dataset)
        augmenter = _build_augmenter(args, dataset, recipe, folder, where)
        try:
            augmenter.save_pretrained(tmp / "augmenter")
            augmenter_path = str(tmp / "augmenter")
        except TypeError as err:  # a component that cannot be saved (a Python callable)
            if args.engine == "ray":
                raise UsageError(f"--engine ray loads the augmenter in each actor from a saved folder, and this one "
                                 f"cannot be saved: {err}") from None
            augmenter_path = None
            print(f"Note: the augmenter was not saved ({err}).")
    for component in (augmenter.components().values() if augmenter is not None else ()):
        if hasattr(component, "use_backend"):  # generators and editors: the engine does not change outputs
            component.use_backend(args.backend)
    if args.engine == "ray":
        from .deps import require
        from .distributed import augment_to_parquet

        ray = require("ray", "--engine ray")
        given = Path(args.data)
        if not given.exists() and dataset is None and not (args.split or args.limit):
            raise UsageError(f"{args.data}: no such file or folder.")
        # Parquet is handed to Ray as files; a split, a row limit or a Hub id is read here first.
        parquet = (given.exists() and not (args.split or args.limit)
                   and (given.suffix.lower() == ".parquet" or (given.is_dir() and any(given.glob("*.parquet")))))
        if parquet and parquet_rows(given) == 0:  # the same answer as a local run, before Ray starts
            raise UsageError(f"{args.data}: no rows (the Parquet data holds only its columns).")
        ray.init(address=args.address, ignore_reinit_error=True, include_dashboard=False)
        data = str(given) if parquet else (dataset if dataset is not None else load_input(args))
        stats = augment_to_parquet(data, augmenter_path, tmp / "data", concurrency=args.concurrency,
                                   batch_size=args.batch_size or 64, num_gpus=args.gpus_per_actor,
                                   imports=args.imports)
        where = f"Parquet files in {out / 'data'}"
    else:
        dataset = dataset if dataset is not None else load_input(args)
        augmenter.fit(dataset)
        augmented = augmenter.augment(dataset, batch_size=args.batch_size, num_proc=args.num_proc)
        if getattr(augmenter, "served_from_cache", False):
            print("The rows came from the datasets cache: this augmenter ran on this data before (set "
                  "HF_DATASETS_CACHE elsewhere, or change an option, to compute them again).")
        save_dataset(augmented, tmp / "data")
        stats, where = augmenter.stats, f"{len(augmented)} rows in {out / 'data'} (load_from_disk)"
    (tmp / "stats.json").write_text(json.dumps(stats.to_dict(), indent=1) + "\n")
    print("\n".join(stats.summary_lines()))
    print(f"Saved {where} (statistics in stats.json)")
    if augmenter_path and not args.augmenter:
        saved = out / "augmenter"
        print(f"The augmenter is in {saved}: `cfaug augment DATA --augmenter {saved} --out DIR` reruns it exactly.")


def _cmd_amplify(args: argparse.Namespace) -> None:
    import json

    from .amplify import amplify
    from .hub import save_dataset

    if args.task == "fact-verification":
        raise UsageError("amplify edits sentiment-style texts or NLI hypotheses; use --task sentiment or nli.")
    schema = _schema_from_args(args)
    _check_out(args.out, args.data, kind="amplify output", overwrite=args.overwrite)
    dataset = _load_local(args.data, split=args.split)  # amplify's --limit is the sample it edits
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


def _cmd_push(args: argparse.Namespace) -> None:
    import json

    from .augmenter import AUGMENTER_CONFIG, Augmenter
    from .components import COMPONENT_TYPES

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder (expected a folder written by save_pretrained or save_to_disk).")
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

        from .sharing import push_augmented

        augmenter = Augmenter.from_pretrained(args.augmenter) if args.augmenter else None
        if augmenter is None and (folder / "cfaug_augmenter.json").is_file():
            augmenter = Augmenter.from_pretrained(folder)
        dataset = load_from_disk(str(folder))
        report = None
        if args.report:
            from .report import AugmentationReport

            try:
                report = AugmentationReport.load(args.report)
            except (FileNotFoundError, ValueError) as err:
                raise UsageError(f"--report: {err}") from None
            try:
                from .sharing.push import check_report_matches

                check_report_matches(report, dataset)
            except ValueError as err:
                raise UsageError(f"--report {args.report}: {err}") from None
        sha = push_augmented(dataset, args.repo_id, augmenter=augmenter, source=args.source, private=args.private,
                             token=args.token, license=args.license, report=report)
        from huggingface_hub import constants

        print(f"Pushed augmented dataset to {constants.ENDPOINT}/datasets/{args.repo_id} (card commit {sha}).")
        return
    found = sorted(p.name for p in folder.iterdir())[:10]
    raise UsageError(f"{folder} is not a saved cfaug component (cfaug_generator.json, cfaug_checker.json), augmenter "
                     f"(cfaug_augmenter.json) or dataset (save_to_disk); it holds {json.dumps(found)}.")


#: The presets ``cfaug report`` and ``cfaug amplify`` offer (a subset of `_AUGMENT_PRESETS`).
_PRESETS = {name: _AUGMENT_PRESETS[name] for name in ("fact-verification", "nli", "sentiment")}


def _schema_from_args(args: argparse.Namespace) -> Any:
    from .schema import TaskSchema

    return TaskSchema.from_dict(_augment_schema(args))


def _cmd_report(args: argparse.Namespace) -> None:
    from .report import augmentation_report

    schema = _schema_from_args(args)
    _check_out(args.out, args.original, args.augmented, kind="report", overwrite=args.overwrite)
    original, augmented = _load_local(args.original), _load_local(args.augmented)
    checker = None
    if args.checker:
        from .components import LabelChecker

        checker = LabelChecker.from_pretrained(args.checker)
    models = {} if args.models else {"fluency_model": None, "embedder": None}
    report = augmentation_report(original, augmented, schema, checker=checker, out_dir=args.out,
                                 max_pairs=args.max_pairs, overwrite=args.overwrite, **models)
    print(report.to_markdown())
    print(f"Wrote {', '.join(sorted(report.files.values()))}")


def _cmd_pull(args: argparse.Namespace) -> None:
    from .sharing import pull

    path = pull(args.repo_id, args.folder, repo_type=args.repo_type, revision=args.revision, token=args.token,
                overwrite=args.overwrite)
    print(f"Downloaded {args.repo_type} {args.repo_id} to {path}.")


def _method_in(argv: list[str] | None) -> str | None:
    """The method an ``augment`` command line names with --method, or a --recipe file's method, so that its
    options can be added before parsing (None when neither is there or the recipe cannot be read)."""
    argv = list(argv or [])
    if "augment" not in argv:
        return None
    for i, token in enumerate(argv):
        for flag in ("--method", "--recipe"):
            value = token[len(flag) + 1:] if token.startswith(flag + "=") else (
                argv[i + 1] if token == flag and i + 1 < len(argv) else None)
            if value is None:
                continue
            if flag == "--method":
                return value
            try:
                from .saving import read_recipe

                return read_recipe(value)["method"]
            except Exception:  # the command reports a bad recipe itself, with its message
                return None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``cfaug`` parser; ``argv`` lets ``augment --method NAME`` (or ``--recipe FILE``) add that method's
    options."""
    from .registry import method_names

    methods = method_names()
    parser = argparse.ArgumentParser(
        prog="cfaug", description="Counterfactual data augmentation for Hugging Face datasets: run a method, report "
                                  "on its output, share components and data on the Hub.")
    parser.add_argument("--debug", action="store_true", default=os.environ.get("CFAUG_DEBUG") == "1",
                        help="show the full traceback of an error (also CFAUG_DEBUG=1)")
    parser.add_argument("--version", action="version", version=f"cfaug {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log more (-v info, -vv debug); CFAUG_VERBOSITY sets the default")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=summary, description=description)

    demo = command("demo", "CrossAug on the embedded FEVEROUS sample, offline (the main job).",
                   "Load the negative-claim generator shipped in the package (or one trained earlier in "
                   "OUT/generator; --retrain trains one), augment --rows claims of the 300-row "
                   "FEVEROUS sample shipped in the package with CrossAug, and write the augmented dataset, JSONL, "
                   "stats and a report into OUT. No Hub access is needed.")
    add_out_options(demo, "the demo's data, statistics and report", default="runs/demo")
    demo.add_argument("--generator-steps", type=_positive_int, default=60,
                      help="training steps for the generator (default 60)")
    demo.add_argument("--retrain", action="store_true",
                      help="train a generator (--generator-steps) into OUT/generator instead of using the shipped one")
    demo.add_argument("--rows", type=_positive_int, default=100,
                      help="claims to augment, a seeded sample of the 300 shipped (default 100; 300 takes about "
                           "three times as long)")
    demo.add_argument("--seed", type=int, default=0, help="seed for training and augmentation (default 0)")
    _add_backend_option(demo)
    demo.set_defaults(func=_cmd_demo)

    au = command("augment", "Run any method, recipe or saved augmenter on a local dataset, here or on Ray.",
                 "Augment DATA with a registered method (--method NAME; `cfaug augment --method NAME --help` lists "
                 "its options, generated from its config), a recipe file (--recipe FILE: YAML or JSON with method, "
                 "schema, config and components, e.g. recipes/*.yaml or a pulled dataset's "
                 "augmenter/cfaug_augmenter.json) or a saved augmenter (--augmenter PATH_OR_HUB_ID). OUT/data holds "
                 "the rows (save_to_disk; Parquet with --engine ray), OUT/stats.json the statistics and "
                 "OUT/augmenter the augmenter, so --augmenter OUT/augmenter reruns it exactly.")
    au.add_argument("data", help="saved dataset folder, a .json/.jsonl/.csv/.tsv/.parquet file, a Parquet folder, or "
                                 "a Hub dataset id")
    add_data_options(au)
    what = au.add_mutually_exclusive_group()
    what.add_argument("--method", choices=methods, help="a registered method: " + ", ".join(methods))
    what.add_argument("--recipe", help="a recipe file (YAML or JSON)")
    what.add_argument("--augmenter", help="folder or Hub id of a saved augmenter")
    add_out_options(au, "data/, stats.json and the saved augmenter")
    au.add_argument("--preset", choices=["paper"], default=None,
                    help="start from a named setting of the method: 'paper' is the published algorithm and "
                         "settings, each value cited in cfaug_hf/methods/METHOD/paper.py (other options given here "
                         "override it)")
    au.add_argument("--task", choices=sorted(_AUGMENT_PRESETS), default=None,
                    help="task preset naming the columns (default: the recipe's schema, or the method's default "
                         "task)")
    au.add_argument("--columns", help="the text columns in preset order, comma-separated (claim,evidence / "
                                      "premise,hypothesis / text / tokens)")
    au.add_argument("--label-column", default=None, help="column holding the label (tags for token-classification)")
    au.add_argument("--id-column", default=None, help="column with a stable row id used as cf_source_id")
    au.add_argument("--nei", action="store_true", help="fact-verification labels include NOT ENOUGH INFO")
    au.add_argument("--engine", choices=("local", "ray"), default="local", help="where to run (default local)")
    au.add_argument("--address", default=None,
                    help="Ray cluster address (auto: the running cluster; default: start a local Ray instance)")
    au.add_argument("--concurrency", type=_positive_int, default=1, help="Ray actors (default 1)")
    au.add_argument("--gpus-per-actor", type=float, default=0, help="GPU fraction per Ray actor (default 0)")
    au.add_argument("--imports", nargs="*", default=[],
                    help="modules each Ray actor imports first (those defining augmenters of your own)")
    au.add_argument("--batch-size", type=_positive_int, default=None,
                    help="rows per map batch (local: automatic; Ray: rows per actor call, default 64)")
    au.add_argument("--num-proc", type=_positive_int, default=None, help="local worker processes (default none)")
    _add_backend_option(au)
    method = _method_in(argv)
    if method in methods:
        from .cli_options import add_component_options, add_config_options
        from .registry import method_entry

        entry = method_entry(method)  # the declaration only: the method's models load when the command runs
        roles = add_component_options(au, entry.roles, method)
        au.set_defaults(config_fields=add_config_options(au, entry.config, method=method),
                        component_roles=roles)
    au.set_defaults(func=_cmd_augment)

    ca = command("crossaug", "CrossAug on a local fact-verification dataset.",
                 "Augment a fact-verification dataset (claim, evidence, SUPPORTS/REFUTES labels) with CrossAug "
                 "(Lee et al., 2021) using a saved negative-claim generator; the result, with provenance columns, is "
                 "saved with Dataset.save_to_disk.")
    ca.add_argument("data", help="saved dataset folder, a .json/.jsonl/.csv/.tsv/.parquet file or a Hub dataset id")
    add_data_options(ca)
    ca.add_argument("--generator", default="default",
                    help="folder or Hub id of a saved cfaug Generator (default: the negative-claim generator shipped "
                         "in the package)")
    checker = ca.add_mutually_exclusive_group()
    checker.add_argument("--checker", help="folder or Hub id of a saved LabelChecker that must confirm each "
                                           "counterfactual's label (default: the checker shipped for fact "
                                           "verification)")
    checker.add_argument("--no-checker", action="store_true", help="keep counterfactuals without a label check "
                                                                    "(the paper's method)")
    add_out_options(ca, "the augmented dataset")
    ca.add_argument("--claim-column", default="claim", help="column holding the claim (default claim)")
    ca.add_argument("--evidence-column", default="evidence",
                    help="column holding the evidence: a string or a list of strings (default evidence)")
    ca.add_argument("--label-column", default="label", help="column holding the label (default label)")
    ca.add_argument("--id-column", default=None, help="column with a stable row id used as cf_source_id")
    ca.add_argument("--nei", action="store_true", help="labels include NOT ENOUGH INFO")
    ca.add_argument("--max-span-tokens", type=_positive_int, default=3,
                    help="tau, the span limit for evidence edits (default 3)")
    _add_backend_option(ca)
    ca.add_argument("--candidates", type=_positive_int, default=None,
                    help="outputs per claim from the beam (first acceptable one is used); default the generator's")
    ca.add_argument("--allow-deletions", action="store_true",
                    help="keep rewrites that only delete words (the paper's behaviour; they are usually mislabelled)")
    ca.add_argument("--allow-same-meaning", action="store_true",
                    help="keep rewrites that only change a word's form, spelling or abbreviation (the paper's "
                         "behaviour; they are not negations)")
    ca.add_argument("--reject-deletions", action="store_true",
                    help="deprecated: rejecting deletion-only rewrites is now the default")
    ca.add_argument("--counterfactuals-only", action="store_true", help="do not emit the original rows")
    ca.add_argument("--batch-size", type=_positive_int, default=None,
                    help="rows per map batch (default: rows/100, between 32 and 1000)")
    ca.add_argument("--num-proc", type=_positive_int, default=None, help="worker processes for the map")
    ca.add_argument("--seed", type=int, default=0, help="augmenter seed (default 0)")
    ca.set_defaults(func=_cmd_crossaug)

    am = command("amplify", "Annotate a few rows, let an editor learned from them write the rest.",
                 "Train a counterfactual editor (SmolLM2-135M with LoRA by default) on the rows of DATA that have a "
                 "human counterfactual in --counterfactual-column (empty or null elsewhere), then write "
                 "counterfactuals for the other rows, checked by the flip checker shipped for the task. Writes "
                 "OUT/data (originals, human and editor counterfactuals, with provenance) and OUT/report.json.")
    am.add_argument("data", help="saved dataset folder, a .json/.jsonl/.csv/.tsv/.parquet file or a Hub dataset id")
    am.add_argument("--split", default=None,
                    help="the split to read from a saved DatasetDict folder or a Hub dataset (default train)")
    add_out_options(am, "data/ and report.json")
    am.add_argument("--task", choices=["sentiment", "nli"], default="sentiment", help="task preset (default "
                                                                                       "sentiment)")
    am.add_argument("--columns", help="the text columns in preset order, comma-separated (default text / "
                                      "premise,hypothesis)")
    am.add_argument("--label-column", default="label", help="column holding the label (default label)")
    am.add_argument("--id-column", default=None, help="column with a stable row id used as cf_source_id")
    am.add_argument("--counterfactual-column", default="counterfactual",
                    help="column with each annotated row's human counterfactual (default counterfactual)")
    am.add_argument("--target-column", help="column with each human counterfactual's label (needed with more "
                                            "than two labels)")
    am.add_argument("--editor", default="HuggingFaceTB/SmolLM2-135M-Instruct",
                    help="causal LM to train the editor from, or a saved Editor folder (default SmolLM2-135M)")
    am.add_argument("--epochs", type=float, default=1.0, help="editor training epochs (default 1)")
    am.add_argument("--max-steps", type=int, default=None, help="stop editor training after this many steps "
                                                                "(0: use --editor as it is)")
    am.add_argument("--train-batch-size", type=_positive_int, default=8, help="editor training batch (default 8)")
    am.add_argument("--edit-sentences", type=int, default=None,
                    help="sentences rewritten per text (default 3; 0 rewrites whole texts; NLI edits hypotheses)")
    am.add_argument("--limit", type=_positive_int, default=None, help="edit a seeded sample of this many rows")
    am.add_argument("--folds", type=_positive_int, default=None,
                    help="cross-fitting: split the rows into this many folds (at least 2) and let the editor trained "
                         "on the other folds' annotations write for each fold, so every row gets a machine "
                         "counterfactual from an editor that never saw its human pair (trains that many editors)")
    am.add_argument("--no-human", action="store_true",
                    help="leave the annotators' counterfactuals out of the output (the fully automatic data set)")
    chk = am.add_mutually_exclusive_group()
    chk.add_argument("--checker", help="folder or Hub id of the flip checker (default: the one shipped for the "
                                       "task)")
    chk.add_argument("--no-checker", action="store_true", help="keep the editor's first candidate unchecked")
    am.add_argument("--nei", action="store_true", help=argparse.SUPPRESS)
    am.add_argument("--seed", type=int, default=0, help="seed for training and editing (default 0)")
    am.set_defaults(func=_cmd_amplify)

    from .cli_train import add_train_parser

    add_train_parser(command)

    push = command("push", "Push a saved component, augmenter or augmented dataset to the Hub.",
                   "Push a folder written by save_pretrained (generator, checker, rationale selector, augmenter) "
                   "or by Dataset.save_to_disk (augmented data) to the Hub with a model or dataset card, in one "
                   "commit.")
    push.add_argument("folder", help="a folder written by save_pretrained or Dataset.save_to_disk")
    push.add_argument("repo_id", help="namespace/name on the Hub")
    push.add_argument("--private", action="store_true", default=None, help="create the repository as private")
    push.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the saved login)")
    push.add_argument("--augmenter", help="datasets: folder or repo of the augmenter that made the data")
    push.add_argument("--source", help="datasets: Hub id of the source dataset, as id or id@revision")
    push.add_argument("--license", help="datasets: licence identifier for the card (e.g. cc-by-sa-3.0; default: the "
                                      "source dataset's where it declares one, else unknown)")
    push.add_argument("--report", help="datasets: a folder written by `cfaug report --out` whose counts, quality "
                                       "and shortcut diagnostics go into the dataset card")
    push.set_defaults(func=_cmd_push)

    rp = command("report", "Counts, counterfactual quality and shortcut diagnostics of an augmentation.",
                 "Compare an augmenter's output with its input: counts by label and kind, skip reasons, edit "
                 "distance, BLEU diversity, perturbation types, MoverScore and perplexity (unless --no-models), "
                 "and the competency test and claim-only probe before and after.")
    rp.add_argument("original", help="the input dataset: saved folder or .json/.jsonl/.csv/.tsv/.parquet file")
    rp.add_argument("augmented", help="the augmenter's output (with the cf_* provenance columns)")
    add_out_options(rp, "report.json, report.md and the plots")
    rp.add_argument("--task", choices=sorted(_PRESETS), default="fact-verification",
                    help="the task preset naming the text columns (default fact-verification)")
    rp.add_argument("--columns", help="the text columns in preset order, comma-separated (default claim,evidence / "
                                      "premise,hypothesis / text)")
    rp.add_argument("--label-column", default="label", help="column holding the label (default label)")
    rp.add_argument("--id-column", default=None, help="the id column the augmenter used for cf_source_id")
    rp.add_argument("--nei", action="store_true", help="fact verification labels include NOT ENOUGH INFO")
    rp.add_argument("--checker", help="saved LabelChecker (folder or Hub id) for the flip rate")
    rp.add_argument("--no-models", dest="models", action="store_false",
                    help="skip MoverScore, perplexity and multi-hop coherence (no MiniLM/SmolLM2 needed)")
    rp.add_argument("--max-pairs", type=_positive_int, default=400,
                    help="pairs sampled for the model-based metrics (default 400)")
    rp.set_defaults(func=_cmd_report)

    pl = command("pull", "Download a repository into a folder (it appears only when complete).",
                 "Download a Hub repository into FOLDER. FOLDER must be new, empty, or an earlier pull or save of "
                 "the same kind of object (it is then updated; files you added are kept). A non-empty folder "
                 "holding anything else is refused unless --overwrite; no file of yours is ever deleted.")
    pl.add_argument("repo_id", help="namespace/name on the Hub")
    pl.add_argument("folder", help="where to put the files")
    pl.add_argument("--repo-type", choices=["model", "dataset"], default="model",
                    help="model (components, augmenters) or dataset (augmented data); default model")
    pl.add_argument("--revision", default=None, help="branch, tag or commit (default main)")
    pl.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the saved login)")
    pl.add_argument("--overwrite", action="store_true",
                    help="write into a non-empty folder of another kind (same-named files are replaced)")
    pl.set_defaults(func=_cmd_pull)
    return parser


def _user_error_types() -> tuple[type[BaseException], ...]:
    from .hub import ComponentLoadError, FolderNotEmptyError, HubError
    from .schema import SchemaError

    types: list[type[BaseException]] = [UsageError, SchemaError, ComponentLoadError, HubError, FolderNotEmptyError,
                                        FileNotFoundError, PermissionError, ValueError, TypeError]
    if "datasets" in sys.modules:
        from datasets.exceptions import DatasetGenerationError

        types.append(DatasetGenerationError)
    return tuple(types)


def _message(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    cause = err.__cause__ or err.__context__
    # datasets wraps a malformed file in "An error occurred while generating the dataset"; the cause says where.
    if cause is not None and type(err).__name__ == "DatasetGenerationError":
        text = f"{text}: {str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__}"
    text = text.splitlines()[0] if len(text.splitlines()) > 3 else " ".join(text.split())
    if len(text) > _MAX_MESSAGE:  # an error that quotes a huge input (a value, a file's content) stays readable
        text = f"{text[:_MAX_MESSAGE]}... ({len(text) - _MAX_MESSAGE} more characters)"
    return text


#: Longest error message the command line prints.
_MAX_MESSAGE = 2000


def _in_flag_terms(text: str, parser: argparse.ArgumentParser, command: str) -> str:
    """A library error in the command line's words: ``retriever=`` becomes ``--retriever``, ``mode='editor_only'``
    becomes ``--mode editor_only`` and "Pass a TaskSchema" names ``--task`` and ``--columns``, for the options this
    command has (the library's messages name Python arguments, which a command-line user never typed)."""
    import re

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sub = subs[0].choices.get(command) if subs else None
    if sub is None:
        return text
    flags: dict[str, str] = {}
    for action in sub._actions:
        long = [o for o in action.option_strings if o.startswith("--")]
        if long:
            flags.setdefault(action.dest[4:] if action.dest.startswith("cfg_") else action.dest, long[0])
    if "task" in flags and "columns" in flags:
        text = text.replace("Pass a TaskSchema with the right names.",
                            "Name the columns with --task and --columns (and --label-column for the label).")

    def option(match: re.Match) -> str:
        flag = flags.get(match.group(1))
        if flag is None:
            return match.group(0)
        value = (match.group(2) or "").strip("'\"")
        return f"{flag} {value}" if value else flag

    # "COREAugmenter(mode='core') needs ..." reads "COREAugmenter with --mode core needs ..."
    text = re.sub(r"\b([A-Z]\w*)\((\w+=[^()]*)\)", lambda m: f"{m.group(1)} with {m.group(2)}", text)
    return re.sub(r"(?<![\w.-])([a-z][a-z_]*)=('[^']*'|\"[^\"]*\"|[\w./-]+)?", option, text)


#: Commands whose first argument is a dataset (file, folder or Hub id), checked before the method imports.
_DATA_COMMANDS = {"augment": 1, "crossaug": 1, "amplify": 1, "report": 2}


def _missing_input(argv: list[str]) -> str | None:
    """The first dataset argument that names a local file that is not there, found before the parser imports the
    methods (torch, transformers: seconds), so the commonest mistake is answered at once."""
    if not argv or argv[0] not in _DATA_COMMANDS or any(a in ("-h", "--help") for a in argv):
        return None
    for arg in argv[1:1 + _DATA_COMMANDS[argv[0]]]:
        if arg.startswith("-"):
            return None
        path = Path(arg)
        if not path.exists() and path.suffix.lower().lstrip(".") in ("json", "jsonl", "csv", "tsv", "parquet"):
            return f"cfaug {argv[0]}: error: {arg}: no such file or folder."
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    missing = _missing_input(argv)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.verbose:
        from .verbosity import set_verbosity

        set_verbosity("debug" if args.verbose > 1 else "info")
    try:
        args.func(args)
    except KeyboardInterrupt:
        print("cfaug: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if args.debug:
            raise
        user = isinstance(err, _user_error_types())
        message = _in_flag_terms(_message(err), parser, args.command) if user else _message(err)
        print(f"cfaug {args.command}: error: {message}", file=sys.stderr)
        if not user:
            print(f"cfaug {args.command}: this looks like a bug ({type(err).__name__}); rerun with --debug for the "
                  f"traceback and report it.", file=sys.stderr)
        return 2 if user else 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
