"""Assembling an augmenter: one build function for every way in.

A recipe file (`read_recipe`), a preset (``from_preset``: `cfaug_hf.registry.presets`), a saved folder
(`load_augmenter`), ``cfaug augment --method M --ROLE PATH`` and ``Augmenter.from_recipe`` all hand a dict to
`build_augmenter`, which looks the method up in `cfaug_hf.registry`, applies a preset's values under the recipe's own,
loads each component its role names (`load_component`) and refuses anything a file may not name
(`cfaug_hf.sharing.consent`). `save_augmenter` writes the folder that `load_augmenter` reads back.

Examples:
    >>> from cfaug_hf import Augmenter, TaskSchema
    >>> from cfaug_hf.assembly import build_augmenter
    >>> from cfaug_hf.testing import NegateAugmenter  # registers the "negate" method
    >>> recipe = {"method": "negate", "config": {"seed": 3}, "schema": TaskSchema.sentiment().to_dict()}
    >>> augmenter = build_augmenter(Augmenter, recipe, folder=".", where="my recipe", trusted=True)
    >>> augmenter.method, augmenter.config.seed
    ('negate', 3)
"""

from .build import build_augmenter, hub_id, load_component, local_reference
from .recipes import check_sections, read_recipe
from .saved import AUGMENTER_CONFIG, load_augmenter, save_augmenter

__all__ = ["build_augmenter", "load_component", "local_reference", "hub_id", "read_recipe", "check_sections",
           "AUGMENTER_CONFIG", "save_augmenter", "load_augmenter"]
