"""Write the ``config:`` and ``components:`` sections of ``recipes/<method>-paper.yaml`` from each method's paper
preset (``cfaug_hf/methods/<method>/paper.py``), keeping each recipe's header (its comments, ``method``,
``preset`` and ``schema`` lines). ``tests/test_presets.py`` fails when a recipe and its preset disagree.

    python -m scripts.write_paper_recipes
"""

from __future__ import annotations

from pathlib import Path

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
METHODS = ("crossaug", "llm", "core", "icda", "race")


def header(text: str) -> str:
    """The recipe up to its ``config:`` line."""
    return text.split("\nconfig:\n", 1)[0] + "\n"


def rendered(method: str) -> str:
    import yaml

    from cfaug_hf import registry
    from cfaug_hf.registry.presets import _task

    path = RECIPES / f"{method}-paper.yaml"
    head = header(path.read_text())
    cls = registry.augmenter_class(method)
    schema = (yaml.safe_load(head) or {}).get("schema")
    return head + cls.presets["paper"].recipe_text(_task(cls, schema))


def main() -> None:
    for method in METHODS:
        path = RECIPES / f"{method}-paper.yaml"
        text = rendered(method)
        if path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
