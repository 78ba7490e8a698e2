"""Everything a GPU makes possible, prepared here and run there in one call, in priority order.

    python -m benchmarks.gpu_suite prepare               # here: build gpu_carry/ (what the GPU machine lacks)
    python -m benchmarks.gpu_suite slim                  # here: move the editors' weights aside (61 MiB)
    bash benchmarks/gpu_suite.sh                          # there (device run, carry gpu_carry): `run` into $OUT
    bash benchmarks/gpu_suite.sh --resume-from benchmarks/results/gpu/h200-2026-11-28-nli
                                                          # there: go on from the tables a past call committed
    python -m benchmarks.gpu_suite unslim                # here: put them back (or: git checkout -- cfaug_hf/data)
    python -m benchmarks.gpu_suite run --smoke            # here: the same parts on CPU with tiny settings
                                                          # (--parts nli: only the parts named so)

The GPU machines have torch, transformers, peft, accelerate, safetensors, scikit-learn and pyarrow but no
``datasets``, no internet and no ``../shared/data``; at most 64 MiB travels with the tree. ``prepare`` therefore
writes ``gpu_carry/`` (git-ignored; name it in the device call's ``carry``):

* ``wheels/``: ``datasets`` and the packages it needs that the GPU image lacks (pure-Python wheels for 3.12);
* ``shared_data.tar.xz``: the parts of ../shared/data the parts below read (CAD, the IMDb contrast set, FEVER);
* ``minilm.tar.xz``: all-MiniLM-L6-v2 in half precision (the fine-tuned yardstick's start; fine-tuning runs in
  fp32/bf16), packed, unpacked by ``run``;
* ``counterfactuals/<task>-<share>/``: the editors' counterfactuals written here on CPU for the coverage curve
  (``benchmarks/coverage_curve.py``), reused there through ``--editor-data TASK=FOLDER``: a generator would need
  SmolLM2's weights, which do not fit; ``counterfactuals/<task>-q1/``: the quarter-1 editor's of the annotated
  quarter, for a part with a ``crossfit`` row (``--editor-data TASK_q1=FOLDER``), and ``<task>-q01/``,
  ``<task>-q23/``: the half editors' of the rows they did not learn from, for ``crossfit (halves)``
  (``TASK_q01=FOLDER TASK_q23=FOLDER``); ``counterfactuals/nli-all/``, ``nli-all-q1/``: the quarter editors'
  counterfactuals toward every other label, for the every-target rows (``nli_all=FOLDER``);
  ``counterfactuals/nli-premise/``, ``nli-premise-q1/``, ``nli-premise-x2/``: the premise editors' revised premises
  (two a target in ``-x2``), for the premise rows (``nli_premise=FOLDER``);
  ``counterfactuals/sentiment-until-flipped/``: the quarter-0 sentiment editor's reviews edited until the whole
  review flips, for ``editor (until flipped)`` (``sentiment_until_flipped=FOLDER``);
  ``counterfactuals/fever-crossaug/``: CrossAug's counterfactuals of every FEVER training row
  (``--crossaug-data``), for the ``crossaug`` rows. They travel packed as ``counterfactuals.tar.xz`` (0.7 MiB
  instead of 6), which ``run`` unpacks on the device.

The tree travels too, and its editors' weights (which the suite does not load: it reads their
counterfactuals), the archived generation parts and the frozen judges would push the transfer over the limit;
``slim`` moves them into ``.slim/`` (git-ignored) for the device call and ``unslim`` moves them back. ``prepare``
prints the transfer size with and without them. Where a code change since a curve ran has moved the cache key of
its counterfactuals, ``prepare`` restores them from the archived parts (generating only rows no archive holds).

A part resumed from an earlier call's output (``--resume-from``) keeps the rows its table finished and runs the
rest; a row that call was cut in the middle of goes on from its finished seeds (``debias --merge``).

``run`` goes through ``PARTS`` in order; each part is one ``benchmarks/debias/`` table with the fine-tuned MiniLM
yardstick (5 seeds, bf16 on a GPU), writes its JSON and Markdown into ``--out`` as its rows finish, and is stopped
at its own time limit and the suite's ``--budget-s`` (a part cut short keeps its finished rows: debias writes a
partial table). ``gpu_suite.json`` in ``--out`` records each part's status, seconds and the device after every
part. A part whose carried counterfactuals are missing is skipped with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks import harness
from benchmarks.harness import ROOT
CARRY = ROOT / "gpu_carry"
#: The shared data the parts read (relative to ../shared/data), and the wheels the GPU image lacks.
DATA = ["MANIFEST.md", "cad_kaushik/sentiment", "cad_kaushik/NLI", "contrast_sets_imdb", "fever_symmetric",
        "fever_paper_dev"]
WHEELS = ["datasets", "dill", "multiprocess", "fsspec"]
#: Carried data plus the tree must stay under the device's 64 MiB transfer limit.
LIMIT_MIB = 60
#: Tracked files the suite never reads on the GPU, moved aside by ``slim`` for the transfer.
SLIM = [f"{folder}/{name}" for folder in
        [f"cfaug_hf/data/editors/{task}" for task in ("claims", "nli", "sentiment")]
        + sorted(f"benchmarks/results/crossfit_editors/{d.name}" for d in (ROOT / "benchmarks" / "results"
                                                                           / "crossfit_editors").glob("*-q*"))
        for name in ("adapter_model.safetensors", "tokenizer.json")]
# The generation archives, the judges, RACE's models, CORE's retrievers and the sentiment and NLI checkers serve CPU runs only: the device
# reads the carried counterfactuals, which those checkers chose when they were written (FEVER's checker is read there).
SLIM += sorted(p.relative_to(ROOT).as_posix() for pattern in ("benchmarks/results/editor_parts/*.jsonl.gz",
                                                              "benchmarks/results/judges/**/*.safetensors",
                                                              "cfaug_hf/data/race/*/*.safetensors",
                                                              "cfaug_hf/data/race/*/tokenizer.json",
                                                              "cfaug_hf/data/core/*/retriever/**/*.safetensors",
                                                              "cfaug_hf/data/core/*/retriever/tokenizer.json")
               for p in ROOT.glob(pattern))
SLIM += [f"cfaug_hf/data/checkers/{task}/{name}" for task in ("nli", "sentiment")
         for name in ("adapter_model.safetensors", "tokenizer.json")]
#: The carried counterfactuals travel as one archive (Arrow files of text compress about ninefold).
PACKED = CARRY / "counterfactuals.tar.xz"
#: MiniLM in half precision travels packed too (44 MiB as safetensors, 39 MiB packed: what keeps the transfer under
#: the limit).
MINILM_PACKED = CARRY / "minilm.tar.xz"
#: A smoke run's editor rows: what `benchmarks.debias --editor-limit 20` caches on CPU in about a minute.
SMOKE_EDITOR_ROWS = 20

#: (name, debias config, rows, seconds allowed, the coverage share whose counterfactuals it reads or None).
#: A ``crossfit`` row also reads the quarter-1 editor's counterfactuals of the annotated quarter (carried as
#: ``counterfactuals/<task>-q1/``), a ``crossfit (halves)`` row the half editors' (``<task>-q01/``, ``<task>-q23/``).
#: A part's rows run in order, so the last is the one a part cut short at its limit loses.
PARTS = [
    # The first run (one H200, 2026-11-27, benchmarks/results/gpu/h200-2026-11-27/) measured sentiment's first five
    # rows; FEVER finished no row in 190 s and NLI only `none`. So FEVER's validity rows come first, with most of
    # the call (and batches of 64: FEVER has 9672 training rows), checked CrossAug before unchecked; sentiment
    # runs only the rows still missing (with `none`, which each gain is paired with).
    ("fever validity", "fever", ["none", "reweight", "crossaug+checker", "crossaug"], 360, None),
    # NLI: the every-target rows (the quarter editors toward every other label with the neutral additions,
    # rows/editor_all_targets.py) right after `none` and `human`: on the frozen yardstick they are the only NLI editor
    # rows beyond 2 sd on the revised hypotheses.
    ("nli, full coverage", "nli",
     ["none", "human", "editor+checker (all targets)", "amplify (all targets)", "crossfit (all targets)",
      "crossfit (premises)", "amplify (both sides, 2 premises a target)",
      "human (editor rows)", "editor+checker", "human (quarter)", "amplify", "crossfit", "crossfit (halves)"], 200,
     100),
    # the edit-until-flipped loop (whole-input counterfactuals) after amplification: on the frozen yardstick at full
    # coverage it recovered 96% of the human gain (+8.6, beyond 2 sd)
    ("sentiment, full coverage", "sentiment",
     ["none", "amplify", "editor (until flipped)", "crossfit", "crossfit (halves)"], 330, 100),
]
#: Every-target row -> the editors whose counterfactuals toward every other label it reads (carried as
#: ``counterfactuals/nli-all/``, ``nli-all-q1/``).
ALL_TARGETS = {"editor+checker (all targets)": [(0,)], "amplify (all targets)": [(0,)],
               "crossfit (all targets)": [(0,), (1,)], "amplify (both sides, 2 premises a target)": [(0,)]}
#: Premise row -> the premise editors' sets it reads, as (quarters, premises a target) (carried as
#: ``counterfactuals/nli-premise/``, ``nli-premise-q1/``, ``nli-premise-x2/``): the two rows that met the NLI
#: targets on revised premises on the frozen yardstick.
PREMISES = {"crossfit (premises)": [((0,), 1), ((1,), 1)], "amplify (both sides, 2 premises a target)": [((0,), 2)]}
#: Rows that read the quarter-0 sentiment editor's counterfactuals edited until the whole review flips (carried as
#: ``counterfactuals/sentiment-until-flipped/``).
UNTIL_FLIPPED = ["editor (until flipped)"]
#: The seeds of every GPU table.
SEEDS = [0, 1, 2, 3, 4]
#: Per-configuration batch size where it is not the suite's 32 (a large training set spends its time in steps).
BATCH_SIZE = {"fever": 64}


def _size_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def prepare(args: argparse.Namespace) -> None:
    from importlib.metadata import version

    from scripts.shared_data import shared_dir

    CARRY.mkdir(exist_ok=True)
    wheels = CARRY / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "-d", str(wheels), *(f"{w}=={version(w)}" for w in WHEELS)],
                   check=True)
    with tarfile.open(CARRY / "shared_data.tar.xz", "w:xz") as tar:
        for part in DATA:
            tar.add(shared_dir() / part, arcname=part)
    if not MINILM_PACKED.is_file():
        import torch
        from transformers import AutoModel

        from cfaug_hf.pretrained import MINILM, load_model, load_tokenizer

        load_model(AutoModel, MINILM).to(torch.float16).save_pretrained(CARRY / "minilm")
        load_tokenizer(MINILM).save_pretrained(CARRY / "minilm")
        with tarfile.open(MINILM_PACKED, "w:xz") as tar:
            tar.add(CARRY / "minilm", arcname="minilm")
    shutil.rmtree(CARRY / "minilm", ignore_errors=True)  # packed above, or unpacked by an earlier run: the archive goes
    copied = carry_counterfactuals()
    shutil.rmtree(CARRY / "shared_data", ignore_errors=True)  # unpacked by an earlier smoke run; the archive travels
    PACKED.unlink(missing_ok=True)
    with tarfile.open(PACKED, "w:xz") as tar:
        tar.add(CARRY / "counterfactuals", arcname="counterfactuals")
    shutil.rmtree(CARRY / "counterfactuals")
    (CARRY / "COMMIT").write_text(_commit() + "\n")
    carry, tree = _size_mib(CARRY), _tree_mib()
    slim = sum((ROOT / f).stat().st_size for f in SLIM if (ROOT / f).is_file()) / 2**20
    print(json.dumps({"carry": str(CARRY), "carry_mib": round(carry, 1), "tree_mib": round(tree, 1),
                      "transfer_mib": round(carry + tree, 1), "transfer_mib_after_slim": round(carry + tree - slim, 1),
                      "counterfactuals": copied}, indent=1))
    if carry + tree - slim > LIMIT_MIB:
        raise SystemExit(f"The transfer would be {carry + tree - slim:.1f} MiB even after `slim`; the device takes "
                         f"at most {LIMIT_MIB}.")


def _tree_mib() -> float:
    """What the device call sends besides the carry: tracked files and untracked ones git does not ignore."""
    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return sum((ROOT / f).stat().st_size for f in done.stdout.split("\0") if f and (ROOT / f).is_file()) / 2**20


def slim(undo: bool = False) -> None:
    """Move the `SLIM` files into ``.slim/``; ``undo``: move back everything there. (Some of `SLIM` is found by
    globbing the tree, which no longer holds those files once they are aside, so undoing reads ``.slim/`` itself.)"""
    aside = ROOT / ".slim"
    moved = (sorted(f.relative_to(aside).as_posix() for f in aside.rglob("*") if f.is_file()) if undo else
             [rel for rel in SLIM if (ROOT / rel).is_file()])
    for rel in moved:
        src, dst = (aside / rel, ROOT / rel) if undo else (ROOT / rel, aside / rel)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), str(dst))
    print(f"{'restored' if undo else 'moved aside'}: {len(moved)} files; tree now {_tree_mib():.1f} MiB")


def editor_cache(task: str, limit: int | None, quarters: tuple[int, ...] = (0,)) -> Path:
    """Where benchmarks.debias cached the counterfactuals of the editor trained on annotation ``quarters``: quarter
    0's of the first ``limit`` unannotated rows, quarter 1's of the annotated quarter (the crossfit row's other half;
    ``limit`` None: every annotated row), a half editor's of the two quarters it did not learn from."""
    from benchmarks import debias
    from benchmarks.debias.rows.editors import editor_augmenter, written_by

    debias.settings.EDITOR_LIMIT = limit
    subset, _ = written_by(debias.CONFIGS[task]()["train"], task, quarters)
    augmenter = editor_augmenter(task, quarters)
    return debias.settings.CACHE / f"editor_{subset._fingerprint[:12]}_{augmenter.fingerprint()[:12]}"


