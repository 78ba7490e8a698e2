from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ...components.protocols import RationaleSelecting
from ...augmenter import Augmenter, Counterfactual, Example, RowResult, source_id, whole_dataset
from ...fingerprint import digest_json
from ...schema import SchemaError, TaskSchema
from ...text.sentences import split_sentences
from .config import ICDAConfig
from .paper import PAPER
from .selection import OcclusionSelector, Plan, SelectionResult, plan_counterfactuals

__all__ = ["RationaleSwapAugmenter"]

ICDA_CITATION = """@inproceedings{plyler2025icda,
  title     = {Iterative Counterfactual Data Augmentation},
  author    = {Plyler, Mitchell and Chi, Min},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year      = {2025},
  url       = {https://arxiv.org/abs/2502.18249}
}"""


def default_selector(task: str) -> OcclusionSelector:
    """Rationales by occlusion with the flip checker shipped for ``task`` (sentiment and NLI): the sentence whose
    removal most lowers the checker's confidence in the label. What ``selector="default"`` gives; a trained
    `RationaleSelector` finds rationales the checker was not trained on."""
    from ...components.checker import default_checker

    checker = default_checker(task)
    if checker is None:
        raise ValueError(f"No flip checker ships for {task!r}, so there is no default rationale selector; pass a "
                         f"RationaleSelector (train one with run_icda) or OcclusionSelector(model, tokenizer).")
    selector = OcclusionSelector(checker.model, checker.tokenizer)
    selector.recipe_reference = "default"  # saved augmenters and recipes name it instead of failing to save it
    return selector


