"""Trainer set-up shared by the fit functions."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any

__all__ = ["make_training_args", "dataset_info", "check_columns", "time_budget_callback", "with_lora", "lora_summary"]


def make_training_args(output_dir: str | None, *, seed: int, num_train_epochs: float, max_steps: int,
                       learning_rate: float, batch_size: int, has_eval: bool,
                       overrides: dict[str, Any] | None = None) -> Any:
    """``TrainingArguments`` with defaults for short component fits: no checkpoints, no reporting, CPU when no GPU."""
    import torch
    from transformers import TrainingArguments

    kwargs: dict[str, Any] = dict(
        output_dir=output_dir or tempfile.mkdtemp(prefix="cfaug-train-"),
        seed=seed, num_train_epochs=num_train_epochs, max_steps=max_steps, learning_rate=learning_rate,
        per_device_train_batch_size=batch_size, per_device_eval_batch_size=batch_size * 2,
        save_strategy="no", report_to="none", logging_steps=10, eval_strategy="epoch" if has_eval else "no",
        use_cpu=not torch.cuda.is_available(), dataloader_num_workers=0, warmup_steps=0.06,
        lr_scheduler_type="linear", weight_decay=0.01, optim="adamw_torch",
        dataloader_pin_memory=torch.cuda.is_available(),  # pinning on a CPU-only machine only warns
    )
    kwargs.update(overrides or {})
    return TrainingArguments(**kwargs)


def dataset_info(dataset: Any, dataset_id: str | None = None) -> dict[str, Any]:
    """What a model card says about the training data: its id (when known), size and fingerprint."""
    info: dict[str, Any] = {"num_rows": len(dataset), "fingerprint": getattr(dataset, "_fingerprint", None)}
    builder = getattr(getattr(dataset, "info", None), "builder_name", None)
    if dataset_id or builder:
        info["id"] = dataset_id or builder
    return info


def check_columns(dataset: Any, columns: list[str], what: str, *, texts: Sequence[str] = (),
                  text_lists: Sequence[str] = ()) -> None:
    """Refuse missing columns, and values of the wrong type before any training: ``texts`` columns hold a non-empty
    string in every row, ``text_lists`` columns a list of non-empty strings (a string there would be read as a
    list of single characters)."""
    missing = [c for c in columns if c not in dataset.column_names]
    if missing:
        raise ValueError(f"{what}: column(s) {missing} are missing; the dataset has {dataset.column_names}.")
    for col in texts:
        for i, value in enumerate(dataset[col]):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{what}: column {col!r} at row {i} is {_shown(value)}; expected a non-empty "
                                 f"string.")
    for col in text_lists:
        for i, value in enumerate(dataset[col]):
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise ValueError(f"{what}: column {col!r} at row {i} is {_shown(value)}; expected a list of strings "
                                 f"(a single string would be read one character at a time).")
            bad = next((v for v in value if not isinstance(v, str) or not v.strip()), None)
            if bad is not None or any(not isinstance(v, str) for v in value):
                raise ValueError(f"{what}: column {col!r} at row {i} holds {_shown(bad)}; expected non-empty "
                                 f"strings.")


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


def time_budget_callback(seconds: float) -> Any:
    """A ``TrainerCallback`` that ends training once ``seconds`` of wall time have passed (checked every step)."""
    import time

    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.start = time.monotonic()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if time.monotonic() - self.start >= seconds:
                control.should_training_stop = True
            return control

    return TimeBudget()


def with_lora(model: Any, lora: Any, task_type: str, modules_to_save: list[str] | None = None) -> Any:
    """``model`` wrapped in a trainable LoRA adapter: ``lora`` is a ``peft.LoraConfig`` (used as given) or ``True``
    (rank 16, alpha 32, dropout 0.05 on every linear layer; ``modules_to_save`` are trained and saved whole).
    ``task_type`` is a ``peft.TaskType`` name (``CAUSAL_LM``, ``SEQ_2_SEQ_LM``, ``SEQ_CLS``)."""
    from ..deps import require
    from ..pretrained import quiet_dependency_warnings

    peft = require("peft", "LoRA training (lora=...)")
    if isinstance(lora, peft.LoraConfig):
        config = lora
    else:
        # A module trained whole gets no adapter inside it as well.
        skip = [rf".*\.{name}\..*" for name in modules_to_save or ()]
        config = peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules="all-linear",
                                 task_type=getattr(peft.TaskType, task_type), modules_to_save=modules_to_save,
                                 exclude_modules="|".join(skip) or None)
    with quiet_dependency_warnings():
        return peft.get_peft_model(model, config)


def lora_summary(model: Any) -> dict[str, Any]:
    """The adapter's settings, for ``training_info`` and the model card."""
    cfg = model.peft_config["default"]
    return {"r": cfg.r, "lora_alpha": cfg.lora_alpha, "lora_dropout": cfg.lora_dropout,
            "target_modules": sorted(cfg.target_modules) if isinstance(cfg.target_modules, set)
            else cfg.target_modules,
            "modules_to_save": sorted(cfg.modules_to_save) if cfg.modules_to_save else None}
