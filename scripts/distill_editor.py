"""Fine-tune a shipped editor on its own best outputs (best-of-n distillation, issue 58 item 4), so that its default
4 candidates do what 16 did.

The editor rewrites ``--rows`` seeded CAD training inputs (sentiment: the sentences the annotators changed, with their
neighbours as context; NLI: the hypotheses, premise as context), ``--candidates`` sampled candidates each. A candidate
is kept when the shipped flip checker gives it the target label with probability ``--margin`` or more (a clear
flip, not a borderline one); of those, the one that changes the fewest words (ties: the higher probability) becomes a
training pair. The editor then goes on training its own adapter on those pairs together with the human pairs of the
same inputs (so it keeps learning what annotators do, and does not drift toward what only the checker likes), and is
saved in ``--out`` (``benchmarks/.cache/editors/<task>-distilled`` by default; never over the shipped editor: copy
it there once it has been measured and read).

Everything is cached under ``benchmarks/.cache/distill/<task>-<editor>/``: the candidates in parts of 100 inputs as
each finishes, training checkpoints every 50 steps; the same command after a kill goes on where it stopped.
The acceptance figures go to ``benchmarks/results/editor_distill.json``.

    python -m scripts.distill_editor --task sentiment [--rows 1200] [--candidates 8] [--margin 0.9] [--limit 16]

``--limit N`` is a smoke test: N inputs, 2 training steps, nothing written to results.
Measure the result with ``python -m benchmarks.editors --tasks TASK --n 200 --candidates 1 2 4 8 16 --editor OUT
--label NAME`` beside the shipped editor's curve.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results" / "editor_distill.json"
CHECKER_TASK = {"sentiment": "sentiment-analysis", "nli": "natural-language-inference"}
PART = 100


def inputs(task: str) -> Any:
    """Every training input with its human counterfactual (columns of `cfaug_hf.training.edit_pairs`)."""
    from scripts.shared_data import cad_nli_edit_rows, cad_sentiment_edit_rows

    from cfaug_hf.training import edit_pairs

    if task == "sentiment":
        return edit_pairs(cad_sentiment_edit_rows("train"), level="sentence", neighbours=1)
    return edit_pairs(cad_nli_edit_rows("train").rename_column("premise", "context"), context_column="context")


def words_changed(old: str, new: str) -> float:
    """Share of the input's words replaced or deleted, plus those inserted (the minimality the editors report)."""
    from cfaug_hf.text.diff import word_diff

    a, b = old.split(), new.split()
    return sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in word_diff(a, b)) / max(1, len(a))


def best_candidate(text: str, target: str, cands: list[str], probs: list[float], margin: float) -> dict | None:
    """The kept candidate that changes the fewest words, or None when no candidate clears ``margin``."""
    kept = [(words_changed(text, c), -p, c) for c, p in zip(cands, probs) if p >= margin]
    if not kept:
        return None
    change, neg_p, best = min(kept)
    return {"counterfactual": best, "words_changed": round(change, 3), "probability": round(-neg_p, 4)}


