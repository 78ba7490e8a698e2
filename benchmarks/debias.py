"""Does augmentation make a classifier rely less on shortcuts? Train on original vs augmented data, test in-domain
and on contrast / out-of-distribution sets, over several seeds.

    python benchmarks/debias.py --config sentiment|nli|fv|all [--model bow|MODEL_ID_OR_PATH] [--seeds 0 1 2]
                                [--rows none human eda crossaug] [--max-length 256] [--epochs 3]

Configurations (data from ../shared/data, see its MANIFEST.md):
  sentiment  train CAD IMDb orig/train (1707); test orig/test, new/test (human counterfactuals), contrast set dev
  nli        train CAD SNLI original/train; test original/test, revised_hypothesis/test, revised_premise/test
  fv         train FEVEROUS claims+evidence (80% of 2962); test the other 20% and FEVER-Symmetric v0.2 dev
  fever      the CrossAug paper's setup for claim-only bias: train FEVER claims+evidence in FEVER's own format (90%
             of the 10746 decontaminated FEVER paper-dev rows); test the held-out 10% and FEVER-Symmetric v0.2 dev
Rows (training sets):
  none       the original training data
  human      original + the human counterfactuals (CAD; sentiment and nli)
  eda        original + one EDA-style copy of each row (random swap, deletion, insertion of its own words; the
             label kept): an equal-size generic augmentation
  reweight   the original data, each example weighted by the inverse of a claim-only model's probability of its
             label (out-of-fold, bag of words; weights normalised to mean 1): the simple, strong non-CDA baseline
             of Schuster et al. (2019) for claim-only bias (fv, fever)
  crossaug   original + CrossAug counterfactuals (fv). The negative-claim generator is trained on the CAD-SNLI
             pairs only (never on FEVER-Symmetric, which is a test set here), then cached in benchmarks/.cache/
             (CFAUG_CROSSAUG_DATA=folder reuses an augmented training set saved earlier)
Models: ``bow`` is TF-IDF word 1-2 grams per text column + logistic regression (minutes for everything); any other
value is a Hugging Face model id or folder fine-tuned with Trainer (default MiniLM, resolved offline).
Writes benchmarks/results/debias_<config>_<model>.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

from shared_data import ROOT, cad_nli, cad_sentiment, fever_paper, fever_symmetric, feverous, imdb_contrast

from cfaug_hf import TaskSchema

CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = Path(os.environ.get("CFAUG_RESULTS_DIR", ROOT / "benchmarks" / "results"))


# -------------------------------------------------------------------------------------------- configurations
def sentiment_config() -> dict[str, Any]:
    from datasets import concatenate_datasets

    train = cad_sentiment("orig", "train")
    return {"schema": TaskSchema.sentiment(id_column="id"), "train": train,
            "human": lambda: concatenate_datasets([train, cad_sentiment("new", "train")]),
            "tests": {"orig/test": cad_sentiment("orig", "test"), "new/test (CAD)": cad_sentiment("new", "test"),
                      "contrast dev": imdb_contrast("contrast")}}


def nli_config() -> dict[str, Any]:
    from datasets import concatenate_datasets

    train = cad_nli("original", "train")
    return {"schema": TaskSchema.nli(id_column="id"), "train": train,
            "human": lambda: concatenate_datasets([train, cad_nli("revised_combined", "train")]),
            "tests": {"original/test": cad_nli("original", "test"),
                      "revised_hypothesis/test": cad_nli("revised_hypothesis", "test"),
                      "revised_premise/test": cad_nli("revised_premise", "test")}}


def fv_config() -> dict[str, Any]:
    train, dev = feverous()
    return {"schema": TaskSchema.fact_verification(id_column="id"), "train": train, "human": None,
            "crossaug": lambda: crossaug_fv(train),
            "tests": {"feverous dev": dev, "fever-symmetric": fever_symmetric()}}


def fever_config() -> dict[str, Any]:
    train, dev = fever_paper()
    return {"schema": TaskSchema.fact_verification(id_column="id"), "train": train, "human": None,
            "tests": {"fever held-out": dev, "fever-symmetric": fever_symmetric()}}


CONFIGS = {"sentiment": sentiment_config, "nli": nli_config, "fv": fv_config, "fever": fever_config}


# --------------------------------------------------------------------------------------------- augmentations
def eda_copy(text: str, rng: random.Random, alpha: float = 0.1) -> str:
    """One EDA-style variant (Wei and Zou 2019) without a thesaurus: random swap, deletion or insertion of words."""
    words = text.split()
    if len(words) < 2:
        return text
    n = max(1, int(alpha * len(words)))
    op = rng.choice(["swap", "delete", "insert"])
    for _ in range(n):
        if op == "swap":
            i, j = rng.randrange(len(words)), rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif op == "delete" and len(words) > 1:
            words.pop(rng.randrange(len(words)))
        else:
            words.insert(rng.randrange(len(words) + 1), rng.choice(words))
    return " ".join(words)


def eda(train: Any, schema: TaskSchema, seed: int) -> Any:
    from datasets import concatenate_datasets

    def copy(row: dict, idx: int) -> dict:
        rng = random.Random(f"{seed}-{idx}")
        out = dict(row)
        for col in schema.bias_columns:
            value = row[col]
            out[col] = eda_copy(value, rng) if isinstance(value, str) else [eda_copy(v, rng) for v in value]
        return out

    return concatenate_datasets([train, train.map(copy, with_indices=True)])


def crossaug_fv(train: Any) -> Any:
    """CrossAug on the FEVEROUS training split, cached: the generator (trained on CAD-SNLI pairs) and the output."""
    from datasets import load_from_disk

    from cfaug_hf import CrossAugAugmenter, Generator
    from cfaug_hf.embedded import load_claim_pairs
    from cfaug_hf.methods.crossaug.recipes import negative_claim_generator

    out_dir = Path(os.environ["CFAUG_CROSSAUG_DATA"]) if os.environ.get("CFAUG_CROSSAUG_DATA") else \
        CACHE / f"fv_crossaug_{train._fingerprint[:12]}"
    if (out_dir / "dataset_info.json").is_file():
        return load_from_disk(str(out_dir))
    gen_dir = CACHE / "generator-cad-snli"
    if (gen_dir / "cfaug_generator.json").is_file():
        generator = Generator.from_pretrained(gen_dir)
    else:
        print("Training the negative-claim generator on CAD-SNLI pairs (about 5 minutes on 2 CPU cores)...")
        generator = negative_claim_generator(pairs=load_claim_pairs(origin="cad-snli"))
        generator.save_pretrained(gen_dir)
    generator.config.num_return_sequences = 5
    augmenter = CrossAugAugmenter(generator, TaskSchema.fact_verification(id_column="id"), reject_deletions=True)
    start = time.perf_counter()
    augmented = augmenter.augment(train, batch_size=32)
    print("\n".join(augmenter.stats.summary_lines()))
    print(f"CrossAug took {time.perf_counter() - start:.0f}s")
    augmented.save_to_disk(str(out_dir))
    return augmented


def claim_only_weights(train: Any, schema: TaskSchema, folds: int = 5) -> list[float]:
    """1 / p(label | claim) from a bag-of-words claim-only model, out-of-fold so no example scores itself;
    normalised to mean 1 (Schuster et al. 2019's re-weighting baseline)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline

    claims = [v if isinstance(v, str) else " ".join(v) for v in train[schema.bias_columns[0]]]
    labels = np.array(_labels(train, schema))
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
                          LogisticRegression(max_iter=2000, C=4.0))
    probs = cross_val_predict(model, claims, labels, cv=folds, method="predict_proba")
    weights = 1.0 / np.clip(probs[np.arange(len(labels)), labels], 0.05, 1.0)
    return list(weights / weights.mean())


