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
