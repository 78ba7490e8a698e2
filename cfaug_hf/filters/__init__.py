"""Quality filters shared by every method: each sees a batch of (source row, counterfactual) pairs and keeps or drops
each one; the augmenter base applies them in order, batched, and counts every drop as ``filtered:<name>``.

| filter | keeps a counterfactual when |
|---|---|
| `LabelFlipFilter` | a label checker reads it as its new label, by the one decision of `FlipCheck` (``threshold``, else the checker's calibrated one, else its top prediction) |
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

from .base import Filter, Pair
from .flip_check import FlipCheck
from .label_flip import LabelFlipFilter
from .minimality import MinimalityFilter
from .semantic_fidelity import SemanticFidelityFilter
from .fluency import FluencyFilter
from .entity_fidelity import EntityFidelityFilter
from .constraint import ConstraintFilter
from .ner_constraint import NERConstraintFilter
from .re_constraint import REConstraintFilter
from .nli_constraint import NLIConstraintFilter
from .tag_consistency import TagConsistencyFilter
from .top_k import TopK
from .shortcut_balance import ShortcutBalanceFilter

__all__ = ["Pair", "Filter", "FlipCheck", "LabelFlipFilter", "MinimalityFilter", "SemanticFidelityFilter", "FluencyFilter",
           "EntityFidelityFilter", "TopK", "ShortcutBalanceFilter", "ConstraintFilter", "NERConstraintFilter",
           "REConstraintFilter", "NLIConstraintFilter", "TagConsistencyFilter"]