def sample(task: str, editor: Any, checker: Any, rows: Any, folder: Path, k: int, margin: float) -> list[dict]:
    """Each input's best kept candidate (or None), sampled in parts of `PART` inputs cached in ``folder``."""
    from cfaug_hf.components.editor import candidates

    editor.config.num_return_sequences = k
    folder.mkdir(parents=True, exist_ok=True)
    picked: list[dict] = []
    for start in range(0, len(rows), PART):
        path = folder / f"part-{start:06d}-{k}-{margin}.json"
        if path.is_file():
            picked += json.loads(path.read_text())
            continue
        part = rows.select(range(start, min(start + PART, len(rows))))
        t0 = time.perf_counter()
        raw = editor.edit_with_info(part["text"], part["target"], contexts=part["context"],
                                    seeds=part["seed"]).texts
        out = []
        for row, outs in zip(part, raw):
            cands = candidates(row["text"], outs)
            if not cands:
                out.append({"index": row["index"], "candidates": 0, "best": None})
                continue
            premises = [row["context"]] * len(cands) if task == "nli" else None
            probs = checker.predict_proba(cands, premises)[:, checker.label_id(row["target"])].tolist()
            out.append({"index": row["index"], "candidates": len(cands),
                        "best": best_candidate(row["text"], row["target"], cands, probs, margin)})
        path.write_text(json.dumps(out))
        picked += out
        kept = sum(r["best"] is not None for r in out)
        print(f"{task}: inputs {start + len(part)}/{len(rows)}: {kept} of {len(part)} kept "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return picked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", choices=sorted(CHECKER_TASK), default="sentiment")
    ap.add_argument("--rows", type=int, default=1200, help="Seeded training inputs the editor rewrites.")
    ap.add_argument("--candidates", type=int, default=8, help="Sampled candidates per input.")
    ap.add_argument("--margin", type=float, default=0.9,
                    help="The checker's probability of the target a candidate needs to be kept (0.5-1).")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=1e-4, help="Learning rate of the adapter's further training.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="Where the distilled editor goes (default: "
                                             "benchmarks/.cache/editors/<task>-distilled).")
    ap.add_argument("--limit", type=int, help="Smoke test: this many inputs, 2 training steps, no results written.")
    args = ap.parse_args()
    if not 0.5 <= args.margin <= 1.0:
        ap.error(f"--margin must be between 0.5 and 1, got {args.margin}")
    if args.rows < 1 or args.candidates < 1:
        ap.error("--rows and --candidates must be at least 1")

    from datasets import concatenate_datasets
    from transformers.trainer_utils import get_last_checkpoint

    from cfaug_hf import Editor
    from cfaug_hf.components.checker import default_checker
    from cfaug_hf.components.editor import EDITOR_DIR
    from cfaug_hf.training import train_editor

    task, n = args.task, args.limit or args.rows
    editor, checker = Editor.default(task), default_checker(CHECKER_TASK[task])
    name = f"{task}-{editor.weights_fingerprint()[:12]}"
    everything = inputs(task)
    order = list(range(len(everything)))
    random.Random(args.seed).shuffle(order)
    chosen = sorted(order[:min(n, len(order))])
    # Each input's sampling seed is its index among all training inputs: a larger --rows adds inputs and keeps
    # the candidates of those already sampled.
    rows = everything.select(chosen).add_column("index", chosen).add_column("seed", [10_000 + i for i in chosen])
    start = time.time()
    picked = sample(task, editor, checker, rows, CACHE / "distill" / f"{name}-{len(chosen)}-{args.seed}",
                    args.candidates, args.margin)
    by_index = {r["index"]: r for r in picked}
    keep = [i for i in chosen if by_index[i]["best"] is not None]
    sampling_seconds = round(time.time() - start, 1)
    own = everything.select(keep).select_columns(["text", "target", "context"]).add_column(
        "counterfactual", [by_index[i]["best"]["counterfactual"] for i in keep])
    human = everything.select(chosen).select_columns(["text", "target", "context", "counterfactual"])
    pairs = concatenate_datasets([own, human]).shuffle(seed=args.seed)
    stats = {"inputs": len(chosen), "candidates": args.candidates, "margin": args.margin,
             "with_a_kept_candidate": len(keep), "kept_share": round(len(keep) / max(1, len(chosen)), 3),
             "mean_words_changed_kept": round(sum(by_index[i]["best"]["words_changed"] for i in keep)
                                              / max(1, len(keep)), 3),
             "training_pairs": {"own": len(own), "human": len(human)}, "sampling_seconds": sampling_seconds}
    print(json.dumps(stats), flush=True)

    out = args.out or CACHE / "editors" / f"{task}-distilled"
    checkpoints = CACHE / "distill" / f"{name}-checkpoints-{len(chosen)}-{args.candidates}-{args.margin}-{args.lr}"
    resume = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() and not args.limit else None
    t0 = time.time()
    # the shipped default shares its weights with every Editor.default() in the process: train a copy of its own
    editor = Editor.from_pretrained(EDITOR_DIR / task)
    editor = train_editor(editor, pairs, task=task, num_train_epochs=args.epochs, learning_rate=args.lr,
                          max_steps=2 if args.limit else -1, seed=args.seed, output_dir=str(checkpoints),
                          resume_from_checkpoint=resume,
                          training_args={"train_sampling_strategy": "group_by_length", "logging_steps": 25,
                                         "disable_tqdm": True, "save_strategy": "steps", "save_steps": 50,
                                         "save_total_limit": 2})
    base_data = Editor.default(task).training_info.get("data", "")
    editor.training_info.update({
        "data": f"{base_data}; then its own best outputs on {len(chosen)} of those training inputs "
                f"({len(keep)} kept: the shipped checker's probability of the target at least {args.margin}, the "
                f"fewest words changed of {args.candidates} candidates) with the human pairs of the same inputs",
        "built_by": "scripts/distill_editor.py", "distilled_from": editor_digest(task),
        "distillation": stats, "train_seconds": round(time.time() - t0, 1)})
    editor.halve_adapter()
    if args.limit:
        print(f"{task}: smoke test done ({editor.training_info['global_step']} steps); nothing saved", flush=True)
        return
    editor.save_pretrained(out / task, overwrite=True)
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[task] = {**stats, "train_seconds": editor.training_info["train_seconds"],
                     "train_loss": editor.training_info.get("train_loss"), "epochs": args.epochs, "lr": args.lr,
                     "saved_to": str((out / task).relative_to(ROOT)) if (out / task).is_relative_to(ROOT)
                     else str(out / task),
                     "weights": editor.weights_fingerprint()[:12], "where": "CPU, 2 cores"}
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{task}: saved to {out / task}; {json.dumps(results[task])}", flush=True)


def editor_digest(task: str) -> str:
    from cfaug_hf import Editor

    return Editor.default(task).weights_fingerprint()[:12]


if __name__ == "__main__":
    main()
