"""Quality filters shared by every method: each sees a batch of (source row, counterfactual) pairs and keeps or drops
each one; the augmenter base applies them in order, batched, and counts every drop as ``filtered:<name>``.

| filter | keeps a counterfactual when |
|---|---|
| `LabelFlipFilter` | a label checker predicts its new label (or gives it at least ``threshold``) |
| `MinimalityFilter` | its normalised word edit distance from the source is within bounds |
| `SemanticFidelityFilter` | its MoverScore similarity to the source is within bounds |
| `FluencyFilter` | its perplexity under a causal LM is at most ``max_ratio`` times the source's |
| `EntityFidelityFilter` | it keeps at least ``min_share`` of the source's entities |
| `TopK` | it is among a source row's ``k`` best by the summed scores of other filters |
| `ShortcutBalanceFilter` | it does not push any of its tokens past the competency test's significance threshold for its label (keeps the counterfactuals from creating a new shortcut) |
| `NERConstraintFilter` | its tokens and IOB2 tags keep the source's entity types, in order, and its context |
| `REConstraintFilter` | its head and tail markup, texts and order are the source's |
| `NLIConstraintFilter` | its premise is the source's, and its hypothesis is not the premise |
| `TagConsistencyFilter` | a tagger trained on the original data finds exactly its entities (NER) |

The arithmetic is `cfaug_hf.metrics`'s. Every filter's settings go into the augmenter's config, fingerprint
and card.

Examples:
    >>> from datasets import Dataset
    >>> from cfaug_hf import TaskSchema
    >>> from cfaug_hf.testing import NegateAugmenter
    >>> ds = Dataset.from_dict({"text": ["the film was good", "it was a long and very slow film"],
    ...                         "label": ["positive", "negative"]})
    >>> aug = NegateAugmenter(TaskSchema.sentiment(), filters=[MinimalityFilter(max_distance=0.15)])
    >>> out = aug.augment(ds)
    >>> aug.stats.produced, aug.stats.by_prefix("filtered")
    ({'negated': 1}, {'minimality': 1})
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from . import registry
from .fingerprint import code_digest, digest_json, digest_object

__all__ = ["Pair", "Filter", "LabelFlipFilter", "MinimalityFilter", "SemanticFidelityFilter", "FluencyFilter",
           "EntityFidelityFilter", "TopK", "ShortcutBalanceFilter", "ConstraintFilter", "NERConstraintFilter",
           "REConstraintFilter", "NLIConstraintFilter", "TagConsistencyFilter"]


def _saveable(obj: Any) -> bool:
    """A cfaug component (it can be saved beside the augmenter or referenced on the Hub)."""
    return getattr(obj, "component_type", None) in registry.COMPONENTS


@dataclass
class Pair:
    """One candidate: the source row's values, the counterfactual's values and labels, the columns the method
    edited (``columns``) and all the schema's text columns, in the order a pair classifier reads them."""

    source: dict[str, Any]
    counterfactual: dict[str, Any]
    label: str
    original_label: str
    columns: tuple[str, ...]
    text_columns: tuple[str, ...]
    group: int  # index of the source row in the batch (TopK keeps the best k per group)

    @staticmethod
    def _text(value: Any) -> str:
        return value if isinstance(value, str) else " ".join(value)

    def before(self) -> str:
        return " ".join(self._text(self.source[c]) for c in self.columns)

    def after(self) -> str:
        return " ".join(self._text(self.counterfactual[c]) for c in self.columns)


