"""Run a configuration's rows over the seeds, with the chosen classifier, and write the table (``main``: the
command line)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.debias.validity import summary_of, validity

from . import rows as _rows  # noqa: F401  (registers every row)
from . import settings
from .augmented import component_files, stale_rows
from .classifiers import run_bow, run_hf
from .configs import CONFIGS, capped
from .registry import ARCHIVE_CHECKS, REUSE_KEYS, ROWS, describe


def fmt(values: list[float]) -> str:
    mean = statistics.mean(values) * 100
    spread = statistics.stdev(values) * 100 if len(values) > 1 else 0.0
    return f"{mean:.1f} ± {spread:.1f}"


def provenance() -> dict[str, Any]:
    """When and from which code a result was made (`benchmarks.harness.provenance`, with ``--commit``)."""
    return harness.provenance(settings.COMMIT)


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The options a table records (JSON-safe: paths as text), without those that only pick what to run."""
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()
            if k not in ("config", "rows", "list_rows")}


def training_set(config: dict[str, Any], name: str, row: str, seed: int) -> Any | None:
    """The training set of ``row`` for configuration ``name`` (None when the row does not apply to it)."""
    entry = ROWS[row]
    return entry.make(config["train"], seed, task=name) if name in entry.configs else None


def probe_sets(config: dict[str, Any], name: str, rows: list[str]) -> dict[str, Any]:
    """Test sets scored by the ``none`` model only (e.g. the flip rate of generated claims), built when ``none``
    and the row they measure are both part of the run."""
    if "none" not in rows:
        return {}
    return {ROWS[r].probe[0]: ROWS[r].probe[1](config["train"]) for r in rows
            if ROWS[r].probe and name in ROWS[r].configs}


def run_config(name: str, args: argparse.Namespace) -> dict[str, Any]:
    config = CONFIGS[name]()
    config["train"] = capped(config["train"], args.max_train)
    schema, tests = config["schema"], config["tests"]
    model_label = {"bow": "bow", "frozen": f"frozen-{args.head}"}.get(args.model, Path(args.model).name)
    results: dict[str, Any] = {"config": name, "model": args.model, "seeds": args.seeds,
                               "train_rows": len(config["train"]), "tests": {t: len(d) for t, d in tests.items()},
                               "rows": {}, **provenance(),
                               "settings": settings_of(args), "component_files": component_files()}
    if args.model == "frozen":
        from cfaug_hf.pretrained import MINILM

        results["components"] = {"encoder": MINILM, "head": args.head}
    earlier = earlier_run(results, model_label) if args.merge else None
    if earlier and (again := [r for r in args.rows if r in earlier["rows"]]):
        # --merge keeps only the rows not named in --rows; say so before hours go into rows that were finished
        print(f"--merge: running {', '.join(again)} again, as --rows names them (leave them out of --rows to keep "
              f"the finished ones)", flush=True)
    if earlier and "none" not in args.rows and "probes" in earlier:
        # the probes are the kept `none` row's own scores: they stay with it (a merge once dropped them)
        results["probes"] = earlier["probes"]
    if args.device_note:
        results["device"] = args.device_note
    if settings.AUGMENT_LIMIT:
        results["augment_limit"] = settings.AUGMENT_LIMIT
    # Probes are scored by the ``none`` model only (e.g. the flip rate of generated claims), when the rows they
    # measure are part of the run.
    probes = probe_sets(config, name, args.rows)
    # Rows an earlier run was cut in the middle of (a device call's time limit), with the seeds it finished
    unfinished = dict(earlier.get("unfinished", {})) if earlier and same_components(earlier, results) else {}
    for row in args.rows:
        per_seed, sizes, seconds = resumed_seeds(unfinished.get(row), args.seeds)
        for seed in args.seeds[len(per_seed):]:
            train = training_set(config, name, row, seed)
            if train is None:
                break
            scored = {**tests, **probes} if row == "none" else tests
            start = time.perf_counter()
            if args.model == "bow":
                acc = run_bow(train, scored, schema, seed)
            elif args.model == "frozen":
                from benchmarks.frozen_yardstick import run_frozen, run_top_layers

                if args.head.startswith("top"):
                    acc = run_top_layers(train, scored, schema, seed, top=int(args.head[3:]), epochs=args.epochs,
                                         learning_rate=args.learning_rate)
                else:
                    acc = run_frozen(train, scored, schema, seed, head=args.head)
            else:
                acc = run_hf(train, scored, schema, seed, model=args.model, max_length=args.max_length,
                             epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                             bf16=args.bf16, group_by_length=args.group_by_length)
            seconds.append(time.perf_counter() - start)
            per_seed.append(acc)
            sizes.append(len(train))
            print(f"[{name} {model_label}] {row} seed {seed}: " + ", ".join(f"{t} {a:.3f}" for t, a in acc.items()),
                  flush=True)
            if len(per_seed) < len(args.seeds):  # written now, so a run cut here keeps this seed for --merge
                unfinished[row] = {"seeds": args.seeds[:len(per_seed)], "per_seed": per_seed, "train_rows": sizes[0],
                                   "seconds": seconds}
                so_far = {**results, "rows": merged_rows(results, earlier), "partial": True, "unfinished": unfinished}
                write({**so_far, "validity": validity(name, so_far)}, model_label, quiet=True)
        unfinished.pop(row, None)
        if per_seed:
            results["rows"][row] = {"train_rows": sizes[0], "seconds": statistics.mean(seconds),
                                    "accuracy": {t: [a[t] for a in per_seed] for t in tests}}
            if row in settings.NOTES:
                results["rows"][row]["augmentation"] = settings.NOTES[row]
            if row == "none" and probes:
                results["probes"] = {p: {"rows": len(d), "none_model": [a[p] for a in per_seed]}
                                     for p, d in probes.items()}
            if row != args.rows[-1]:  # a table so far, so a run cut off keeps what it finished
                so_far = {**results, "rows": merged_rows(results, earlier), "partial": True, "unfinished": unfinished}
                write({**so_far, "validity": validity(name, so_far)}, model_label, quiet=True)
    results["rows"] = merged_rows(results, earlier)
    if unfinished:  # rows of an earlier cut run that this one did not go on with
        results["unfinished"] = unfinished
    results["validity"] = validity(name, results)
    write(results, model_label)
    return results


