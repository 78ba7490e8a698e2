"""Add ICDA to an existing Trainer: counterfactuals regenerated every epoch from the rationale model being trained.

    python examples/icda_callback.py [--data reviews.jsonl] [--docs 400] [--epochs 4] [--out runs/icda-example]

--data is a JSON/JSONL/CSV file with a ``text`` (or pre-split ``sentences``) column and a 0/1 ``label``; without it
the example builds synthetic restaurant reviews whose label is decided by the food sentence, with a planted shortcut
in the other sentences (``cfaug_hf.data.synthetic_reviews``), so it runs from a clean install. The token encoder
is frozen (MiniLM, shipped on PyPI), so sentence vectors are computed once and an epoch takes seconds on a CPU.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from transformers import Trainer, TrainingArguments

from cfaug_hf import RationaleSelector
from cfaug_hf.methods.icda import CounterfactualEpochDataset, rationale_precision
from trainer_callbacks import ICDACallback


def load(args: argparse.Namespace) -> tuple[list, list[int], list | None]:
    if args.data:
        from datasets import load_dataset

        data = load_dataset("json" if args.data.endswith(("json", "jsonl")) else "csv", data_files=args.data,
                            split="train")
        column = "sentences" if "sentences" in data.column_names else "text"
        return list(data[column])[:args.docs], [int(y) for y in data["label"]][:args.docs], None
    from cfaug_hf.data import synthetic_reviews

    rows = synthetic_reviews(args.docs, seed=0)
    truth = [[j == r["rationale"] for j in range(len(r["sentences"]))] for r in rows]
    return list(rows["sentences"]), list(rows["label"]), truth


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data")
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--epochs", type=float, default=4)
    ap.add_argument("--out", default="runs/icda-example")
    args = ap.parse_args()
    documents, labels, truth = load(args)

    # 1. The rationale model (a transformers PreTrainedModel) with a frozen MiniLM token encoder.
    selector = RationaleSelector.from_encoder(label_names=["negative", "positive"], freeze_encoder=True)

    # 2. The training set: originals plus as many counterfactual slots, refilled in place each epoch.
    train = CounterfactualEpochDataset(documents, labels)
    selector.embed_table(train.table)  # the fast path: every sentence embedded once

    # 3. A plain Trainer; the callback regenerates the counterfactuals at the start of every epoch after the first.
    icda = ICDACallback(train, tokenizer=selector.tokenizer)
    trainer = Trainer(model=selector.model, train_dataset=train, data_collator=selector.collator(train.table),
                      callbacks=[icda],
                      args=TrainingArguments(args.out, num_train_epochs=args.epochs, learning_rate=5e-4,
                                             dataloader_pin_memory=torch.cuda.is_available(),
                                             per_device_train_batch_size=32, remove_unused_columns=False,
                                             save_strategy="epoch", report_to=[], logging_strategy="epoch"))
    icda.attach(trainer)  # ΔA and the counterfactual counts go through trainer.log
    trainer.train()
    for h in icda.history:  # h["epoch"] counts from 0, like state.epoch when the epoch begins; print it from 1
        delta = "n/a" if h["icda_delta_A"] is None else f"{h['icda_delta_A']:.3f}"
        print(f"epoch {h['epoch'] + 1}: trained on {h['icda_counterfactuals']} fresh counterfactuals; delta A "
              f"{delta}; train accuracy of the selector before it {h['icda_train_accuracy']:.3f}")
    if truth is not None:
        sel = selector.select(train.docs, train.labels, table=train.table)
        print(f"rationale precision on the training reviews: {rationale_precision(sel.selected, truth):.3f}")
    selector.save_pretrained(Path(args.out) / "selector")


if __name__ == "__main__":
    main()