class Filter(abc.ABC):
    """Scores pairs and keeps those whose score is in ``[low, high]``. Subclasses set ``name`` and ``scores``.

    A filter that can say why it dropped a pair sets ``reasons`` in `keep` (one short string or None per
    pair); the augmenter records each dropped pair's reason as a ``<name>:<reason>`` event, so it is counted in the
    stats, the report and the dataset card (e.g. ``shortcut_balance:not``).
    """

    name: ClassVar[str] = ""
    reasons: list[str | None] | None = None
    #: Set by `keep` when a model cut some pairs' input to its maximum length: one flag per pair (counted in
    #: the rows' outcomes as ``truncated:<name>_input``).
    truncated: list[bool] | None = None

    def __init__(self, low: float = float("-inf"), high: float = float("inf")) -> None:
        self.low, self.high = low, high

    @abc.abstractmethod
    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        """One score per pair (higher is better for every built-in filter)."""

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        values = self.scores(pairs) if pairs else []
        return [self.low <= v <= self.high for v in values], values

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        registry.register_filter(cls)

    def components(self) -> dict[str, Any]:
        """Models the filter uses, for the augmenter's fingerprint and card."""
        return {}

    def init_args(self) -> dict[str, Any] | None:
        """The constructor arguments that rebuild this filter when an augmenter is saved: JSON values, cfaug
        components (saved beside the augmenter, or referenced on the Hub) and other filters. None when the filter
        holds something that cannot be saved (a Python callable, a dataset): loading the augmenter then asks for
        ``filters=``."""
        return None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "low": self.low, "high": self.high}

    def fingerprint(self) -> str:
        return digest_json({"code": code_digest(type(self)), "config": self.get_config_dict(),
                            "components": {k: digest_object(v) for k, v in sorted(self.components().items())}})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_config_dict()})"


class LabelFlipFilter(Filter):
    """Keeps a counterfactual that ``checker`` (a `LabelChecker`) labels as intended: a probability
    of at least ``threshold`` for the new label (default: the checker's own ``config.accept_threshold``), or, with
    neither set, its top prediction. The score is that probability."""

    name = "label_flip"

    def __init__(self, checker: Any, threshold: float | None = None) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"LabelFlipFilter threshold must be in [0, 1], got {threshold}.")
        super().__init__()
        self.checker, self.threshold = checker, threshold

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self._probs(pairs)[0]

    def _probs(self, pairs: Sequence[Pair]) -> tuple[list[float], list[bool]]:
        cols = pairs[0].text_columns
        first = [Pair._text(p.counterfactual[cols[0]]) for p in pairs]
        second = [p.counterfactual[cols[1]] for p in pairs] if len(cols) > 1 else None
        probs = self.checker.predict_proba(first, second)
        cut = getattr(self.checker, "last_truncated", None)
        self.truncated = list(cut) if isinstance(cut, list) and len(cut) == len(pairs) else None
        targets = [self.checker.label_id(p.label) for p in pairs]
        return [float(row[t]) for row, t in zip(probs, targets)], [int(row.argmax()) == t for row, t in
                                                                   zip(probs, targets)]

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        if not pairs:
            return [], []
        values, top = self._probs(pairs)
        threshold = self.threshold
        if threshold is None:
            threshold = getattr(getattr(self.checker, "config", None), "accept_threshold", None)
        if threshold is None:
            return top, values
        return [v >= threshold for v in values], values

    def components(self) -> dict[str, Any]:
        return {"checker": self.checker}

    def init_args(self) -> dict[str, Any] | None:
        return {"checker": self.checker, "threshold": self.threshold} if _saveable(self.checker) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "threshold": self.threshold}


class MinimalityFilter(Filter):
    """Keeps counterfactuals whose normalised word edit distance from the source (0 = same, 1 = nothing shared) is
    in ``[min_distance, max_distance]``. The score is ``1 - distance``."""

    name = "minimality"

    def __init__(self, min_distance: float = 0.0, max_distance: float = 1.0) -> None:
        if not 0.0 <= min_distance <= max_distance <= 1.0:
            raise ValueError(f"Need 0 <= min_distance <= max_distance <= 1, got {min_distance} and {max_distance}.")
        super().__init__(1.0 - max_distance, 1.0 - min_distance)
        self.min_distance, self.max_distance = min_distance, max_distance

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from .metrics.intrinsic import edit_distance

        d = edit_distance([p.after() for p in pairs], [p.before() for p in pairs])["distances"]
        return [1.0 - x for x in d]

    def init_args(self) -> dict[str, Any] | None:
        return {"min_distance": self.min_distance, "max_distance": self.max_distance}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "min_distance": self.min_distance, "max_distance": self.max_distance}