def earlier_run(results: dict[str, Any], model_label: str) -> dict[str, Any] | None:
    """The table's earlier run, whose rows this one keeps where it does not redo them (--merge); refused when the
    two runs differ in settings or seeds, which would make the rows incomparable."""
    path = settings.RESULTS / f"debias_{results['config']}_{model_label}.json"
    if not path.is_file():
        return None
    earlier = json.loads(path.read_text())
    # Where a table goes, who ran it, and where reused counterfactuals were read from (each row records that)
    ignore = {"merge", "device_note", "results_dir", "commit", "editor_data", "core_editor_data", "crossaug_data",
              "check_parts"}
    mine = {k: v for k, v in results["settings"].items() if k not in ignore}
    theirs = {k: v for k, v in earlier.get("settings", {}).items() if k not in ignore and k in mine}
    if any(earlier.get(k) != results[k] for k in ("seeds", "train_rows", "tests")) or \
            theirs != {k: mine[k] for k in theirs}:
        raise SystemExit(f"--merge: {path} was made with other settings; run every row again instead.")
    stale, changed = stale_rows(earlier, results["component_files"])
    if stale:
        print(f"--merge: not keeping {', '.join(stale)} from {path}: made with components changed since "
              f"({', '.join(changed)}); run them again.", flush=True)
        earlier = {**earlier, "rows": {r: v for r, v in earlier["rows"].items() if r not in stale}}
    return earlier


def same_components(earlier: dict[str, Any], results: dict[str, Any]) -> bool:
    """Whether the earlier run read the same component files as this one: a row cut in the middle goes on only then
    (its seeds must all be of one editor, checker and generator)."""
    return earlier.get("component_files") == results["component_files"]


