"""Train the independent judge that certifies counterfactuals: a cross-encoder fine-tuned end to end.

The flip checker picks the editor's candidate; a flip rate measured by that same checker grades its own choice. The
judge is another model that did not choose: all-MiniLM-L6-v2 with every transformer layer, the pooler and a new head
trained (the word embeddings get a rank-4 LoRA, so the saved judge is the trained layers plus a small adapter that
names its base, about 21 MB in half precision), on CAD IMDb train's original reviews and human counterfactuals, read
whole (512 tokens). It differs from the checker in training procedure (all layers, not a rank-16 adapter; no partial
flips; another learning rate and seed) though not in data: no other IMDb data with labels is available offline.

Its ceiling is its accuracy on CAD's human counterfactuals (dev and test, never trained on): a flip rate it reports
cannot be read above that. Saved with its card and that record to
``benchmarks/results/judges/sentiment-cross-encoder``.

    python -m scripts.build_judge [--epochs 2] [--limit N]

Resumable: checkpoints go to ``benchmarks/.cache/judge-sentiment`` every 50 steps and a rerun continues from the
last one. CPU, 2 cores: about 25 minutes (one epoch).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "benchmarks" / "results" / "judges" / "sentiment-cross-encoder"
CHECKPOINTS = ROOT / "benchmarks" / ".cache" / "judge-sentiment"


def ceiling(judge, split: str) -> dict[str, float]:
    """The judge's accuracy on CAD's originals and human counterfactuals of ``split``."""
    from scripts.shared_data import cad_sentiment

    out = {}
    for part, name in (("orig", "originals"), ("new", "human_counterfactuals")):
        rows = cad_sentiment(part, split)
        pred = judge.predict(rows["text"])
        out[name] = round(100 * sum(p == y for p, y in zip(pred, rows["label"])) / len(rows), 1)
    out["rows"] = len(rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--limit", type=int, help="Train on this many rows only (a smoke test of the script).")
    parser.add_argument("--out", type=Path, default=TARGET)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from datasets import concatenate_datasets
    from scripts.checker_data import every_layer
    from scripts.shared_data import cad_sentiment, shared_dir
    from transformers.trainer_utils import get_last_checkpoint

    from cfaug_hf import TaskSchema
    from cfaug_hf.pretrained import MINILM
    from cfaug_hf.training import train_checker

    shared_dir()
    rows = concatenate_datasets([cad_sentiment("orig", "train"), cad_sentiment("new", "train")]).shuffle(seed=args.seed)
    if args.limit:
        rows = rows.select(range(min(args.limit, len(rows))))
    lora = every_layer()
    out_dir = CHECKPOINTS if not args.limit else CHECKPOINTS.with_name("judge-smoke")
    resume = get_last_checkpoint(str(out_dir)) if out_dir.is_dir() else None
    start = time.time()
    print(f"judge: {len(rows)} rows, {args.epochs} epochs, resume from {resume}", flush=True)
    judge = train_checker(MINILM, rows, TaskSchema.sentiment(), lora=lora, num_train_epochs=args.epochs,
                          learning_rate=5e-5, batch_size=16, seed=args.seed, max_length=512,
                          output_dir=str(out_dir), resume_from_checkpoint=resume,
                          training_args={"train_sampling_strategy": "group_by_length", "logging_steps": 25,
                                         "disable_tqdm": True, "save_strategy": "steps", "save_steps": 50,
                                         "save_total_limit": 1,
                                         "weight_decay": 0.01, "warmup_steps": 20})
    judge.config.batch_size = 32
    judge.training_info.update({
        "data": "CAD IMDb train, orig + new (Kaushik et al., ICLR 2020), acmi-lab/counterfactually-augmented-data, "
                "Apache-2.0; IMDb reviews (Maas et al. 2011)",
        "built_by": "scripts/build_judge.py", "role": "independent judge (benchmarks), not a flip checker",
        "train_seconds": round(time.time() - start, 1)})
    judge.training_info["eval_ceiling"] = {"dev": ceiling(judge, "dev"), "test": ceiling(judge, "test")}
    judge.halve_adapter()
    judge.save_pretrained(args.out, overwrite=True)
    print(json.dumps({"saved": str(args.out), **judge.training_info["eval_ceiling"]}, indent=1), flush=True)


if __name__ == "__main__":
    main()
