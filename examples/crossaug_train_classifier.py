"""Augment a fact-verification dataset with CrossAug, then train a claim/evidence classifier on it with Trainer.

    python examples/crossaug_train_classifier.py --generator runs/demo/generator [--model MODEL] [--out runs/example]

Copy this file and change three things: how you load your dataset, the column names in the TaskSchema, and the
generator (a folder written by `cfaug demo` or `Generator.save_pretrained`, or a Hub id). Without --generator it
trains a small one first (a few minutes on a CPU).
"""

from __future__ import annotations

import argparse

import numpy as np
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer,
                          TrainingArguments)

from cfaug_hf import CrossAugAugmenter, Generator, TaskSchema
from cfaug_hf.embedded import load_feverous_sample
from cfaug_hf.methods.crossaug.recipes import negative_claim_generator
from cfaug_hf.models import MINILM, resolve_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", help="saved Generator folder or Hub id (default: train one now)")
    ap.add_argument("--model", default=MINILM, help="classifier to fine-tune (Hub id or folder)")
    ap.add_argument("--out", default="runs/example")
    ap.add_argument("--epochs", type=float, default=2.0)
    args = ap.parse_args()

    # 1. Your data: any datasets.Dataset with a claim, an evidence (string or list of strings) and a label.
    data = load_feverous_sample().train_test_split(test_size=0.2, seed=0)
    schema = TaskSchema.fact_verification(claim="claim", evidence="evidence", label="label", id_column="id")

    # 2. Augment the training split. Only SUPPORTS rows are rewritten; every row says where it came from.
    generator = Generator.from_pretrained(args.generator) if args.generator else negative_claim_generator()
    augmenter = CrossAugAugmenter(generator, schema)
    train = data["train"].map(augmenter, batched=True, batch_size=32)
    print("\n".join(augmenter.stats.summary_lines()))

    # 3. Train a classifier on the augmented data with a plain Trainer.
    ref = resolve_model(args.model)
    tokenizer = AutoTokenizer.from_pretrained(ref.path, **ref.kwargs)
    model = AutoModelForSequenceClassification.from_pretrained(
        ref.path, num_labels=2, id2label=dict(enumerate(schema.label_names)),
        label2id={n: i for i, n in enumerate(schema.label_names)}, **ref.kwargs)

    def encode(batch):
        evidence = [schema.joined(e) for e in batch["evidence"]]
        enc = tokenizer(batch["claim"], evidence, truncation=True, max_length=256)
        enc["labels"] = [schema.label_id(v) for v in batch["label"]]
        return enc

    train_tok = train.map(encode, batched=True, remove_columns=train.column_names)
    test_tok = data["test"].map(encode, batched=True, remove_columns=data["test"].column_names)
    trainer = Trainer(
        model=model,
        args=TrainingArguments(output_dir=args.out, num_train_epochs=args.epochs, per_device_train_batch_size=16,
                               learning_rate=5e-5, save_strategy="no", report_to="none", logging_steps=20),
        train_dataset=train_tok, eval_dataset=test_tok, data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=lambda p: {"accuracy": float((np.argmax(p.predictions, -1) == p.label_ids).mean())},
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
