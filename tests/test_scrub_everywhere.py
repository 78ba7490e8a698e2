"""No key survives in anything the library writes, whichever setting it was pasted into (issue 57, item 2).

The family: a key of each recognisable shape, or any key held in one of the user's credential variables, placed in
every string field of every component config and of the augmenter configs that build without models, then the
component or augmenter saved, shown (``repr``), carded and logged. Either construction refuses the value (a field
with fixed choices), or none of the files, the repr, the card and the log lines holds the key.
"""

from __future__ import annotations

import dataclasses
import logging
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfaug_hf import (CFGenAugmenter, CrossAugAugmenter, Generator, LabelChecker, LLMCounterfactualAugmenter,
                      OpenAICompatibleLLM, TaskSchema)
from cfaug_hf.sharing.cards import component_card
from cfaug_hf.testing import tiny_causal_lm, tiny_classifier

ALNUM = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
SHAPES = ["sk-proj-{r}", "hf_{r}", "ghp_{r}", "github_pat_{r}", "AKIA{u}", "eyJ{r}.{r}.{r}", "live:{r}"]


@st.composite
def keys(draw):
    body = draw(st.text(ALNUM, min_size=24, max_size=40)) + "7"
    shape = draw(st.sampled_from(SHAPES))
    upper = "".join(c for c in body.upper() if c.isalnum())[:16].ljust(16, "Q")
    return shape.format(r=body, u=upper), shape


def _str_fields(config_class: type) -> list[str]:
    hints = typing.get_type_hints(config_class)
    return [f.name for f in dataclasses.fields(config_class) if f.init and str in (
        hints[f.name], *typing.get_args(hints[f.name]))]


def _targets() -> list[tuple[str, str]]:
    from cfaug_hf.components.checker import LabelCheckerConfig
    from cfaug_hf.components.generator import GeneratorConfig
    from cfaug_hf.components.llm import HTTPLLMConfig
    from cfaug_hf.methods import CFGenConfig, CrossAugConfig, LLMConfig

    return [(kind, name) for kind, cls in [("llm", HTTPLLMConfig), ("generator", GeneratorConfig),
                                           ("checker", LabelCheckerConfig), ("crossaug", CrossAugConfig),
                                           ("llm-augmenter", LLMConfig), ("cfgen", CFGenConfig)]
            for name in _str_fields(cls)]


TARGETS = _targets()


def _build(kind: str, field: str, value: str):
    if kind == "llm":
        defaults = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
        if field in ("base_url",):
            value = f"http://127.0.0.1:9/v1/{value}"
        return OpenAICompatibleLLM(**{**defaults, field: value})
    if kind == "generator":
        config = dataclasses.replace(__import__("cfaug_hf").GeneratorConfig(), **{field: f"{{text}} {value}"})
        return Generator(*tiny_causal_lm(), config)
    if kind == "checker":
        from cfaug_hf.components.checker import LabelCheckerConfig

        return LabelChecker(*tiny_classifier(), LabelCheckerConfig(label_names=["SUPPORTS", "REFUTES"],
                                                                    **{field: value}))
    if kind == "crossaug":
        return CrossAugAugmenter(lambda claims: claims, TaskSchema.fact_verification(), checker=None,
                                 **{field: value})
    if kind == "llm-augmenter":
        llm = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m")
        return LLMCounterfactualAugmenter(llm, checker=None, **{field: value})
    return CFGenAugmenter(TaskSchema.preset("ner"), lexicon={"PER": {"Ada": 1}}, **{field: value})


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(target=st.sampled_from(TARGETS), key_shape=keys(), live=st.booleans())
def test_a_key_in_any_setting_is_never_written_shown_or_logged(target, key_shape, live, tmp_path_factory,
                                                              monkeypatch):
    key, shape = key_shape
    if live:  # the user's own key, whatever its shape, known by its value
        monkeypatch.setenv("CFAUG_TEST_API_KEY", key)
    elif shape == "live:{r}":
        return  # no recognisable shape and not the user's: nothing could know it is a key
    kind, field = target
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    root = logging.getLogger("cfaug_hf")
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.DEBUG)
    tmp = tmp_path_factory.mktemp("scrub")
    try:
        try:
            obj = _build(kind, field, key)
        except (ValueError, TypeError):  # refused (a value outside the field's choices): nothing was built
            return
        shown = [repr(obj)]
        if hasattr(obj, "component_type"):
            obj.save_pretrained(tmp / "saved")
            shown.append(str(component_card(obj, "user/x")))
        else:
            obj.save_pretrained(tmp / "saved", references_only=True)
        files = [p.read_text(errors="replace") for p in (tmp / "saved").rglob("*")
                 if p.is_file() and p.suffix in (".json", ".md", ".txt", ".yaml")]
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    everything = "\n".join([*shown, *files, *records])
    assert key not in everything, (kind, field)


def test_the_fields_tried_cover_every_component_and_method_config_with_text():
    kinds = {kind for kind, _ in TARGETS}
    assert kinds == {"llm", "generator", "checker", "crossaug", "llm-augmenter", "cfgen"} and len(TARGETS) >= 10


def test_scrubbing_keeps_commit_ids_digests_and_hub_ids():
    from cfaug_hf.sharing.credentials import scrub_text

    text = ("revision 9b2f4c1e0d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c digest 3f5a0c9e8d7b6a5f4e3d2c1b0a9f8e7d "
            "hf-internal-testing/tiny-random-gpt2 sk-learn skeleton-key-2 the secret ingredient")
    assert scrub_text(text) == text


@pytest.mark.parametrize("model", ["sk-proj-0123456789abcdefABCDEF", "gpt-4o?api-key=0123456789abcdef",
                                   "gpt-4o?api_key=abcdefghijkl"])
def test_a_key_pasted_as_the_model_is_refused_without_being_repeated(model):
    with pytest.raises(ValueError, match="looks like an API key") as caught:
        OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model=model)
    assert model not in str(caught.value) and model[-10:] not in str(caught.value)


def test_a_key_as_a_path_segment_of_the_address_is_removed(caplog):
    llm = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1/sk-abcdef0123456789abcdXYZ/chat", model="m")
    assert llm.config.base_url == "http://127.0.0.1:9/v1/chat"
    assert "path segment shaped like a key" in caplog.text and "sk-abcdef" not in caplog.text
