"""Method presets: a published algorithm and its settings, one switch away, every value cited to its paper.

Each method package declares its presets in its own ``paper.py`` (``presets = {"paper": PAPER}`` on the augmenter
class). A `Preset` says, for **every** field of the method's config, either the paper's value and where the
paper gives it (`PaperValue`), or why the paper has nothing to say about it (``not_in_paper``); the test
suite refuses a config field that is in neither, so a new option cannot silently leave the paper. It also names the
components the paper used, and lists what the library cannot reproduce (``not_reproduced``), which the method's
docs page repeats in its "Departures from the paper" table.

Use:

```text
augmenter = CrossAugAugmenter.from_preset("paper")          # Python
cfaug augment claims.jsonl --method crossaug --preset paper  # command line
preset: paper                                                # a recipe (recipes/<method>-paper.yaml)
```
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PaperValue", "Preset", "preset_of", "apply_preset"]


@dataclass(frozen=True)
class PaperValue:
    """One setting of a paper: its ``value`` and ``source``, the section, table or file that gives it.

    ``value`` of a component may be a zero-argument callable that builds it (e.g. a prompted LLM at temperature 0).
    """

    value: Any
    source: str


@dataclass(frozen=True)
class Preset:
    """A method's published settings.

    Examples:
        >>> from cfaug_hf import CrossAugAugmenter
        >>> preset = CrossAugAugmenter.presets["paper"]
        >>> preset.config["top_candidate_only"]
        PaperValue(value=True, source='reference implementation (the first of the returned beams is used)')
        >>> preset.recipe()["components"]
        {'generator': 'default', 'checker': None}
    """

    method: str
    paper: str
    config: Mapping[str, PaperValue]
    components: Mapping[str, PaperValue] = field(default_factory=dict)
    not_in_paper: Mapping[str, str] = field(default_factory=dict)
    not_reproduced: tuple[str, ...] = ()

    def recipe(self) -> dict[str, Any]:
        """The preset as a recipe: ``method``, ``config`` (the paper's values) and the components that are
        references (``"default"``, null or a folder); components built by a callable are left to `build`."""
        components = {role: v.value for role, v in self.components.items() if not callable(v.value)}
        return {"method": self.method, "config": {k: _plain(v.value) for k, v in self.config.items()},
                "components": components}

    def built_components(self) -> dict[str, Any]:
        """The components the preset builds itself (a prompted LLM ...), by role."""
        return {role: v.value() for role, v in self.components.items() if callable(v.value)}

    def check_covers(self, config_class: type) -> None:
        """Raise ``ValueError`` unless every field of ``config_class`` has a paper value or a reason it has none."""
        fields = {f.name for f in dataclasses.fields(config_class)}
        missing = sorted(fields - set(self.config) - set(self.not_in_paper))
        unknown = sorted((set(self.config) | set(self.not_in_paper)) - fields)
        both = sorted(set(self.config) & set(self.not_in_paper))
        if missing or unknown or both:
            raise ValueError(f"The {self.method!r} paper preset must give each {config_class.__name__} field a "
                             f"paper value or a reason it has none: missing {missing}, not fields {unknown}, "
                             f"both {both}.")


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def preset_of(cls: Any, name: str) -> Preset:
    """The preset ``name`` of augmenter class ``cls``, or a ``ValueError`` naming the ones it has."""
    presets: Mapping[str, Preset] = getattr(cls, "presets", {}) or {}
    if name not in presets:
        have = ", ".join(sorted(presets)) or "none"
        raise ValueError(f"{cls.__name__} has no preset {name!r} (its presets: {have}).")
    return presets[name]


def apply_preset(cls: Any, data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a recipe) on top of its ``preset``: the preset's config and components first, the recipe's own
    values over them; components the preset builds go into ``overrides`` unless the recipe or the caller names
    that role. Returns the merged recipe (without ``preset``)."""
    data = dict(data)
    name = data.pop("preset")
    if not isinstance(name, str):
        raise ValueError(f"preset must be a preset name such as 'paper'; got {name!r}.")
    preset = preset_of(cls, name)
    base = preset.recipe()
    data["config"] = {**base["config"], **(data.get("config") or {})}
    data["components"] = {**base["components"], **(data.get("components") or {})}
    named = set(data["components"]) | set(overrides)
    for role, value in preset.components.items():
        if callable(value.value) and role not in named and role in cls.roles:
            overrides[role] = value.value()
    return data