def cross_fitting_editors(rows: list[str]) -> list[tuple[int, ...]]:
    """The editors besides quarter 0's whose counterfactuals a part's rows read: ``crossfit`` quarter 1's,
    ``crossfit (halves)`` both half editors'."""
    from benchmarks.debias.rows.editors import HALVES

    return [*([(1,)] if "crossfit" in rows else []), *(HALVES if "crossfit (halves)" in rows else [])]


def carried_name(task: str, quarters: tuple[int, ...]) -> str:
    """The carried folder of a cross-fitting editor's counterfactuals: nli-q1, nli-q01, ..."""
    return f"{task}-q{''.join(map(str, quarters))}"


def crossaug_carried(config: str, smoke: bool = False) -> Path:
    """CrossAug's counterfactuals of every training row of ``config`` as the device reads them (a smoke run reads a
    copy written here, outside the carry, by `carry_crossaug`)."""
    if not smoke:
        return CARRY / "counterfactuals" / f"{config}-crossaug"
    return ROOT / "benchmarks" / ".cache" / "gpu_suite_crossaug" / config


def carry_crossaug(config: str = "fever", smoke: bool = False) -> str:
    """Save the counterfactual rows (not the originals, which the device has) of CrossAug over every training row of
    ``config`` where the device (or a smoke run) reads them: from the cache, from the archived parts (the cache key
    moves with the code, and a fresh machine has no cache) or, where neither holds them, generated."""
    from benchmarks.debias import settings
    from benchmarks.debias.configs import CONFIGS
    from benchmarks.debias.rows.crossaug import crossaug_counterfactuals
    from cfaug_hf.sharing.folders import save_to_disk

    settings.AUGMENT_LIMIT = None
    print(f"CrossAug's counterfactuals of every {config} training row, from the cache or the archived parts")
    cfs = crossaug_counterfactuals(CONFIGS[config]()["train"])
    target = crossaug_carried(config, smoke)
    shutil.rmtree(target, ignore_errors=True)
    save_to_disk(cfs, target)
    return f"{len(cfs)} counterfactuals of every training row"


