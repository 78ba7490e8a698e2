"""Train the two components RACE's paper preset needs and the package ships (``cfaug_hf/data/race/``):

- ``generator``: the evidence -> claim generator of §3.3 ("fine-tuned on the SUP instances in FEVEROUS"):
  SmolLM2-135M-Instruct with a LoRA adapter (the paper: T5-base, which is not available offline) on the SUPPORTS
  rows of the FEVEROUS training part of ``scripts.shared_data.feverous`` (ProgramFC's copy with gold evidence
  text), the evidence pieces joined as the source and the claim as the target;
- ``checker``: the three-way fact verifier of §3.2 Ad-Checking and §3.3 Post-Checking (the paper: RoBERTa on
  HoVer with SUP / REF / NEI): all-MiniLM-L6-v2 with a LoRA adapter on the same FEVEROUS rows plus NOT ENOUGH INFO
  copies made the paper's way (`cfaug_hf.methods.race.with_nei`: an evidence piece removed, or another row's
  evidence).

The FEVEROUS dev part (20%) is never used, so RACE can be measured on it. Each part checkpoints every 25 steps in
``benchmarks/.cache/race-build-<part>``, so a killed run goes on where it stopped; a part whose folder exists is
skipped unless ``--force``. CPU, 2 cores: about 20 s a step for the generator (142 steps of 8 pairs at 256 tokens:
about 50 minutes) and about 15 minutes for the checker.

    python -m scripts.build_race [--part generator --part checker] [--limit 32 --max-steps 2 --out /tmp/race]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from scripts.shared_data import feverous, shared_dir

from cfaug_hf.pretrained import MINILM

RACE_DIR = ROOT / "cfaug_hf" / "data" / "race"
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
DATA = ("FEVEROUS (Aly et al., NeurIPS 2021 Datasets and Benchmarks; CC BY-SA 3.0), ProgramFC's copy with gold "
        "evidence text (teacherpeterpan/ProgramFC, MIT), the training 80% of scripts.shared_data.feverous(seed=0)")


def _resume(folder: Path, force: bool) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder)) if folder.is_dir() and not force else None


def build_generator(out: Path, *, limit: int | None, max_steps: int, force: bool) -> None:
    from cfaug_hf import TaskSchema
    from cfaug_hf.methods.race import claim_generation_pairs
    from cfaug_hf.training import train_generator

    schema = TaskSchema.fact_verification()
    train, _ = feverous()
    pairs = claim_generation_pairs(train, schema)
    if limit:
        pairs = pairs.select(range(min(limit, len(pairs))))
    steps = ROOT / "benchmarks" / ".cache" / f"race-build-generator{'-smoke' if limit else ''}"
    start = time.time()
    print(f"generator: {len(pairs)} evidence -> claim pairs", flush=True)
    gen = train_generator(SMOLLM2, pairs, lora=True, num_train_epochs=1, max_steps=max_steps, learning_rate=2e-4,
                          batch_size=8, input_template="Evidence: {text}\nClaim:", max_source_length=256,
                          output_dir=str(steps), resume_from_checkpoint=_resume(steps, force),
                          training_args={"disable_tqdm": True, "logging_steps": 25, "save_strategy": "steps",
                                         "save_steps": 25, "save_total_limit": 1})
    gen.training_info.update({"data": DATA, "built_by": "scripts/build_race.py",
                              "train_seconds": round(time.time() - start, 1)})
    gen.halve_adapter()  # half precision: half the size in the wheel
    gen.save_pretrained(out, overwrite=True)
    print(f"generator: saved to {out} in {time.time() - start:.0f} s", flush=True)


def build_checker(out: Path, *, limit: int | None, max_steps: int, force: bool) -> None:
    from cfaug_hf import TaskSchema
    from cfaug_hf.methods.race import with_nei
    from cfaug_hf.training import train_checker

    schema = TaskSchema.fact_verification(nei=True)
    train, _ = feverous()
    if limit:
        train = train.select(range(min(limit, len(train))))
    rows = with_nei(train, schema, seed=0).shuffle(seed=0)
    steps = ROOT / "benchmarks" / ".cache" / f"race-build-checker{'-smoke' if limit else ''}"
    start = time.time()
    print(f"checker: {len(rows)} rows (SUPPORTS, REFUTES and NOT ENOUGH INFO copies)", flush=True)
    checker = train_checker(MINILM, rows.select_columns(["claim", "evidence", "label"]), schema, lora=True,
                            num_train_epochs=3, max_steps=max_steps, batch_size=32, seed=0, max_length=256,
                            output_dir=str(steps), resume_from_checkpoint=_resume(steps, force),
                            training_args={"train_sampling_strategy": "group_by_length", "disable_tqdm": True,
                                           "logging_steps": 25, "save_strategy": "steps", "save_steps": 25,
                                           "save_total_limit": 1})
    checker.training_info.update({"data": DATA + "; NOT ENOUGH INFO copies by cfaug_hf.methods.race.with_nei "
                                  "(seed 0)", "built_by": "scripts/build_race.py",
                                  "train_seconds": round(time.time() - start, 1)})
    checker.config.batch_size = 64
    checker.halve_adapter()
    checker.save_pretrained(out, overwrite=True)
    print(f"checker: saved to {out} in {time.time() - start:.0f} s", flush=True)


def evaluate(out: Path, *, limit: int | None, **_: object) -> None:
    """The shipped checker on the FEVEROUS dev part it never saw, with NOT ENOUGH INFO copies made the same way:
    accuracy and recall per label beside the majority-label rate, written to benchmarks/results/race_shipped.json."""
    from collections import Counter

    from cfaug_hf import LabelChecker, TaskSchema
    from cfaug_hf.methods.race import with_nei

    schema = TaskSchema.fact_verification(nei=True)
    _, dev = feverous()
    rows = with_nei(dev, schema, seed=1)
    if limit:
        rows = rows.select(range(min(limit, len(rows))))
    checker = LabelChecker.from_pretrained(out.parent / "checker")
    gold = [schema.label_name(v) for v in rows["label"]]
    pred = checker.predict(rows["claim"], rows["evidence"])  # lists joined as in training (piece_separator)
    counts = Counter(gold)
    result = {"rows": len(rows), "labels": dict(counts),
              "accuracy": round(sum(g == p for g, p in zip(gold, pred)) / len(gold), 4),
              "majority_rate": round(max(counts.values()) / len(gold), 4),
              "recall": {label: round(sum(g == p == label for g, p in zip(gold, pred)) / n, 4)
                         for label, n in counts.items()},
              "data": "FEVEROUS dev part (20%, never trained on) + NOT ENOUGH INFO copies (with_nei, seed 1)",
              "checker": checker.weights_fingerprint()[:16]}
    target = ROOT / "benchmarks" / "results" / "race_shipped.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1), flush=True)


PARTS = {"generator": build_generator, "checker": build_checker, "evaluate": evaluate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=sorted(PARTS), action="append", help="build only this part (repeatable)")
    parser.add_argument("--out", type=Path, default=RACE_DIR, help="where the part folders go")
    parser.add_argument("--force", action="store_true", help="rebuild parts that exist, from step 0")
    parser.add_argument("--limit", type=int, help="train on this many rows only (a smoke test of the script)")
    parser.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (a smoke test)")
    args = parser.parse_args()
    shared_dir()  # fail early, with the reason, when the benchmark data is absent
    for part in args.part or list(PARTS):
        target = args.out / part
        if target.exists() and not args.force and part != "evaluate":
            print(f"{part}: {target} exists, skipped (--force rebuilds it)")
            continue
        PARTS[part](target, limit=args.limit, max_steps=args.max_steps, force=args.force)
    print(json.dumps({p: str(args.out / p) for p in args.part or PARTS if p != "evaluate"}, indent=1))


if __name__ == "__main__":
    main()