class SemanticFidelityFilter(Filter):
    """Keeps counterfactuals whose MoverScore similarity to the source is in ``[min_similarity, max_similarity]``
    (``embedder``: a `TextEmbedder`, a Hub id or folder; default MiniLM)."""

    name = "semantic_fidelity"

    def __init__(self, embedder: Any = "sentence-transformers/all-MiniLM-L6-v2", min_similarity: float = 0.0,
                 max_similarity: float = 1.0) -> None:
        super().__init__(min_similarity, max_similarity)
        self._embedder = embedder

    @property
    def embedder(self) -> Any:
        from .metrics.intrinsic import TextEmbedder

        if not isinstance(self._embedder, TextEmbedder):
            self._embedder = TextEmbedder(self._embedder)  # loaded once, on first use
        return self._embedder

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from .metrics.intrinsic import mover_score

        return mover_score([p.after() for p in pairs], [p.before() for p in pairs], self.embedder)["scores"]

    def components(self) -> dict[str, Any]:
        model = getattr(self._embedder, "model", None)
        return {"embedder": model if model is not None else str(self._embedder)}

    def init_args(self) -> dict[str, Any] | None:
        if not isinstance(self._embedder, str):
            return None
        return {"embedder": self._embedder, "min_similarity": self.low, "max_similarity": self.high}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "min_similarity": self.low, "max_similarity": self.high}


class FluencyFilter(Filter):
    """Keeps counterfactuals whose perplexity under a causal LM is at most ``max_ratio`` times their source's
    (``model``: a Hub id or folder, or ``(model, tokenizer)``; default SmolLM2). The score is source / counterfactual
    perplexity, so higher is more fluent."""

    name = "fluency"

    def __init__(self, model: Any = "HuggingFaceTB/SmolLM2-135M-Instruct", max_ratio: float = 1.5) -> None:
        if max_ratio <= 0:
            raise ValueError(f"FluencyFilter max_ratio must be > 0, got {max_ratio}.")
        super().__init__(1.0 / max_ratio)
        self._model, self.max_ratio = model, max_ratio

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from .metrics.intrinsic import load_model_and_tokenizer, perplexity

        if isinstance(self._model, str):
            self._model = load_model_and_tokenizer(self._model, "AutoModelForCausalLM")  # loaded once
        after = perplexity([p.after() for p in pairs], self._model)["perplexities"]
        before = perplexity([p.before() for p in pairs], self._model)["perplexities"]
        return [b / a if a > 0 else 0.0 for a, b in zip(after, before)]

    def components(self) -> dict[str, Any]:
        return {"model": self._model[0] if isinstance(self._model, tuple) else str(self._model)}

    def init_args(self) -> dict[str, Any] | None:
        return {"model": self._model, "max_ratio": self.max_ratio} if isinstance(self._model, str) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "max_ratio": self.max_ratio}


class EntityFidelityFilter(Filter):
    """Keeps counterfactuals that keep at least ``min_share`` of their source's entities (case-insensitive).

    ``entities`` maps texts to lists of entity strings, batched: an NER component, or any callable (e.g. a spaCy
    pipeline wrapped as ``lambda texts: [[e.text for e in d.ents] for d in nlp.pipe(texts)]``). A source with no
    entity scores 1."""

    name = "entity_fidelity"

    def __init__(self, entities: Callable[[list[str]], list[list[str]]], min_share: float = 0.5) -> None:
        if not callable(entities):
            raise TypeError(f"entities must be a callable texts -> lists of entities, got {type(entities).__name__}.")
        super().__init__(min_share)
        self.entities, self.min_share = entities, min_share

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from .contracts import batch_output, string_list

        contract = "expected a list of entity strings per text"
        found = batch_output(self.entities([p.before() for p in pairs]), len(pairs), who="The entity extractor",
                             contract=contract, what="text")
        out = []
        for i, (p, ents) in enumerate(zip(pairs, found)):
            ents = {e.casefold() for e in string_list(ents, who="The entity extractor", index=i, contract=contract)}
            after = p.after().casefold()
            out.append(sum(e in after for e in ents) / len(ents) if ents else 1.0)
        return out

    def components(self) -> dict[str, Any]:
        return {"entities": getattr(self.entities, "__qualname__", type(self.entities).__name__)}

    def init_args(self) -> dict[str, Any] | None:
        return {"entities": self.entities, "min_share": self.min_share} if _saveable(self.entities) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "min_share": self.min_share}


class ConstraintFilter(Filter):
    """A hard check: keeps a counterfactual when `problem` finds nothing wrong with it, and records the
    problem as the drop reason (``<name>:<problem>`` in the stats). Scores are 1 (kept) or 0."""

    @abc.abstractmethod
    def problem(self, pair: Pair) -> str | None:
        """A short reason the pair breaks the constraint, or None."""

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self.keep(pairs)[1]

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        self.reasons = [self.problem(p) for p in pairs]
        return [r is None for r in self.reasons], [float(r is None) for r in self.reasons]

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name}


