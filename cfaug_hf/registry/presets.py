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

__all__ = ["PaperValue", "Preset", "Needed", "preset_of", "apply_preset"]


@dataclass(frozen=True)
class Needed:
    """A component the paper trained and the preset cannot build or ship: building the preset without one is
    refused, with ``how`` (the command that trains it) in the message.

    Examples:
        >>> Needed("cfaug train selector hotel.jsonl --out runs/icda").how
        'cfaug train selector hotel.jsonl --out runs/icda'
    """

    how: str


@dataclass(frozen=True)
class PaperValue:
    """One setting of a paper: its ``value`` and ``source``, the section, table or file that gives it, with the
    paper's words quoted (``tests/test_citations.py`` holds each quote to the section it names).

    ``value`` of a component may be a zero-argument callable that builds it (e.g. a prompted LLM at temperature 0).
    ``per_task`` holds the values a paper gives one task and not another, by `TaskSchema` task name; ``value`` is
    the rest's.

    Examples:
        >>> v = PaperValue(20, "§3.2", per_task={"natural-language-inference": 2})
        >>> v.value_for("sentiment-analysis"), v.value_for("natural-language-inference"), v.value_for(None)
        (20, 2, 20)
    """

    value: Any
    source: str
    per_task: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def value_for(self, task: str | None) -> Any:
        """The value for schema task ``task`` (``None``: the default)."""
        return self.per_task.get(task, self.value) if task else self.value


@dataclass(frozen=True)
class Preset:
    """A method's published settings.

    Examples:
        >>> from cfaug_hf import CrossAugAugmenter
        >>> preset = CrossAugAugmenter.presets["paper"]
        >>> preset.config["top_candidate_only"].value
        True
        >>> preset.recipe()["components"]
        {'generator': 'default', 'checker': None}
    """

    method: str
    paper: str
    config: Mapping[str, PaperValue]
    components: Mapping[str, PaperValue] = field(default_factory=dict)
    not_in_paper: Mapping[str, str] = field(default_factory=dict)
    not_reproduced: tuple[str, ...] = ()

    def recipe(self, task: str | None = None) -> dict[str, Any]:
        """The preset as a recipe: ``method``, ``config`` (the paper's values, for ``task`` where they differ
        per task) and the components that are references (``"default"``, null or a folder); components built by
        a callable are left to `built_components`."""
        components = {role: v.value_for(task) for role, v in self.components.items()
                      if not callable(v.value) and not isinstance(v.value_for(task), Needed)}
        return {"method": self.method, "config": {k: _plain(v.value_for(task)) for k, v in self.config.items()},
                "components": components}

    def recipe_text(self, task: str | None = None) -> str:
        """The ``config:`` and ``components:`` sections of ``recipes/<method>-paper.yaml``: each value (for
        ``task``) with its source as a comment under it, so the recipe reads as the paper's table.

        Examples:
            >>> from cfaug_hf import CrossAugAugmenter
            >>> print(CrossAugAugmenter.presets["paper"].recipe_text().splitlines()[1])
              max_span_tokens: 3
        """
        import json
        import textwrap

        def block(name: str, value: Any, v: PaperValue) -> list[str]:
            note = v.source + "".join(f" ({t}: {json.dumps(_plain(x))})" for t, x in v.per_task.items() if t != task)
            return [f"  {name}: {json.dumps(_plain(value), ensure_ascii=False)}",
                    *textwrap.wrap(note, 112, initial_indent="    # ", subsequent_indent="    # ",
                                  break_on_hyphens=False)]

        lines = ["config:"]
        for name, v in self.config.items():
            lines += block(name, v.value_for(task), v)
        plain = {r: v for r, v in self.components.items()
                 if not callable(v.value) and not isinstance(v.value_for(task), Needed)}
        if plain:
            lines.append("components:")
            for role, v in plain.items():
                lines += block(role, v.value_for(task), v)
        for role, v in self.components.items():
            value = v.value_for(task)
            if callable(v.value) or isinstance(value, Needed):
                what = f"needed, pass one (train it: {value.how})" if isinstance(value, Needed) else \
                    "built by the preset"
                lines += textwrap.wrap(f"{role}: {what}; {v.source}", 114, initial_indent="# ",
                                       break_on_hyphens=False,
                                       subsequent_indent="#   ")
        return "\n".join(lines) + "\n"

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


def _task(cls: Any, schema: Any) -> str | None:
    """The schema task a recipe runs on: its own schema's, else the method's default one's."""
    from ..schema import TaskSchema

    try:
        if isinstance(schema, Mapping):
            return TaskSchema.from_dict(schema).task
        return TaskSchema.preset(cls.default_task).task if getattr(cls, "default_task", "") else None
    except (KeyError, TypeError, ValueError):  # a bad schema is reported where the recipe is built, with its place
        return None


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
    task = _task(cls, data.get("schema"))
    base = preset.recipe(task)
    data["config"] = {**base["config"], **(data.get("config") or {})}
    data["components"] = {**base["components"], **(data.get("components") or {})}
    named = set(data["components"]) | set(overrides)
    for role, value in preset.components.items():
        need = value.value_for(task)
        if isinstance(need, Needed) and role not in named:
            raise ValueError(f"the {preset.method!r} paper preset needs a {role} ({value.source}); pass one "
                             f"(--{role} on the command line, {role}= in Python, components.{role} in a recipe). "
                             f"Train one with: {need.how}")
    for role, value in preset.components.items():
        if callable(value.value) and role not in named and role in cls.roles:
            overrides[role] = value.value()
    return data
