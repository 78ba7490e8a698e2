"""Train CORE's counterfactual retriever (CF-DPR) with ``transformers.Trainer`` and the DPR loss.

Training rows are (query, positive, hard negatives): the query an original input, the positive its human
counterfactual, the hard negatives texts that look like the query but keep its label (a paraphrase column when you
have one, else same-label nearest neighbours mined with the untrained encoder by `mine_hard_negatives`). The
loss is the negative log-likelihood of the positive against every other document in the batch: the other rows'
positives and every hard negative (Karpukhin et al. 2020).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..components.retriever import BiEncoder, pool
from .common import check_columns, dataset_info, lora_summary, make_training_args, with_lora

__all__ = ["train_cf_dpr", "mine_hard_negatives", "retrieval_accuracy"]


def mine_hard_negatives(encoder: BiEncoder, queries: Sequence[str], labels: Sequence[Any], *,
                        pool_texts: Sequence[str] | None = None, pool_labels: Sequence[Any] | None = None,
                        n: int = 2, exclude: Sequence[str] | None = None) -> list[list[str]]:
    """For each query, the ``n`` nearest texts with the *same* label (by ``encoder``'s document vectors).

    Args:
        queries, labels: the original inputs and their labels.
        pool_texts, pool_labels: where negatives come from (default: the queries themselves; a query is never its
            own negative).
        exclude: per query, a text that must not be picked (its counterfactual).

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> enc = BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tiny_encoder()[1])
        >>> negs = mine_hard_negatives(enc, ["good", "great", "fine", "bad"], ["pos", "pos", "pos", "neg"], n=1)
        >>> [len(x) for x in negs], "bad" in sum(negs, [])
        ([1, 1, 1, 0], False)
    """
    import numpy as np

    from ..deps import require

    faiss = require("faiss", "Mining hard negatives")
    queries, labels = list(queries), list(labels)
    if len(queries) != len(labels):
        raise ValueError(f"Got {len(queries)} queries but {len(labels)} labels.")
    texts = list(pool_texts) if pool_texts is not None else queries
    tlabels = list(pool_labels) if pool_labels is not None else labels
    if len(texts) != len(tlabels):
        raise ValueError(f"Got {len(texts)} pool texts but {len(tlabels)} pool labels.")
    q = encoder.encode(queries, "document")
    d = q if pool_texts is None else encoder.encode(texts, "document")
    index = faiss.IndexFlatIP(d.shape[1])
    index.add(np.ascontiguousarray(d))
    # Enough neighbours that n same-label ones are almost always among them.
    k = min(len(texts), max(4 * n + 8, 32))
    _, ids = index.search(np.ascontiguousarray(q), k)
    out = []
    for i, row in enumerate(ids):
        picked: list[str] = []
        banned = {queries[i]} | ({exclude[i]} if exclude is not None else set())
        for j in row:
            if j < 0 or tlabels[j] != labels[i] or texts[j] in banned or texts[j] in picked:
                continue
            picked.append(texts[j])
            if len(picked) == n:
                break
        out.append(picked)
    return out


def _dpr_module(encoder: BiEncoder, scale: float) -> Any:
    """The bi-encoder as one module for Trainer: it encodes queries and documents and returns the DPR loss."""
    import torch

    class DPR(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.query_model, self.document_model = encoder.query_model, encoder.document_model

        def forward(self, q_input_ids: Any, q_attention_mask: Any, d_input_ids: Any, d_attention_mask: Any,
                    **_: Any) -> dict[str, Any]:
            cfg = encoder.config
            q = pool(self.query_model(input_ids=q_input_ids, attention_mask=q_attention_mask).last_hidden_state,
                     q_attention_mask, cfg.pooling, cfg.normalize)
            d = pool(self.document_model(input_ids=d_input_ids, attention_mask=d_attention_mask).last_hidden_state,
                     d_attention_mask, cfg.pooling, cfg.normalize)
            # Documents are the batch's positives (row i's is document i), then every hard negative.
            scores = q @ d.T * scale
            target = torch.arange(q.shape[0], device=q.device)
            return {"loss": torch.nn.functional.cross_entropy(scores, target)}

    return DPR()


def train_cf_dpr(encoder: BiEncoder | str, train_dataset: Any, *, query_column: str = "query",
                 positive_column: str = "positive", negatives_column: str | None = "hard_negatives",
                 num_train_epochs: float = 3.0, max_steps: int = -1, learning_rate: float = 2e-5,
                 batch_size: int = 16, scale: float = 20.0, seed: int = 42, output_dir: str | None = None,
                 callbacks: list[Any] | None = None, dataset_id: str | None = None,
                 training_args: dict[str, Any] | None = None, query_as_negative: bool = False,
                 lora: Any = None, resume_from_checkpoint: str | bool | None = None) -> BiEncoder:
    """Train a CF-DPR bi-encoder on (query, positive counterfactual, hard negatives) rows.

    Args:
        encoder: a `BiEncoder`, or a model id/folder to start both encoders from (default MiniLM offline).
        train_dataset: a ``datasets.Dataset`` with a query column, a positive column and (optionally) a column
            holding a list of hard-negative texts per row (every row the same number).
        num_train_epochs, learning_rate, batch_size: CORE used lr 2e-5 and batch 16 (sentiment) / 32 (NLI).
        scale: multiplies the similarities before the softmax; 20 suits normalised vectors (cosine in [-1, 1]),
            use 1 with ``normalize=False`` (raw inner products, as DPR).
        query_as_negative: also score each query against itself as one more hard negative (CORE's reference
            implementation, beside a paraphrase: a retrieved text must not be the input again). Off by default:
            the library's mined negatives already leave the query out.
        lora: ``True`` (rank 16 on every linear layer) or a ``peft.LoraConfig``: train a LoRA adapter on each
            encoder instead of all weights; the saved retriever is then two adapters of a few MB over the named
            base (the shipped CORE retrievers are trained so, at a higher learning rate, 5e-4).
        resume_from_checkpoint: a checkpoint folder under ``output_dir`` (or True for the last one) to go on from,
            as ``Trainer.train`` takes it.

    Inputs:

    | column | type | meaning |
    |---|---|---|
    | query | string | an original input |
    | positive | string | its counterfactual (the label flipped) |
    | hard_negatives | list of strings | texts like the query with its label |

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf.testing import tiny_encoder
        >>> enc = BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tiny_encoder()[1])
        >>> rows = Dataset.from_dict({"query": ["a good film", "a bad film"], "positive": ["a bad film", "a good film"],
        ...                           "hard_negatives": [["a fine film"], ["a poor film"]]})
        >>> enc = train_cf_dpr(enc, rows, max_steps=2, training_args={"disable_tqdm": True, "logging_strategy": "no"})
        {'train_runtime': ...}
        >>> enc.training_info["global_step"]
        2
    """
    from transformers import Trainer

    if isinstance(encoder, str):
        encoder = BiEncoder.from_base(encoder)
    columns = [query_column, positive_column] + ([negatives_column] if negatives_column else [])
    check_columns(train_dataset, columns, "train_cf_dpr", texts=[query_column, positive_column],
                  text_lists=[negatives_column] if negatives_column else [])
    n_neg = 0
    if negatives_column:
        counts = {len(v) for v in train_dataset[negatives_column]}
        if len(counts) > 1:
            raise ValueError(f"Column {negatives_column!r}: every row needs the same number of hard negatives, got "
                             f"{sorted(counts)}. Mine them with mine_hard_negatives(..., n=N) or trim them.")
        n_neg = counts.pop() if counts else 0
    if lora:
        encoder.query_model = with_lora(encoder.query_model, lora, "FEATURE_EXTRACTION")
        encoder.document_model = with_lora(encoder.document_model, lora, "FEATURE_EXTRACTION")
    tok, cfg = encoder.tokenizer, encoder.config

    def collate(rows: list[dict[str, Any]]) -> dict[str, Any]:
        queries = [r[query_column] for r in rows]
        docs = [r[positive_column] for r in rows]
        if negatives_column:
            docs += [neg for r in rows for neg in r[negatives_column]]
        if query_as_negative:
            docs += queries  # after the positives, so row i's positive stays document i
        q = tok(queries, padding=True, truncation=True, max_length=cfg.max_query_length, return_tensors="pt")
        d = tok(docs, padding=True, truncation=True, max_length=cfg.max_document_length, return_tensors="pt")
        return {"q_input_ids": q["input_ids"], "q_attention_mask": q["attention_mask"],
                "d_input_ids": d["input_ids"], "d_attention_mask": d["attention_mask"]}

    overrides = {"remove_unused_columns": False, **(training_args or {})}
    args = make_training_args(output_dir, seed=seed, num_train_epochs=num_train_epochs, max_steps=max_steps,
                              learning_rate=learning_rate, batch_size=batch_size, has_eval=False, overrides=overrides)
    module = _dpr_module(encoder, scale)
    trainer = Trainer(model=module, args=args, train_dataset=train_dataset.select_columns(columns),
                      data_collator=collate, callbacks=callbacks)
    result = trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    encoder.query_model.eval()
    encoder.document_model.eval()
    encoder.forget_fingerprint()
    encoder.training_info = {
        "for_method": "core", "objective": "DPR (in-batch + hard negatives)",
        "train_dataset": dataset_info(train_dataset, dataset_id), "train_rows": len(train_dataset),
        "hard_negatives_per_row": n_neg + int(query_as_negative), "query_as_negative": query_as_negative,
        "learning_rate": learning_rate, "num_train_epochs": num_train_epochs,
        "max_steps": max_steps, "batch_size": batch_size, "scale": scale, "seed": seed,
        "global_step": result.global_step, "train_loss": round(float(result.training_loss), 4),
    }
    if lora:
        encoder.training_info["lora"] = lora_summary(encoder.query_model)
    return encoder


def retrieval_accuracy(encoder: BiEncoder, queries: Sequence[str], positives: Sequence[str],
                       ks: Sequence[int] = (1, 5)) -> dict[str, float]:
    """Top-k accuracy of finding each query's own counterfactual among all the positives (held-out pairs).

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> enc = BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tiny_encoder()[1])
        >>> sorted(retrieval_accuracy(enc, ["a", "b"], ["c", "d"]))
        ['top1', 'top5']
    """
    import numpy as np

    q = encoder.encode(list(queries), "query")
    d = encoder.encode(list(positives), "document")
    ranks = (-(q @ d.T)).argsort(axis=1)
    gold = np.arange(len(queries))[:, None]
    return {f"top{k}": float((ranks[:, :k] == gold).any(axis=1).mean()) for k in ks}
