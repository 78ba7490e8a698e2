"""The papers one switch away: each method's ``paper`` preset covers every config field with a cited value (or a
reason it has none), each ``recipes/<method>-paper.yaml`` resolves to exactly those values, and each preset runs
end to end on a tiny fixture, from Python and from the command line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from datasets import Dataset

from cfaug_hf import Augmenter, CrossAugAugmenter, LLMCounterfactualAugmenter, TaskSchema, registry
from cfaug_hf.registry.presets import Preset

from test_race import RuleChecker

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
PAPER_METHODS = ("crossaug", "llm", "core", "icda", "race")


def plain(value):
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_the_preset_gives_every_config_field_a_paper_value_or_a_reason(method):
    cls = registry.augmenter_class(method)
    preset = cls.presets["paper"]
    assert isinstance(preset, Preset) and preset.method == method
    preset.check_covers(cls.config_class)  # a new config field must be placed: the paper's value, or why none
    for name, value in preset.config.items():
        assert value.source.strip(), f"{method}.{name} has no source"
    for role, value in preset.components.items():
        assert value.source.strip(), f"{method} component {role} has no source"


def test_a_config_field_missing_from_the_preset_is_refused():
    @dataclasses.dataclass
    class Grown(CrossAugAugmenter.config_class):
        new_option: int = 1

    with pytest.raises(ValueError, match=r"missing \['new_option'\]"):
        CrossAugAugmenter.presets["paper"].check_covers(Grown)


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_each_paper_recipe_holds_the_papers_values(method):
    """The recipe spells the values out for its reader; they must be the table's, and the recipe must resolve to
    them (so neither a changed default nor an edited recipe silently leaves the paper)."""
    preset = registry.augmenter_class(method).presets["paper"]
    recipe = yaml.safe_load((RECIPES / f"{method}-paper.yaml").read_text())
    assert recipe["method"] == method and recipe["preset"] == "paper"
    assert {k: plain(v) for k, v in recipe["config"].items()} == \
        {k: plain(v.value) for k, v in preset.config.items()}
    for role, value in (recipe.get("components") or {}).items():
        if role in preset.components:
            assert value == preset.components[role].value
    built = Augmenter.from_recipe(RECIPES / f"{method}-paper.yaml", **tiny_components(method))
    assert {k: plain(getattr(built.config, k)) for k in preset.config} == \
        {k: plain(v.value) for k, v in preset.config.items()}
    for role, value in preset.components.items():
        if value.value is None:
            assert getattr(built, role) is None, role


class FirstSentence:
    """A stand-in selector: always sentence 0, always right and confident."""

    def select(self, documents, labels=None):
        from cfaug_hf.methods.icda.selection import SelectionResult

        return SelectionResult([[0] for _ in documents], list(labels), [0.0] * len(documents))


def tiny_components(method):
    """Stand-ins for the components a paper recipe leaves to the user (or builds from a real model)."""
    from test_core import core_parts
    from test_race import NER_STUB

    from cfaug_hf.testing import tiny_encoder

    echo = lambda texts: list(texts)  # noqa: E731
    if method == "core":
        enc, index = core_parts()
        return {"editor": echo, "retriever": enc, "index": index}
    return {"crossaug": {"generator": echo}, "llm": {"llm": echo}, "icda": {"selector": FirstSentence()},
            "race": {"generator": echo, "checker": ThreeWayChecker(), "ner": NER_STUB,
                     "embedder": tiny_encoder()}}[method]


# ------------------------------------------------------------------------------------------- end to end, Python
def test_crossaug_paper_uses_the_top_beam_only_and_no_checker():
    data = Dataset.from_dict({"claim": ["It was filmed over 30 days.", "Ada was born in 1990."],
                              "evidence": ["Filming took place over 30 days.", "Ada was born in 1990 in Rome."],
                              "label": ["SUPPORTS", "SUPPORTS"]})

    def beams(claims):  # the top beam repeats the first claim; the second beam is a real negation
        return [[c, c.replace("over 30", "under 10")] if "filmed" in c else [c.replace("in 1990", "in 1991")]
                for c in claims]

    paper = CrossAugAugmenter.from_preset("paper", generator=beams)
    out = paper.augment(data)
    assert paper.checker is None and paper.config.top_candidate_only
    assert paper.stats.skipped == {"same_claim": 1}  # the paper skips the row; it does not step to beam 2
    assert [r["claim"] for r in out if r["cf_kind"] == "c'+e"] == ["Ada was born in 1991."]
    ours = CrossAugAugmenter(beams, checker=None)
    ours.augment(data)
    assert "same_claim" not in ours.stats.skipped  # the default takes the first acceptable beam


def test_llm_paper_prompts_one_demonstration_at_temperature_zero_without_a_checker():
    prompts = []

    def llm(batch):
        prompts.extend(batch)
        return ['Revised text: "The food was awful."' for _ in batch]

    aug = LLMCounterfactualAugmenter.from_preset("paper", llm=llm)
    out = aug.augment(Dataset.from_dict({"text": ["The food was great."], "label": ["positive"]}))
    assert aug.checker is None and out[1]["text"] == "The food was awful."
    default = LLMCounterfactualAugmenter(llm, checker=None)
    default.augment(Dataset.from_dict({"text": ["The food was great."], "label": ["positive"]}))
    one, two = prompts[0], prompts[1]
    assert one.count("Revised text:") < two.count("Revised text:")  # one demonstration against the built-in two
    built = LLMCounterfactualAugmenter.presets["paper"].built_components()["llm"]
    assert built.config.do_sample is False  # temperature 0: greedy, and never the trained editor
    assert type(built).__name__ == "Generator"


def test_core_paper_keeps_every_keyword_and_edits_the_whole_text():
    from test_core import core_parts

    enc, index = core_parts()
    prompts = []

    def editor(batch):
        prompts.extend(batch)
        return ["Rewritten review: the food was great ." for _ in batch]

    data = Dataset.from_dict({"text": ["the food was bad ."], "label": ["negative"]})
    paper = Augmenter.from_recipe(RECIPES / "core-paper.yaml", editor=editor, retriever=enc, index=index)
    assert paper.config.max_keywords == 0 and paper.config.keyword_excerpts == 20 and paper.checker is None
    paper.augment(data)
    ours = type(paper)(editor, retriever=enc, index=index, checker=None)
    ours.augment(data)
    import ast

    paper_words = ast.literal_eval(prompts[0].split("Suggested words: ")[-1].split("]")[0] + "]")
    our_words = ast.literal_eval(prompts[-1].split("Suggested words: ")[-1].split("]")[0] + "]")
    assert len(paper_words) > len(our_words) and set(our_words) <= set(paper_words)


def test_icda_paper_recipe_swaps_rationales():
    data = Dataset.from_dict({"text": [f"{w} food. Nice room {i}." for i in range(2) for w in ("Great", "Awful")],
                              "label": ["positive", "negative"] * 2})
    aug = Augmenter.from_recipe(RECIPES / "icda-paper.yaml", selector=FirstSentence())
    assert aug.config.pool_quantile == 0.1 and aug.config.size is None
    out = aug.augment(data)
    assert sum(out["cf_is_counterfactual"]) >= 1


class ThreeWayChecker(RuleChecker):
    """RACE's rule checker with NOT ENOUGH INFO: for a claim saying 'maybe' or evidence without a place; else
    SUPPORTS when the claim's place is in the evidence, REFUTES when it is not."""

    label_names = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

    def predict_proba(self, first, second=None):
        two_way = super().predict_proba(first, second)
        return np.array([[0.1, 0.1, 0.8] if "maybe" in claim or p[0] == 0.5 else [p[0], p[1], 0.0]
                         for claim, p in zip(first, two_way)])


