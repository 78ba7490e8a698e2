"""Fresh CrossAug counterfactuals every epoch inside a plain Trainer, with AugmentationCallback.

    python examples/augment_callback.py [--generator FOLDER] [--mode sampling|hard] [--epochs 3]

The generator samples (a new seed every epoch), so each epoch trains on different negative claims; with
--mode hard, only the counterfactuals the model being trained still gets wrong fill the slots. Without --generator
it uses the negative-claim generator shipped in the package.
"""

from __future__ import annotations

import argparse
import dataclasses

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

from cfaug_hf import CrossAugAugmenter, Generator, TaskSchema
from cfaug_hf.data import load_feverous_sample
from cfaug_hf.methods.crossaug.recipes import default_claim_generator
from cfaug_hf.pretrained import MINILM, resolve_model
from trainer_callbacks import AugmentationCallback, AugmentedEpochDataset, SchemaCollator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", help="saved Generator folder or Hub id (default: the one shipped in the package)")
    ap.add_argument("--model", default=MINILM, help="classifier to fine-tune, Hub id or folder (default MiniLM)")
    ap.add_argument("--mode", choices=["sampling", "hard"], default="sampling", help="how slots are refilled")
    ap.add_argument("--rows", type=int, default=200, help="FEVEROUS rows to train on (default 200)")
    ap.add_argument("--epochs", type=float, default=3, help="training epochs (default 3)")
    ap.add_argument("--out", default="runs/augment-callback", help="Trainer output folder")
    args = ap.parse_args()

    schema = TaskSchema.fact_verification(id_column="id")
    data = load_feverous_sample().select(range(args.rows)).select_columns(["id", "claim", "evidence", "label"])

    # A sampling generator: one seeded sample per claim and epoch, so every epoch gets new counterfactuals.
    generator = Generator.from_pretrained(args.generator) if args.generator else default_claim_generator()
    generator.config = dataclasses.replace(generator.config, do_sample=True, num_beams=1, num_return_sequences=3,
                                           top_p=0.9)
    train = AugmentedEpochDataset(data, schema)   # the originals plus as many counterfactual slots
    ref = resolve_model(args.model)
    tokenizer = AutoTokenizer.from_pretrained(ref.path, **ref.kwargs)
    model = AutoModelForSequenceClassification.from_pretrained(
        ref.path, num_labels=2, id2label=dict(enumerate(schema.label_names)),
        label2id={n: i for i, n in enumerate(schema.label_names)}, **ref.kwargs)
    callback = AugmentationCallback(CrossAugAugmenter(generator, schema), train, mode=args.mode, tokenizer=tokenizer)
    trainer = Trainer(model=model, train_dataset=train, data_collator=SchemaCollator(tokenizer, schema),
                      callbacks=[callback],
                      args=TrainingArguments(args.out, num_train_epochs=args.epochs, per_device_train_batch_size=16,
                                             remove_unused_columns=False, save_strategy="no", report_to="none",
                                             logging_strategy="epoch", dataloader_pin_memory=torch.cuda.is_available()))
    callback.attach(trainer)  # the regeneration figures go through trainer.log
    trainer.train()
    for h in callback.history:
        print(f"epoch {h['epoch'] + 1}: trained on {h['cfaug_counterfactuals']} of {h['cfaug_generated']} fresh "
              f"counterfactuals; regeneration took {h['cfaug_regeneration_s']:.1f} s "
              f"({100 * h.get('cfaug_regeneration_share', 0):.0f}% of the epoch)")


if __name__ == "__main__":
    main()
