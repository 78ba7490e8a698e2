"""Train the sentence checker: the model the edit-until-flipped loop asks about one sentence at a time.

The loop ranks a review's sentences by how much each carries the review's label and keeps editing while any
sentence read alone still says the old verdict (the residual check). The whole-input checker reads reviews; asked
about one sentence it misses ratings and mild praise ("I vote a 2.", "8 out of 10 stars!", "Go see it."), so the
loop stops with them left in (the partial flips of the hand reading, ``benchmarks/results/whole_input_reading.md``).
This checker learns single sentences only: from CAD IMDb train's 1707 human pairs
(`cfaug_hf.training.sentence_verdicts`), every sentence the annotators replaced with its review's label, every
sentence that replaced it with the target, and the sentences both sides share once with either label (they carry
no verdict, so it learns even odds for plot and cast). 29,775 rows, 64 tokens.

Two ways of training, kept side by side because their size differs 13 times: ``--variant adapter`` (a rank-16
LoRA adapter, pooler and head, 1.6 MB) and ``--variant every`` (every transformer layer, about 21 MB in half
precision). ``--variant three-way`` is the unit reader: every layer, and a third label ``none`` in place of even
odds: each shared sentence once as ``none`` (``sentence_verdicts(no_verdict="none")``), plus sentences that carry no
verdict from elsewhere (`NEUTRAL`): Wikipedia sentences about films, actors and books from FEVER's evidence, and
SNLI premises (descriptions of photographs). It says "no verdict" outright, so the loop's residual check can tell
plot from praise. Each is judged on CAD IMDb dev's sentences (never trained on) and written with its card to
``benchmarks/.cache/sentence-checker-VARIANT``; ``--ship`` copies one into ``cfaug_hf/data/checkers/``.

    python -m scripts.build_sentence_checker --variant every [--epochs 2] [--limit N] [--ship]

Resumable: checkpoints every 100 steps under ``benchmarks/.cache/sentence-checker-VARIANT-steps``.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results" / "sentence_checker.json"

#: sentences that carry a verdict a whole-review checker missed in the hand reading, and plot sentences that
#: carry none: what the loop most needs this checker to read right (a probe, never trained on)
PROBES = {"positive": ["8 out of 10 stars!", "Go see it.", "It's got everything.", "Fast paced and funny satire.",
                       "I recommend this to anyone.", "The music's pretty damn good."],
          "negative": ["I vote a 2.", "DO NOT SEE.", "1 out of ten stars.", "Its a laughable mess.",
                       "Life's too short for this.", "That's not a compliment."],
          "neither": ["The film is set in Ohio in 1953.", "It was released on DVD last year.",
                      "The story follows two brothers who run a farm."]}

#: where the three-way reader's extra no-verdict sentences come from, and at most how many of each
NEUTRAL = {"fever_film_sentences": 738, "snli_premises": 2000}

DATA = ("single sentences of CAD IMDb train's 1707 human pairs (Kaushik et al., ICLR 2020), "
        "acmi-lab/counterfactually-augmented-data, Apache-2.0; IMDb reviews (Maas et al. 2011): "
        "cfaug_hf.training.sentence_verdicts, seed 0, every shared sentence (up to 100 a pair) once with either label")


THREE_WAY_DATA = (DATA.replace("once with either label", "once as 'none'") +
                  "; no-verdict sentences: FEVER paper dev evidence sentences about films, actors, series and books "
                  "(Wikipedia, CC BY-SA 3.0) and CAD SNLI original premises (SNLI, CC BY-SA 4.0)")


def neutral_sentences(seed: int) -> list[str]:
    """Sentences that carry no verdict on a film: Wikipedia sentences about films, people and books (FEVER's
    evidence) and SNLI premises (descriptions of photographs), `NEUTRAL` of each, seeded."""
    from scripts.shared_data import cad_nli, fever_paper

    film = (" film", " movie", " actor", " actress", " directed", " starring", " television", " series", " novel",
            " album")
    wiki: list[str] = []
    for part in fever_paper():
        for evidence in part["evidence"]:
            wiki += [e for e in evidence if any(w in e for w in film) and 5 <= len(e.split()) <= 40]
    premises = [p for p in cad_nli("original", "train")["premise"] if len(p.split()) >= 5]
    rng = random.Random(seed)
    wiki, premises = list(dict.fromkeys(wiki)), sorted(set(premises))
    rng.shuffle(wiki)
    rng.shuffle(premises)
    return wiki[:NEUTRAL["fever_film_sentences"]] + premises[:NEUTRAL["snli_premises"]]


def training_rows(seed: int, limit: int | None, three_way: bool = False):
    from datasets import Dataset, concatenate_datasets
    from scripts.shared_data import cad_sentiment_edit_rows

    from cfaug_hf.training import sentence_verdicts

    rows = sentence_verdicts(cad_sentiment_edit_rows("train"), unchanged_per_pair=100, seed=seed,
                             no_verdict="none" if three_way else None).select_columns(["text", "label"])
    if three_way:
        extra = neutral_sentences(seed)
        rows = concatenate_datasets([rows, Dataset.from_dict({"text": extra, "label": ["none"] * len(extra)})])
    rows = rows.shuffle(seed=seed)
    return rows.select(range(min(limit, len(rows)))) if limit else rows


def probe(checker) -> dict[str, dict[str, float]]:
    """Each probe sentence's probability of positive."""
    pos = checker.label_id("positive")
    return {side: {s: round(float(p[pos]), 3) for s, p in zip(sents, checker.predict_proba(sents))}
            for side, sents in PROBES.items()}