def training_set(config: dict[str, Any], row: str, seed: int) -> Any | None:
    if row == "none":
        return config["train"]
    if row == "reweight":
        if config["schema"].task != "fact-verification":
            return None
        train = config["train"]
        return train.add_column("sample_weight", claim_only_weights(train, config["schema"]))
    if row == "eda":
        return eda(config["train"], config["schema"], seed)
    maker = config.get(row)
    return maker() if maker else None


# ---------------------------------------------------------------------------------------------- classifiers
def _columns(data: Any, schema: TaskSchema) -> dict[str, list[str]]:
    return {c: [v if isinstance(v, str) else " ".join(v) for v in data[c]] for c in schema.text_columns}


def _labels(data: Any, schema: TaskSchema) -> list[int]:
    return [schema.label_id(x) for x in data[schema.label_column]]


def run_bow(train: Any, tests: dict[str, Any], schema: TaskSchema, seed: int, **_: Any) -> dict[str, float]:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    cols = _columns(train, schema)
    vecs = {c: TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=100_000, sublinear_tf=True).fit(v)
            for c, v in cols.items()}

    def features(data: Any) -> Any:
        return hstack([vecs[c].transform(v) for c, v in _columns(data, schema).items()]).tocsr()

    weights = train["sample_weight"] if "sample_weight" in train.column_names else None
    clf = LogisticRegression(max_iter=2000, C=4.0, random_state=seed).fit(features(train), _labels(train, schema),
                                                                        sample_weight=weights)
    return {name: float((clf.predict(features(d)) == _labels(d, schema)).mean()) for name, d in tests.items()}


