"""Counterfactual dense retrieval (CORE's CF-DPR): a query/document bi-encoder and a FAISS index over a corpus.

`BiEncoder` holds two transformers encoders (query and document, DPR-style) that map texts to vectors whose
inner product is high when the document is a counterfactual of the query; ``training.train_cf_dpr`` trains it.
`CorpusIndex` encodes an unlabeled corpus with the document encoder into a FAISS index (exact flat search
for small corpora, IVF-Flat on inner product above that), remembers which encoder built it, and refuses to be
searched with another.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sharing.configs import TypedConfig
from ..sharing.folders import ComponentLoadError
from .base import Component, halve_lora, is_peft_model, load_lora_adapter, load_weights, save_model
from ..verbosity import get_logger

__all__ = ["BiEncoder", "BiEncoderConfig", "CorpusIndex", "IndexConfig", "EncoderMismatchError"]

logger = get_logger(__name__)


@dataclass
class BiEncoderConfig(TypedConfig):
    """How a `BiEncoder` reads texts and pools them into vectors."""

    max_query_length: int = field(default=96, metadata={
        "help": "Tokens kept per query (CORE: 96 for sentiment, 32 for NLI)."})
    max_document_length: int = field(default=96, metadata={"help": "Tokens kept per corpus excerpt."})
    pooling: str = field(default="mean", metadata={
        "help": "'mean' (masked mean of the last hidden states, as MiniLM sentence embeddings) or 'cls'."})
    normalize: bool = field(default=True, metadata={
        "help": "L2-normalise vectors, so inner product is cosine similarity (stable with any encoder)."})
    batch_size: int = field(default=64, metadata={"help": "Texts per forward pass when encoding."})

    def __post_init__(self) -> None:
        if self.pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {self.pooling!r}.")
        for name in ("max_query_length", "max_document_length", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")


def pool(hidden: Any, mask: Any, how: str, normalize: bool) -> Any:
    """Pool token states ``(batch, tokens, dim)`` into one vector per text."""
    if how == "cls":
        vectors = hidden[:, 0]
    else:
        m = mask.unsqueeze(-1).to(hidden.dtype)
        vectors = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    if normalize:
        import torch

        vectors = torch.nn.functional.normalize(vectors, dim=-1)
    return vectors


class BiEncoder(Component):
    """CF-DPR's retriever: a query encoder and a document encoder (two copies of any HF encoder, trained apart).

    Args:
        query_model, document_model: ``AutoModel`` encoders (the same architecture; the same tokenizer).
        tokenizer: their tokenizer.
        config: a `BiEncoderConfig`; keyword arguments override its fields.

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> model, tok = tiny_encoder()
        >>> enc = BiEncoder(model, tiny_encoder()[0], tok)
        >>> enc.encode(["a great film", "a dull film"], "query").shape
        (2, 32)

    References:
        Tanay Dixit, Bhargavi Paranjape, Hannaneh Hajishirzi, Luke Zettlemoyer. "CORE: A Retrieve-then-Edit
        Framework for Counterfactual Data Generation". Findings of EMNLP 2022. https://arxiv.org/abs/2210.04873
        Vladimir Karpukhin et al. "Dense Passage Retrieval for Open-Domain Question Answering". EMNLP 2020.
    """

    config_name = "cfaug_bi_encoder.json"
    component_type = "bi_encoder"
    pipeline_tag = "sentence-similarity"
    required_files = ("tokenizer_config.json",)
    card_summary = ("A counterfactual dense retriever (CF-DPR, Dixit et al. 2022): a query encoder and a document "
                    "encoder trained so that a text's nearest corpus excerpts are ones with the opposite label, for "
                    "cfaug-hf's CORE augmenter.")

    def __init__(self, query_model: Any, document_model: Any, tokenizer: Any, config: BiEncoderConfig | None = None,
                 *, device: str | None = None, base_model: str | None = None,
                 training_info: dict[str, Any] | None = None, **overrides: Any) -> None:
        import torch

        config = config or BiEncoderConfig()
        self.config = dataclasses.replace(config, **overrides) if overrides else config
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.query_model = query_model.to(self.device)
        self.document_model = document_model.to(self.device)
        self.tokenizer = tokenizer
        self.base_model = base_model or getattr(query_model.config, "_name_or_path", None) or None
        self.training_info = dict(training_info or {})

    @classmethod
    def from_base(cls, name_or_path: str | os.PathLike = "sentence-transformers/all-MiniLM-L6-v2", *,
                  revision: str | None = None, device: str | None = None, config: BiEncoderConfig | None = None,
                  **overrides: Any) -> BiEncoder:
        """Both encoders initialised from one pretrained encoder (Hub id, folder or the embedded MiniLM)."""
        from transformers import AutoModel

        from ..pretrained import load_model, load_tokenizer, resolve_model

        query = load_model(AutoModel, name_or_path, revision=revision)
        document = load_model(AutoModel, name_or_path, revision=revision)
        return cls(query, document, load_tokenizer(name_or_path, revision=revision), config, device=device,
                   base_model=resolve_model(name_or_path, revision).name, **overrides)

    def card_usage(self) -> str:
        return ("Use `BiEncoder.from_pretrained(repo)` with `CorpusIndex.build(encoder, texts)` and "
                "`COREAugmenter(..., retriever=encoder, index=index)`.")

    # --------------------------------------------------------------------------------------------------- encoding
    def encode(self, texts: Sequence[str], which: str = "query", *, batch_size: int | None = None) -> Any:
        """``float32`` vectors, shape ``(len(texts), dim)``, from the ``"query"`` or ``"document"`` encoder."""
        import numpy as np
        import torch

        if which not in ("query", "document"):
            raise ValueError(f"which must be 'query' or 'document', got {which!r}.")
        texts = list(texts)
        bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"Text {bad} to encode is {type(texts[bad]).__name__}, expected a string.")
        model = self.query_model if which == "query" else self.document_model
        limit = self.config.max_query_length if which == "query" else self.config.max_document_length
        size = batch_size or self.config.batch_size
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Longest first, so each batch pads to similar lengths (characters are a good enough proxy for tokens).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        model.eval()
        for start in range(0, len(order), size):
            idx = order[start:start + size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=limit,
                                 return_tensors="pt").to(self.device)
            with torch.inference_mode():
                hidden = model(**enc).last_hidden_state
                out[idx] = pool(hidden, enc["attention_mask"], self.config.pooling,
                                self.config.normalize).float().cpu().numpy()
        return out

    @property
    def dim(self) -> int:
        return int(self.document_model.config.hidden_size)

    # --------------------------------------------------------------------------------------------- save and load
    def _modules(self) -> list[Any]:
        return [self.query_model, self.document_model]

    def get_config_dict(self) -> dict[str, Any]:
        return {"bi_encoder": dataclasses.asdict(self.config), "base_model": self.base_model,
                "training": self.training_info}

    def halve_adapter(self) -> None:
        """Keep both encoders' LoRA adapters in float16, halving the saved folder (as the shipped retrievers)."""
        if not all(is_peft_model(m) for m in self._modules()):
            raise ValueError("BiEncoder.halve_adapter: the encoders have no LoRA adapters (train_cf_dpr(lora=True)).")
        for model in self._modules():
            halve_lora(model)
        self.forget_fingerprint()

    def _save(self, folder: Path) -> None:
        # Encoders trained with LoRA save their adapters only (a few MB) when the base has a name to reload it from.
        for sub, model in (("query_encoder", self.query_model), ("document_encoder", self.document_model)):
            save_model(model, folder / sub, adapter_only=bool(self.base_model), base_model=self.base_model)
            # peft's blank card template names the base by its local path; this component's card is the one kept.
            (folder / sub / "README.md").unlink(missing_ok=True)
        self.tokenizer.save_pretrained(folder)
        self._write_card(folder)

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], *, device: str | None = None, **overrides: Any) -> BiEncoder:
        from transformers import AutoModel, AutoTokenizer

        models = []
        for sub in ("query_encoder", "document_encoder"):
            what = f"BiEncoder {sub.replace('_', ' ')}"
            if (folder / sub / "adapter_config.json").is_file():
                models.append(load_lora_adapter(AutoModel, folder / sub, config, what))
            elif (folder / sub / "config.json").is_file():
                models.append(load_weights(AutoModel, folder / sub, what))
            else:
                raise ComponentLoadError(f"{folder} is an incomplete saved BiEncoder: {sub}/config.json is missing.")
        query, document = models
        encoder = cls(query, document, AutoTokenizer.from_pretrained(folder),
                      cls._config_section(folder, config, "bi_encoder", BiEncoderConfig), device=device,
                      training_info=config.get("training"), **overrides)
        encoder.base_model = config.get("base_model")
        return encoder

    def __repr__(self) -> str:
        return f"BiEncoder(base_model={self.base_model!r}, dim={self.dim}, pooling={self.config.pooling!r})"


