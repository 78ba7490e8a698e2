"""Imports point one way: no cycle among the package's modules, counting imports inside functions too.

The registry's lookups of its built-in methods by module name are not import statements and do not count, but no
module of the core may reach ``hub_cards`` or ``trainer_callbacks`` that way either (checked below); ``if
TYPE_CHECKING:`` blocks do not count.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cfaug_hf", "trainer_callbacks", "hub_cards")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def import_graph() -> dict[str, set[str]]:
    from cfaug_hf.fingerprint import imported_names

    mods = modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for base, subs in imported_names(path.read_text(), package):
            # ``from . import registry`` imports the submodule (the package's __init__ has already run: it is above)
            for target in (subs if subs and all(s in mods for s in subs) else [base, *subs]):
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_core_does_not_import_methods_cards_or_callbacks():
    graph = import_graph()
    core = [m for m in graph if m.startswith("cfaug_hf.") and m.split(".")[1] in
            ("augmenter", "schema", "hub", "registry", "fingerprint", "text", "components", "provenance", "saving",
             "sharing", "workers", "configs", "credentials", "markdown")]
    for module in core:
        upward = {d for d in graph[module] if d.startswith(("cfaug_hf.methods", "hub_cards", "trainer_callbacks"))}
        assert not upward, f"{module} imports {sorted(upward)}"


def test_the_core_reaches_no_top_level_package_by_name():
    for path in (ROOT / "cfaug_hf").rglob("*.py"):
        text = path.read_text()
        for name in ("hub_cards", "trainer_callbacks"):
            assert f'import_module("{name}' not in text and f"import_module('{name}" not in text, path


def test_detects_a_cycle():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


def test_classes_register_themselves_and_load_by_name(tmp_path):
    from cfaug_hf import Augmenter, CrossAugAugmenter, TaskSchema, registry
    from cfaug_hf.testing import NegateAugmenter

    class Shout(NegateAugmenter):
        method = "shout-layering-test"

    class TweakedCrossAug(CrossAugAugmenter):  # inherits method "crossaug": must not take its place
        pass

    assert registry.augmenter_class("shout-layering-test") is Shout  # registered when it was defined
    assert registry.augmenter_class("crossaug") is CrossAugAugmenter
    assert {"crossaug", "icda"} <= set(registry.available()["augmenters"])
    Shout(TaskSchema.sentiment(), seed=3).save_pretrained(tmp_path / "aug")
    back = Augmenter.from_pretrained(tmp_path / "aug")
    assert type(back) is Shout and back.config.seed == 3
    import pytest

    with pytest.raises(KeyError, match="No augmenter method named 'nope'"):
        registry.augmenter_class("nope")
