"""A small token tagger for NER data, fine-tuned with ``transformers.Trainer``: the consistency check of NER
counterfactuals (`TagConsistencyFilter`) and the few-shot NER model of the benchmarks."""

from __future__ import annotations

from typing import Any

from ..schema import TaskSchema
from .common import make_training_args

__all__ = ["TokenTagger", "train_tagger"]


class TokenTagger:
    """``token lists -> tag lists`` with a token-classification model (the tag of a word is its first sub-token's).

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> from transformers import BertForTokenClassification
        >>> enc, tok = tiny_encoder()
        >>> model = BertForTokenClassification(enc.config.__class__(**{**enc.config.to_dict(), "num_labels": 3}))
        >>> tagger = TokenTagger(model, tok, ["O", "B-PER", "I-PER"])
        >>> len(tagger([["the", "cat"], ["a"]])[0])
        2
    """

    def __init__(self, model: Any, tokenizer: Any, tag_names: list[str] | tuple[str, ...], *, max_length: int = 128,
                 batch_size: int = 32) -> None:
        self.model, self.tokenizer, self.tag_names = model, tokenizer, list(tag_names)
        self.max_length, self.batch_size = max_length, batch_size

    def __call__(self, batch: list[list[str]]) -> list[list[str]]:
        import torch

        out: list[list[str]] = []
        self.model.eval()
        device = next(self.model.parameters()).device
        for start in range(0, len(batch), self.batch_size):
            chunk = [list(t) for t in batch[start:start + self.batch_size]]
            enc = self.tokenizer(chunk, is_split_into_words=True, truncation=True, max_length=self.max_length,
                                 padding=True, return_tensors="pt")
            with torch.inference_mode():
                logits = self.model(**{k: v.to(device) for k, v in enc.items()}).logits
            best = logits.argmax(-1).cpu().tolist()
            for b, tokens in enumerate(chunk):
                tags = ["O"] * len(tokens)
                seen = set()
                for pos, word in enumerate(enc.word_ids(b)):
                    if word is not None and word not in seen:
                        seen.add(word)
                        tags[word] = self.tag_names[best[b][pos]]
                out.append(_repair(tags))
        return out


def _repair(tags: list[str]) -> list[str]:
    """Make a predicted sequence valid IOB2 (an I- after another type or O starts an entity)."""
    fixed, previous = [], "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            tag = "B-" + tag[2:]
        fixed.append(tag)
        previous = tag
    return fixed


def train_tagger(base: str | Any, train_dataset: Any, schema: TaskSchema | None = None, *,
                 num_train_epochs: float = 10.0, max_steps: int = -1, learning_rate: float = 5e-5,
                 batch_size: int = 16, seed: int = 42, max_length: int = 128, output_dir: str | None = None,
                 callbacks: list[Any] | None = None, training_args: dict[str, Any] | None = None) -> TokenTagger:
    """Fine-tune a token-classification head on ``train_dataset`` (a `TaskSchema.token_classification`
    dataset; tags as names or ids). ``base`` is a model id or folder (e.g. MiniLM), or a ``(model, tokenizer)``
    pair of a token-classification model with one label per tag."""
    from transformers import AutoModelForTokenClassification, DataCollatorForTokenClassification, Trainer

    schema = schema or TaskSchema.token_classification()
    if not schema.is_token_level:
        raise ValueError(f"train_tagger needs a token-classification schema, got task {schema.task!r}.")
    schema.validate_features(train_dataset.features)
    names = list(schema.label_names)
    if isinstance(base, tuple):
        model, tok = base
    else:
        from transformers import set_seed

        from ..pretrained import load_model, load_tokenizer

        set_seed(seed)  # the new tagging head is drawn from the seed too, so a run repeats exactly
        tok = load_tokenizer(base)
        model = load_model(AutoModelForTokenClassification, base, num_labels=len(names),
                           id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})
    tokens_col = schema.text_columns[0]

    def encode(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        ids = schema.validate_batch(batch, indices)
        enc = tok(batch[tokens_col], is_split_into_words=True, truncation=True, max_length=max_length)
        labels = []
        for b, row in enumerate(ids):
            previous, out = None, []
            for word in enc.word_ids(b):  # the first sub-token of a word carries its tag; the rest are ignored
                out.append(-100 if word is None or word == previous else row[word])
                previous = word
            labels.append(out)
        enc["labels"] = labels
        return dict(enc)

    data = train_dataset.map(encode, batched=True, with_indices=True, remove_columns=train_dataset.column_names,
                             desc="Tokenizing tagger data")
    args = make_training_args(output_dir, seed=seed, num_train_epochs=num_train_epochs, max_steps=max_steps,
                              learning_rate=learning_rate, batch_size=batch_size, has_eval=False,
                              overrides=training_args)
    trainer = Trainer(model=model, args=args, train_dataset=data, data_collator=DataCollatorForTokenClassification(tok),
                      callbacks=callbacks)
    trainer.train()
    return TokenTagger(trainer.model, tok, names, max_length=max_length)
