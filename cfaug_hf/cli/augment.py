"""``cfaug augment``: any method, recipe or saved augmenter on a dataset, here or on Ray.

``--method NAME`` (or a ``--recipe`` file's method) adds that method's options, generated from its declaration
(`cfaug_hf.registry.register_method`: config fields and component roles) without importing its models, and the data's
columns are checked against the method's task before they load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from .. import registry
from ..sharing.consent import allowing, endpoint_components
from ..sharing.row_files import FORMATS, write_rows
from .base import (Command, UsageError, add_allow_endpoint_option, add_backend_option, add_data_options,
                   add_out_options, add_schema_options, add_token_option, allowing_given_endpoints, check_out,
                   check_repo_id, positive_int, schema_options, writing_out)
from .data import DATA_FILES, load_input, parquet_rows

#: The kind of folder ``cfaug augment`` writes (see cfaug_hf.sharing.folders.write_folder).
KIND = "augment output"


class AugmentCommand(Command):
    name = "augment"
    summary = "Run any method, recipe or saved augmenter on a local dataset, here or on Ray."
    description = ("Augment DATA with a registered method (--method NAME; `cfaug augment --method NAME --help` lists "
                   "its options, generated from its config), a recipe file (--recipe FILE: YAML or JSON with method, "
                   "schema, config and components, e.g. recipes/*.yaml or a pulled dataset's "
                   "augmenter/cfaug_augmenter.json) or a saved augmenter (--augmenter PATH_OR_HUB_ID). OUT/data holds "
                   "the rows (save_to_disk; Parquet with --runner ray), OUT/stats.json the statistics and "
                   "OUT/augmenter the augmenter, so --augmenter OUT/augmenter reruns it exactly.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        methods = registry.method_names()
        parser.add_argument("data", help=f"saved dataset folder, {DATA_FILES}, a Parquet folder, or a Hub "
                                          "dataset id")
        add_data_options(parser)
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--method", choices=methods, help="a registered method: " + ", ".join(methods))
        what.add_argument("--recipe", help="a recipe file (YAML or JSON)")
        what.add_argument("--augmenter", help="folder or Hub id of a saved augmenter")
        add_out_options(parser, "data/, stats.json and the saved augmenter")
        parser.add_argument("--preset", choices=["paper"], default=None,
                            help="start from a named setting of the method: 'paper' is the published algorithm and "
                                 "settings, each value cited in cfaug_hf/methods/METHOD/paper.py (other options given "
                                 "here override it)")
        add_schema_options(parser, task_help="task preset naming the columns (default: the recipe's schema, or the "
                                             "method's own task, which --columns alone modifies)")
        parser.add_argument("--runner", "--engine", dest="runner", choices=("local", "ray"), default="local",
                            help="where to run: this process, or Ray actors [local] (--engine: the old name, kept "
                                 "for this release)")
        parser.add_argument("--address", default=None,
                            help="Ray cluster address (auto: the running cluster; default: start a local Ray instance)")
        parser.add_argument("--concurrency", type=positive_int, default=1, help="Ray actors (default 1)")
        parser.add_argument("--gpus-per-actor", type=float, default=0, help="GPU fraction per Ray actor (default 0)")
        parser.add_argument("--imports", nargs="*", default=[],
                            help="modules each Ray actor imports first (those defining augmenters of your own)")
        parser.add_argument("--batch-size", type=positive_int, default=None,
                            help="rows per map batch (local: automatic; Ray: rows per actor call, default 64)")
        parser.add_argument("--num-proc", type=positive_int, default=None, help="local worker processes (default none)")
        parser.add_argument("--format", choices=OUTPUT_FORMATS, default="dataset",
                            help="how OUT/data is written: 'dataset' (a folder for load_from_disk, the default), "
                                 "'jsonl', 'csv' (list cells as JSON text) or 'parquet' (OUT/data.jsonl, ...)")
        parser.add_argument("--checkpoint-rows", type=positive_int, default=256,
                            help="local: rows per saved part (default 256); a killed run, started again with the "
                                 "same command, reads its finished parts back (kept beside the input's datasets cache files, "
                                 "or in OUT.parts/ for in-memory data) and goes on")
        parser.add_argument("--push-to-hub", metavar="REPO", default=None,
                            help="then push OUT's rows to this Hub dataset repository with a dataset card (the "
                                 "augmenter, the Hub input's id and revision), as `cfaug push OUT/data REPO` does")
        parser.add_argument("--private", action="store_true", default=None,
                            help="with --push-to-hub: create the repository as private")
        parser.add_argument("--license", help="with --push-to-hub: licence identifier for the card (default: the "
                                              "source dataset's where it declares one)")
        add_token_option(parser)
        add_backend_option(parser)
        add_allow_endpoint_option(parser)
        method = method_in(argv)
        if method in methods:
            from .options import add_component_options, add_config_options

            entry = registry.method_entry(method)  # the declaration only: the models load when the command runs
            roles = add_component_options(parser, entry.roles, method)
            parser.set_defaults(config_fields=add_config_options(parser, entry.config, method=method),
                                component_roles=roles)

    def run(self, args: argparse.Namespace) -> None:
        chosen = [x for x in (args.method, args.augmenter, args.recipe) if x]
        if len(chosen) != 1:
            raise UsageError("give exactly one of --method NAME, --augmenter PATH_OR_HUB_ID and --recipe FILE "
                             "(cfaug augment --method NAME --help lists a method's options).")
        if args.runner == "ray" and args.format not in ("dataset", "parquet"):
            raise UsageError(f"--format {args.format} needs --runner local: Ray actors write Parquet files "
                             f"(OUT/data/*.parquet); use --format parquet, or convert them after.")
        if args.push_to_hub is None and (args.private or args.license):
            raise UsageError(f"{'--private' if args.private else '--license'} applies with --push-to-hub REPO.")
        if args.push_to_hub is not None:
            check_repo_id(args.push_to_hub, "--push-to-hub")  # before any model loads
        check_out(args.out, args.data, kind=KIND, overwrite=args.overwrite)
        with allowing_given_endpoints(args), writing_out(args, KIND) as tmp:
            augmenter, dataset, written = augment_into(args, tmp)
        if args.push_to_hub is not None:
            from .push import push_rows

            # the Hub input itself (its id and revision go into the card); local data: its counts only
            push_rows(args, Path(args.out) / written, augmenter=augmenter, source=dataset)


def method_in(argv: list[str] | None) -> str | None:
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
                from ..assembly import read_recipe

                return read_recipe(value)["method"]
            except Exception:  # the command reports a bad recipe itself, with its message
                return None
    return None


def recipe_of(args: argparse.Namespace) -> tuple[dict[str, Any], Path, str]:
    """The recipe of --method or --recipe with the schema and preset options applied, its folder (component paths
    are relative to it) and how errors name it."""
    from ..assembly import read_recipe

    if args.recipe:
        recipe, folder, where = read_recipe(args.recipe), Path(args.recipe).resolve().parent, args.recipe
    else:
        recipe, folder, where = {"method": args.method}, Path.cwd(), f"--method {args.method}"
    try:
        entry = registry.method_entry(recipe["method"])
    except KeyError as err:
        raise UsageError(f"{where}: {err.args[0]}") from None
    schema = schema_options(args, recipe.get("schema") is None and entry.task or None)
    if schema is not None:
        recipe["schema"] = schema
    if args.preset:
        recipe["preset"] = args.preset
    return recipe, folder, where


def check_columns(recipe: dict[str, Any], dataset: Any) -> None:
    """Refuse data the method's schema does not fit before the method's models load (seconds, not a minute): the
    columns, their types, the labels, and the text cells of the first `PREFLIGHT_ROWS` rows."""
    from ..provenance import refuse_augmented
    from ..schema import TaskSchema

    task = registry.method_entry(recipe["method"]).task
    if dataset.features is None or not (recipe.get("schema") or task):
        return
    refuse_augmented(list(dataset.features))
    schema = TaskSchema.from_dict(recipe["schema"]) if recipe.get("schema") else TaskSchema.preset(task)
    _check_all_columns(schema, dataset.features, recipe["method"])
    schema.validate_features(dataset.features)
    _check_labels(schema, dataset)
    _check_cells(schema, dataset)


#: Column names that usually hold a row's label, for the suggestion of --label-column.
_LABEL_NAMES = ("label", "labels", "gold_label", "sentiment", "class", "target", "verdict", "y", "category")
#: Rows whose text cells are checked before any model loads (the rest are checked as they are augmented).
PREFLIGHT_ROWS = 100_000


def _id_like(name: str) -> bool:
    low = name.casefold()
    return low in ("id", "idx", "index", "uid", "guid", "key", "row") or low.endswith(("_id", "-id", " id", "_idx"))


def _text_like(feature: Any) -> bool:
    """A column that can hold a text a method reads: strings, lists of strings, or mixed (checked cell by cell)."""
    dtype = getattr(feature, "dtype", None) or getattr(getattr(feature, "feature", None), "dtype", None)
    return type(feature).__name__ == "Json" or dtype in ("string", "large_string")


def _methods_for(count: int, tokens: bool) -> list[str]:
    """The registered methods whose task reads ``count`` text columns (token lists when ``tokens``)."""
    from ..schema import TaskSchema

    registry.method_names()
    found = []
    for name, entry in sorted(registry.METHODS.items()):
        schema = TaskSchema.preset(entry.task) if entry.task else None
        if schema is not None and len(schema.text_columns) == count and schema.is_token_level == tokens:
            found.append(name)
    return found


def _check_all_columns(schema: Any, features: Any, method: str = "") -> None:
    """Every column the schema needs and the data lacks, in one message, with the options that would map the
    columns present (a review file with ``review`` and ``sentiment`` gets ``--columns review --label-column
    sentiment``; a claim column named ``statement`` gets ``--columns statement,evidence``, in the method's order), or
    the methods that fit the data when this one cannot (a review file given to CrossAug)."""
    from ..schema import SchemaError

    present = list(features)
    needed = [*schema.text_columns, schema.label_column] + ([schema.id_column] if schema.id_column else [])
    missing = [c for c in needed if c not in present]
    if not missing:
        return
    spare = [c for c in present if c not in needed]
    label = schema.label_column if schema.label_column in present else next(
        (c for c in spare if c.casefold() in _LABEL_NAMES), None)
    texts = [c for c in spare if c != label and not _id_like(c) and _text_like(features[c])]
    what = f"Column {missing[0]!r} is missing" if len(missing) == 1 else f"Columns {missing} are missing"
    reads = (f"The method reads the text from {list(schema.text_columns)} and the label from "
             f"{schema.label_column!r}")
    missing_texts = [c for c in schema.text_columns if c not in present]
    kept_texts = [c for c in schema.text_columns if c in present]
    if missing_texts and len(texts) < len(missing_texts):
        have = kept_texts + texts
        tokens = any(type(features[c]).__name__ in ("List", "Sequence", "LargeList") for c in have)
        fits = [m for m in _methods_for(len(have), tokens) if m != method] if have else []
        kind = {"fact-verification": "claims with their evidence", "nli": "premise and hypothesis pairs"}.get(
            schema.task, f"{len(schema.text_columns)} text column(s)")
        shown = f"{len(have)} text column(s) ({', '.join(map(repr, have))})" if have else "no text column"
        advice = (f"; for data like this try --method {fits[0]}" + (f" (or {', '.join(fits[1:])})" if fits[1:]
                                                                     else "") if fits else "")
        raise SchemaError(f"{what}; the data has {present}. {reads}: {method or 'this method'} needs {kind}, and the "
                          f"data has {shown}{advice}.")
    hint, unmapped = [], False
    if missing_texts:
        unmapped = len(texts) != len(missing_texts)  # a guess only when the spare columns fit exactly
        spare_texts = iter(texts)
        hint.append(f"--columns {','.join(c if c in present else next(spare_texts, c) for c in schema.text_columns)}")
    if schema.label_column in missing:
        unmapped = unmapped or label is None
        hint.append(f"--label-column {label}")
    if schema.id_column in missing:
        hint.append("--id-column NAME (or none: rows are then identified by their content)")
    raise SchemaError(f"{what}; the data has {present}. {reads}; "
                      + ("name the columns with --task and --columns (and --label-column for the label)."
                         if unmapped else f"try {' '.join(hint)}."))


def _check_cells(schema: Any, dataset: Any) -> None:
    """The text cells of the first `PREFLIGHT_ROWS` rows, before any model loads: an empty or non-string cell is
    found in seconds instead of after the models (a minute); the message says when rows past the scan remain."""
    from ..schema import SchemaError

    n = min(len(dataset), PREFLIGHT_ROWS)
    columns = [*schema.text_columns, schema.label_column]
    for start in range(0, n, 10_000):
        batch = dataset.select_columns(columns)[start:min(start + 10_000, n)]
        try:
            schema.validate_batch(batch, list(range(start, start + len(batch[columns[0]]))))
        except SchemaError as err:
            scanned = "" if n == len(dataset) else (f" (found before any model loaded, in the first {n} of "
                                                    f"{len(dataset)} rows; the rest are checked as they run)")
            raise SchemaError(f"{err}{scanned}") from None


def _check_labels(schema: Any, dataset: Any) -> None:
    """Every label value of the data is one the schema knows, before any model loads (one pass over one column)."""
    from ..schema import SchemaError

    if schema.is_token_level or not hasattr(dataset, "unique"):
        return
    from ..schema import _mixed_types

    feature = (dataset.features or {}).get(schema.label_column)
    if _mixed_types(feature):  # names in some rows, ids in others: Arrow's unique() has no kernel for such a column
        values = list({repr(v): v for v in dataset[schema.label_column]}.values())
    else:
        values = dataset.unique(schema.label_column)
    bad = []
    for value in values:
        try:
            schema.label_id(value)
        except SchemaError:
            bad.append(value)
    if bad:
        first = dataset[schema.label_column].index(bad[0])
        more = f" (and {len(bad) - 1} other unknown value(s), e.g. {bad[1:4]})" if len(bad) > 1 else ""
        raise SchemaError(f"Column {schema.label_column!r} at row {first}: unknown label {bad[0]!r}{more}; expected "
                          f"one of {list(schema.label_names)} or an id in 0..{len(schema.label_names) - 1}. Fix the "
                          f"data, or name its labels in id order with --label-names (a recipe: the schema's "
                          f"label_names).")


def build_from_recipe(args: argparse.Namespace, dataset: Any, recipe: dict[str, Any], folder: Path,
                      where: str) -> Any:
    """The augmenter of a recipe (see `recipe_of`), with the config options and components the user gave."""
    from ..augmenter import Augmenter
    from ..assembly import build_augmenter
    from ..schema import TaskSchema
    from .options import config_values, endpoint_options, given_components, load_component

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
    # --method builds from the command line (the user's); a --recipe file is data.
    return build_augmenter(Augmenter, recipe, folder, where, trusted=not args.recipe, **components, **overrides)


def _saved_augmenter(args: argparse.Namespace) -> tuple[Any, str]:
    """--augmenter: the saved augmenter (loaded here unless Ray actors load it) and its path."""
    from ..augmenter import Augmenter

    if args.preset:
        raise UsageError("--preset applies to --method and --recipe; a saved augmenter (--augmenter) keeps the "
                         "settings it was saved with.")
    if args.task or args.columns or args.label_column or args.id_column or args.nei:
        raise UsageError("--task, --columns, --label-column, --id-column and --nei apply to --method and --recipe; a "
                         "saved augmenter (--augmenter) keeps the schema it was saved with.")
    return (None if args.runner == "ray" else Augmenter.from_pretrained(args.augmenter)), args.augmenter


def _new_augmenter(args: argparse.Namespace, tmp: Path) -> tuple[Any, str | None, Any]:
    """--method or --recipe: the data, checked, and the augmenter built for it and saved into ``tmp/augmenter``
    (its path is None when a component cannot be saved, a Python callable)."""
    recipe, folder, where = recipe_of(args)
    dataset = load_input(args)
    check_columns(recipe, dataset)
    augmenter = build_from_recipe(args, dataset, recipe, folder, where)
    try:
        augmenter.save_pretrained(tmp / "augmenter")
        return augmenter, str(tmp / "augmenter"), dataset
    except TypeError as err:
        if args.runner == "ray":
            raise UsageError(f"--runner ray loads the augmenter in each actor from a saved folder, and this one "
                             f"cannot be saved: {err}") from None
        print(f"Note: the augmenter was not saved ({err}).")
        return augmenter, None, dataset


def augment_into(args: argparse.Namespace, tmp: Path) -> tuple[Any, Any, str]:
    """``cfaug augment``'s work, written into ``tmp`` (which becomes --out when it succeeds); returns the augmenter,
    the input dataset (None when Ray read the files) and the name of the rows' file or folder in ``tmp``."""

    out = Path(args.out)
    if args.augmenter:
        (augmenter, augmenter_path), dataset = _saved_augmenter(args), None
    else:
        augmenter, augmenter_path, dataset = _new_augmenter(args, tmp)
    from ..components.generator import Generator

    for component in (augmenter.components().values() if augmenter is not None else ()):
        if isinstance(component, Generator):  # generators and editors: the engine does not change outputs
            component.use_backend(args.backend)
    if augmenter is not None:
        augmenter.check_endpoints()  # before the data is read or a model runs
    if args.runner == "ray":
        # Each actor loads the saved augmenter, where the endpoints the user gave here would read as data.
        # Their key variables too, each with its address: a saved copy's choice of variable would be refused.
        with contextlib.ExitStack() as stack:
            for c in endpoint_components(augmenter):
                if c.endpoint_source is None:
                    stack.enter_context(allowing([c.config.base_url], key_env=c._key_env() or "none"))
            stats = _run_on_ray(args, augmenter_path, dataset, tmp)
        where, written = f"Parquet files in {out / 'data'}", "data"
    else:
        dataset = dataset if dataset is not None else load_input(args)
        augmenter.fit(dataset)
        augmented = _augment_resumably(args, augmenter, dataset)
        written = write_rows(augmented, tmp, args.format)
        if parts_folder(args, dataset).name.endswith(".parts"):  # beside --out (in-memory data): now in the output
            shutil.rmtree(parts_folder(args, dataset), ignore_errors=True)
        how = "load_from_disk" if args.format == "dataset" else args.format
        stats, where = augmenter.stats, f"{len(augmented)} rows in {out / written.name} ({how})"
        written = written.name
    (tmp / "stats.json").write_text(json.dumps(stats.to_dict(), indent=1) + "\n")
    print("\n".join(stats.summary_lines()))
    print(f"Saved {where} (statistics in stats.json)")
    if augmenter_path and not args.augmenter:
        saved = out / "augmenter"
        print(f"The augmenter is in {saved}: `cfaug augment DATA --augmenter {saved} --out DIR` reruns it exactly.")
    return augmenter, dataset, written


#: --format values: a saved dataset folder, or one file of rows.
OUTPUT_FORMATS = FORMATS


def parts_folder(args: argparse.Namespace, dataset: Any) -> Path:
    """Where a local run keeps its finished parts: beside the input's datasets cache files (so a rerun of the same
    command on the same data reads them back, as datasets' own cache would, and a killed run resumes), or beside
    --out for data held in memory."""
    files = getattr(dataset, "cache_files", None) or []
    if files:
        return Path(files[0]["filename"]).parent / "cfaug_parts"
    out = Path(args.out)
    return out.parent / f"{out.name}.parts"


def _augment_resumably(args: argparse.Namespace, augmenter: Any, dataset: Any) -> Any:
    """``augmenter.augment`` in parts kept in `parts_folder`; says how much was read back and, when stopped early,
    where the finished parts are."""
    folder = parts_folder(args, dataset)
    try:
        augmented = augmenter.augment(dataset, batch_size=args.batch_size, num_proc=args.num_proc,
                                      checkpoint_dir=folder, checkpoint_rows=args.checkpoint_rows)
    except BaseException:
        if folder.is_dir() and any(folder.glob("part-*.arrow")):
            print(f"Stopped early. The finished parts are in {folder}: run the same command again to go on from "
                  f"there.", file=sys.stderr)
        raise
    computed, total = getattr(augmenter, "rows_computed", len(dataset)), len(dataset)
    if getattr(augmenter, "served_from_cache", False):
        print("The rows came from the datasets cache: this augmenter ran on this data before (set "
              "HF_DATASETS_CACHE elsewhere, or change an option, to compute them again).")
    elif 0 < computed < total and not args.num_proc:
        print(f"Resumed: {total - computed} of {total} rows were read back from the finished parts in {folder}.")
    return augmented


def _run_on_ray(args: argparse.Namespace, augmenter_path: str | None, dataset: Any, tmp: Path) -> Any:
    """--runner ray: the rows augmented by Ray actors into ``tmp/data`` as Parquet; returns the statistics."""
    from ..deps import require
    from ..distributed import augment_to_parquet

    ray = require("ray", "--runner ray")
    given = Path(args.data)
    if not given.exists() and dataset is None and not (args.split or args.limit):
        raise UsageError(f"{args.data}: no such file or folder.")
    # Parquet is handed to Ray as files; a split, a row limit or a Hub id is read here first.
    parquet = (given.exists() and not (args.split or args.limit)
               and (given.suffix.lower() == ".parquet" or (given.is_dir() and any(given.glob("*.parquet")))))
    if parquet and parquet_rows(given) == 0:  # the same answer as a local run, before Ray starts
        raise UsageError(f"{args.data}: no rows (the Parquet data holds only its columns).")
    try:
        ray.init(address=args.address, ignore_reinit_error=True, include_dashboard=False)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as err:
        where = f"--address {args.address}" if args.address else "--runner ray"
        raise UsageError(f"{where}: no Ray cluster could be reached or started ({type(err).__name__}: "
                         f"{str(err).splitlines()[0][:200] if str(err) else ''}).") from None
    data = str(given) if parquet else (dataset if dataset is not None else load_input(args))
    return augment_to_parquet(data, augmenter_path, tmp / "data", concurrency=args.concurrency,
                              batch_size=args.batch_size or 64, num_gpus=args.gpus_per_actor, imports=args.imports)