def test_race_paper_post_check_keeps_any_label_other_than_the_original():
    from test_race import NER_STUB

    from cfaug_hf import RACEAugmenter
    from cfaug_hf.testing import tiny_encoder

    def generator(texts):  # one candidate that the checker calls NOT ENOUGH INFO
        return [["maybe Ada lived in Paris"] for _ in texts]

    data = Dataset.from_dict({"claim": ["Ada lived in Oslo"], "evidence": [["Ada lived in Paris ."]],
                              "label": ["REFUTES"]})
    schema = TaskSchema.fact_verification(nei=True)
    made = {}
    for name, aug in {"paper": RACEAugmenter.from_preset("paper", schema=schema, generator=generator,
                                                         checker=ThreeWayChecker(), ner=NER_STUB,
                                                         embedder=tiny_encoder()),
                      "ours": RACEAugmenter(generator, ThreeWayChecker(), NER_STUB, schema,
                                            embedder=tiny_encoder())}.items():
        out = aug.augment(data)
        made[name] = [r["claim"] for r in out if r["cf_kind"] == "race_claim"]
    assert made == {"paper": ["maybe Ada lived in Paris"], "ours": []}  # y' = NEI != y passes the paper's check


def test_a_preset_the_method_does_not_have_is_named():
    from cfaug_hf.sharing.folders import ComponentLoadError

    with pytest.raises(ComponentLoadError, match=r"has no preset 'fast' \(its presets: paper\)"):
        CrossAugAugmenter.from_preset("fast", generator=lambda c: c)
    with pytest.raises(TypeError, match="on a method's class"):
        Augmenter.from_preset("paper")