class EncoderMismatchError(ValueError):
    """A corpus index searched with vectors from an encoder other than the one that built it."""


@dataclass
class IndexConfig(TypedConfig):
    """How a `CorpusIndex` is built and searched."""

    index_type: str = field(default="auto", metadata={
        "help": "'flat' (exact inner-product search), 'ivf' (IVF-Flat on inner product) or 'auto' (IVF when the "
                "corpus has at least min_ivf_rows texts, else flat)."})
    nlist: int = field(default=300, metadata={"help": "IVF centroids (CORE: 300)."})
    nprobe: int = field(default=30, metadata={"help": "IVF lists visited per query (CORE: 30)."})
    train_sample: int = field(default=100_000, metadata={
        "help": "Vectors the IVF quantiser is trained on (a seeded sample of the corpus)."})
    min_ivf_rows: int = field(default=20_000, metadata={
        "help": "With index_type='auto', corpora smaller than this use exact flat search."})
    seed: int = field(default=0, metadata={"help": "Seed of the training sample and of k-means."})

    def __post_init__(self) -> None:
        if self.index_type not in ("auto", "flat", "ivf"):
            raise ValueError(f"index_type must be 'auto', 'flat' or 'ivf', got {self.index_type!r}.")
        for name in ("nlist", "nprobe", "train_sample"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")


class CorpusIndex(Component):
    """An unlabeled corpus, its document vectors in a FAISS index, and the fingerprint of the encoder that built it.

    The corpus is a `datasets.Dataset` with a ``text`` column, encoded with ``Dataset.map(batched=True)``
    (a large corpus streams through Arrow files instead of memory) and saved as Parquet beside the FAISS index.
    FAISS is used directly rather than through ``Dataset.add_faiss_index``: the IVF index needs its own training
    sample and ``nprobe``, and the index must be saved together with the fingerprint of the encoder that built it.

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> enc = BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tiny_encoder()[1])
        >>> index = CorpusIndex.build(enc, ["a great film", "a dull film", "the plot was thin"])
        >>> hits = index.search(enc, ["a boring film"], k=2)
        >>> len(hits[0]), sorted(hits[0][0])
        (2, ['id', 'score', 'text'])
    """

    config_name = "cfaug_corpus_index.json"
    component_type = "corpus_index"
    card_summary = ("A FAISS index over an unlabeled text corpus, built with a cfaug-hf CF-DPR document encoder, "
                    "from which CORE retrieves counterfactual excerpts.")

    def __init__(self, corpus: Any, index: Any, *, encoder_fingerprint: str, config: IndexConfig | None = None,
                 corpus_info: dict[str, Any] | None = None) -> None:
        self.corpus, self.index = corpus, index
        self.encoder_fingerprint = encoder_fingerprint
        self.config = config or IndexConfig()
        self.corpus_info = dict(corpus_info or {})
        # What the card reports: no base model (the encoder is a separate component), the corpus it holds.
        self.base_model = None
        self.training_info = {"for_method": "core", "corpus": self.corpus_info}

    # -------------------------------------------------------------------------------------------------- building
    @classmethod
    def build(cls, encoder: BiEncoder, corpus: Any, *, text_column: str = "text", config: IndexConfig | None = None,
              batch_size: int = 1024, corpus_info: dict[str, Any] | None = None, **overrides: Any) -> CorpusIndex:
        """Encode ``corpus`` (a list of strings or a ``datasets.Dataset`` with ``text_column``) with the document
        encoder and index it. Empty texts are dropped; an empty corpus is an error. IVF needs at least ``nlist``
        vectors to train its centroids: a smaller corpus falls back to flat search, with a message."""
        from datasets import Dataset

        from ..deps import require

        faiss = require("faiss", "Building a CorpusIndex")
        config = config or IndexConfig()
        config = dataclasses.replace(config, **overrides) if overrides else config
        if isinstance(corpus, Dataset):
            if text_column not in corpus.column_names:
                raise ValueError(f"The corpus has no column {text_column!r}; it has {corpus.column_names}.")
            data = corpus.select_columns([text_column])
            if text_column != "text":
                data = data.rename_column(text_column, "text")
        else:
            texts = list(corpus)
            bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
            if bad is not None:
                raise TypeError(f"Corpus text {bad} is {type(texts[bad]).__name__}, expected a string.")
            data = Dataset.from_dict({"text": texts})
        data = data.filter(lambda batch: [isinstance(t, str) and bool(t.strip()) for t in batch], batched=True,
                           input_columns="text", desc="dropping empty corpus texts")
        if len(data) == 0:
            raise ValueError("The corpus is empty (no non-empty text): there is nothing to retrieve from.")
        data = data.add_column("id", list(range(len(data))))
        data = data.map(lambda batch: {"embeddings": encoder.encode(batch, "document")}, batched=True,
                        batch_size=batch_size, input_columns="text", desc="Encoding the corpus")
        vectors = data.with_format("numpy", columns=["embeddings"])
        kind = config.index_type
        if kind == "auto":
            kind = "ivf" if len(data) >= config.min_ivf_rows else "flat"
        if kind == "ivf" and len(data) < config.nlist:
            logger.warning("The corpus has %d texts, fewer than the %d IVF centroids; using exact flat search.",
                           len(data), config.nlist)
            kind = "flat"
        dim = encoder.dim
        if kind == "flat":
            index = faiss.IndexFlatIP(dim)
        else:
            import numpy as np

            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, config.nlist, faiss.METRIC_INNER_PRODUCT)
            rows = np.arange(len(data))
            if len(rows) > config.train_sample:
                rows = np.sort(np.random.default_rng(config.seed).choice(rows, config.train_sample, replace=False))
            index.cp.seed = config.seed
            index.train(np.ascontiguousarray(vectors.select(rows)[:]["embeddings"], dtype=np.float32))
            index.nprobe = config.nprobe
        # Added in chunks, so a corpus larger than memory as one array still fits as an index.
        for chunk in vectors.iter(batch_size=65536):
            index.add(chunk["embeddings"].astype("float32"))
        data = data.remove_columns("embeddings")
        info = {"rows": len(data), "index": kind, "digest": _corpus_digest(data), **(corpus_info or {})}
        return cls(data, index, encoder_fingerprint=encoder.fingerprint(), config=dataclasses.replace(config,
                                                                                                      index_type=kind),
                   corpus_info=info)

    def __len__(self) -> int:
        return len(self.corpus)

    # ------------------------------------------------------------------------------------------------- searching
    def check_encoder(self, encoder: BiEncoder) -> None:
        """Refuse an encoder other than the one that built the index: its vectors live in another space."""
        fp = encoder.fingerprint()
        if fp != self.encoder_fingerprint:
            raise EncoderMismatchError(
                f"This index was built with the encoder {self.encoder_fingerprint[:12]}, not {fp[:12]} "
                f"({encoder!r}): rebuild it with CorpusIndex.build(encoder, corpus), or search with the encoder that "
                f"built it.")

    def search_vectors(self, queries: Any, k: int) -> tuple[Any, Any]:
        """FAISS search: ``(scores, ids)``, each ``(len(queries), k)``; ids of missing hits are -1."""
        import numpy as np

        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.index.d:
            raise ValueError(f"Query vectors must have shape (n, {self.index.d}), got {queries.shape}.")
        if hasattr(self.index, "nprobe"):
            self.index.nprobe = self.config.nprobe
        return self.index.search(queries, k)

    def search(self, encoder: BiEncoder, queries: Sequence[str], k: int = 20) -> list[list[dict[str, Any]]]:
        """The top ``k`` corpus texts for each query, best first, each ``{"id", "text", "score"}``; identical texts
        are returned once."""
        self.check_encoder(encoder)
        scores, ids = self.search_vectors(encoder.encode(list(queries), "query"), k)
        texts = self.corpus["text"] if len(self.corpus) <= 200_000 else None
        out = []
        for row_scores, row_ids in zip(scores, ids):
            hits, seen = [], set()
            for score, i in zip(row_scores, row_ids):
                if i < 0:
                    continue
                text = texts[i] if texts is not None else self.corpus[int(i)]["text"]
                if text in seen:
                    continue
                seen.add(text)
                hits.append({"id": int(i), "text": text, "score": float(score)})
            out.append(hits)
        return out

    # --------------------------------------------------------------------------------------------- save and load
    def get_config_dict(self) -> dict[str, Any]:
        return {"index": dataclasses.asdict(self.config), "encoder_fingerprint": self.encoder_fingerprint,
                "corpus": self.corpus_info}

    def fingerprint(self) -> str:
        from ..fingerprint import digest_json

        # The corpus digest (its texts, in order) and the encoder that built the vectors define the index's content,
        # so a saved and reloaded index keeps its fingerprint.
        return digest_json({"type": "CorpusIndex", "config": self.get_config_dict(), "ntotal": int(self.index.ntotal)})

    def _save(self, folder: Path) -> None:
        from ..deps import require

        faiss = require("faiss", "Saving a CorpusIndex")
        faiss.write_index(self.index, str(folder / "index.faiss"))
        self.corpus.to_parquet(str(folder / "corpus.parquet"))

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], **_: Any) -> CorpusIndex:
        from datasets import Dataset

        from ..deps import require

        faiss = require("faiss", "Loading a CorpusIndex")
        for name in ("index.faiss", "corpus.parquet"):
            if not (folder / name).is_file():
                raise ComponentLoadError(f"{folder} is an incomplete saved CorpusIndex: {name!r} is missing.")
        index = faiss.read_index(str(folder / "index.faiss"))
        corpus = Dataset.from_parquet(str(folder / "corpus.parquet"))
        if index.ntotal != len(corpus):
            raise ComponentLoadError(f"{folder}: the index holds {index.ntotal} vectors but the corpus "
                                     f"{len(corpus)} texts.")
        return cls(corpus, index, encoder_fingerprint=config["encoder_fingerprint"],
                   config=cls._config_section(folder, config, "index", IndexConfig), corpus_info=config.get("corpus"))

    def __repr__(self) -> str:
        return f"CorpusIndex(rows={len(self)}, index={self.config.index_type!r})"


def _corpus_digest(corpus: Any) -> str:
    import xxhash

    h = xxhash.xxh64()
    for batch in corpus.select_columns(["text"]).iter(batch_size=10_000):
        for text in batch["text"]:
            h.update(text.encode("utf-8"))
            h.update(b"\0")
    return h.hexdigest()