class NERConstraintFilter(ConstraintFilter):
    """Entity constraints of an NER counterfactual (tokens + IOB2 tags): one tag per token, valid IOB2, the same
    entity types in the same order as the source, the words outside entities unchanged, and (with a ``lexicon``)
    no new entity text that the dataset knows only under another type.

    Reasons: ``tag_count``, ``iob2``, ``entity_types``, ``context_changed``, ``type_conflict``.

    Args:
        lexicon: an optional `EntityLexicon` of the original data.
    """

    name = "ner_constraints"

    def __init__(self, lexicon: Any = None) -> None:
        super().__init__()
        self.lexicon = lexicon

    def init_args(self) -> dict[str, Any] | None:
        return {} if self.lexicon is None else None

    def problem(self, pair: Pair) -> str | None:
        from .entities import iob2_problem, iob2_spans

        col = pair.text_columns[0]
        tokens, tags = list(pair.counterfactual[col]), pair.label.split()
        old_tokens, old_tags = list(pair.source[col]), pair.original_label.split()
        if len(tokens) != len(tags):
            return "tag_count"
        if iob2_problem(tags):
            return "iob2"
        new, old = iob2_spans(tokens, tags), iob2_spans(old_tokens, old_tags)
        if [e.type for e in new] != [e.type for e in old]:
            return "entity_types"
        if _outside(tokens, new) != _outside(old_tokens, old):
            return "context_changed"
        if self.lexicon is not None:
            for a, b in zip(new, old):
                known = self.lexicon.types_of(a.text)
                if a.text.casefold() != b.text.casefold() and known and a.type not in known:
                    return "type_conflict"
        return None

    def components(self) -> dict[str, Any]:
        return {"lexicon": self.lexicon.to_dict()} if self.lexicon is not None else {}


def _outside(tokens: Sequence[str], entities: Sequence[Any]) -> list[Any]:
    """The tokens outside entities, with a marker where each entity sits."""
    out: list[Any] = []
    cursor = 0
    for e in entities:
        out += list(tokens[cursor:e.start]) + [None]
        cursor = e.end
    return out + list(tokens[cursor:])


class REConstraintFilter(ConstraintFilter):
    """Entity constraints of a relation-extraction counterfactual: the head and tail markup intact (one of each),
    the same head and tail text as the source, and the head still before the tail (SemEval numbers the entities in
    reading order, and its labels' direction, ``(e1,e2)`` or ``(e2,e1)``, refers to that order). Set
    ``keep_order=False`` for data whose labels name the head and tail whatever their order.

    Reasons: ``markup``, ``head_changed``, ``tail_changed``, ``order``.
    """

    name = "re_constraints"

    def __init__(self, head: tuple[str, str] = ("<e1>", "</e1>"), tail: tuple[str, str] = ("<e2>", "</e2>"), *,
                 keep_order: bool = True) -> None:
        super().__init__()
        self.head, self.tail, self.keep_order = tuple(head), tuple(tail), keep_order

    def problem(self, pair: Pair) -> str | None:
        from .entities import MarkupError, relation_entities

        col = pair.columns[0]
        try:
            head, tail, head_first = relation_entities(pair.counterfactual[col], self.head, self.tail)
        except MarkupError:
            return "markup"
        old_head, old_tail, old_first = relation_entities(pair.source[col], self.head, self.tail)
        if _norm(head) != _norm(old_head):
            return "head_changed"
        if _norm(tail) != _norm(old_tail):
            return "tail_changed"
        if self.keep_order and head_first != old_first:
            return "order"
        return None

    def init_args(self) -> dict[str, Any] | None:
        return {"head": list(self.head), "tail": list(self.tail), "keep_order": self.keep_order}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "head": list(self.head), "tail": list(self.tail), "keep_order": self.keep_order}


class NLIConstraintFilter(ConstraintFilter):
    """An NLI counterfactual that edits the hypothesis keeps the premise as it was, and its hypothesis is not a copy
    of the premise (which would be entailed whatever the target). Reasons: ``premise_changed``,
    ``copied_premise``."""

    name = "nli_constraints"

    def init_args(self) -> dict[str, Any] | None:
        return {}

    def problem(self, pair: Pair) -> str | None:
        premise, hypothesis = pair.text_columns[:2]
        if _norm(Pair._text(pair.counterfactual[premise])) != _norm(Pair._text(pair.source[premise])):
            return "premise_changed"
        if _norm(Pair._text(pair.counterfactual[hypothesis])) == _norm(Pair._text(pair.source[premise])):
            return "copied_premise"
        return None