# ------------------------------------------------------------------------------------------ the command line
@pytest.mark.parametrize("method,needs", [
    ("crossaug", None), ("llm", None), ("icda", "cfaug train selector"),
    pytest.param("core", None, marks=pytest.mark.integration), pytest.param("race", None, marks=pytest.mark.integration)])
def test_cli_preset_paper_for_every_method(method, needs, tmp_path, capsys, monkeypatch):
    """Every paper preset runs out of the box from the command line (ICDA's refuses without a trained selector,
    naming the command that trains one); CORE on NLI, whose shipped corpus indexes in seconds."""
    from cfaug_hf.cli import main

    monkeypatch.setenv("CFAUG_HF_CACHE", str(tmp_path / "cache"))
    task = []
    if method in ("crossaug", "race"):
        rows = [{"claim": "Ada was born in 1990.", "evidence": ["Ada was born in 1990 in Rome."], "label": "SUPPORTS"}]
    elif method == "core":
        rows = [{"premise": "A man sleeps on a bench.", "hypothesis": "A man is asleep.", "label": "entailment"}]
        task = ["--task", "nli"]
    else:  # one row: the test reads the saved config, and the LLM preset's local SmolLM2 takes half a minute a row
        rows = [{"text": "Great food. Nice room.", "label": "positive"}]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["augment", str(data), "--method", method, "--preset", "paper", *task, "--out", str(tmp_path / "out")]
    if needs is None:
        assert main(argv) in (0, None)
        saved = json.loads((tmp_path / "out" / "augmenter" / "cfaug_augmenter.json").read_text())
        preset = registry.augmenter_class(method).presets["paper"]
        task = saved["schema"]["task"]
        assert {k: plain(saved["config"][k]) for k in preset.config} == \
            {k: plain(v.value_for(task)) for k, v in preset.config.items()}
    else:
        assert main(argv) == 2
        assert needs in capsys.readouterr().err
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_every_departure_is_on_the_method_page(method):
    """A reviewer can list the departures from the page alone: every config field whose default is not the paper's
    value, and every component the paper sets otherwise, is named in the page's departures table."""
    import inspect

    cls = registry.augmenter_class(method)
    preset = cls.presets["paper"]
    page = (Path(__file__).resolve().parents[1] / "docs" / "methods" / f"{method}.md").read_text()
    assert "## The paper, and departures from it" in page
    table = page.split("## The paper, and departures from it", 1)[1]
    default = cls.config_class()
    departing = [k for k, v in preset.config.items() if plain(getattr(default, k)) != plain(v.value)]
    params = inspect.signature(cls.__init__).parameters
    departing += [role for role, v in preset.components.items()
                  if callable(v.value) or params[role].default is inspect.Parameter.empty
                  or params[role].default != v.value]
    missing = [name for name in departing if f"| `{name}`" not in table]
    assert not missing, f"docs/methods/{method}.md does not list these departures: {missing}"


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_each_paper_recipe_is_written_from_its_preset(method):
    """The recipe's values and their sources are the preset's, word for word (python -m scripts.write_paper_recipes
    rewrites them), so the recipe and `--preset paper` cannot drift apart."""
    from scripts.write_paper_recipes import rendered

    assert (RECIPES / f"{method}-paper.yaml").read_text() == rendered(method), \
        "run python -m scripts.write_paper_recipes"