def probes_read_right(checker) -> str:
    """How many probe sentences the checker reads as a reader would: a polar one with its side's probability over
    0.5, a neutral one under the loop's residual (0.8) for both sides."""
    neg, pos = checker.label_id("negative"), checker.label_id("positive")
    right = 0
    for side, sents in PROBES.items():
        for p in checker.predict_proba(sents):
            right += bool({"positive": p[pos] > 0.5, "negative": p[neg] > 0.5,
                           "neither": max(p[pos], p[neg]) < 0.8}[side])
    return f"{right}/{sum(len(v) for v in PROBES.values())}"


def evaluate(checker) -> dict:
    from benchmarks.whole_input import sentence_reading

    out = sentence_reading(checker)
    out["probes_positive_probability"] = probe(checker)
    out["probes_read_right"] = probes_read_right(checker)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=["adapter", "every", "three-way"], default="every")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, help="Train on this many rows only (a smoke test of the script).")
    parser.add_argument("--ship", action="store_true",
                        help="Copy the built checker to cfaug_hf/data/checkers/sentiment-sentences.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from scripts.checker_data import every_layer
    from scripts.shared_data import shared_dir
    from transformers.trainer_utils import get_last_checkpoint

    from cfaug_hf import LabelChecker, TaskSchema
    from cfaug_hf.data import CHECKER_DIR
    from cfaug_hf.pretrained import MINILM
    from cfaug_hf.training import train_checker

    shared_dir()
    name = f"sentence-checker-{args.variant}" + ("-smoke" if args.limit else "")
    target = CACHE / name
    if not (target / "cfaug_checker.json").is_file():
        three_way = args.variant == "three-way"
        rows = training_rows(args.seed, args.limit, three_way)
        steps = CACHE / f"{name}-steps"
        resume = get_last_checkpoint(str(steps)) if steps.is_dir() else None
        every = args.variant in ("every", "three-way")
        schema = TaskSchema.sentiment(label_names=("negative", "positive", "none") if three_way else
                                      ("negative", "positive"))
        start = time.time()
        print(f"{name}: {len(rows)} rows, {args.epochs} epochs, resume from {resume}", flush=True)
        checker = train_checker(MINILM, rows, schema, lora=every_layer() if every else True,
                                num_train_epochs=args.epochs, batch_size=32,
                                learning_rate=5e-5 if every else None, seed=args.seed, max_length=64,
                                output_dir=str(steps), resume_from_checkpoint=resume,
                                training_args={"train_sampling_strategy": "group_by_length", "logging_steps": 50,
                                               "disable_tqdm": True, "save_strategy": "steps", "save_steps": 100,
                                               "save_total_limit": 1, "warmup_steps": 30})
        checker.config.batch_size = 128
        checker.training_info.update({"data": THREE_WAY_DATA if three_way else DATA,
                                      "built_by": "scripts/build_sentence_checker.py",
                                      "role": "sentence checker: reads one sentence at a time for the "
                                              "edit-until-flipped loop's ranking and residual check",
                                      "train_seconds": round(time.time() - start, 1)})
        checker.training_info["eval_cad_dev_sentences"] = evaluate(checker)
        checker.halve_adapter()
        checker.save_pretrained(target, overwrite=True)
    checker = LabelChecker.from_pretrained(target)
    result = checker.training_info["eval_cad_dev_sentences"]
    if not args.limit:
        record = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
        record[args.variant] = {"epochs": args.epochs, "train_seconds": checker.training_info.get("train_seconds"),
                                **result}
        RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(result, indent=1), flush=True)
    if args.ship:
        dest = CHECKER_DIR / "sentiment-sentences"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(target, dest)
        print(f"shipped to {dest}")


if __name__ == "__main__":
    main()