def cached_or_restored(task: str, limit: int | None, quarters: tuple[int, ...] = (0,)) -> Path:
    """`editor_cache`, written first where it is missing the way a debias run with ``--editor-limit limit`` writes
    it: from the generation parts archived in ``benchmarks/results/editor_parts/`` where they cover the rows (a code
    change since the curve ran moves the cache key, and a finished curve does not run its rows again), generating
    only what no archive holds."""
    from benchmarks import debias
    from benchmarks.debias.rows.editors import editor_counterfactuals

    cached = editor_cache(task, limit, quarters)
    if not (cached / "dataset_info.json").is_file():
        debias.settings.EDITOR_LIMIT = limit
        print(f"restoring the counterfactuals of the {carried_name(task, quarters)} editor ({limit or 'all'} rows) "
              "from their archived parts, generating what they lack", flush=True)
        editor_counterfactuals(debias.CONFIGS[task]()["train"], task, quarters)
    return cached


def carry_counterfactuals() -> dict[str, str]:
    """Copy the editors' cached counterfactuals of each (task, share) the parts read, where they exist, and the
    cross-fitting editors' for the parts with a crossfit row."""
    wanted = {(f"{p[1]}-{p[4]}", p[1], p[4], (0,)) for p in PARTS if p[4]}
    wanted |= {(carried_name(p[1], q), p[1], None, q) for p in PARTS for q in cross_fitting_editors(p[2])}
    out = {}
    # sorted: a task's 100% share comes before its 25%, which reads the parts the full run restored from its archive.
    for name, task, share, quarters in sorted(wanted, key=str):
        cached = cached_or_restored(task, _share_rows(task, share) if share else None, quarters)
        target = CARRY / "counterfactuals" / name
        if (cached / "dataset_info.json").is_file():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(cached, target)
            out[name] = (f"{_share_rows(task, share)} rows edited" if share else "the annotated quarter"
                         if quarters == (1,) else f"the rows outside quarters {quarters}")
        else:
            row = "" if share else " --rows crossfit" if quarters == (1,) else ' --rows "crossfit (halves)"'
            out[name] = f"missing: run python -m benchmarks.coverage_curve{row} --task {task} first"
    for config in sorted({p[1] for p in PARTS if any(r.startswith("crossaug") for r in p[2])}):
        out[f"{config}-crossaug"] = carry_crossaug(config)
    for config in sorted({p[1] for p in PARTS}):
        for key, (quarters, write) in editor_sets(config, [r for p in PARTS if p[1] == config for r in p[2]]).items():
            folder = set_folder(key, quarters, None, False, write)
            out[folder.name] = write_set(write, None, folder)
    return out