class TagConsistencyFilter(ConstraintFilter):
    """The NER consistency filter: keeps a counterfactual when a small tagger trained on the original data finds
    exactly its entities (same spans, same types). ``tagger`` maps a batch of token lists to tag lists (e.g.
    `cfaug_hf.training.train_tagger`). Reason: ``tags_disagree``."""

    name = "tag_consistency"

    def __init__(self, tagger: Callable[[list[list[str]]], list[list[str]]]) -> None:
        if not callable(tagger):
            raise TypeError(f"tagger must be a callable token lists -> tag lists, got {type(tagger).__name__}.")
        super().__init__()
        self.tagger = tagger

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        from .entities import iob2_spans

        col = pairs[0].text_columns[0] if pairs else ""
        tokens = [list(p.counterfactual[col]) for p in pairs]
        from .contracts import batch_output, string_list

        contract = "expected one list of tags per token list, a tag per token"
        predicted = batch_output(self.tagger(tokens), len(tokens), who="The tagger", contract=contract) if pairs \
            else []
        self.reasons = []
        for i, (toks, p, pred) in enumerate(zip(tokens, pairs, predicted)):
            if len(string_list(pred, who="The tagger", index=i, contract=contract)) != len(toks):
                raise TypeError(f"The tagger's output {i} has {len(pred)} tags for {len(toks)} tokens; {contract}.")
            same = [(e.start, e.end, e.type) for e in iob2_spans(toks, list(pred))] == \
                [(e.start, e.end, e.type) for e in iob2_spans(toks, p.label.split())]
            self.reasons.append(None if same else "tags_disagree")
        return [r is None for r in self.reasons], [float(r is None) for r in self.reasons]

    def problem(self, pair: Pair) -> str | None:
        self.keep([pair])
        return self.reasons[0]  # type: ignore[index]

    def components(self) -> dict[str, Any]:
        return {"tagger": self.tagger}


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


class TopK(Filter):
    """Keeps each source row's ``k`` counterfactuals with the highest summed (weighted) scores of ``filters``
    (RACE keeps the one with the best semantic + entity fidelity). The inner filters only score here; add them
    to the stack on their own to apply their bounds too."""

    name = "top_k"

    def __init__(self, filters: Sequence[Filter], k: int = 1, weights: Sequence[float] | None = None) -> None:
        if k < 1:
            raise ValueError(f"TopK k must be >= 1, got {k}.")
        if not filters:
            raise ValueError("TopK needs at least one filter to score with.")
        weights = list(weights) if weights is not None else [1.0] * len(filters)
        if len(weights) != len(filters):
            raise ValueError(f"Got {len(weights)} weights for {len(filters)} filters.")
        super().__init__()
        self.filters, self.k, self.weights = list(filters), k, weights

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        total = [0.0] * len(pairs)
        for f, w in zip(self.filters, self.weights):
            for i, s in enumerate(f.scores(pairs)):
                total[i] += w * s
        return total

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        values = self.scores(pairs) if pairs else []
        by_group: dict[int, list[int]] = {}
        for i, p in enumerate(pairs):
            by_group.setdefault(p.group, []).append(i)
        kept = [False] * len(pairs)
        for members in by_group.values():
            for i in sorted(members, key=lambda i: (-values[i], i))[:self.k]:
                kept[i] = True
        return kept, values

    def components(self) -> dict[str, Any]:
        return {f"{i}.{k}": v for i, f in enumerate(self.filters) for k, v in f.components().items()}

    def init_args(self) -> dict[str, Any] | None:
        if any(f.init_args() is None for f in self.filters):
            return None
        return {"filters": list(self.filters), "k": self.k, "weights": self.weights}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "k": self.k, "weights": self.weights,
                "scored_by": [f.get_config_dict() for f in self.filters]}


