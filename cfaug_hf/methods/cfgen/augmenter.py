from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from ...augmenter import Augmenter, Counterfactual, Example, RowResult
from ...text.entities import EntityLexicon, distinct_replacements, iob2_spans
from ...filters import NERConstraintFilter
from ...fingerprint import stable_hash
from ...schema import SchemaError, TaskSchema
from .config import CFGenConfig

__all__ = ["CFGenAugmenter", "CFGenConfig", "CFGEN_CITATION"]

CFGEN_CITATION = """@inproceedings{zeng2020counterfactual,
  title     = {Counterfactual Generator: A Weakly-Supervised Method for Named Entity Recognition},
  author    = {Zeng, Xiangji and Li, Yunliang and Zhai, Yuchen and Zhang, Yin},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  pages     = {7270--7280},
  year      = {2020}
}"""


class CFGenAugmenter(Augmenter[CFGenConfig]):
    """NER counterfactuals by in-dataset replacement (CFGen, Zeng et al. 2020): each entity is replaced by another
    entity of the same type drawn from the dataset's own entities, and the IOB2 tags are recomputed. The words
    around the entities and the entity types stay as they were, so the tagger has to learn the type from the
    context, not from memorised names.

    Rows without entities pass through (``skipped:no_entities``); types the lexicon lacks are left alone. The
    `NERConstraintFilter` (with the lexicon) runs first.

    Args:
        schema: a `TaskSchema.token_classification` schema.
        lexicon: an `EntityLexicon` (or its ``to_dict()``); or build the augmenter with
            `from_dataset`.

    Examples:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"tokens": [["Ada", "lives", "in", "Paris"], ["Bob", "saw", "Rome"]],
        ...                         "ner_tags": [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O", "B-LOC"]]})
        >>> aug = CFGenAugmenter.from_dataset(ds, TaskSchema.token_classification())
        >>> out = aug.augment(ds)
        >>> out[1]["tokens"], out[1]["ner_tags"]
        (['Bob', 'lives', 'in', 'Rome'], ['B-PER', 'O', 'O', 'B-LOC'])

    References:
        Xiangji Zeng, Yunliang Li, Yuchen Zhai, Yin Zhang. "Counterfactual Generator: A Weakly-Supervised Method
        for Named Entity Recognition". EMNLP 2020.
    """

    method = "cfgen"  # its task, config and roles: the register_method call in __init__
    citation = CFGEN_CITATION

    def __init__(self, schema: TaskSchema | None = None, *, lexicon: EntityLexicon | dict[str, Any] | None = None,
                 config: CFGenConfig | None = None, filters: Sequence[Any] | None = None, **overrides: Any) -> None:
        if isinstance(lexicon, EntityLexicon):
            overrides["lexicon"] = lexicon.to_dict()
        elif lexicon is not None:
            overrides["lexicon"] = EntityLexicon(lexicon).to_dict()
        super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
        if not self.schema.is_token_level:
            raise SchemaError(f"CFGen replaces entities in token-classification data; got a {self.schema.task!r} "
                              f"schema (use TaskSchema.token_classification()).")
        if not self.config.lexicon:
            raise ValueError("CFGenAugmenter needs the dataset's entities: lexicon=EntityLexicon.from_dataset(ds, "
                             "schema), or CFGenAugmenter.from_dataset(ds, schema).")
        self.lexicon = EntityLexicon(self.config.lexicon)
        if not any(isinstance(f, NERConstraintFilter) for f in self.filters):
            self.filters.insert(0, NERConstraintFilter(self.lexicon))

    @classmethod
    def from_dataset(cls, dataset: Any, schema: TaskSchema | None = None, **kwargs: Any) -> CFGenAugmenter:
        """An augmenter drawing replacements from the entities of ``dataset``."""
        schema = schema or TaskSchema.token_classification()
        schema.validate_features(dataset.features)
        return cls(schema, lexicon=EntityLexicon.from_dataset(dataset, schema), **kwargs)

    @classmethod
    def config_from_data(cls, dataset: Any, schema: TaskSchema | None) -> dict[str, Any]:
        """The entity lexicon of ``dataset`` (see `from_dataset`)."""
        schema = schema or TaskSchema.token_classification()
        schema.validate_features(dataset.features)
        return {"lexicon": EntityLexicon.from_dataset(dataset, schema).to_dict()}

    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        cfg = self.config
        col = self.schema.text_columns[0]
        types = set(cfg.types) if cfg.types is not None else set(self.lexicon.counts)
        results = []
        for ex in examples:
            res = RowResult()
            results.append(res)
            tokens, tags = list(ex[col]), ex.label.split()
            ents = [(k, e) for k, e in enumerate(iob2_spans(tokens, tags)) if e.type in types]
            if not ents:
                res.events.append("skipped:no_entities")
                continue
            rng = random.Random(stable_hash("cfgen", ex.seed))

            def draws() -> Iterator[dict[int, str]]:  # lazily, so the draws use rng in the order they always did
                for _ in range(cfg.per_input):
                    chosen = ents if cfg.replace == "all" else [rng.choice(ents)]
                    samples = ((k, self.lexicon.sample(e.type, rng, exclude=[e.text])) for k, e in chosen)
                    yield {k: new for k, new in samples if new is not None}

            made = 0
            for new_tokens, new_tags, replaced in distinct_replacements(tokens, tags, draws()):
                made += 1
                res.counterfactuals.append(Counterfactual({col: new_tokens}, " ".join(new_tags), "cfgen",
                                                          {"replaced": replaced}))
                res.events.append("produced:cfgen")
            if not made:
                res.events.append("skipped:no_replacement")
        return results