def editor_sets(config: str, rows: list[str]) -> dict[str, tuple[tuple[int, ...], Callable[[], Any]]]:
    """Every editor set ``rows`` read beyond their coverage share's, by ``--editor-data`` key: (the editor's
    quarters, a function returning its counterfactuals with their provenance columns): the every-target hypotheses
    (`ALL_TARGETS`), the premise editors' (`PREMISES`) and the reviews edited until they flip (`UNTIL_FLIPPED`)."""
    from benchmarks import debias
    from benchmarks.debias.rows.editor_all_targets import all_target_rows, reuse_key
    from benchmarks.debias.rows.editor_premises import premise_reuse_key, premise_rows
    from benchmarks.debias.rows.until_flipped import reuse_key as until_flipped_key
    from benchmarks.debias.rows.until_flipped import until_flipped_counterfactuals

    def train() -> Any:
        return debias.CONFIGS[config]()["train"]

    sets: dict[str, tuple[tuple[int, ...], Callable[[], Any]]] = {}
    for r in rows:
        for q in ALL_TARGETS.get(r, []):
            sets[reuse_key(config, q)] = (q, lambda q=q: all_target_rows(train(), config,
                                                                         "editor+checker (all targets)", q)[0])
        for q, n in PREMISES.get(r, []):
            sets[premise_reuse_key(config, q, n)] = (q, lambda q=q, n=n: premise_rows(train(), config, q, n)[0])
        if r in UNTIL_FLIPPED:
            sets[until_flipped_key(config)] = ((0,), lambda: until_flipped_counterfactuals(train(), config)[0])
    return sets