def resumed_seeds(cut: dict[str, Any] | None, seeds: list[int]) -> tuple[list[dict], list[int], list[float]]:
    """The per-seed results, training sizes and seconds an earlier run finished of a row before it was cut (empty
    when it has none, or its seeds are not the first of ``seeds``)."""
    if not cut or cut["seeds"] != seeds[:len(cut["seeds"])]:
        return [], [], []
    done = list(cut["per_seed"])
    print(f"--merge: going on with seeds {seeds[len(done):]} (seeds {cut['seeds']} finished earlier)", flush=True)
    return done, [cut["train_rows"]] * len(done), list(cut["seconds"])


def merged_rows(results: dict[str, Any], earlier: dict[str, Any] | None) -> dict[str, Any]:
    """This run's rows in the earlier run's order, each earlier row it did not redo marked with its commit."""
    if earlier is None:
        return results["rows"]
    rows = {row: results["rows"].get(row) or {**r, "made_at": r.get("made_at", earlier.get("git_commit"))}
            for row, r in earlier["rows"].items()}
    rows.update({row: r for row, r in results["rows"].items() if row not in rows})
    return rows


def write(results: dict[str, Any], model_label: str, quiet: bool = False) -> None:
    tests = list(results["tests"])
    check = results.get("validity")
    verdict = "" if check is None else (" (validity checks passed)" if check["passed"] else
                                        " (VALIDITY CHECKS FAILED: this table cannot show a debiasing effect)")
    lines = [f"# Debiasing benchmark: {results['config']}, {results['model']}{verdict}", "",
             f"Made {results.get('date')} at commit {str(results.get('git_commit'))[:10]}"
             + (" with uncommitted changes" if results.get("uncommitted_changes") else "") + ".", "",
             f"Accuracy (%) mean ± standard deviation over seeds {results['seeds']}; training set "
             f"{results['train_rows']} original rows; test sizes " +
             ", ".join(f"{t} {n}" for t, n in results["tests"].items()) + ".", "",
             harness.markdown_table(["training data", "rows", *tests, "seconds/run"],
                                    [[row, r["train_rows"], *(fmt(r["accuracy"][t]) for t in tests),
                                      f"{r['seconds']:.0f}"] for row, r in results["rows"].items()])]
    for probe, p in results.get("probes", {}).items():
        lines.append(f"\n{probe}, by the `none` model: {fmt(p['none_model'])} % of {p['rows']} rows.")
    earlier = {row: str(r["made_at"])[:10] for row, r in results["rows"].items() if r.get("made_at")}
    if earlier:
        lines.append("\nRows kept from earlier runs with the same settings (--merge), by commit: "
                     + ", ".join(f"{row} ({c})" for row, c in earlier.items()) + ".")
    for row, r in results["rows"].items():
        if r.get("augmentation"):
            lines.append(f"\n{row}: {json.dumps(r['augmentation'])}")
    if check is not None:
        lines.append(f"\nValidity: {summary_of(check)}" + (": passed." if check["passed"] else ": FAILED."))
    if results.get("partial"):
        lines.append("\nPartial: the run had not finished every row when this was written.")
    if results.get("unfinished"):
        lines.append("\nCut in the middle, kept for a `--merge` run to go on from (not in the table): "
                     + ", ".join(f"{row} ({len(c['seeds'])} of {len(results['seeds'])} seeds)"
                                 for row, c in results["unfinished"].items()) + ".")
    table = "\n".join(lines) + "\n"
    if not quiet:
        print(table)
    settings.RESULTS.mkdir(parents=True, exist_ok=True)
    stem = settings.RESULTS / f"debias_{results['config']}_{model_label}"
    stem.with_suffix(".md").write_text(table)
    stem.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")


