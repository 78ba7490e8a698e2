"""Fine-tune a `LabelChecker` on labelled rows of a task with ``transformers.Trainer``."""

from __future__ import annotations

from typing import Any

from ..components.checker import LabelChecker
from ..schema import TaskSchema
from ..pretrained import quiet_dependency_warnings
from .common import dataset_info, lora_summary, make_training_args, with_lora

__all__ = ["train_checker"]


def _has_module(model: Any, name: str) -> bool:
    return any(n.rsplit(".", 1)[-1] == name for n, _ in model.named_modules())


def _accuracy(eval_pred: Any) -> dict[str, float]:
    logits, labels = eval_pred
    return {"accuracy": float((logits.argmax(-1) == labels).mean())}


def _tokenize(checker: LabelChecker, schema: TaskSchema, dataset: Any, what: str) -> Any:
    """The checker's inputs (its text columns as a pair, each side cut first) and label ids of ``dataset``."""
    from ..pretrained import token_head

    tok, cfg, cols = checker.tokenizer, checker.config, schema.text_columns

    def encode(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        schema.validate_batch(batch, indices)
        # each side cut to max_length tokens first: tokenizers' pair truncation is quadratic in the input's length
        texts = [[token_head(tok, schema.joined(v, cfg.piece_separator), cfg.max_length) for v in batch[c]]
                 for c in cols]
        enc = tok(*texts[:2], truncation=True, max_length=cfg.max_length)
        enc["labels"] = [checker.label_id(schema.label_name(v)) for v in batch[schema.label_column]]
        return dict(enc)

    return dataset.map(encode, batched=True, with_indices=True, remove_columns=dataset.column_names, desc=what)


def train_checker(checker: LabelChecker | str, train_dataset: Any, schema: TaskSchema, *, eval_dataset: Any = None,
                  lora: Any = None, num_train_epochs: float = 3.0, max_steps: int = -1,
                  learning_rate: float | None = None,
                  batch_size: int = 16, seed: int = 42, output_dir: str | None = None,
                  callbacks: list[Any] | None = None, dataset_id: str | None = None,
                  training_args: dict[str, Any] | None = None, resume_from_checkpoint: str | bool | None = None,
                  **checker_overrides: Any) -> LabelChecker:
    """Fine-tune a checker to predict the schema's label from its text columns (a pair when there are two).

    Args:
        checker: a `LabelChecker`, or a model id/folder: a new classification head is put on it with the
            schema's label names.
        train_dataset, eval_dataset: ``datasets.Dataset`` objects matching ``schema`` (labels as names or ids).
        lora: ``True`` or a ``peft.LoraConfig``: train a LoRA adapter on the linear layers plus the pooler and the
            classification head (saved whole) instead of every weight; the saved checker is the adapter (a few
            MB) and names its base. Learning rate default 5e-5, or 5e-4 with ``lora``.
        dataset_id: the Hub id of the training data, recorded for the model card.
        resume_from_checkpoint: go on from a checkpoint of ``output_dir`` (True: the latest), as in
            `train_generator`: with ``training_args={"save_steps": 50}`` a long CPU run survives an interruption.

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf import TaskSchema
        >>> from cfaug_hf.testing import tiny_classifier
        >>> rows = Dataset.from_dict({"claim": ["the cat sat", "the cat did not sit"] * 4,
        ...                           "evidence": ["the cat sat on the mat"] * 8, "label": ["SUPPORTS", "REFUTES"] * 4})
        >>> checker = train_checker(LabelChecker(*tiny_classifier()), rows, TaskSchema.fact_verification(),
        ...                         max_steps=2, training_args={"disable_tqdm": True, "logging_strategy": "no"})
        {'train_runtime': ...}
        >>> checker.training_info["train_rows"]
        8
    """
    from transformers import DataCollatorWithPadding, Trainer

    if isinstance(checker, str):
        from transformers import set_seed

        set_seed(seed)  # the new classification head is drawn from the seed too, so a run repeats exactly
        checker = LabelChecker.from_base(checker, schema.label_names, **checker_overrides)
    elif checker_overrides:
        raise TypeError(f"Checker overrides {sorted(checker_overrides)} only apply when checker is a name.")
    for name in schema.label_names:
        checker.label_id(name)
    schema.validate_features(train_dataset.features)
    if lora:
        if checker._is_peft():
            raise ValueError("The checker already has a LoRA adapter; pass lora=None to go on training it.")
        # peft trains the classification head whole for SEQ_CLS; a BERT-style pooler in front of it is trained so too.
        pooler = ["pooler"] if _has_module(checker.model, "pooler") else None
        checker.model = with_lora(checker.model, lora, "SEQ_CLS", modules_to_save=pooler)
    lr = learning_rate if learning_rate is not None else (5e-4 if lora else 5e-5)
    train_tok = _tokenize(checker, schema, train_dataset, "Tokenizing checker data")
    eval_tok = None
    if eval_dataset is not None:
        schema.validate_features(eval_dataset.features)
        eval_tok = _tokenize(checker, schema, eval_dataset, "Tokenizing checker eval data")
    args = make_training_args(output_dir, seed=seed, num_train_epochs=num_train_epochs, max_steps=max_steps,
                              learning_rate=lr, batch_size=batch_size, has_eval=eval_tok is not None,
                              overrides=training_args)
    trainer = Trainer(model=checker.model, args=args, train_dataset=train_tok, eval_dataset=eval_tok,
                      data_collator=DataCollatorWithPadding(checker.tokenizer), compute_metrics=_accuracy,
                      callbacks=callbacks)
    with quiet_dependency_warnings():
        result = trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    checker.model = trainer.model
    checker.model.eval()
    info: dict[str, Any] = {
        "task": schema.task, "schema": schema.to_dict(), "train_dataset": dataset_info(train_dataset, dataset_id),
        "train_rows": len(train_dataset), "learning_rate": lr, "num_train_epochs": num_train_epochs,
        "lora": lora_summary(checker.model) if lora else None,
        "max_steps": max_steps, "batch_size": batch_size, "seed": seed, "global_step": result.global_step,
        "train_loss": round(float(result.training_loss), 4),
    }
    if eval_tok is not None:
        metrics = trainer.evaluate()
        info["eval_loss"] = round(float(metrics["eval_loss"]), 4)
        info["eval_accuracy"] = round(float(metrics["eval_accuracy"]), 4)
    checker.training_info = info
    return checker