def set_folder(key: str, quarters: tuple[int, ...], limit: int | None, smoke: bool, write: Callable[[], Any]
               ) -> Path:
    """Where the editor set ``key`` is read from: the carry on the device (``nli_all_q1`` in
    ``counterfactuals/nli-all-q1/``); in a smoke run (``limit`` rows) a copy written here by ``write``, from the
    cache, the archived parts or a short generation. A smoke run leaves out quarter 1's sets, which cover a whole
    quarter whatever the limit."""
    name = key.replace("_", "-")
    if not smoke:
        return CARRY / "counterfactuals" / name
    folder = ROOT / "benchmarks" / ".cache" / "gpu_suite_editor_sets" / f"{name}-{limit}"
    if quarters == (0,) and not (folder / "dataset_info.json").is_file():
        write_set(write, limit, folder)
    return folder


def write_set(write: Callable[[], Any], limit: int | None, target: Path) -> str:
    """Save what ``write`` returns for the first ``limit`` rows the editor rewrites (None: all) into ``target``."""
    from benchmarks import debias
    from cfaug_hf.sharing.folders import save_to_disk

    debias.settings.EDITOR_LIMIT = limit
    cfs = write()
    shutil.rmtree(target, ignore_errors=True)
    save_to_disk(cfs, target)
    return f"{len(cfs)} counterfactuals"