class RationaleSwapAugmenter(Augmenter[ICDAConfig]):
    """ICDA's counterfactuals (Plyler and Chi): swap a document's rationale sentence for one of another class.

    A rationale selector (a trained `RationaleSelector`, or any object with
    ``select(documents, labels) -> SelectionResult`` such as `OcclusionSelector`) picks each document's
    rationale. `fit` runs it over the whole dataset and draws the plan (the pools and donors depend on every
    row); ``dataset.map(augmenter, batched=True)`` then emits the rows. `augment` does both.

    Input columns (default `TaskSchema.sentiment`): the edit column holds the document, as a string (split
    into sentences with ``splitter``) or a list of sentences; the label column two or more classes.

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf.methods.icda.selection import SelectionResult
        >>> class FirstSentence:  # a stand-in selector: always sentence 0, always right and confident
        ...     def select(self, documents, labels=None):
        ...         return SelectionResult([[0] for _ in documents], list(labels), [0.0] * len(documents))
        >>> ds = Dataset.from_dict({"text": ["Great food. Nice room.", "Awful food. Nice room."],
        ...                         "label": ["positive", "negative"]})
        >>> out = RationaleSwapAugmenter(FirstSentence()).augment(ds)
        >>> [(t, label) for t, label, cf in zip(out["text"], out["label"], out["cf_is_counterfactual"]) if cf]
        [('Awful food. Nice room.', 'negative'), ('Great food. Nice room.', 'positive')]

    References:
        Mitchell Plyler, Min Chi. "Iterative Counterfactual Data Augmentation". AAAI 2025.
    """

    method = "icda"  # its task, config and roles: the register_method call in __init__
    citation = ICDA_CITATION
    presets = {"paper": PAPER}

    def __init__(self, selector: RationaleSelecting | str = "default", schema: TaskSchema | None = None, *,
                 config: ICDAConfig | None = None, filters: Sequence[Any] | None = None, **overrides: Any) -> None:
        super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
        if isinstance(selector, str) and selector == "default":
            selector = default_selector(self.schema.task)
        if not isinstance(selector, RationaleSelecting):
            raise TypeError(f"selector must have a select(documents, labels) method (RationaleSelector, "
                            f"OcclusionSelector); got {type(selector).__name__}.")
        self.selector = selector
        self.column = self.schema.edit_columns[0]
        self.plan: Plan | None = None
        self.selection: SelectionResult | None = None
        self._by_source: dict[str, dict[str, Any]] | None = None

    # ------------------------------------------------------------------------------------------------- fitting
    def sentences(self, value: Any, row: int | None = None) -> list[str]:
        """A document as its non-empty sentences."""
        if isinstance(value, str):
            return split_sentences(value, self.config.splitter)
        if isinstance(value, (list, tuple)) and all(isinstance(s, str) for s in value):
            return [s for s in value if s.strip()]
        where = f" at row {row}" if row is not None else ""
        raise SchemaError(f"Column {self.column!r}{where}: got {type(value).__name__}; expected a string or a list "
                          f"of sentence strings.")

    def fit(self, dataset: Any) -> RationaleSwapAugmenter:
        """Select rationales on ``dataset`` and draw the counterfactual plan that `__call__` emits."""
        dataset = whole_dataset(dataset, "RationaleSwapAugmenter (ICDA's swaps)")
        self.schema.validate_features(dataset.features)
        rows = list(dataset)
        docs = [self.sentences(r[self.column], i) for i, r in enumerate(rows)]
        labels = [self.schema.label_id(r[self.schema.label_column], row=i) for i, r in enumerate(rows)]
        limit = getattr(getattr(getattr(self.selector, "model", None), "config", None), "max_sentences", None)
        seen = [d[:limit] if limit else d for d in docs]
        self.selection = self.selector.select(seen, labels)
        kept = None
        if self.config.originals == "lowest_error":  # half the rows, as many per class: the paper's equal size
            from .training import keep_for_training

            classes = max(len(set(labels)), 1)
            kept = set(keep_for_training(self.selection, labels, [len(d) for d in seen], cap_factor=2 * classes))
        size = self.config.size if self.config.size is not None or kept is None else len(kept)
        self.plan = plan_counterfactuals(self.selection, labels, [len(d) for d in seen], size=size,
                                         pool_quantile=self.config.pool_quantile, seed=self.config.seed,
                                         sentences=seen)
        # Each row's plan is kept by its position: two rows may share a source id (a repeated id, or the same
        # document with the same label), and each must emit its own counterfactuals exactly once.
        ids = [source_id(r, self.schema) for r in rows]
        by_row: list[dict[str, Any]] = []
        for d, outcome in enumerate(self.plan.outcomes):
            events = [outcome] + (["note:sentences_truncated"] if limit and len(docs[d]) > limit else [])
            keep = kept is None or d in kept
            by_row.append({"events": events + ([] if keep else ["note:original_not_lowest_error"]), "cfs": [],
                           "keep": keep})
        for spec in self.plan.specs:
            new = list(docs[spec.source])
            swaps = []
            for pos, donor, donor_pos in spec.swaps:
                swaps.append({"position": pos, "old": new[pos], "new": docs[donor][donor_pos],
                              "donor": ids[donor], "donor_position": donor_pos})
                new[pos] = docs[donor][donor_pos]
            value = new if not isinstance(rows[spec.source][self.column], str) else self.config.joiner.join(new)
            by_row[spec.source]["cfs"].append(
                Counterfactual({self.column: value}, self.schema.label_names[spec.label], "rationale_swap",
                               {"swaps": swaps}))
        self._ids, self._by_row = ids, by_row
        counts = Counter(ids)
        self._by_source = {sid: by_row[d] for d, sid in enumerate(ids) if counts[sid] == 1}
        self._duplicates = {sid for sid, n in counts.items() if n > 1}
        return self

    def fingerprint(self) -> str:
        # The output depends on the plan drawn by fit(), not only on the config and weights.
        plan = None if self.plan is None else [(s.source, s.swaps, s.label) for s in self.plan.specs]
        return digest_json({"base": super().fingerprint(), "plan": json.loads(json.dumps(plan))})

    def augment(self, dataset: Any, **kwargs: Any) -> Any:
        """`fit` on ``dataset`` (unless already fitted on it) then ``map``; see `Augmenter.augment`."""
        dataset = whole_dataset(dataset, "RationaleSwapAugmenter (ICDA's swaps)")
        if self._by_source is None or getattr(self, "_fitted_on", None) != dataset._fingerprint:
            self.fit(dataset)
            self._fitted_on = dataset._fingerprint
        return super().augment(dataset, **kwargs)

    # ------------------------------------------------------------------------------------------------ mapping
    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        if self._by_source is None:
            raise RuntimeError("RationaleSwapAugmenter needs fit(dataset) before map: the pools and donors depend on "
                               "the whole dataset. augmenter.augment(dataset) does both.")
        out = []
        for ex in examples:
            if ex.index is not None and ex.index < len(self._ids) and self._ids[ex.index] == ex.source_id:
                entry = self._by_row[ex.index]  # the fitted dataset itself, mapped with indices
            elif ex.source_id in self._duplicates:
                raise SchemaError(
                    f"Row {ex.index if ex.index is not None else '?'} has source id {ex.source_id!r}, which several "
                    f"rows of the fitted dataset share (a repeated id, or the same text and label); without its row "
                    f"index its plan is ambiguous. Use augmenter.augment(dataset), or map with with_indices=True.")
            else:
                entry = self._by_source.get(ex.source_id)
            if entry is None:
                out.append(RowResult([], ["skipped:not_in_fitted_dataset"]))
            else:
                out.append(RowResult(list(entry["cfs"]), list(entry["events"]), keep_original=entry["keep"]))
        return out