def run_hf(train: Any, tests: dict[str, Any], schema: TaskSchema, seed: int, *, model: str, max_length: int,
           epochs: float, batch_size: int, learning_rate: float) -> dict[str, float]:
    import numpy as np
    from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding, Trainer, TrainingArguments

    from cfaug_hf.models import load_model, load_tokenizer

    tok = load_tokenizer(model)
    net = load_model(AutoModelForSequenceClassification, model, num_labels=schema.num_labels,
                     id2label=dict(enumerate(schema.label_names)),
                     label2id={n: i for i, n in enumerate(schema.label_names)}).float()  # fp32 even from fp16 files

    def encode(batch: dict) -> dict:
        cols = [[v if isinstance(v, str) else " ".join(v) for v in batch[c]] for c in schema.text_columns]
        enc = tok(*cols, truncation=True, max_length=max_length)
        enc["labels"] = [schema.label_id(x) for x in batch[schema.label_column]]
        if "sample_weight" in batch:
            enc["sample_weight"] = batch["sample_weight"]
        return enc

    class WeightedTrainer(Trainer):
        """Per-example loss weights from a ``sample_weight`` column (the re-weighting baseline)."""

        def compute_loss(self, model: Any, inputs: dict, return_outputs: bool = False, **kwargs: Any) -> Any:
            weights = inputs.pop("sample_weight", None)
            if weights is None:
                return super().compute_loss(model, inputs, return_outputs=return_outputs, **kwargs)
            import torch

            labels = inputs.pop("labels")
            outputs = model(**inputs)
            loss = torch.nn.functional.cross_entropy(outputs.logits, labels, reduction="none")
            loss = (loss * weights.to(loss.dtype)).mean()
            return (loss, outputs) if return_outputs else loss

    def prepare(data: Any) -> Any:
        return data.map(encode, batched=True, remove_columns=data.column_names)


    args = TrainingArguments(output_dir=str(CACHE / "trainer"), num_train_epochs=epochs, learning_rate=learning_rate,
                             per_device_train_batch_size=batch_size, per_device_eval_batch_size=64,
                             weight_decay=0.01, seed=seed, save_strategy="no", report_to=[],
                             remove_unused_columns=False,  # prepare() keeps only model inputs and sample_weight
                             logging_steps=50, disable_tqdm=True)
    trainer = WeightedTrainer(model=net, args=args, train_dataset=prepare(train).shuffle(seed=seed),
                              data_collator=DataCollatorWithPadding(tok))
    trainer.train()
    out = {}
    for name, data in tests.items():
        pred = trainer.predict(prepare(data))
        out[name] = float((np.argmax(pred.predictions, -1) == pred.label_ids).mean())
    return out


