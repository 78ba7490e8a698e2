"""Fine-tune a `Generator` on (source, target) text pairs with ``transformers.Trainer``."""

from __future__ import annotations

from typing import Any

from ..components.generator import Generator
from ..pretrained import quiet_dependency_warnings
from .common import check_columns, dataset_info, lora_summary, make_training_args, with_lora
from ..verbosity import get_logger

__all__ = ["train_generator", "bidirectional_pairs"]

logger = get_logger(__name__)


def bidirectional_pairs(dataset: Any, source_column: str = "source", target_column: str = "target") -> Any:
    """The pairs plus the same pairs reversed (CrossAug trains positive->negative claims and the reverse)."""
    from datasets import concatenate_datasets

    check_columns(dataset, [source_column, target_column], "bidirectional_pairs")
    flipped = dataset.rename_columns({source_column: "__t", target_column: source_column}).rename_column(
        "__t", target_column)
    return concatenate_datasets([dataset, flipped.cast(dataset.features)])


def _tokenize_fn(generator: Generator, source_column: str, target_column: str, max_target_length: int):
    tok = generator.tokenizer
    cfg = generator.config

    def seq2seq(batch: dict[str, list]) -> dict[str, list]:
        prompts, _ = generator.prompts(batch[source_column])
        enc = tok(prompts, truncation=True, max_length=cfg.max_source_length + 64)
        enc["labels"] = tok(text_target=batch[target_column], truncation=True, max_length=max_target_length)[
            "input_ids"]
        return dict(enc)

    sep = "" if cfg.input_template.endswith((" ", "\n")) or cfg.chat else " "

    def causal(batch: dict[str, list]) -> dict[str, list]:
        prompts, _ = generator.prompts(batch[source_column])
        out: dict[str, list] = {"input_ids": [], "attention_mask": [], "labels": []}
        for prompt, target in zip(prompts, batch[target_column]):
            p = tok(prompt, add_special_tokens=not cfg.chat)["input_ids"]
            t = tok(sep + target.strip(), add_special_tokens=False)["input_ids"][:max_target_length - 1]
            t = t + [tok.eos_token_id]
            out["input_ids"].append(p + t)
            out["attention_mask"].append([1] * (len(p) + len(t)))
            out["labels"].append([-100] * len(p) + t)  # learn the rewrite, not the prompt
        return out

    return seq2seq if generator.is_encoder_decoder else causal


def _prepare_adapter(generator: Generator, lora: Any) -> bool:
    """Give ``generator.model`` what ``lora`` asks for; True when it trains a LoRA adapter (new or its own)."""
    adapter = bool(generator._lora_layers())
    if adapter and lora not in (None, False, True):
        raise ValueError(f"train_generator: the generator already carries a LoRA adapter, so lora={lora!r} cannot "
                         f"apply; pass lora=True (or None) to go on training that adapter, or load its base "
                         f"without one (Generator.from_base) to train a new adapter.")
    if lora and not adapter:
        task = "SEQ_2_SEQ_LM" if generator.is_encoder_decoder else "CAUSAL_LM"
        generator.model = with_lora(generator.model, lora, task)
    elif adapter:
        # peft loads a saved adapter frozen, for inference; going on training it (a shipped editor fine-tuned on
        # its own best outputs) trains the adapter's weights and leaves the base as it is.
        for name, param in generator.model.named_parameters():
            param.requires_grad_("lora_" in name)
    return bool(lora) or adapter