def build_parser() -> argparse.ArgumentParser:
    from cfaug_hf.pretrained import MINILM

    # the package's docstring is the command's help; the package imports this module, so it is read, not imported
    ap = harness.parser(sys.modules[__package__].__doc__,
                        smoke={"config": "sentiment", "model": "bow", "rows": ["none", "human"], "seeds": [0, 1]})
    ap.add_argument("--config", choices=[*CONFIGS, "all"], default="all")
    ap.add_argument("--model", default="bow", help=f"'bow', 'frozen' or a model id/folder (e.g. {MINILM})")
    ap.add_argument("--head", choices=["lr", "mlp", "top1", "top2"], default="lr",
                    help="the frozen yardstick's head: lr or mlp over pooled features, or topN: the encoder's top N "
                         "layers fine-tuned over cached lower-layer states (models claim-evidence interaction; "
                         "uses --epochs and --learning-rate)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rows", nargs="+", default=["none", "human", "eda", "reweight", "crossaug"], choices=list(ROWS),
                    metavar="ROW", help="the training sets to measure (--list-rows describes them); a row that does "
                                        "not apply to a configuration is left out of its table")
    ap.add_argument("--list-rows", action="store_true", help="print every row and what it is, and stop")
    ap.add_argument("--max-train", type=int, default=None, help="cap the training rows (a CPU-sized run)")
    ap.add_argument("--device-note", default=None, help="where it ran, recorded in the results and leaderboard")
    ap.add_argument("--augment-limit", type=int, default=None,
                    help="CORE and CrossAug rows edit only a seeded sample of this many training rows (CPU-sized)")
    ap.add_argument("--editor-limit", type=int, default=None,
                    help="the editor rows (editor+checker, amplify, crossfit) rewrite a seeded sample of this many "
                         "rows (default: --augment-limit)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of the table's earlier run (same settings) that this run does not redo, "
                         "except those made with an editor, checker or generator changed since")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--learning-rate", type=float, default=5e-5)
    ap.add_argument("--bf16", action="store_true", help="fine-tuning in bf16 mixed precision (a GPU with bf16)")
    ap.add_argument("--group-by-length", action="store_true",
                    help="fine-tuning batches of rows of similar length (less padding: a CPU-sized run)")
    ap.add_argument("--results-dir", type=Path, default=None, help="where the tables go [benchmarks/results]")
    ap.add_argument("--crossaug-data", default=None, help="a saved dataset of CrossAug output to reuse")
    ap.add_argument("--editor-data", nargs="*", default=[], metavar="TASK=FOLDER",
                    help="counterfactuals an editor wrote earlier, read instead of written; TASK is one of: "
                         + "; ".join(f"{key} ({what})" for key, what in REUSE_KEYS.items()))
    ap.add_argument("--core-editor-data", nargs="*", default=[], metavar="TASK=FOLDER",
                    help="the same for the core+editor row")
    ap.add_argument("--commit", default=None, help="the commit measured, for a copy of the tree run elsewhere")
    ap.add_argument("--check-parts", choices=sorted(ARCHIVE_CHECKS), default=None,
                    help="regenerate the first 20 rows of an archived generation run with this code and, when they "
                         "equal the archive's, let that archive serve this code (benchmarks/results/editor_parts/): "
                         + "; ".join(f"{name}: {(check.__doc__ or '').strip().splitlines()[0]}"
                                     for name, check in sorted(ARCHIVE_CHECKS.items())))
    return ap


def main() -> None:
    ap = build_parser()
    args = ap.parse_args()
    if args.list_rows:
        print(describe())
        return
    if args.check_parts:
        ARCHIVE_CHECKS[args.check_parts]()
        return
    settings.AUGMENT_LIMIT, settings.EDITOR_LIMIT, settings.COMMIT = args.augment_limit, args.editor_limit, args.commit
    settings.RESULTS = args.results_dir or harness.results_dir()
    editors = list(REUSE_KEYS)  # each registered by the row module that reads it
    for option, prefix, flag in ((args.editor_data, "", "--editor-data"),
                                 (args.core_editor_data, "core_", "--core-editor-data")):
        for item in option:
            task, sep, folder = item.partition("=")
            if not sep or not folder:
                ap.error(f"{flag}: expected TASK=FOLDER, got {item!r}")
            if task.lower() not in editors:
                ap.error(f"{flag} {item}: {task!r} names no editor; expected one of {', '.join(editors)}")
            settings.REUSE[prefix + task.lower()] = folder
    if args.crossaug_data:
        settings.REUSE["crossaug"] = args.crossaug_data
    for name in CONFIGS if args.config == "all" else [args.config]:
        run_config(name, args)
