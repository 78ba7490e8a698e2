"""The frozen-encoder yardstick: MiniLM features computed once, then a small head trained in seconds per seed.

A bag of words cannot see meaning and fine-tuning MiniLM needs a GPU; a frozen encoder sees what matters on two CPU
cores. ``benchmarks/debias.py --model frozen`` uses it:

* :class:`EncodingStore` computes mean-pooled all-MiniLM-L6-v2 vectors with ``datasets.map`` and keeps them on disk
  (``datasets`` folders under ``benchmarks/.cache/frozen/``) by the digest of each text, so an augmented training
  set encodes only its new texts;
* single-text tasks use the text's vector; pair tasks (NLI, fact verification) ``[u, v, |u - v|, u * v, joint]``,
  ``joint`` being the encoding of the pair as one input (``text [SEP] text``, the tokenizer's pair encoding);
* heads: logistic regression (``lr``) or a one-hidden-layer MLP (``mlp``); every seed draws a bootstrap sample of
  the training rows and its own head initialisation, so the spread over seeds is real.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from shared_data import ROOT

CACHE = ROOT / "benchmarks" / ".cache" / "frozen"

Item = "str | tuple[str, str]"


def _key(item: Any) -> str:
    return hashlib.sha256(json.dumps(item, ensure_ascii=False).encode()).hexdigest()[:24]


class EncodingStore:
    """Mean-pooled frozen-encoder vectors of texts and text pairs, cached on disk as ``datasets`` folders.

    Example::

        store = EncodingStore()
        vectors = store.vectors(["a fine film", ("a claim", "its evidence")])   # (2, 384) float32
    """

    def __init__(self, model: str | None = None, *, max_length: int = 256, batch_size: int = 32) -> None:
        from cfaug_hf.models import MINILM

        self.model_name = model or MINILM
        self.max_length, self.batch_size = max_length, batch_size
        self.folder = CACHE / f"{Path(self.model_name).name}-{max_length}"
        self._index: dict[str, np.ndarray] = {}
        self._model = None
        self.encoded_now = 0
        self._load()

    def _load(self) -> None:
        from datasets import load_from_disk

        if not self.folder.is_dir():
            return
        for part in sorted(self.folder.glob("part-*")):
            if not (part / "dataset_info.json").is_file():
                continue
            data = load_from_disk(str(part)).with_format("numpy")
            for key, vec in zip(data["key"], data["vector"]):
                self._index[str(key)] = vec.astype(np.float32)

    def _encoder(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoModel

            from cfaug_hf.models import load_model, load_tokenizer

            self._model = (load_model(AutoModel, self.model_name).float().eval(), load_tokenizer(self.model_name))
        return self._model

    def _encode_batch(self, batch: dict[str, list]) -> dict[str, list]:
        import torch

        model, tok = self._encoder()
        firsts, seconds = batch["a"], batch["b"]
        pairs = any(s is not None for s in seconds)
        enc = tok(firsts, [s or "" for s in seconds] if pairs else None, truncation=True, max_length=self.max_length,
                  padding=True, return_tensors="pt")
        with torch.no_grad():
            states = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1)
        return {"vector": pooled.numpy().astype(np.float16)}

    def vectors(self, items: list[Any]) -> np.ndarray:
        """One float32 vector per item (a text, or a ``(text, text)`` pair encoded jointly)."""
        from datasets import Dataset

        keys = [_key(i) for i in items]
        missing = {k: i for k, i in zip(keys, items) if k not in self._index}
        if missing:
            start = time.perf_counter()
            new_keys = sorted(missing)
            data = Dataset.from_dict({
                "key": new_keys,
                "a": [missing[k] if isinstance(missing[k], str) else missing[k][0] for k in new_keys],
                "b": [None if isinstance(missing[k], str) else missing[k][1] for k in new_keys]})
            part = self.folder / f"part-{_key(new_keys)}"
            encoded = data.map(self._encode_batch, batched=True, batch_size=self.batch_size, keep_in_memory=True,
                               remove_columns=["a", "b"], new_fingerprint=f"frozen-{_key(new_keys)}",
                               desc=f"encoding {len(new_keys)} texts")
            part.parent.mkdir(parents=True, exist_ok=True)
            encoded.save_to_disk(str(part))
            for key, vec in zip(new_keys, encoded.with_format("numpy")["vector"]):
                self._index[key] = vec.astype(np.float32)
            self.encoded_now += len(new_keys)
            print(f"encoded {len(new_keys)} new texts in {time.perf_counter() - start:.0f}s", flush=True)
        return np.stack([self._index[k] for k in keys])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else " ".join(value)


def features(store: EncodingStore, data: Any, schema: Any) -> np.ndarray:
    """The feature matrix of ``data``: the text's vector, or pair features for two-column tasks."""
    cols = [[_text(v) for v in data[c]] for c in schema.text_columns]
    if len(cols) == 1:
        return store.vectors(cols[0])
    u, v = store.vectors(cols[0]), store.vectors(cols[1])
    joint = store.vectors([(a, b) for a, b in zip(cols[0], cols[1])])
    return np.hstack([u, v, np.abs(u - v), u * v, joint])


def train_head(x: np.ndarray, y: np.ndarray, seed: int, head: str, weights: np.ndarray | None = None) -> Any:
    """Fit the head on a bootstrap sample of the rows drawn with ``seed`` (and its own initialisation)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(y), len(y))
    w = None if weights is None else np.asarray(weights)[rows]
    if head == "lr":
        model = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=3000, random_state=seed))
        model.fit(x[rows], y[rows], logisticregression__sample_weight=w)
    elif head == "mlp":
        if w is not None:  # MLPClassifier takes no weights: resample by them instead
            rows = rng.choice(rows, size=len(rows), p=w / w.sum())
        model = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(256,), alpha=1e-2, max_iter=60,
                                                              early_stopping=False, random_state=seed))
        with warnings.catch_warnings():  # a fixed budget of epochs is the point, not convergence
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x[rows], y[rows])
    else:
        raise ValueError(f"head must be 'lr' or 'mlp', got {head!r}.")
    return model


def run_frozen(train: Any, tests: dict[str, Any], schema: Any, seed: int, *, head: str = "lr",
               store: EncodingStore | None = None, **_: Any) -> dict[str, float]:
    store = store or default_store()
    y = np.array([schema.label_id(v) for v in train[schema.label_column]])
    weights = np.array(train["sample_weight"]) if "sample_weight" in train.column_names else None
    model = train_head(features(store, train, schema), y, seed, head, weights)
    out = {}
    for name, data in tests.items():
        gold = np.array([schema.label_id(v) for v in data[schema.label_column]])
        out[name] = float((model.predict(features(store, data, schema)) == gold).mean())
    return out


_STORE: EncodingStore | None = None


def default_store() -> EncodingStore:
    global _STORE
    if _STORE is None:
        _STORE = EncodingStore(max_length=int(os.environ.get("CFAUG_FROZEN_MAX_LENGTH", 256)))
    return _STORE
