"""The flip checker: LoRA checkers saved as adapters, the shipped defaults, and how augmenters resolve ``checker=``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import Dataset

from cfaug_hf import COREAugmenter, CrossAugAugmenter, Generator, LabelChecker, LLMCounterfactualAugmenter, TaskSchema
from cfaug_hf.components.base import ComponentLoadError
from cfaug_hf.components.checker import default_checker, resolve_checker
from cfaug_hf.data import CHECKER_DIR, CHECKER_TASKS
from cfaug_hf.filters import LabelFlipFilter
from cfaug_hf.testing import tiny_classifier, tiny_seq2seq
from cfaug_hf.training import train_checker

FIXTURE = Path(__file__).parent / "fixtures" / "same_meaning_rewrites.jsonl"
QUIET = {"disable_tqdm": True, "logging_strategy": "no"}


def _saved_tiny_base(folder: Path) -> str:
    """A tiny classifier saved to a folder, so a checker built on it has a base it can name and reload."""
    model, tok = tiny_classifier()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def _claim_rows() -> Dataset:
    return Dataset.from_dict({"claim": ["the cat sat", "the cat did not sit"] * 4,
                              "evidence": ["the cat sat on the mat"] * 8, "label": ["SUPPORTS", "REFUTES"] * 4})


# ------------------------------------------------------------------------------------------ LoRA checkers
def test_a_lora_checker_on_a_named_base_saves_only_its_adapter_and_reloads_the_same(tmp_path):
    checker = train_checker(_saved_tiny_base(tmp_path / "base"), _claim_rows(), TaskSchema.fact_verification(),
                            lora=True, max_steps=3, training_args=QUIET)
    assert checker.training_info["lora"]["r"] == 16
    assert checker.training_info["learning_rate"] == 5e-4
    before = checker.predict_proba(["the cat sat"], [["the cat sat on the mat"]])
    checker.save_pretrained(tmp_path / "checker")
    files = {p.name for p in (tmp_path / "checker").iterdir()}
    assert "adapter_model.safetensors" in files and "model.safetensors" not in files
    saved = json.loads((tmp_path / "checker" / "cfaug_checker.json").read_text())
    assert saved["adapter"] is True and saved["base_model"] == str(tmp_path / "base")
    again = LabelChecker.from_pretrained(tmp_path / "checker")
    assert again.label_names == ("SUPPORTS", "REFUTES")
    assert again.predict_proba(["the cat sat"], [["the cat sat on the mat"]]) == pytest.approx(before, abs=1e-6)


def test_a_lora_checker_on_an_unnamed_base_is_saved_whole_with_the_adapter_merged(tmp_path):
    checker = train_checker(LabelChecker(*tiny_classifier()), _claim_rows(), TaskSchema.fact_verification(),
                            lora=True, max_steps=2, training_args=QUIET)
    before = checker.predict_proba(["the cat sat"], ["a mat"])
    checker.save_pretrained(tmp_path / "c")
    assert (tmp_path / "c" / "model.safetensors").is_file()
    assert json.loads((tmp_path / "c" / "cfaug_checker.json").read_text())["adapter"] is False
    assert LabelChecker.from_pretrained(tmp_path / "c").predict_proba(["the cat sat"], ["a mat"]) == pytest.approx(
        before, abs=1e-6)
    assert checker._is_peft()  # saving merged a copy, not the checker being trained


def test_an_adapter_folder_whose_config_lost_its_base_or_labels_fails_by_name(tmp_path):
    checker = train_checker(_saved_tiny_base(tmp_path / "base"), _claim_rows(), TaskSchema.fact_verification(),
                            lora=True, max_steps=1, training_args=QUIET)
    checker.save_pretrained(tmp_path / "c")
    path = tmp_path / "c" / "cfaug_checker.json"
    good = json.loads(path.read_text())
    for key, message in (("base_model", "names no base_model"), ("label_names", "no label_names")):
        path.write_text(json.dumps({**good, key: None}))
        with pytest.raises(Exception, match=message):
            LabelChecker.from_pretrained(tmp_path / "c")


def test_lora_on_a_checker_that_already_has_one_is_refused():
    checker = train_checker(LabelChecker(*tiny_classifier()), _claim_rows(), TaskSchema.fact_verification(),
                            lora=True, max_steps=1, training_args=QUIET)
    with pytest.raises(ValueError, match="already has a LoRA adapter"):
        train_checker(checker, _claim_rows(), TaskSchema.fact_verification(), lora=True, max_steps=1,
                      training_args=QUIET)


# -------------------------------------------------------------------------------------- checker= resolution
def test_resolve_checker_accepts_none_an_object_and_a_folder(tmp_path):
    schema = TaskSchema.fact_verification()
    assert resolve_checker(None, schema, ["SUPPORTS"], "X") is None
    checker = LabelChecker(*tiny_classifier())
    assert resolve_checker(checker, schema, ["SUPPORTS", "refutes"], "X") is checker  # names match casefolded
    checker.save_pretrained(tmp_path / "c")
    loaded = resolve_checker(str(tmp_path / "c"), schema, ["REFUTES"], "X")
    assert isinstance(loaded, LabelChecker) and loaded.label_names == checker.label_names


def test_resolve_checker_names_the_labels_it_lacks_and_the_way_out():
    checker = LabelChecker(*tiny_classifier(("yes", "no")))
    with pytest.raises(ValueError, match=r"CrossAug: The checker knows the labels \['yes', 'no'\], not "
                                         r"\['SUPPORTS', 'REFUTES'\].*checker=None"):
        resolve_checker(checker, TaskSchema.fact_verification(), ["SUPPORTS", "REFUTES"], "CrossAug")
    with pytest.raises(TypeError, match="checker must be a LabelChecker"):
        resolve_checker(42, TaskSchema.fact_verification(), ["SUPPORTS"], "CrossAug")


# ------------------------------------------------------------------------------------- the sentence checker
def test_a_sentence_checker_is_saved_in_its_subfolder_and_comes_back_with_the_checker(tmp_path):
    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    plain = checker.fingerprint()
    checker.sentence_checker = LabelChecker(*tiny_classifier(("positive", "negative"), seed=1))
    assert checker.fingerprint() != plain  # a cache keyed on the checker sees the sentence checker too
    checker.save_pretrained(tmp_path / "c")
    assert (tmp_path / "c" / "sentences" / "cfaug_checker.json").is_file()
    assert "sentence checker" in (tmp_path / "c" / "README.md").read_text()
    loaded = LabelChecker.from_pretrained(tmp_path / "c")
    assert loaded.sentence_checker is not None and loaded.sentence_checker.label_names == ("positive", "negative")
    assert loaded.fingerprint() == checker.fingerprint()
    texts = ["a good film", "dull"]
    assert (loaded.sentence_checker.predict_proba(texts) == checker.sentence_checker.predict_proba(texts)).all()
    # saved again without it, the subfolder goes (the library wrote it) and the loaded checker has none
    checker.sentence_checker = None
    checker.save_pretrained(tmp_path / "c")
    assert not (tmp_path / "c" / "sentences").exists()
    assert LabelChecker.from_pretrained(tmp_path / "c").sentence_checker is None


def test_a_saved_checker_never_reads_a_sentence_checker_outside_its_folder(tmp_path):
    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    checker.save_pretrained(tmp_path / "c")
    elsewhere = LabelChecker(*tiny_classifier(("negative", "positive")))
    elsewhere.save_pretrained(tmp_path / "other")
    config_file = tmp_path / "c" / "cfaug_checker.json"
    for named in (str(tmp_path / "other"), "../other", "sentences"):
        config = json.loads(config_file.read_text())
        config["sentence_checker"] = named
        config_file.write_text(json.dumps(config))
        with pytest.raises(ComponentLoadError, match="names a sentence checker"):
            LabelChecker.from_pretrained(tmp_path / "c")


def test_a_sentence_checker_must_know_the_checkers_labels_and_be_a_checker():
    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    with pytest.raises(ValueError, match=r"knows the labels \['yes', 'no'\], not \['negative', 'positive'\]"):
        checker.sentence_checker = LabelChecker(*tiny_classifier(("yes", "no")))
    with pytest.raises(TypeError, match="sentence_checker must be a LabelChecker"):
        checker.sentence_checker = "sentences"
    with pytest.raises(ValueError, match="another LabelChecker"):
        checker.sentence_checker = checker


def test_default_is_none_for_a_task_with_no_shipped_checker():
    assert default_checker("token-classification") is None
    assert default_checker("relation-extraction") is None


# ------------------------------------------------------------------------------------- the shipped checkers
shipped = pytest.mark.skipif(not all((CHECKER_DIR / name).is_dir() for name in CHECKER_TASKS.values()),
                             reason="the shipped checkers are not built (scripts/build_checkers.py)")


@shipped
def test_every_shipped_checker_is_a_small_adapter_on_minilm_with_a_card():
    for task, name in CHECKER_TASKS.items():
        folder = CHECKER_DIR / name
        config = json.loads((folder / "cfaug_checker.json").read_text())
        assert config["adapter"] is True
        assert config["base_model"] == "sentence-transformers/all-MiniLM-L6-v2"
        assert config["training"]["task"] == task
        assert (folder / "adapter_model.safetensors").stat().st_size < 2_500_000
        assert "VitaminC" in (folder / "README.md").read_text() or task != "fact-verification"


@shipped
@pytest.mark.integration
@pytest.mark.shipped_checker
def test_augmenters_use_the_shipped_checker_by_default_and_none_turns_it_off(rule_rewriter, tmp_path):
    aug = CrossAugAugmenter(rule_rewriter)
    assert isinstance(aug.filters[0], LabelFlipFilter)
    assert aug.checker is default_checker("fact-verification")  # loaded once, shared
    assert set(aug.checker.label_names) >= {"SUPPORTS", "REFUTES"}
    off = CrossAugAugmenter(rule_rewriter, checker=None)
    assert off.checker is None and not any(isinstance(f, LabelFlipFilter) for f in off.filters)
    generator = Generator(*tiny_seq2seq())
    CrossAugAugmenter(generator, checker=None).save_pretrained(tmp_path / "off")
    assert CrossAugAugmenter.from_pretrained(tmp_path / "off").checker is None  # saved off stays off
    CrossAugAugmenter(generator).save_pretrained(tmp_path / "on")
    assert CrossAugAugmenter.from_pretrained(tmp_path / "on").checker.label_names == ("SUPPORTS", "REFUTES")

    llm = LLMCounterfactualAugmenter(lambda prompts: ["x"] * len(prompts))
    assert llm.checker is default_checker("sentiment-analysis")
    nli = LLMCounterfactualAugmenter(lambda prompts: ["x"] * len(prompts), TaskSchema.nli())
    assert nli.checker is default_checker("natural-language-inference")
    ner = LLMCounterfactualAugmenter(lambda prompts: ["x"] * len(prompts), TaskSchema.token_classification())
    assert ner.checker is None
    core = COREAugmenter(lambda prompts: ["x"] * len(prompts), mode="editor_only")
    assert core.checker is default_checker("sentiment-analysis")


@shipped
@pytest.mark.integration
@pytest.mark.shipped_checker
def test_the_default_checker_refuses_a_schema_whose_labels_it_does_not_know():
    with pytest.raises(ValueError, match="shipped for 'sentiment-analysis'.*checker=None"):
        LLMCounterfactualAugmenter(lambda prompts: ["x"] * len(prompts), TaskSchema.sentiment(label_names=("0", "1")))


@shipped
@pytest.mark.integration
@pytest.mark.shipped_checker
def test_the_shipped_claim_checker_rejects_most_same_meaning_rewrites_of_claims():
    rows = [json.loads(ln) for ln in FIXTURE.read_text().splitlines()]
    claims = [r for r in rows if r["task"] == "fact-verification"]
    checker = default_checker("fact-verification")
    flags, _ = LabelFlipFilter(checker).keep([_pair(r) for r in claims])
    # benchmarks/flip_checker.py has the exact figure; this guards against a checker that accepts everything.
    assert sum(not f for f in flags) >= 0.6 * len(claims)


def _pair(row):
    from cfaug_hf.filters import Pair

    cf = {"claim": row["rewrite"], "evidence": row["context"]}
    return Pair(source={"claim": row["original"], "evidence": row["context"]}, counterfactual=cf,
                label=row["intended_label"], original_label=row["original_label"], columns=("claim",),
                text_columns=("claim", "evidence"), group=0)


def test_the_same_meaning_fixture_is_well_formed():
    rows = [json.loads(ln) for ln in FIXTURE.read_text().splitlines()]
    assert len(rows) == 80 and len({r["id"] for r in rows}) == 80
    labels = {"fact-verification": {"SUPPORTS", "REFUTES"}, "sentiment-analysis": {"positive", "negative"},
              "natural-language-inference": {"entailment", "neutral", "contradiction"}}
    for r in rows:
        assert r["kind"] in {"synonym", "paraphrase", "inflection", "garbled"}, r["id"]
        assert r["rewrite"] != r["original"], r["id"]
        assert r["original_label"] != r["intended_label"], r["id"]
        assert {r["original_label"], r["intended_label"]} <= labels[r["task"]], r["id"]


def test_the_filter_uses_the_checkers_calibrated_threshold_unless_given_its_own(tmp_path):
    checker = LabelChecker(*tiny_classifier())
    pair = _pair({"rewrite": "the cat sat", "original": "the cat sat", "context": ["a mat"],
                  "intended_label": "REFUTES", "original_label": "SUPPORTS"})
    p = float(checker.predict_proba(["the cat sat"], [["a mat"]])[0, checker.label_id("REFUTES")])
    checker.config.accept_threshold = p - 0.01
    assert LabelFlipFilter(checker).keep([pair])[0] == [True]
    checker.config.accept_threshold = p + 0.01
    assert LabelFlipFilter(checker).keep([pair])[0] == [False]
    assert LabelFlipFilter(checker, threshold=p - 0.01).keep([pair])[0] == [True]  # the filter's own wins
    checker.save_pretrained(tmp_path / "c")
    assert LabelChecker.from_pretrained(tmp_path / "c").config.accept_threshold == pytest.approx(p + 0.01)
    with pytest.raises(ValueError, match="accept_threshold must be a probability in"):
        LabelChecker(*tiny_classifier(), accept_threshold=1.5)


@pytest.mark.integration
def test_a_new_checker_head_loads_without_transformers_load_report(capfd):
    from cfaug_hf.pretrained import MINILM

    checker = LabelChecker.from_base(MINILM, ["negative", "positive"])
    err = capfd.readouterr().err
    assert checker.label_names == ("negative", "positive")
    assert "LOAD REPORT" not in err and "MISSING" not in err