# ----------------------------------------------------------------------------------------------------- main
def fmt(values: list[float]) -> str:
    mean = statistics.mean(values) * 100
    spread = statistics.stdev(values) * 100 if len(values) > 1 else 0.0
    return f"{mean:.1f} ± {spread:.1f}"


def run_config(name: str, args: argparse.Namespace) -> dict[str, Any]:
    config = CONFIGS[name]()
    if args.max_train and len(config["train"]) > args.max_train:
        config["train"] = config["train"].shuffle(seed=0).select(range(args.max_train))
    schema, tests = config["schema"], config["tests"]
    model_label = "bow" if args.model == "bow" else Path(args.model).name
    results: dict[str, Any] = {"config": name, "model": args.model, "seeds": args.seeds,
                               "train_rows": len(config["train"]), "tests": {t: len(d) for t, d in tests.items()},
                               "rows": {}}
    if args.device_note:
        results["device"] = args.device_note
    for row in args.rows:
        per_seed, sizes, seconds = [], [], []
        for seed in args.seeds:
            train = training_set(config, row, seed)
            if train is None:
                break
            start = time.perf_counter()
            if args.model == "bow":
                acc = run_bow(train, tests, schema, seed)
            else:
                acc = run_hf(train, tests, schema, seed, model=args.model, max_length=args.max_length,
                             epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate)
            seconds.append(time.perf_counter() - start)
            per_seed.append(acc)
            sizes.append(len(train))
            print(f"[{name} {model_label}] {row} seed {seed}: " + ", ".join(f"{t} {a:.3f}" for t, a in acc.items()),
                  flush=True)
        if per_seed:
            results["rows"][row] = {"train_rows": sizes[0], "seconds": statistics.mean(seconds),
                                    "accuracy": {t: [a[t] for a in per_seed] for t in tests}}
    write(results, model_label)
    return results


def write(results: dict[str, Any], model_label: str) -> None:
    tests = list(results["tests"])
    lines = [f"# Debiasing benchmark: {results['config']}, {results['model']}", "",
             f"Accuracy (%) mean ± standard deviation over seeds {results['seeds']}; training set "
             f"{results['train_rows']} original rows; test sizes " +
             ", ".join(f"{t} {n}" for t, n in results["tests"].items()) + ".", "",
             "| training data | rows | " + " | ".join(tests) + " | seconds/run |",
             "|---|---|" + "---|" * len(tests) + "---|"]
    for row, r in results["rows"].items():
        lines.append(f"| {row} | {r['train_rows']} | " + " | ".join(fmt(r["accuracy"][t]) for t in tests) +
                     f" | {r['seconds']:.0f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = RESULTS / f"debias_{results['config']}_{model_label}"
    stem.with_suffix(".md").write_text(table)
    stem.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")


def main() -> None:
    from cfaug_hf.models import MINILM

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", choices=[*CONFIGS, "all"], default="all")
    ap.add_argument("--model", default="bow", help=f"'bow' or a model id/folder (e.g. {MINILM})")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rows", nargs="+", default=["none", "human", "eda", "reweight", "crossaug"])
    ap.add_argument("--max-train", type=int, default=None, help="cap the training rows (a CPU-sized run)")
    ap.add_argument("--device-note", default=None, help="where it ran, recorded in the results and leaderboard")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--learning-rate", type=float, default=5e-5)
    args = ap.parse_args()
    for name in CONFIGS if args.config == "all" else [args.config]:
        run_config(name, args)


if __name__ == "__main__":
    main()
