"""Sentence rationale model (ICDA; Plyler and Chi): pick the sentence that explains the label, classify from it.

A token encoder embeds each sentence (mean-pooled, ``max_sentence_tokens`` word pieces, long sentences keep their
first and last halves); a sentence-level transformer runs over the sentence vectors; a selector scores sentences and
makes a hard choice of ``k`` of them with a straight-through gradient; the token-level vectors of the other sentences
are masked, the rest max-pooled and classified. With ``freeze_encoder=True`` the token encoder is not trained and
sentence vectors can be precomputed once (`SentenceTable.embed`), so a counterfactual that swaps a sentence
only swaps a vector.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import ModelOutput

from .base import PretrainedComponent, load_weights

__all__ = ["SentenceRationaleConfig", "SentenceRationaleModel", "RationaleOutput", "RationaleSelector",
           "SentenceBatchCollator", "encode_sentences"]


class SentenceRationaleConfig(PretrainedConfig):
    """Configuration of `SentenceRationaleModel`.

    Args:
        encoder: the token encoder's own config as a dict (so the model is rebuilt without downloading anything).
        encoder_name: the Hub id or path it was initialised from (for cards).
        max_sentence_tokens: word pieces per sentence, specials included (32 in the paper's setting).
        max_sentences: sentences per document; later sentences are not seen (16).
        sentence_layers / sentence_heads: the sentence-level transformer (4 layers).
        k: sentences selected as the rationale (1).
        freeze_encoder: keep the token encoder fixed (the fast path with cached sentence vectors).
        gate: ``"two_way"`` (the reference implementation's): each sentence gets its own select/not softmax, the
            top-k by select probability are kept, the others are multiplied by a gate that is zero in the forward
            pass (they tie at zero in the max-pool), and the straight-through gradient reaches every sentence's
            gate. ``"softmax"``: one softmax across sentences, unselected sentences pushed to -1e4 before the
            max-pool, so only the selected sentence's gate gets a gradient (this library's earlier default).
        positions: ``"sinusoidal"`` adds sine/cosine sentence positions after scaling the vectors by
            sqrt(hidden), as the reference's sentence transformer does; ``"none"`` gives it no order.
        pooling: how a sentence vector is made from its tokens: ``"mean"`` (right for sentence-embedding
            encoders such as MiniLM, and for the frozen path) or ``"cls"`` (the reference's BERT CLS vector).
        classifier_dropout: dropout before the classifier (the reference has none).
        selection_noise: scale of Gumbel noise added to the selector's scores while training (0: none), so the
            hard choice explores sentences other than the current favourite: a straight-through gradient only
            tells the selector about the sentence it picked.
    """

    model_type = "cfaug-sentence-rationale"

    def __init__(self, encoder: dict | None = None, encoder_name: str | None = None, max_sentence_tokens: int = 32,
                 max_sentences: int = 16, sentence_layers: int = 4, sentence_heads: int = 4, k: int = 1,
                 freeze_encoder: bool = False, classifier_dropout: float = 0.0, gate: str = "two_way",
                 positions: str = "sinusoidal", pooling: str = "mean", selection_noise: float = 0.0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        for name, value, allowed in (("gate", gate, ("two_way", "softmax")),
                                     ("positions", positions, ("sinusoidal", "none")),
                                     ("pooling", pooling, ("mean", "cls"))):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}.")
        self.gate, self.positions, self.pooling = gate, positions, pooling
        self.encoder = encoder or {}
        self.encoder_name = encoder_name
        self.max_sentence_tokens = max_sentence_tokens
        self.max_sentences = max_sentences
        self.sentence_layers = sentence_layers
        self.sentence_heads = sentence_heads
        self.k = k
        self.freeze_encoder = freeze_encoder
        self.classifier_dropout = classifier_dropout
        if not selection_noise >= 0:
            raise ValueError(f"selection_noise must be >= 0, got {selection_noise!r}.")
        self.selection_noise = selection_noise

    @classmethod
    def from_dict(cls, config_dict: dict[str, Any], **kwargs: Any) -> Any:
        # Selectors saved before these options existed used the softmax gate, no positions and dropout 0.1.
        if "gate" not in config_dict:
            config_dict = {"gate": "softmax", "positions": "none", "classifier_dropout": 0.1, **config_dict}
        return super().from_dict(config_dict, **kwargs)


@dataclasses.dataclass
class RationaleOutput(ModelOutput):
    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    #: ``(batch, k)`` indices of the selected sentences.
    selected: torch.Tensor | None = None
    #: ``(batch, sentences)`` selector scores, higher is chosen first (log-odds of selection for the two-way gate,
    #: logits for the softmax gate; padding at -inf).
    scores: torch.Tensor | None = None


class SentenceRationaleModel(PreTrainedModel):
    """The hierarchical rationale network; a ``PreTrainedModel``, so Trainer, ``save_pretrained`` and the Hub work.

    Inputs are either ``input_ids``/``attention_mask`` of shape ``(batch, sentences, tokens)`` or precomputed
    ``sentence_embeddings`` ``(batch, sentences, hidden)``, plus ``sentence_mask`` ``(batch, sentences)``.

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> encoder, tok = tiny_encoder()
        >>> model = SentenceRationaleModel.from_encoder(encoder, sentence_layers=1, sentence_heads=2)
        >>> collate = SentenceBatchCollator(tok, max_sentence_tokens=8)
        >>> batch = collate([{"sentences": ["the room was clean .", "the food was bad ."], "labels": 0}])
        >>> out = model(**batch)
        >>> tuple(out.logits.shape), tuple(out.selected.shape)
        ((1, 2), (1, 1))
    """

    config_class = SentenceRationaleConfig
    base_model_prefix = "rationale"
    main_input_name = "input_ids"
    _no_split_modules: list[str] = []

    def __init__(self, config: SentenceRationaleConfig, encoder: nn.Module | None = None):
        super().__init__(config)
        if encoder is None:
            enc_cfg = AutoConfig.for_model(**config.encoder)
            encoder = AutoModel.from_config(enc_cfg)
        self.encoder = encoder
        hidden = self.encoder.config.hidden_size
        layer = nn.TransformerEncoderLayer(hidden, config.sentence_heads, dim_feedforward=4 * hidden, dropout=0.1,
                                           batch_first=True)
        self.sentence_encoder = nn.TransformerEncoder(layer, config.sentence_layers, enable_nested_tensor=False)
        self.selector = nn.Linear(hidden, 2 if config.gate == "two_way" else 1)
        self.dropout = nn.Dropout(config.classifier_dropout)
        self.classifier = nn.Linear(hidden, config.num_labels)
        if config.freeze_encoder:
            self.encoder.requires_grad_(False)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        # The token encoder keeps its pretrained weights; only the new layers are initialised here.
        if module is self.selector or module is self.classifier:
            nn.init.normal_(module.weight, std=0.02)
            nn.init.zeros_(module.bias)

    def init_weights(self) -> None:  # PreTrainedModel would re-initialise the pretrained encoder too
        self._init_weights(self.selector)
        self._init_weights(self.classifier)

    @classmethod
    def from_encoder(cls, encoder: Any = "sentence-transformers/all-MiniLM-L6-v2", *, num_labels: int = 2,
                     label_names: Sequence[str] | None = None, **config_kwargs: Any) -> SentenceRationaleModel:
        """A new rationale model around a pretrained token encoder (an ``AutoModel``, a Hub id or a folder)."""
        name = None
        if isinstance(encoder, str):
            from ..pretrained import load_model

            name = encoder
            encoder = load_model(AutoModel, encoder)
        enc_dict = encoder.config.to_dict()
        names = list(label_names) if label_names else [str(i) for i in range(num_labels)]
        config = SentenceRationaleConfig(encoder=enc_dict, encoder_name=name or encoder.config._name_or_path,
                                         num_labels=len(names), id2label=dict(enumerate(names)),
                                         label2id={n: i for i, n in enumerate(names)}, **config_kwargs)
        return cls(config, encoder=encoder)

    def embed_sentences(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Token encoder output pooled per sentence (mean or CLS, see ``pooling``) for a flat batch of sentences
        ``(n, tokens)`` -> ``(n, hidden)``. An all-padding row (a padding sentence) gives a zero vector."""
        with torch.set_grad_enabled(torch.is_grad_enabled() and not self.config.freeze_encoder):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        if self.config.pooling == "cls":
            return hidden[:, 0] * mask[:, 0]
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)

    def _with_positions(self, x: torch.Tensor) -> torch.Tensor:
        if self.config.positions == "none":
            return x
        s, d = x.shape[1], x.shape[2]
        pos = torch.arange(s, device=x.device, dtype=torch.float32).unsqueeze(1)
        rate = torch.exp(torch.arange(0, d, 2, device=x.device, dtype=torch.float32) * (-math.log(10000.0) / d))
        table = torch.zeros(s, d, device=x.device, dtype=torch.float32)
        table[:, 0::2] = torch.sin(pos * rate)
        table[:, 1::2] = torch.cos(pos * rate[: d // 2])
        return x * math.sqrt(d) + table.to(x.dtype)

    def forward(self, input_ids: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                sentence_mask: torch.Tensor | None = None, sentence_embeddings: torch.Tensor | None = None,
                labels: torch.Tensor | None = None, **_: Any) -> RationaleOutput:
        if sentence_embeddings is None:
            if input_ids is None:
                raise ValueError("SentenceRationaleModel needs input_ids (batch, sentences, tokens) or "
                                 "sentence_embeddings (batch, sentences, hidden).")
            b, s, t = input_ids.shape
            flat = self.embed_sentences(input_ids.reshape(b * s, t), attention_mask.reshape(b * s, t))
            sentence_embeddings = flat.reshape(b, s, -1)
            if sentence_mask is None:
                sentence_mask = attention_mask.sum(-1) > 0
        b, s, _ = sentence_embeddings.shape
        if sentence_mask is None:
            sentence_mask = torch.ones(b, s, dtype=torch.bool, device=sentence_embeddings.device)
        sentence_mask = sentence_mask.bool()
        context = self.sentence_encoder(self._with_positions(sentence_embeddings), src_key_padding_mask=~sentence_mask)
        k = min(self.config.k, s)
        if self.config.gate == "two_way":
            # p(select) per sentence; padding can never be chosen (-inf) and never carries a gate. The choice ranks
            # the log-odds, not the probability: the straight-through gradient drives every gate towards 1, and
            # once p(select) rounds to 1.0 for all sentences in float32 a top-k over probabilities is a tie broken
            # by index, the same for every selector whatever it learned.
            two = self.selector(context).float()
            soft = torch.softmax(two, dim=-1)[..., 1].to(sentence_embeddings.dtype)
            scores = (two[..., 1] - two[..., 0]).masked_fill(~sentence_mask, float("-inf"))
            selected = scores.topk(k, dim=-1).indices
            hard = torch.zeros_like(soft).scatter(-1, selected, 1.0)
            # Straight-through: the forward pass is the hard choice; unselected sentences are zero and tie in the
            # max-pool, so the gradient reaches the gates of the sentences that win a dimension there too.
            # Padding never takes part, so a document pools the same whatever else is in its batch.
            gate = hard - soft.detach() + soft
            gated = (sentence_embeddings * gate.unsqueeze(-1)).masked_fill(~sentence_mask.unsqueeze(-1),
                                                                          float("-inf"))
            # amax shares the gradient evenly among tied maxima (as the reference's TensorFlow max does); max
            # would give it all to the first unselected sentence, so only that one's gate would ever learn.
            pooled = gated.amax(dim=1)
        else:
            scores = self.selector(context).squeeze(-1).masked_fill(~sentence_mask, float("-inf"))
            noisy = scores
            if self.training and self.config.selection_noise > 0:
                uniform = torch.rand_like(scores).clamp(1e-9, 1 - 1e-9)
                noisy = scores - self.config.selection_noise * torch.log(-torch.log(uniform))
            selected = noisy.topk(k, dim=-1).indices
            hard = torch.zeros_like(scores).scatter(-1, selected, 1.0)
            soft = torch.softmax(noisy, dim=-1)
            gate = hard - soft.detach() + soft
            # Unselected sentences are pushed far below any real value, so only the selected one's gate learns.
            masked = sentence_embeddings * gate.unsqueeze(-1) + (1.0 - hard).unsqueeze(-1) * -1e4
            pooled = masked.max(dim=1).values
        logits = self.classifier(self.dropout(pooled))
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return RationaleOutput(loss=loss, logits=logits, selected=selected, scores=scores)


def encode_sentences(tokenizer: Any, sentences: Sequence[str], max_tokens: int) -> list[list[int]]:
    """Token ids of each sentence with the tokenizer's specials; a long sentence keeps its first and last halves."""
    ids = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    head = [cls_id] if cls_id is not None else []
    tail = [sep_id] if sep_id is not None else []
    room = max_tokens - len(head) - len(tail)
    out = []
    for x in ids:
        if len(x) > room:
            x = x[:room - room // 2] + x[len(x) - room // 2:] if room // 2 else x[:room]
        out.append(head + x + tail)
    return out


class SentenceBatchCollator:
    """Turns ``{"sentences": [...], "labels": y}`` items (or ``"sentence_ids"`` into a `SentenceTable`) into
    ``input_ids``/``attention_mask``/``sentence_mask``, or into ``sentence_embeddings`` when the table is embedded.

    Documents longer than ``max_sentences`` keep their first ``max_sentences`` sentences.
    """

    def __init__(self, tokenizer: Any, *, max_sentence_tokens: int = 32, max_sentences: int = 16,
                 table: Any = None, use_embeddings: bool | None = None):
        self.tokenizer, self.max_tokens, self.max_sentences = tokenizer, max_sentence_tokens, max_sentences
        self.table = table
        self.use_embeddings = use_embeddings
        self._cache: dict[int, list[int]] = {}

    def _ids(self, item: dict[str, Any]) -> tuple[list[Any], bool]:
        if "sentence_ids" in item:
            return list(item["sentence_ids"])[:self.max_sentences], True
        return list(item["sentences"])[:self.max_sentences], False

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        docs = [self._ids(it) for it in items]
        n_sent = max(max(len(d) for d, _ in docs), 1)
        batch: dict[str, torch.Tensor] = {}
        sentence_mask = torch.zeros(len(items), n_sent, dtype=torch.bool)
        for i, (d, _) in enumerate(docs):
            sentence_mask[i, :len(d)] = True
        embedded = self.table is not None and self.table.embeddings is not None and self.use_embeddings is not False
        if embedded and all(by_id for _, by_id in docs):
            # One gather for the whole batch; padding rows point at sentence 0 and are masked out.
            index = torch.zeros(len(items), n_sent, dtype=torch.long)
            for i, (d, _) in enumerate(docs):
                index[i, :len(d)] = torch.as_tensor(d, dtype=torch.long)
            batch["sentence_embeddings"] = self.table.embeddings[index] * sentence_mask.unsqueeze(-1)
        else:
            token_lists = []
            for d, by_id in docs:
                if by_id:
                    token_lists.append([self._tokens(x) for x in d])
                else:
                    token_lists.append(encode_sentences(self.tokenizer, d, self.max_tokens) if d else [])
            width = max((len(t) for doc in token_lists for t in doc), default=1)
            pad = self.tokenizer.pad_token_id or 0
            input_ids = torch.full((len(items), n_sent, width), pad, dtype=torch.long)
            attention = torch.zeros((len(items), n_sent, width), dtype=torch.long)
            for i, doc in enumerate(token_lists):
                for j, toks in enumerate(doc):
                    input_ids[i, j, :len(toks)] = torch.tensor(toks)
                    attention[i, j, :len(toks)] = 1
            batch["input_ids"], batch["attention_mask"] = input_ids, attention
        batch["sentence_mask"] = sentence_mask
        if "labels" in items[0]:
            batch["labels"] = torch.tensor([int(it["labels"]) for it in items], dtype=torch.long)
        return batch

    def _tokens(self, sentence_id: int) -> list[int]:
        toks = self._cache.get(sentence_id)
        if toks is None:
            toks = self._cache[sentence_id] = encode_sentences(self.tokenizer, [self.table.sentences[sentence_id]],
                                                               self.max_tokens)[0]
        return toks


class RationaleSelector(PretrainedComponent):
    """A `SentenceRationaleModel` with its tokenizer: selects rationale sentences, saves and shares.

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> encoder, tok = tiny_encoder()
        >>> selector = RationaleSelector.from_encoder((encoder, tok), label_names=["negative", "positive"],
        ...                                           sentence_layers=1, sentence_heads=2)
        >>> result = selector.select([["the room was clean .", "the food was bad ."]], labels=[1])
        >>> len(result.selected[0]), result.predicted[0] in (0, 1)
        (1, True)
    """

    config_name = "cfaug_rationale.json"
    component_type = "rationale_selector"
    pipeline_tag = "text-classification"
    card_summary = ("A sentence rationale selector (ICDA, Plyler and Chi): it picks the sentence of a document that "
                    "explains its label and classifies from that sentence alone. ICDA swaps the selected sentence "
                    "for a confident rationale of the other class to make counterfactual documents.")

    def __init__(self, model: SentenceRationaleModel, tokenizer: Any, *, batch_size: int = 32,
                 device: str | None = None):
        self.batch_size = batch_size
        self._setup(model, tokenizer, device=device, base_model=model.config.encoder_name)

    @classmethod
    def from_encoder(cls, encoder: Any = "sentence-transformers/all-MiniLM-L6-v2", *,
                     label_names: Sequence[str] = ("0", "1"), **config_kwargs: Any) -> RationaleSelector:
        """A fresh selector around a pretrained token encoder: a Hub id or folder, or ``(model, tokenizer)``."""
        if isinstance(encoder, tuple):
            model, tokenizer = encoder
        else:
            from ..pretrained import load_tokenizer

            tokenizer, model = load_tokenizer(encoder), encoder
        net = SentenceRationaleModel.from_encoder(model, label_names=label_names, **config_kwargs)
        return cls(net, tokenizer)

    @property
    def label_names(self) -> list[str]:
        return [self.model.config.id2label[i] for i in range(self.model.config.num_labels)]

    def collator(self, table: Any = None) -> SentenceBatchCollator:
        cfg = self.model.config
        return SentenceBatchCollator(self.tokenizer, max_sentence_tokens=cfg.max_sentence_tokens,
                                     max_sentences=cfg.max_sentences, table=table)

    def embed_table(self, table: Any) -> Any:
        """Cache sentence vectors of every sentence in ``table`` (valid while the token encoder is frozen)."""
        if not self.model.config.freeze_encoder:
            raise ValueError("Cached sentence vectors need freeze_encoder=True: a trained encoder would make them "
                             "stale after the first step.")
        model = self.model.to(self.device).eval()
        max_tokens = model.config.max_sentence_tokens

        def encode(texts: list[str]) -> torch.Tensor:
            ids = encode_sentences(self.tokenizer, texts, max_tokens)
            width = max(len(x) for x in ids)
            input_ids = torch.full((len(ids), width), self.tokenizer.pad_token_id or 0, dtype=torch.long)
            mask = torch.zeros_like(input_ids)
            for i, x in enumerate(ids):
                input_ids[i, :len(x)], mask[i, :len(x)] = torch.tensor(x), 1
            with torch.no_grad():
                return model.embed_sentences(input_ids.to(self.device), mask.to(self.device))

        return table.embed(encode)

    def select(self, documents: Sequence[Sequence[Any]], labels: Sequence[int] | None = None, *,
               table: Any = None) -> Any:
        """Selected sentence indices, predicted labels and per-document error (1 − p(true label)).

        ``documents`` are lists of sentences, or of sentence ids into ``table``.
        """
        from ..text.sentences import SelectionResult

        collate = self.collator(table)
        key = "sentence_ids" if table is not None else "sentences"
        model = self.model.to(self.device)
        was_training = model.training
        model.eval()
        selected, predicted, probs = [], [], []
        with torch.no_grad():
            for start in range(0, len(documents), self.batch_size):
                chunk = documents[start:start + self.batch_size]
                batch = collate([{key: d} for d in chunk])
                out = model(**{k: v.to(self.device) for k, v in batch.items()})
                p = torch.softmax(out.logits.float(), -1).cpu()
                # A document with fewer sentences than k cannot have padding in its rationale.
                selected += [sorted(s for s in row if s < len(doc)) for row, doc in
                             zip(out.selected.cpu().tolist(), chunk)]
                predicted += p.argmax(-1).tolist()
                probs += p.tolist()
        model.train(was_training)
        return SelectionResult.from_probs(selected, predicted, probs, labels)

    # ------------------------------------------------------------------------------------------ save and load
    def get_config_dict(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "label_names": self.label_names,
                "training": self.training_info}

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], **kwargs: Any) -> RationaleSelector:
        from transformers import AutoTokenizer

        model = load_weights(SentenceRationaleModel, folder, "RationaleSelector")
        selector = cls(model, AutoTokenizer.from_pretrained(folder), batch_size=config.get("batch_size", 32),
                       device=kwargs.get("device"))
        # "training", as every component saves it; "training_info" in folders saved before 0.1.0's last release
        selector.training_info = config.get("training", config.get("training_info", {}))
        return selector

    def card_tags(self) -> list[str]:
        return ["rationale", "icda", "sentence-selection"]

    def card_usage(self) -> str:
        cfg = self.model.config
        settings = {"k": cfg.k, "max_sentences": cfg.max_sentences, "freeze_encoder": cfg.freeze_encoder}
        return ("It is used as `RationaleSwapAugmenter(selector, schema)` or by `ICDACallback` in a Trainer, or "
                "directly: `selector.select([[\"Great view.\", \"Rude staff.\"]])`. Settings: "
                f"`{json.dumps(settings)}`.")
