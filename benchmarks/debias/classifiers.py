"""The classifiers a training set is measured with: ``bow`` (TF-IDF + logistic regression) and a Hugging Face model
fine-tuned with Trainer (``frozen`` lives in `benchmarks.frozen_yardstick`); and the bag-of-words model the rows
that need a cheap scorer reuse."""

from __future__ import annotations

from typing import Any

from cfaug_hf import TaskSchema

from . import settings


def text_columns(data: Any, schema: TaskSchema) -> dict[str, list[str]]:
    return {c: [v if isinstance(v, str) else " ".join(v) for v in data[c]] for c in schema.text_columns}


def label_ids(data: Any, schema: TaskSchema) -> list[int]:
    return [schema.label_id(x) for x in data[schema.label_column]]


def bow_pipeline() -> Any:
    """TF-IDF word 1-2 grams + logistic regression: the bag-of-words model every BoW part of this benchmark uses."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
                         LogisticRegression(max_iter=2000, C=4.0))


class BowTextModel:
    """A bag-of-words classifier fitted on the training texts, fingerprinted by its weights (cheap for ``map``)."""

    fingerprint_key = "bow"

    def __init__(self, train: Any, schema: TaskSchema) -> None:
        self.schema = schema
        self.model = bow_pipeline().fit(text_columns(train, schema)[schema.text_columns[0]], label_ids(train, schema))

    def fingerprint(self) -> str:
        from cfaug_hf.fingerprint import digest_json

        return digest_json({self.fingerprint_key: [list(c) for c in self.model[-1].coef_.round(6)]})


def run_bow(train: Any, tests: dict[str, Any], schema: TaskSchema, seed: int, **_: Any) -> dict[str, float]:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    cols = text_columns(train, schema)
    vecs = {c: TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=100_000, sublinear_tf=True).fit(v)
            for c, v in cols.items()}

    def features(data: Any) -> Any:
        return hstack([vecs[c].transform(v) for c, v in text_columns(data, schema).items()]).tocsr()

    weights = train["sample_weight"] if "sample_weight" in train.column_names else None
    clf = LogisticRegression(max_iter=2000, C=4.0, random_state=seed).fit(features(train), label_ids(train, schema),
                                                                        sample_weight=weights)
    return {name: float((clf.predict(features(d)) == label_ids(d, schema)).mean()) for name, d in tests.items()}


def run_hf(train: Any, tests: dict[str, Any], schema: TaskSchema, seed: int, *, model: str, max_length: int,
           epochs: float, batch_size: int, learning_rate: float, bf16: bool = False,
           group_by_length: bool = False) -> dict[str, float]:
    import numpy as np
    from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding, Trainer, TrainingArguments

    from cfaug_hf.pretrained import load_model, load_tokenizer

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


    args = TrainingArguments(output_dir=str(settings.CACHE / "trainer"), num_train_epochs=epochs, learning_rate=learning_rate,
                             per_device_train_batch_size=batch_size, per_device_eval_batch_size=64,
                             weight_decay=0.01, seed=seed, save_strategy="no", report_to=[],
                             remove_unused_columns=False,  # prepare() keeps only model inputs and sample_weight
                             logging_steps=50, disable_tqdm=True, bf16=bf16,
                             # batches of similar lengths: a CPU run pads far less (FEVER pairs: median 51 tokens)
                             train_sampling_strategy="group_by_length" if group_by_length else "random")
    trainer = WeightedTrainer(model=net, args=args, train_dataset=prepare(train).shuffle(seed=seed),
                              data_collator=DataCollatorWithPadding(tok))
    trainer.train()
    out = {}
    for name, data in tests.items():
        pred = trainer.predict(prepare(data))
        out[name] = float((np.argmax(pred.predictions, -1) == pred.label_ids).mean())
    return out
