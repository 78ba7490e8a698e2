"""The frozen-encoder yardstick: MiniLM features computed once, then a small head trained in seconds per seed.

A bag of words cannot see meaning and fine-tuning MiniLM needs a GPU; a frozen encoder sees what matters on two CPU
cores. ``python -m benchmarks.debias --model frozen`` uses it:

* :class:`EncodingStore` computes mean-pooled all-MiniLM-L6-v2 vectors with ``datasets.map`` and keeps them on disk
  (``datasets`` folders under ``benchmarks/.cache/frozen/``) by the digest of each text, so an augmented training
  set encodes only its new texts;
* single-text tasks use the text's vector; pair tasks (NLI, fact verification) ``[u, v, |u - v|, u * v, joint]``,
  ``joint`` being the encoding of the pair as one input (``text [SEP] text``, the tokenizer's pair encoding);
* heads: logistic regression (``lr``) or a one-hidden-layer MLP (``mlp``); every seed draws a bootstrap sample of
  the training rows and its own head initialisation, so the spread over seeds is real.
"""

from __future__ import annotations

from benchmarks.harness import ROOT
import hashlib
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np


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
        from cfaug_hf.pretrained import MINILM

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
            # one slice of the whole part: a column read row by row formats each row (30 s for 130k rows)
            data = load_from_disk(str(part)).with_format("numpy")[:]
            vectors = np.asarray(data["vector"], dtype=np.float32)
            self._index.update(zip(map(str, data["key"]), vectors))

    def _encoder(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoModel

            from cfaug_hf.pretrained import load_model, load_tokenizer

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

    def _fill(self, items: list[Any], column: str, features: Any = None) -> list[str]:
        """Encode the items not cached yet (``datasets.map`` of :meth:`_encode_batch`), save them as a new part
        folder and index them; returns every item's key."""
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
            encoded = data.map(self._encode_batch, batched=True, batch_size=self.batch_size, keep_in_memory=True,
                               remove_columns=["a", "b"], new_fingerprint=f"{column}-{_key(new_keys)}",
                               features=features, desc=f"encoding {len(new_keys)} inputs")
            part = self.folder / f"part-{_key(new_keys)}"
            part.parent.mkdir(parents=True, exist_ok=True)
            encoded.save_to_disk(str(part))
            for key, value in zip(new_keys, encoded.with_format("numpy")[column]):
                self._index[key] = value.astype(np.float32) if column == "vector" else value
            self.encoded_now += len(new_keys)
            print(f"encoded {len(new_keys)} new inputs in {time.perf_counter() - start:.0f}s", flush=True)
        return keys

    def vectors(self, items: list[Any]) -> np.ndarray:
        """One float32 vector per item (a text, or a ``(text, text)`` pair encoded jointly)."""
        return np.stack([self._index[k] for k in self._fill(items, "vector")])


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


class SavedHead:
    """A fitted head (`train_head`'s pipeline: the scaler, then the logistic regression or the MLP) kept as its
    arrays in a safetensors file, predicting as the pipeline does. A head fitted once is then the same head in every
    later session and on every machine: a refit differs in the last digits of its features, and through an MLP in
    some of its predictions.

    Example::

        head = SavedHead.from_pipeline(train_head(x, y, 0, "lr"), {"task": "sentiment"})
        head.save(path); SavedHead.load(path).predict(x)   # the pipeline's predictions
    """

    def __init__(self, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
        self.arrays, self.metadata = arrays, metadata

    @classmethod
    def from_pipeline(cls, model: Any, metadata: dict[str, str]) -> SavedHead:
        scaler, clf = model[0], model[-1]
        arrays = {"scaler.mean": scaler.mean_, "scaler.scale": scaler.scale_, "classes": clf.classes_}
        if hasattr(clf, "coefs_"):  # the MLP: hidden layers with its activation, then the output layer
            if clf.activation != "relu":
                raise ValueError(f"SavedHead keeps relu MLPs only, got activation={clf.activation!r}.")
            arrays.update({f"layer{i}.weight": w for i, w in enumerate(clf.coefs_)})
            arrays.update({f"layer{i}.bias": b for i, b in enumerate(clf.intercepts_)})
        else:
            arrays.update({"layer0.weight": clf.coef_.T, "layer0.bias": clf.intercept_})
        return cls({k: np.ascontiguousarray(v) for k, v in arrays.items()}, metadata)

    @classmethod
    def load(cls, path: Path) -> SavedHead:
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            return cls({k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata() or {}))

    def save(self, path: Path) -> None:
        from safetensors.numpy import save_file

        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        save_file(self.arrays, str(tmp), metadata={k: str(v) for k, v in self.metadata.items()})
        os.replace(tmp, path)

    def predict(self, x: np.ndarray) -> np.ndarray:
        a = self.arrays
        z = (x - a["scaler.mean"]) / a["scaler.scale"]
        layers = sum(k.endswith(".weight") for k in a)
        for i in range(layers):
            z = z @ a[f"layer{i}.weight"] + a[f"layer{i}.bias"]
            if i < layers - 1:
                z = np.maximum(z, 0)
        # One output column (two classes): the second class where the score is positive, as sklearn decides.
        picked = (z[:, 0] > 0).astype(int) if z.shape[1] == 1 else z.argmax(axis=1)
        return a["classes"][picked]


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
#: Tokens read per input by the pooled features and by the top-layer states: part of the yardstick, fixed so every
#: table is measured alike (not a setting).
MAX_LENGTH, STATE_LENGTH = 256, 128


def default_store() -> EncodingStore:
    global _STORE
    if _STORE is None:
        _STORE = EncodingStore(max_length=MAX_LENGTH)
    return _STORE


# ------------------------------------------------------------------- interaction head: top layers over cached states
class StateStore(EncodingStore):
    """Token states of the joint input after the first ``layers - top`` encoder layers, cached by text (fp16,
    ``datasets`` folders), so training the top ``top`` layers never runs the frozen ones again.

    Pooled vectors cannot model claim-evidence interaction; the pretrained top layer(s) of the encoder, fine-tuned
    over these states, can (cross-attention between the two texts happens inside them)."""

    def __init__(self, model: str | None = None, *, top: int = 1, max_length: int = 128, batch_size: int = 32) -> None:
        self.top = top
        super().__init__(model, max_length=max_length, batch_size=batch_size)
        self.folder = CACHE / f"{Path(self.model_name).name}-states-top{top}-{max_length}"
        self._index = {}
        self._load_states()

    def _load_states(self) -> None:
        from datasets import load_from_disk

        if not self.folder.is_dir():
            return
        for part in sorted(self.folder.glob("part-*")):
            if (part / "dataset_info.json").is_file():
                data = load_from_disk(str(part)).with_format("numpy")
                for key, states in zip(data["key"], data["states"]):
                    self._index[str(key)] = states

    def _encode_batch(self, batch: dict[str, list]) -> dict[str, list]:
        import torch

        model, tok = self._encoder()
        seconds = batch["b"]
        enc = tok(batch["a"], [s or "" for s in seconds] if any(s is not None for s in seconds) else None,
                  truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[-1 - self.top]
        lengths = enc["attention_mask"].sum(1).tolist()
        return {"states": [h[:n].numpy().astype(np.float16) for h, n in zip(hidden, lengths)]}

    def states(self, items: list[Any]) -> list[np.ndarray]:
        """Each item's lower-layer token states, ``(tokens, hidden)`` in fp16."""
        from datasets import Array2D, Features, Value

        hidden = self._encoder()[0].config.hidden_size if any(_key(i) not in self._index for i in items) else 0
        features = Features({"key": Value("string"), "states": Array2D(shape=(None, hidden), dtype="float16")}) \
            if hidden else None
        return [self._index[k] for k in self._fill(items, "states", features)]


def _joint_items(data: Any, schema: Any) -> list[Any]:
    cols = [[_text(v) for v in data[c]] for c in schema.text_columns]
    return cols[0] if len(cols) == 1 else list(zip(cols[0], cols[1]))


def run_top_layers(train: Any, tests: dict[str, Any], schema: Any, seed: int, *, top: int = 1, epochs: float = 2,
                   learning_rate: float = 1e-4, batch_size: int = 32, store: StateStore | None = None,
                   **_: Any) -> dict[str, float]:
    """Fine-tune copies of the encoder's top ``top`` layers (their pretrained weights) plus a linear classifier
    over the cached lower-layer states of the joint input; a bootstrap sample of the rows per seed."""
    import copy

    import torch

    store = store or state_store(top)
    torch.manual_seed(seed)
    encoder = store._encoder()[0]
    layers = torch.nn.ModuleList(copy.deepcopy(encoder.encoder.layer[-top:])).train()
    head = torch.nn.Linear(encoder.config.hidden_size, schema.num_labels)
    params = list(layers.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.01)

    def forward(states: list[np.ndarray]) -> torch.Tensor:
        n = max(len(s) for s in states)
        x = torch.zeros(len(states), n, states[0].shape[1])
        mask = torch.zeros(len(states), n)
        for i, s in enumerate(states):
            x[i, :len(s)] = torch.from_numpy(s.astype(np.float32))
            mask[i, :len(s)] = 1
        extended = (1.0 - mask[:, None, None, :]) * torch.finfo(torch.float32).min
        for layer in layers:
            out = layer(x, attention_mask=extended)
            x = out[0] if isinstance(out, tuple) else out
        pooled = (x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        return head(pooled)

    states = store.states(_joint_items(train, schema))
    y = torch.tensor([schema.label_id(v) for v in train[schema.label_column]])
    weights = torch.tensor(train["sample_weight"], dtype=torch.float32) if "sample_weight" in train.column_names \
        else None
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(y), len(y))
    for _ in range(max(1, round(epochs))):
        order = rng.permutation(rows)
        # batches of similar length: less padding on the CPU
        order = sorted(order, key=lambda i: len(states[i]))
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        rng.shuffle(batches)
        for batch in batches:
            logits = forward([states[i] for i in batch])
            loss = torch.nn.functional.cross_entropy(logits, y[batch], reduction="none")
            if weights is not None:
                loss = loss * weights[batch]
            optimizer.zero_grad()
            loss.mean().backward()
            optimizer.step()
    layers.eval()
    out = {}
    with torch.no_grad():
        for name, data in tests.items():
            test_states = store.states(_joint_items(data, schema))
            gold = np.array([schema.label_id(v) for v in data[schema.label_column]])
            preds = np.concatenate([forward(test_states[i:i + 64]).argmax(-1).numpy()
                                    for i in range(0, len(test_states), 64)])
            out[name] = float((preds == gold).mean())
    return out


_STATE_STORES: dict[int, StateStore] = {}


def state_store(top: int) -> StateStore:
    if top not in _STATE_STORES:
        _STATE_STORES[top] = StateStore(top=top, max_length=STATE_LENGTH)
    return _STATE_STORES[top]