def run(args: argparse.Namespace) -> int:
    from benchmarks.debias.rows.editors import quarters_tag

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # A smoke run unpacks outside the carry: an unpacked copy left there would travel with the next device call.
    data = Path(args.data or (ROOT / "benchmarks" / ".cache" / "gpu_suite_shared_data" if args.smoke
                              else CARRY / "shared_data"))
    if not (data / "MANIFEST.md").is_file():
        with tarfile.open(CARRY / "shared_data.tar.xz") as tar:
            tar.extractall(data, filter="data")
    if not args.smoke and not (CARRY / "counterfactuals").is_dir() and PACKED.is_file():
        with tarfile.open(PACKED) as tar:
            tar.extractall(CARRY, filter="data")
    minilm = unpacked_minilm(args.smoke)
    model = str(minilm) if (minilm / "config.json").is_file() else "sentence-transformers/all-MiniLM-L6-v2"
    hub_cache = seed_hub_cache(minilm, "sentence-transformers/all-MiniLM-L6-v2")
    device = _device()
    started, report = time.monotonic(), {"device": device, "parts": []}
    for name, config, rows, seconds, share in PARTS:
        if args.parts and not any(name.startswith(p) for p in args.parts):
            continue
        left = args.budget_s - (time.monotonic() - started)
        entry: dict = {"part": name, "config": config, "rows": rows}
        tables = out / (config + (f"-{share}" if share else ""))
        env = {**os.environ, "CFAUG_SHARED_DATA": str(data), **({"HF_HUB_CACHE": str(hub_cache)} if hub_cache else {})}
        reuse: list[str] = []
        limit = (SMOKE_EDITOR_ROWS if args.smoke else _share_rows(config, share, data)) if share else None
        if share:
            # A smoke run reads what a 20-row debias run caches here (made first if missing), as the GPU run reads
            # the carried copy.
            carried = (cached_or_restored(config, limit) if args.smoke
                       else CARRY / "counterfactuals" / f"{config}-{share}")
            if not (carried / "dataset_info.json").is_file():
                report["parts"].append({**entry, "status": f"skipped: no carried counterfactuals in {carried}"})
                continue
            reuse = ["--editor-data", f"{config}={carried}"]
            for quarters in cross_fitting_editors(rows):
                folder = (cached_or_restored(config, limit, quarters) if args.smoke
                          else CARRY / "counterfactuals" / carried_name(config, quarters))
                if (folder / "dataset_info.json").is_file():
                    reuse.append(f"{config}{quarters_tag(quarters)}={folder}")
                else:  # the part runs without the row that needs them rather than not at all
                    row = "crossfit" if quarters == (1,) else "crossfit (halves)"
                    rows = [r for r in rows if r != row]
                    left_out = entry.setdefault("left_out", {})
                    missing = f"no carried counterfactuals in {folder}"
                    left_out[row] = f"{left_out[row]}, {missing}" if row in left_out else missing
            for key, (quarters, write) in editor_sets(config, rows).items():
                folder = set_folder(key, quarters, limit, args.smoke, write)
                if (folder / "dataset_info.json").is_file():
                    reuse.append(f"{key}={folder}")
                else:  # the part runs without the rows that read them
                    for row in [r for r in rows if key in editor_sets(config, [r])]:
                        rows = [r for r in rows if r != row]
                        entry.setdefault("left_out", {})[row] = f"no carried counterfactuals in {folder}"
            entry["rows"] = rows
        if getattr(args, "resume_from", None):
            rows = resumed_part(Path(args.resume_from), tables, rows, entry)
            if not rows:
                report["parts"].append({**entry, "status": "skipped: every row is in the table it resumes"})
                continue
        if any(r.startswith("crossaug") for r in rows):
            crossaug = crossaug_carried(config, args.smoke)
            if args.smoke and not (crossaug / "dataset_info.json").is_file():
                carry_crossaug(config, smoke=True)
            if not (crossaug / "dataset_info.json").is_file():
                report["parts"].append({**entry, "status": f"skipped: no carried counterfactuals in {crossaug}"})
                continue
            reuse += ["--crossaug-data", str(crossaug)]
        if left < 30:
            report["parts"].append({**entry, "status": "skipped: the suite's time budget is spent"})
            continue
        cmd = [sys.executable, "-m", "benchmarks.debias", "--config", config, "--model", model, "--rows", *rows,
               "--device-note", f"{device}, gpu_suite.py part '{name}'", "--merge", "--results-dir", str(tables),
               "--commit", args.commit or _carried_commit(), *reuse]
        if share:
            cmd += ["--editor-limit", str(limit)]
        if args.smoke and not share:
            cmd += ["--max-train", "300"]  # the editor rows need the whole training set; the others do not
        cmd += (["--seeds", "0", "--epochs", "0.02", "--max-length", "64", "--batch-size", "8"]
                if args.smoke else ["--seeds", *map(str, SEEDS), "--batch-size", str(BATCH_SIZE.get(config, 32))]
                + (["--bf16"] if "GPU" in device or "NVIDIA" in device else []))
        begin = time.monotonic()
        try:
            # A smoke run checks the wiring on a CPU, where a part's GPU time limit means nothing: only --budget-s.
            limit = left if args.smoke else min(seconds, left)
            # The child's output goes to a log beside the tables as it runs: a part stopped at its limit still
            # shows how far each row got and how long a seed took.
            log = out / f"{tables.name}.log"
            with log.open("w") as sink:
                done = subprocess.run(cmd, cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"}, timeout=limit,
                                      stdout=sink, stderr=subprocess.STDOUT)
            entry["status"] = ("done" if done.returncode == 0
                               else f"failed ({done.returncode}): {log.read_text()[-800:]}")
        except subprocess.TimeoutExpired:
            entry["status"] = "stopped at its time limit (finished rows are in its partial table)"
        entry["seconds"] = round(time.monotonic() - begin, 1)
        # At most 8 files come back from a device call: keep the JSON (the raw result; leaderboard.py and benchmarks.debias
        # draw the tables from it here) and drop each table's Markdown copy.
        for md in tables.glob("*.md"):
            md.unlink()
        report["parts"].append(entry)
        (out / "gpu_suite.json").write_text(json.dumps(report, indent=1) + "\n")
        print(f"{entry['seconds']:7.1f} s  {name}: {entry['status'][:200]}", flush=True)
    (out / "gpu_suite.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0 if all(not p["status"].startswith("failed") for p in report["parts"]) else 1


def resumed_part(earlier: Path, tables: Path, rows: list[str], entry: dict) -> list[str]:
    """Start a part from the table an earlier device call wrote (``earlier/<part folder>/``, e.g. a committed
    ``benchmarks/results/gpu/h200-.../``): its finished rows are kept (``debias --merge``) and not run again, and a
    row it was cut in the middle of goes on from its finished seeds. The rows still to run, ``none`` first when it
    is one of them."""
    from benchmarks.coverage_curve import finished_rows

    found = sorted((earlier / tables.name).glob("debias_*.json"))
    if not found:
        return rows
    tables.mkdir(parents=True, exist_ok=True)
    for path in found:
        shutil.copy(path, tables / path.name)
    done = set().union(*(finished_rows(tables / path.name, SEEDS) for path in found))
    entry["resumed"] = {"from": str(earlier / tables.name), "kept": sorted(r for r in rows if r in done)}
    return [r for r in rows if r not in done]


def unpacked_minilm(smoke: bool = False) -> Path:
    """The carried MiniLM folder, unpacked from `MINILM_PACKED` where it is not yet (a smoke run unpacks outside the
    carry, as it does the data: a copy left in the carry would travel with the next device call)."""
    base = ROOT / "benchmarks" / ".cache" / "gpu_suite_minilm" if smoke else CARRY
    if not (base / "minilm" / "config.json").is_file() and MINILM_PACKED.is_file():
        with tarfile.open(MINILM_PACKED) as tar:
            tar.extractall(base, filter="data")
    return base / "minilm"


def seed_hub_cache(folder: Path, repo_id: str) -> Path | None:
    """A Hugging Face cache under ``benchmarks/.cache/gpu_hub`` holding ``folder`` as ``repo_id``'s snapshot, for
    the components whose base model is MiniLM (FEVER's flip checker): the GPU image has MiniLM neither as the
    package it ships in nor in its own cache, and runs offline. None where ``folder`` is not there."""
    if not (folder / "config.json").is_file():
        return None
    cache = ROOT / "benchmarks" / ".cache" / "gpu_hub"
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True, exist_ok=True)
    for f in folder.iterdir():
        if not (snapshot / f.name).exists():
            (snapshot / f.name).symlink_to(f.resolve())
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text("0" * 40)
    return cache