def train_generator(generator: Generator | str, train_dataset: Any, *, source_column: str = "source",
                    target_column: str = "target", eval_dataset: Any = None, bidirectional: bool = False,
                    lora: Any = None, num_train_epochs: float = 1.0, max_steps: int = -1,
                    learning_rate: float | None = None, batch_size: int = 16, max_target_length: int | None = None,
                    seed: int = 42, output_dir: str | None = None, callbacks: list[Any] | None = None,
                    dataset_id: str | None = None, training_args: dict[str, Any] | None = None,
                    resume_from_checkpoint: str | bool | None = None, **generator_overrides: Any) -> Generator:
    """Fine-tune a generator to map ``source_column`` texts to ``target_column`` texts; returns the generator.

    Seq2seq models learn the target from the templated source; causal LMs learn ``prompt + target + eos`` with the
    loss on the target only. ``lora=True`` (or a ``peft.LoraConfig``) trains a LoRA adapter on all linear layers
    instead of every weight, the practical choice for a causal LM on a CPU; the adapter is what ``save_pretrained``
    stores. A generator that already carries an adapter (a saved one, loaded with `Generator.from_pretrained`) goes
    on training that adapter (``lora`` True or None; a new ``LoraConfig`` is refused).

    Args:
        generator: a `Generator`, or a model id/folder passed to `Generator.from_base`.
        train_dataset: a ``datasets.Dataset`` with the two text columns.
        bidirectional: also train target->source (CrossAug's recipe for negative-claim generation).
        training_args: extra ``TrainingArguments`` fields (e.g. ``{"gradient_accumulation_steps": 2}``).
        dataset_id: the Hub id of the training data, recorded for the model card.
        resume_from_checkpoint: a checkpoint folder in ``output_dir`` (True: the latest there) to go on from, with
            the optimiser, schedule and data order where the stopped run left them: with ``output_dir`` and
            ``training_args={"save_steps": 50}``, hours of CPU training survive an interruption.
        **generator_overrides: `GeneratorConfig` fields when ``generator`` is a name (e.g. the template).

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf.testing import tiny_seq2seq
        >>> pairs = Dataset.from_dict({"source": ["the cat sat"] * 8, "target": ["the cat did not sit"] * 8})
        >>> gen = train_generator(Generator(*tiny_seq2seq()), pairs, max_steps=2, batch_size=4,
        ...                       training_args={"disable_tqdm": True, "logging_strategy": "no"})
        {'train_runtime': ...}
        >>> gen.training_info["train_rows"]
        8
    """
    from transformers import DataCollatorForSeq2Seq, Trainer

    if isinstance(generator, str):
        generator = Generator.from_base(generator, **generator_overrides)
    elif generator_overrides:
        raise TypeError(f"Generator overrides {sorted(generator_overrides)} only apply when generator is a name.")
    check_columns(train_dataset, [source_column, target_column], "train_generator",
                  texts=[source_column, target_column])
    if bidirectional:
        train_dataset = bidirectional_pairs(train_dataset, source_column, target_column)
        if eval_dataset is not None:
            eval_dataset = bidirectional_pairs(eval_dataset, source_column, target_column)

    generator.unmerge_adapter()  # generation merges a LoRA adapter into its base; training needs it apart
    adapter = _prepare_adapter(generator, lora)
    tokenize = _tokenize_fn(generator, source_column, target_column,
                            max_target_length or generator.config.max_new_tokens)
    cols = train_dataset.column_names
    train_tok = train_dataset.map(tokenize, batched=True, remove_columns=cols, desc="Tokenizing pairs")
    eval_tok = None
    if eval_dataset is not None:
        check_columns(eval_dataset, [source_column, target_column], "train_generator (eval_dataset)",
                      texts=[source_column, target_column])
        eval_tok = eval_dataset.map(tokenize, batched=True, remove_columns=eval_dataset.column_names,
                                    desc="Tokenizing eval pairs")
    generator.tokenizer.padding_side = "right"
    lr = learning_rate if learning_rate is not None else (2e-4 if adapter else 5e-5)
    args = make_training_args(output_dir, seed=seed, num_train_epochs=num_train_epochs, max_steps=max_steps,
                              learning_rate=lr, batch_size=batch_size, has_eval=eval_tok is not None,
                              overrides=training_args)
    collator = DataCollatorForSeq2Seq(generator.tokenizer, model=generator.model, label_pad_token_id=-100,
                                      pad_to_multiple_of=8)
    trainer = Trainer(model=generator.model, args=args, train_dataset=train_tok, eval_dataset=eval_tok,
                      data_collator=collator, callbacks=callbacks)
    with quiet_dependency_warnings():
        result = trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    generator.model = trainer.model
    generator.model.eval()
    info: dict[str, Any] = {
        "task": "text2text", "train_dataset": dataset_info(train_dataset, dataset_id),
        "train_rows": len(train_dataset), "bidirectional": bidirectional,
        "source_column": source_column, "target_column": target_column,
        "learning_rate": lr, "num_train_epochs": num_train_epochs, "max_steps": max_steps,
        "batch_size": batch_size, "seed": seed, "global_step": result.global_step,
        "train_loss": round(float(result.training_loss), 4),
        "lora": lora_summary(generator.model) if adapter else None,
    }
    if eval_tok is not None:
        info["eval_loss"] = round(float(trainer.evaluate()["eval_loss"]), 4)
    generator.training_info = info
    return generator