class ShortcutBalanceFilter(Filter):
    """Keeps the counterfactual set from creating new shortcuts (beyond the papers).

    Counts every word of the bias field (the claim, the hypothesis, or the edited text; ``schema.bias_columns``) per
    label in the original data, then takes counterfactuals in order: one is dropped when adding it would put one of
    its words past the competency test's significance threshold for its label (Gardner et al. 2021; the same
    Bonferroni z as `cfaug_hf.diagnostics.competency_test`, fixed from the original data) *and* raise that
    word's z, e.g. the tenth "not" a generator adds to a REFUTES claim once "not" is about to predict REFUTES.
    Kept ones are added to the counts. Counterfactuals that weaken a correlation are always kept. The score is
    minus the largest such z (higher is safer); ``blocked`` counts the words that caused drops, and each drop is
    recorded as a ``shortcut_balance:<word>`` event in the augmenter's stats (and so in reports and cards).

    With ``num_proc`` every worker balances its own shard from the same original counts.

    Args:
        reference: the original training data (a ``datasets.Dataset`` in ``schema``'s columns, or
            ``(texts, labels)``).
        schema: the task schema (its ``bias_columns`` name the field).
        alpha: family-wise error rate of the test (0.01, as in the diagnostics).
        min_count: words in fewer examples are never tested (20).

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf import TaskSchema
        >>> from cfaug_hf.testing import NegateAugmenter
        >>> texts = [f"film {i} was good" for i in range(60)] + [f"film {i} seems bad" for i in range(60)]
        >>> data = Dataset.from_dict({"text": texts, "label": ["positive"] * 60 + ["negative"] * 60})
        >>> schema = TaskSchema.sentiment()
        >>> aug = NegateAugmenter(schema, filters=[ShortcutBalanceFilter(data, schema)])
        >>> out = aug.augment(data)
        >>> aug.stats.produced["negated"] < 60, aug.filters[0].blocked.most_common(1)[0][0]
        (True, 'not')
    """

    name = "shortcut_balance"

    def __init__(self, reference: Any, schema: Any, *, alpha: float = 0.01, min_count: int = 20) -> None:
        from collections import Counter

        from .diagnostics import _texts_and_labels, competency_test

        super().__init__()
        self.columns = tuple(schema.bias_columns)
        texts, labels = _texts_and_labels(reference, self.columns, schema.label_column, schema)
        test = competency_test((texts, labels), schema, alpha=alpha, min_count=min_count)
        self.alpha, self.min_count, self.threshold = alpha, min_count, test.threshold
        self.labels = list(schema.label_names)
        self._counts: dict[str, Counter] = {}
        self._totals: Counter = Counter()
        for text, label in zip(texts, labels):
            self._add(self._words(text), label)
        self._reference = digest_json([texts, labels])
        self.blocked: Counter = Counter()

    @staticmethod
    def _words(text: str) -> set[str]:
        from .text import is_word, tokenize

        return {t.key for t in tokenize(text) if is_word(t)}

    def _add(self, words: set[str], label: str) -> None:
        from collections import Counter

        for w in words:
            self._counts.setdefault(w, Counter())[label] += 1
        self._totals[label] += 1

    def _z(self, word: str, label: str, extra: int) -> float:
        import math

        counts = self._counts.get(word)
        n = (sum(counts.values()) if counts else 0) + extra
        total = sum(self._totals.values()) + extra
        if n < self.min_count or not total:
            return float("-inf")
        p0 = (self._totals[label] + extra) / total
        if not 0 < p0 < 1:
            return float("-inf")
        k = (counts.get(label, 0) if counts else 0) + extra
        return (k / n - p0) / math.sqrt(p0 * (1 - p0) / n)

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self.keep(pairs)[1]

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        kept, values, self.reasons = [], [], []
        for pair in pairs:
            text = " ".join(Pair._text(pair.counterfactual[c]) for c in self.columns if c in pair.counterfactual)
            words = self._words(text)
            worst, culprit = float("-inf"), None
            for w in words:
                after = self._z(w, pair.label, 1)
                if after > self.threshold and after > self._z(w, pair.label, 0) and after > worst:
                    worst, culprit = after, w
            ok = culprit is None
            if ok:
                self._add(words, pair.label)
            else:
                self.blocked[culprit] += 1
            kept.append(ok)
            self.reasons.append(culprit)
            tested = [z for z in (self._z(w, pair.label, 0) for w in words) if z != float("-inf")]
            values.append(-max(tested, default=0.0) if ok else -worst)
        return kept, values

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "alpha": self.alpha, "min_count": self.min_count, "columns": list(self.columns),
                "threshold_z": round(self.threshold, 4), "reference": self._reference}