def test_a_preset_value_given_per_task_follows_the_schema():
    from cfaug_hf import COREAugmenter

    core = COREAugmenter.presets["paper"]
    assert core.recipe("sentiment-analysis")["config"]["max_keywords"] == 0
    nli = core.recipe("natural-language-inference")["config"]
    assert (nli["keyword_excerpts"], nli["max_keywords"]) == (2, 5)
    from cfaug_hf.registry.presets import apply_preset

    merged = apply_preset(COREAugmenter, {"preset": "paper", "schema": {"preset": "nli"}}, {"editor": str})
    assert merged["config"]["max_keywords"] == 5


def test_the_icda_paper_preset_refuses_without_a_trained_selector_and_says_how_to_train_one():
    from cfaug_hf import RationaleSwapAugmenter
    from cfaug_hf.sharing.folders import ComponentLoadError

    with pytest.raises(ComponentLoadError, match=r"needs a selector .*cfaug train selector"):
        RationaleSwapAugmenter.from_preset("paper")
    with pytest.raises(ComponentLoadError, match="cfaug train selector"):
        Augmenter.from_recipe(RECIPES / "icda-paper.yaml")


def test_the_icda_paper_preset_writes_as_many_rows_as_it_reads():
    """The paper's augmented set: the lowest-error originals plus as many counterfactuals, N rows in all."""
    from cfaug_hf import RationaleSwapAugmenter
    from cfaug_hf.methods.icda.selection import SelectionResult

    class Confident:
        def select(self, documents, labels=None):
            return SelectionResult([[0] for _ in documents], list(labels), [0.01 * i for i in range(len(documents))])

    texts = [f"{w} food {i}. Nice room {i}." for i in range(4) for w in ("Great", "Awful")]
    data = Dataset.from_dict({"text": texts, "label": ["positive", "negative"] * 4})
    paper = RationaleSwapAugmenter.from_preset("paper", selector=Confident())
    out = paper.augment(data)
    assert len(out) == len(data)
    originals = [r for r in out if not r["cf_is_counterfactual"]]
    assert len(originals) == 4 and sorted(r["label"] for r in originals) == ["negative"] * 2 + ["positive"] * 2
    assert paper.stats.events["note:original_not_lowest_error"] == 4
    ours = RationaleSwapAugmenter(Confident()).augment(data)  # the library's default keeps every original
    assert sum(not cf for cf in ours["cf_is_counterfactual"]) == len(data)


def test_the_race_preset_uses_stanza_where_its_models_are_installed_else_says_spacy_stands_in(monkeypatch, caplog):
    from cfaug_hf.components.ner import SpacyNER, StanzaNER
    from cfaug_hf.methods.race.paper import PAPER

    build = PAPER.components["ner"].value
    monkeypatch.setattr(StanzaNER, "models_installed", staticmethod(lambda lang="en": True))
    assert isinstance(build(), StanzaNER)
    monkeypatch.setattr(StanzaNER, "models_installed", staticmethod(lambda lang="en": False))
    with caplog.at_level("WARNING"):
        assert isinstance(build(), SpacyNER)
    assert "spaCy's en_core_web_sm stands in for the paper's Stanza" in caplog.text