def _share_rows(task: str, share: int, data: Path | None = None) -> int:
    if data is not None:
        os.environ["CFAUG_SHARED_DATA"] = str(data)
    from benchmarks import debias

    train = debias.CONFIGS[task]()["train"]
    return round((len(train) - len(debias.annotated_rows(train, task))) * share / 100)


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        return f"one {torch.cuda.get_device_name(0)}"
    return f"CPU ({os.cpu_count()} cores)"


def _carried_commit() -> str:
    path = CARRY / "COMMIT"
    return path.read_text().strip() if path.is_file() else _commit()


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The suite's command line: prepare, slim, unslim and run (a ``run --smoke`` writes into a temporary folder)."""
    ap = harness.parser(__doc__)
    # plain sub-parsers: `run` states its own --smoke (the suite's, with the carry), not the harness's
    sub = ap.add_subparsers(dest="command", required=True, parser_class=argparse.ArgumentParser)
    sub.add_parser("prepare", help="build gpu_carry/ here")
    sub.add_parser("slim", help="move the editors' weights into .slim/ for the device call")
    sub.add_parser("unslim", help="move them back")
    r = sub.add_parser("run", help="run the parts (on the GPU machine, or --smoke here)")
    # a Path, so that a smoke run's tables go to the harness's temporary folder, never over the committed ones
    r.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "benchmarks/results/gpu")),
                   help="where the tables go (a --smoke run: a temporary folder, printed)")
    r.add_argument("--budget-s", type=float, default=540, help="stop starting parts after this many seconds")
    r.add_argument("--smoke", action="store_true",
                   help="tiny settings on CPU: one seed, a few training steps, 20 editor rows (restored from the "
                        "archived parts or generated here first where missing); the parts' own time limits, set for "
                        "the GPU, do not apply (--budget-s still does)")
    r.add_argument("--data", default=None,
                   help="an unpacked shared/data (default: gpu_carry/shared_data, unpacked there; with --smoke "
                        "benchmarks/.cache/gpu_suite_shared_data, outside the carry)")
    r.add_argument("--commit", default=None, help="the commit the carried tree is at (no .git travels)")
    r.add_argument("--resume-from", default=None, metavar="DIR",
                   help="an earlier device call's output (e.g. benchmarks/results/gpu/h200-2026-11-28-nli): each part "
                        "keeps the rows its table there finished and goes on with the rest")
    r.add_argument("--parts", nargs="+", default=None, metavar="NAME",
                   help="run only the parts whose name starts with one of these (e.g. 'nli')")
    return ap


def main() -> None:
    args = build_parser().parse_args()
    if args.command == "prepare":
        prepare(args)
    elif args.command in ("slim", "unslim"):
        slim(undo=args.command == "unslim")
    else:
        sys.exit(run(args))


if __name__ == "__main__":
    main()
