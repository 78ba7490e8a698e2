"""Build the CF-DPR retriever and the retrieval corpus that CORE's paper preset uses and the package ships
(``cfaug_hf/data/core/<task>/``), one folder per task:

- ``retriever``: CF-DPR (§3.1: a query and a document encoder trained with the DPR loss so that a text's nearest
  corpus excerpts have the opposite label). The paper trains two BERT-base encoders; here all-MiniLM-L6-v2 with a
  LoRA adapter on each encoder (a few MB in the wheel), trained on CAD pairs of the training split only:
  sentiment, the 8,305 sentences CAD's annotators changed in the 1,707 IMDb training reviews paired with their edits;
  NLI, the 1,112 SNLI (premise, hypothesis) -> revised hypothesis pairs with an entailment <-> contradiction flip.
  Two hard negatives per query are mined among same-label texts with the untrained encoder.
- ``corpus.parquet``: the unlabeled texts retrieved from (the paper: 1.6M Amazon and Yelp reviews for IMDb). Here
  the sentences of CAD's original IMDb training reviews (sentiment) or CAD-SNLI's original training premises and
  hypotheses (NLI); never a counterfactual, never a dev or test text. The FAISS index over them is built on first
  use from the shipped retriever and kept in the cache (`cfaug_hf.methods.core.shipped`), which keeps about 20 MB
  of vectors out of the wheel.

Each part checkpoints every 25 steps in ``benchmarks/.cache/core-build-<task>``, so a killed run goes on where it
stopped; a task whose folder exists is skipped unless ``--force``. CPU, 2 cores: about 3 s a step (sentiment,
batch 16 at 96 tokens with 2 hard negatives each) and 2 s (NLI, batch 32 at 32 tokens), 150 steps each. The
held-out CAD test pairs measure it (top-1 / top-5 of each query's own counterfactual among all test
counterfactuals, as `benchmarks/core_retrieval.py`), written to the retriever's card.

    python -m scripts.build_core [--task sentiment --task nli] [--limit 64 --max-steps 2 --out /tmp/core]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from scripts.shared_data import cad_nli_pairs, cad_sentiment_sentence_pairs, read_tsv, shared_dir

from cfaug_hf.pretrained import MINILM

CORE_DIR = ROOT / "cfaug_hf" / "data" / "core"
CAD = ("CAD (Kaushik, Hovy and Lipton, ICLR 2020; acmi-lab/counterfactually-augmented-data, Apache-2.0), training "
       "split only")
#: Per task: the pairs, tokens per text, batch size and steps.
SETTINGS = {"sentiment": {"pairs": cad_sentiment_sentence_pairs, "length": 96, "batch_size": 16, "steps": 150},
            "nli": {"pairs": cad_nli_pairs, "length": 32, "batch_size": 32, "steps": 150}}


def corpus_texts(task: str) -> list[str]:
    """The shipped retrieval corpus: original training texts of CAD, de-duplicated, in file order."""
    from cfaug_hf.text.sentences import split_sentences

    base = shared_dir() / "cad_kaushik"
    out: list[str] = []
    if task == "sentiment":
        for row in read_tsv(base / "sentiment" / "orig" / "train.tsv"):
            out += [s for s in split_sentences(row["Text"].replace("<br /><br />", " ")) if len(s.split()) >= 3]
    else:
        for row in read_tsv(base / "NLI" / "original" / "train.tsv"):
            out += [row["sentence1"], row["sentence2"]]
    return list(dict.fromkeys(s.strip() for s in out if len(s.split()) >= 3))


def _queries(task: str, pairs: list[dict[str, str]], sep: str) -> list[str]:
    # CORE's NLI query is the premise and the hypothesis joined by the tokenizer's separator (reference code).
    return [f"{p['premise']} {sep} {p['hypothesis']}" if task == "nli" else p["query"] for p in pairs]


def build(task: str, out: Path, *, limit: int | None, max_steps: int, force: bool) -> None:
    from datasets import Dataset
    from transformers.trainer_utils import get_last_checkpoint

    from cfaug_hf import BiEncoder
    from cfaug_hf.training import mine_hard_negatives, retrieval_accuracy, train_cf_dpr

    s = SETTINGS[task]
    train, test = s["pairs"]("train"), s["pairs"]("test")
    if limit:
        train, test = train[:limit], test[:limit]
    encoder = BiEncoder.from_base(MINILM, max_query_length=s["length"], max_document_length=s["length"])
    sep = encoder.tokenizer.sep_token
    test_q, test_p = _queries(task, test, sep), [p["positive"] for p in test]
    untrained = retrieval_accuracy(encoder, test_q, test_p)
    train_q = _queries(task, train, sep)
    texts = [p["hypothesis"] for p in train] if task == "nli" else train_q
    negatives = mine_hard_negatives(encoder, texts, [p["label"] for p in train], n=2,
                                    exclude=[p["positive"] for p in train])
    keep = [i for i, n in enumerate(negatives) if len(n) == 2]
    rows = Dataset.from_dict({"query": [train_q[i] for i in keep], "positive": [train[i]["positive"] for i in keep],
                              "hard_negatives": [negatives[i] for i in keep]}).shuffle(seed=0)
    steps_dir = ROOT / "benchmarks" / ".cache" / f"core-build-{task}{'-smoke' if limit else ''}"
    resume = get_last_checkpoint(str(steps_dir)) if steps_dir.is_dir() and not force else None
    start = time.time()
    print(f"{task}: {len(rows)} (query, counterfactual, 2 hard negatives) rows; untrained top-1 "
          f"{untrained['top1']:.3f}", flush=True)
    # The DPR module is a plain torch module, so Trainer's checkpoints hold both adapters and resume them.
    encoder = train_cf_dpr(encoder, rows, lora=True, learning_rate=5e-4, batch_size=s["batch_size"],
                           max_steps=max_steps if max_steps > 0 else s["steps"], seed=0, output_dir=str(steps_dir),
                           training_args={"disable_tqdm": True, "logging_steps": 25, "save_strategy": "steps",
                                          "save_steps": 25, "save_total_limit": 1},
                           resume_from_checkpoint=resume,
                           dataset_id=f"{CAD}: {'IMDb changed sentences' if task == 'sentiment' else 'SNLI'} pairs")
    trained = retrieval_accuracy(encoder, test_q, test_p)
    encoder.training_info.update({
        "built_by": "scripts/build_core.py", "train_seconds": round(time.time() - start, 1),
        "held_out": {"pairs": len(test), "split": "CAD test", "untrained": untrained, "trained": trained,
                     "protocol": "each query's own counterfactual among all held-out counterfactuals"}})
    encoder.halve_adapter()
    corpus = Dataset.from_dict({"text": corpus_texts(task)})
    if limit:
        corpus = corpus.select(range(min(limit * 4, len(corpus))))
    encoder.save_pretrained(out / "retriever", overwrite=True)
    corpus.to_parquet(str(out / "corpus.parquet"))
    print(f"{task}: top-1 {untrained['top1']:.3f} -> {trained['top1']:.3f}, top-5 {untrained['top5']:.3f} -> "
          f"{trained['top5']:.3f}; {len(corpus)} corpus texts; saved to {out} in {time.time() - start:.0f} s",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(SETTINGS), action="append", help="build only this task (repeatable)")
    parser.add_argument("--out", type=Path, default=CORE_DIR, help="where the task folders go")
    parser.add_argument("--force", action="store_true", help="rebuild tasks that exist, from step 0")
    parser.add_argument("--limit", type=int, help="train and test on this many pairs only (a smoke test)")
    parser.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (a smoke test)")
    args = parser.parse_args()
    shared_dir()  # fail early, with the reason, when the benchmark data is absent
    for task in args.task or list(SETTINGS):
        target = args.out / task
        if (target / "retriever").exists() and not args.force:
            print(f"{task}: {target} exists, skipped (--force rebuilds it)")
            continue
        target.mkdir(parents=True, exist_ok=True)
        build(task, target, limit=args.limit, max_steps=args.max_steps, force=args.force)
    print(json.dumps({t: str(args.out / t) for t in args.task or SETTINGS}, indent=1))


if __name__ == "__main__":
    main()
