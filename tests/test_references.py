"""Every reference read from a saved, pulled or recipe config stays inside its folder, whatever its form.

The family tried (issue 39, item 3): the reference forms a config can hold (a plain string component, the
``{"type", "path"}`` and ``{"type", "shipped"}`` forms, a component nested in a filter's arguments, a filter's
plain string argument) read from a saved augmenter folder, a YAML recipe and a dict recipe, each spelled every way
that can leave the folder: ``..``, absolute, ``~``, a ``..`` in the middle, Windows separators and drive letters,
URL-encoding, and a symlink inside the folder that points outside. None may load the component that lies outside.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfaug_hf import Augmenter, LabelChecker
from cfaug_hf.sharing.folders import ComponentLoadError
from cfaug_hf.testing import tiny_classifier


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """``root/private`` (a checker the configs must not reach) and ``root/box`` (the folder configs are read from,
    holding its own checker in ``box/chk`` and a symlink ``box/link -> ../private``)."""
    root = tmp_path_factory.mktemp("refs")
    LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))).save_pretrained(root / "private")
    box = root / "box"
    LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))).save_pretrained(box / "chk")
    (box / "link").symlink_to(root / "private", target_is_directory=True)
    return root


def spellings(root: Path) -> list[str]:
    private = root / "private"
    return ["../private", str(private), "~/../" + os.path.relpath(private, Path.home()), "chk/../../private",
            "..\\private", "%2e%2e/private", "C:\\private", "C:/private", "./../private", "chk/../../box/../private",
            "link"]


FORMS = ["string", "path", "shipped", "filter-component", "filter-string"]


def recipe_with(form: str, ref: str) -> dict:
    recipe = {"method": "crossaug", "schema": {"preset": "fact-verification"},
              "components": {"generator": "default", "checker": None}}
    if form == "string":
        recipe["components"]["checker"] = ref
    elif form in ("path", "shipped"):
        recipe["components"]["checker"] = {"type": "checker", form: ref}
    elif form == "filter-component":
        recipe["filters"] = [{"filter": "label_flip", "args": {"checker": {"$component": {"type": "checker",
                                                                                          "path": ref}}}}]
    else:
        recipe["filters"] = [{"filter": "semantic_fidelity", "args": {"embedder": ref}}]
    return recipe


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(form=st.sampled_from(FORMS), which=st.integers(0, 10), where=st.sampled_from(["saved", "yaml", "dict"]))
def test_no_reference_form_or_spelling_leaves_the_folder(world, form, which, where):
    ref = spellings(world)[which]
    box = world / "box"
    recipe = recipe_with(form, ref)
    if form == "shipped":  # shipped paths are read relative to the package's data folder
        ref = "../../" + os.path.relpath(world / "private", Path(__file__).parent)
        recipe = recipe_with(form, ref) if which % 2 else recipe_with(form, str(world / "private"))
    old = os.getcwd()
    os.chdir(box)  # a dict recipe is read relative to the working folder
    try:
        with pytest.raises(ComponentLoadError, match="outside"):
            if where == "saved":
                (box / "cfaug_augmenter.json").write_text(json.dumps({
                    "component_type": "augmenter", "format_version": 1, "config": {}, **recipe}))
                Augmenter.from_pretrained(box)
            elif where == "yaml":
                (box / "r.yaml").write_text(json.dumps(recipe))  # JSON is YAML
                Augmenter.from_recipe(box / "r.yaml")
            else:
                Augmenter.from_recipe(recipe)
    finally:
        os.chdir(old)
        for name in ("cfaug_augmenter.json", "r.yaml"):
            (box / name).unlink(missing_ok=True)


@pytest.mark.parametrize("form", ["string", "path"])
def test_a_folder_inside_is_still_found(world, form, monkeypatch):
    monkeypatch.chdir(world / "box")
    augmenter = Augmenter.from_recipe(recipe_with(form, "chk"))
    assert isinstance(augmenter.checker, LabelChecker)


def test_a_pulled_adapter_may_not_name_a_local_base(tmp_path, monkeypatch):
    """The same family one level down: a downloaded LoRA component's config names its base model; a local path
    there would load a model from this machine."""
    from huggingface_hub import constants

    from cfaug_hf.components.base import PretrainedComponent

    cache = Path(constants.HF_HUB_CACHE)
    folder = cache / "models--alice--evil" / "snapshots" / "abc"
    folder.mkdir(parents=True, exist_ok=True)
    with pytest.raises(ComponentLoadError, match="a local path, in a folder downloaded from the Hub"):
        PretrainedComponent._load_adapter(object, folder, {"base_model": str(tmp_path)})


# ------------------------------------------------------------------ one rule for every name a loaded file holds
_PLANTED = "private_emb"
_HOOKED: list[list[str]] = []


def _audit(event: str, args: tuple) -> None:
    # Installed once per process (audit hooks cannot be removed); records only while a test listens.
    if _HOOKED and event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes,
                                                                                                  os.PathLike)):
        path = os.fsdecode(args[0])
        if _PLANTED in path:
            _HOOKED[-1].append(path)


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """The working folder holds ``./private_emb``, a real saved checker; the recipe lives in ``shared/``. Yields the
    list of every path under ``private_emb`` that was opened or listed while the test ran."""
    import sys

    LabelChecker(*tiny_classifier(("negative", "positive"))).save_pretrained(tmp_path / _PLANTED)
    (tmp_path / "shared").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if _audit not in getattr(sys, "_cfaug_hooks", ()):
        sys.addaudithook(_audit)
        sys._cfaug_hooks = (*getattr(sys, "_cfaug_hooks", ()), _audit)
    _HOOKED.append([])
    yield _HOOKED[-1]
    _HOOKED.pop()


def _registered():
    import dataclasses
    import inspect
    import typing

    from cfaug_hf import registry

    found = []
    for name in registry.available()["filters"]:
        for param in list(inspect.signature(registry.filter_class(name).__init__).parameters)[1:]:
            found.append(("filter", name, param))
    for method in registry.available()["augmenters"]:
        cls = registry.augmenter_class(method)
        found += [("role", method, role) for role in cls.roles]
        hints = typing.get_type_hints(cls.config_class)
        found += [("config", method, f.name) for f in dataclasses.fields(cls.config_class) if hints[f.name] is str
                  or "str |" in str(hints[f.name])]
    for backend in ("spacy", "transformers"):
        found.append(("ner", backend, "model"))
    return found


def _schema_for(method: str) -> dict:
    return {"cfgen": {"preset": "ner"}, "crossaug": {"preset": "fact-verification"},
            "race": {"preset": "fact-verification"}, "icda": {"preset": "sentiment"}}.get(method,
                                                                                           {"preset": "sentiment"})


@pytest.mark.parametrize("kind,owner,field", _registered(), ids=lambda v: str(v))
def test_a_one_part_name_never_reads_the_working_folder(planted, kind, owner, field, tmp_path):
    """Issue 80, item 4: ``filters: [semantic_fidelity {embedder: private_emb}]`` loaded the user's
    ``./private_emb``. Every field of every registered filter, role, method config and recogniser config that a
    loaded file can fill is given the one-part name of a planted folder of the working directory, loaded, and
    used; nothing under that folder may be opened or listed, whatever else happens (most fail: that is fine)."""
    from cfaug_hf.filters.base import Pair

    if kind == "ner":
        folder = tmp_path / "shared" / "ner"
        folder.mkdir()
        (folder / "cfaug_ner.json").write_text(json.dumps({"backend": owner, "model": _PLANTED, "label_map": {},
                                                           "component_type": "ner", "format_version": 1}))
        recipe = {"method": "race", "schema": _schema_for("race"), "components": {"ner": {"type": "ner",
                                                                                          "path": "ner"}}}
    else:
        method = owner if kind != "filter" else "core"
        recipe = {"method": method, "schema": _schema_for(method), "components": {}}
        if kind == "filter":  # the cheapest augmenter around it: CORE's editor alone, no checker
            recipe.update(config={"mode": "editor_only"}, components={"checker": None})
            recipe["filters"] = [{"filter": owner, "args": {field: _PLANTED}}]
        elif kind == "role":
            recipe["components"][field] = _PLANTED
        else:
            recipe["config"] = {field: _PLANTED}
    (tmp_path / "shared" / "r.json").write_text(json.dumps(recipe))
    try:
        augmenter = Augmenter.from_recipe(tmp_path / "shared" / "r.json")
    except Exception:  # noqa: BLE001 - refused or unbuildable: what matters is what it read on the way
        augmenter = None
    if augmenter is not None:
        pair = Pair({"text": "A fine film."}, {"text": "A dull film."}, "negative", "positive", ("text",), ("text",), 0)
        for f in getattr(augmenter, "filters", []):
            try:
                f.keep([pair])
            except Exception:  # noqa: BLE001
                pass
        named = "ner" if kind == "ner" else field if kind == "role" else None
        component = (augmenter.components() or {}).get(named) if named else None
        if callable(component):
            try:
                component(["A fine film."])
            except Exception:  # noqa: BLE001
                pass
    assert planted == [], f"{kind} {owner}.{field} read the working folder: {planted[:3]}"


def test_a_name_that_cannot_be_fetched_is_named_in_the_librarys_words(planted, tmp_path, capsys):
    from cfaug_hf.cli import main

    (tmp_path / "shared" / "r.yaml").write_text(json.dumps({
        "method": "core", "schema": {"preset": "sentiment"}, "config": {"mode": "editor_only"},
        "components": {"checker": None}, "filters": [{"filter": "semantic_fidelity", "args": {"embedder": _PLANTED}}]}))
    (tmp_path / "rows.jsonl").write_text('{"text": "A fine film.", "label": "positive"}\n')
    assert main(["augment", "rows.jsonl", "--recipe", "shared/r.yaml", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "filters[0].args.embedder in shared/r.yaml is 'private_emb'" in err and "could not be fetched" in err, err
    assert "looks like a bug" not in err and "couldn't connect" not in err and planted == []
