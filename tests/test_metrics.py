"""Intrinsic metrics, bias diagnostics and the augmentation report on hand-made cases with known answers."""

import json
import math

import numpy as np
import pytest
import torch
from datasets import Dataset

from cfaug_hf import CrossAugAugmenter, LabelChecker, TaskSchema, metrics
from cfaug_hf.cli import main as cli_main
from cfaug_hf.diagnostics import claim_only_probe, competency_test
from cfaug_hf.metrics import intrinsic
from cfaug_hf.report import augmentation_report, counterfactual_pairs
from cfaug_hf.testing import NegateAugmenter, tiny_causal_lm, tiny_classifier, tiny_encoder


@pytest.fixture(scope="module")
def embedder():
    return intrinsic.TextEmbedder(tiny_encoder())


# ------------------------------------------------------------------------------------------------ metrics
def test_flip_rate_and_length_mismatch():
    assert metrics.flip_rate(["a", "B", "b"], ["A", "b", "a"])["flip_rate"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="predictions has 1 items but targets has 2"):
        metrics.flip_rate(["a"], ["a", "b"])


def test_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    model, tok = tiny_causal_lm()
    with torch.no_grad():
        model.lm_head.weight.zero_()
    out = metrics.perplexity(["the cat sat on the mat", "a dog"], (model, tok))
    assert out["perplexity"] == pytest.approx(len(tok), rel=1e-4)
    assert len(out["perplexities"]) == 2
    with pytest.raises(ValueError, match="text 1 is ''"):
        metrics.perplexity(["ok", ""], (model, tok))


def test_emd_on_a_known_transport():
    cost = np.array([[0.0, 1.0]])
    assert intrinsic._emd(np.array([1.0]), np.array([0.5, 0.5]), cost) == pytest.approx(0.5)
    cost = np.array([[0.0, 2.0], [2.0, 0.0]])
    assert intrinsic._emd(np.array([0.5, 0.5]), np.array([0.5, 0.5]), cost) == pytest.approx(0.0)


def test_mover_score_is_one_for_identical_texts_and_lower_otherwise(embedder):
    out = metrics.mover_score(["the cat sat on the mat", "the cat sat on the mat"],
                              ["the cat sat on the mat", "paris is a city in france"], embedder)
    assert out["scores"][0] == pytest.approx(1.0, abs=1e-6)
    assert out["scores"][1] < 0.9


def test_bleu_and_edit_distance():
    same = metrics.bleu_diversity(["the film was good"], ["the film was good"])
    assert same["self_bleu"] == pytest.approx(100) and same["inverse_bleu"] == pytest.approx(0)
    diff = metrics.bleu_diversity(["a dog ran in paris"], ["the film was good"])
    assert diff["inverse_bleu"] > 90
    assert metrics.edit_distance(["a b c d"], ["a x c d"])["edit_distance"] == 0.25
    assert metrics.edit_distance(["abc"], ["abd"], level="char")["edit_distance"] == pytest.approx(1 / 3)
    assert metrics.edit_distance(["x"], ["x"])["edit_distance"] == 0
    with pytest.raises(ValueError, match="level must be"):
        metrics.edit_distance(["a"], ["b"], level="byte")


def test_multihop_coherence(embedder):
    out = metrics.multihop_coherence(["the cat sat on the mat"], [["the cat sat on the mat", "the cat sat"]],
                                     embedder)
    assert out["scores"][0] <= 1.0 + 1e-6 and out["scores"][0] > 0.5
    single = metrics.multihop_coherence(["the cat sat on the mat"], ["the cat sat on the mat"], embedder)
    assert single["multihop_coherence"] == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="evidence 0"):
        metrics.multihop_coherence(["a"], [[]], embedder)


@pytest.mark.parametrize("before,after,kind", [
    ("The film is good.", "The film is not good.", "negation"),
    ("He didn't win.", "He won.", "negation"),
    ("Three people came.", "Many people came.", "quantifier"),
    ("It lasted 30 days.", "It lasted 10 days.", "quantifier"),
    ("The food was tasty.", "The food was bland.", "lexical"),
    ("She sang in Paris.", "She sang loudly in Paris.", "insertion"),
    ("She sang loudly in Paris.", "She sang in Paris.", "deletion"),
    ("The dog chased the cat.", "The cat chased the dog.", "restructure"),
    ("He was born in a small town in Ohio.", "He grew up writing novels about the sea.", "resemantic"),
    ("Same text.", "Same text!", "unchanged"),
])
def test_perturbation_types(before, after, kind):
    assert metrics.perturbation_type(before, after) == kind


def test_every_shipped_module_loads_offline_with_evaluate(embedder):
    assert set(metrics.MODULES) == {"flip_rate", "perplexity", "mover_score", "bleu_diversity", "edit_distance",
                                    "multihop_coherence", "perturbation_types"}
    assert metrics.load("flip_rate").compute(predictions=["A"], references=["a"])["flip_rate"] == 1.0
    bleu = metrics.load("bleu_diversity").compute(predictions=["x y z w v"], references=["x y z w v"])
    assert bleu["self_bleu"] == pytest.approx(100)
    counts = metrics.load("perturbation_types").compute(predictions=["it is not good"], references=["it is good"])
    assert counts["counts"]["negation"] == 1
    score = metrics.load("mover_score").compute(predictions=["the cat"], references=["the cat"], embedder=embedder)
    assert score["mover_score"] == pytest.approx(1.0, abs=1e-6)
    coherence = metrics.load("multihop_coherence").compute(predictions=["the cat"], references=[["the cat"]],
                                                           embedder=embedder)
    assert coherence["multihop_coherence"] == pytest.approx(1.0, abs=1e-5)
    ppl = metrics.load("perplexity").compute(predictions=["the cat"], model=tiny_causal_lm())
    assert ppl["perplexity"] > 1
    with pytest.raises(ValueError, match="Unknown cfaug metric 'bleu'"):
        metrics.load("bleu")


# -------------------------------------------------------------------------------------------- diagnostics
def planted(n=120, seed=0):
    """'never' appears only with negative labels; other words are spread evenly."""
    rng = np.random.default_rng(seed)
    words = "the a film movie plot actor music scene story ending".split()
    texts, labels = [], []
    for i in range(n):
        label = "positive" if i % 2 else "negative"
        body = " ".join(rng.choice(words, 5))
        texts.append(f"{body} never {body}" if label == "negative" and i % 4 == 0 else body)
        labels.append(label)
    return Dataset.from_dict({"text": texts, "label": labels})


def test_competency_flags_a_planted_token_and_not_after_balancing(tmp_path):
    schema = TaskSchema.sentiment()
    data = planted()
    result = competency_test(data, schema)
    assert [t["token"] for t in result.significant] == ["never"]
    assert result.significant[0]["label"] == "negative" and result.significant[0]["p"] == 1.0
    assert result.summary()["significant"] == 1
    # Balance: every 'never' row gets a positive twin, as a counterfactual augmentation would add.
    twins = data.filter(lambda r: "never" in r["text"]).map(lambda r: {"label": "positive"})
    from datasets import concatenate_datasets
    balanced = competency_test(concatenate_datasets([data, twins]), schema)
    assert balanced.significant == []
    png = result.plot(tmp_path / "c.png", label="negative")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="unknown label 'neutral'"):
        result.plot(tmp_path / "x.png", label="neutral")


def test_competency_errors_and_label_ids():
    schema = TaskSchema.sentiment()
    with pytest.raises(ValueError, match="Column 'review' is not in the dataset"):
        competency_test(planted(), schema, columns=["review"])
    ids = planted().map(lambda r: {"label": 0 if r["label"] == "negative" else 1})
    assert [t["token"] for t in competency_test(ids, schema).significant] == ["never"]
    with pytest.raises(ValueError, match="alpha"):
        competency_test(planted(), schema, alpha=2)


def test_probe_finds_the_shortcut_and_loses_it_after_balancing():
    schema = TaskSchema.sentiment()
    data = Dataset.from_dict({"text": ["great fun"] * 20 + ["dull plot"] * 20,
                              "label": ["positive"] * 20 + ["negative"] * 20})
    before = claim_only_probe(data, schema)
    assert before.accuracy == 1.0 and before.gain == 0.5
    swapped = Dataset.from_dict({"text": ["great fun"] * 20 + ["dull plot"] * 20,
                                 "label": ["negative"] * 20 + ["positive"] * 20})
    from datasets import concatenate_datasets
    after = claim_only_probe(concatenate_datasets([data, swapped]), schema)
    assert after.accuracy <= 0.5 + 1e-9
    with pytest.raises(ValueError, match="at least two labels"):
        claim_only_probe(Dataset.from_dict({"text": ["a", "b"], "label": ["positive"] * 2}), schema)


# ---------------------------------------------------------------------------------------------- report
def test_report_on_crossaug_output(fever_rows, rule_rewriter, tmp_path, embedder):
    schema = TaskSchema.fact_verification(id_column="id")
    original = Dataset.from_dict(fever_rows)
    augmented = original.map(CrossAugAugmenter(rule_rewriter, schema), batched=True)
    pairs = counterfactual_pairs(original, augmented, schema)
    assert {p["counterfactual"]["cf_kind"] for p in pairs} == {"c'+e", "c+e'", "c'+e'"}
    checker = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")))
    report = augmentation_report(original, augmented, schema, checker=checker, fluency_model=tiny_causal_lm(),
                                 embedder=embedder, out_dir=tmp_path, min_count=1)
    assert report.counts["rows_in"] == 5 and report.counts["kinds"]["c'+e"] == 3
    assert report.counts["skipped"]["skipped:same_claim"] == 1
    # r0 and r3 give three counterfactuals each (two REFUTES, one SUPPORTS), r1 one (REFUTES)
    assert report.counts["labels_after"]["REFUTES"] == report.counts["labels_before"]["REFUTES"] + 5
    claim = report.metrics["claim"]
    assert claim["pairs"] == 5 and claim["perturbation_types"]["counts"]["negation"] == 1
    assert report.metrics["evidence"]["pairs"] == 4
    assert 0 < claim["similarity"]["mover_score"] <= 1 and claim["fluency"]["perplexity"] > 1
    assert "multihop_coherence" in claim and "multihop_coherence" not in report.metrics["evidence"]
    assert 0 <= report.metrics["label"]["flip_rate"]["flip_rate"] <= 1
    assert report.diagnostics["competency"]["columns"] == ["claim"]
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["counts"]["counterfactuals"] == 7 and "distances" not in saved["metrics"]["claim"]["edit_distance"]
    md = (tmp_path / "report.md").read_text()
    for needle in ["## Augmentation report", "| c'+e | 3 |", "| claim | mover_score |", "Shortcut tokens"]:
        assert needle in md, needle
    assert (tmp_path / "competency_before.png").is_file() and (tmp_path / "competency_after.png").is_file()
    # the plots it writes are embedded, and the skip table counts events, not rows
    assert "![competency_before](competency_before.png)" in md and "![competency_after](competency_after.png)" in md
    assert "| skip or filter reason | events |" in md and "| skip or filter reason | rows |" not in md


def test_report_prints_the_judges_flip_rate_with_its_ceiling(tmp_path):
    schema = TaskSchema.sentiment()
    original = Dataset.from_dict({"text": ["the film was good", "the film was bad"] * 4,
                                  "label": ["positive", "negative"] * 4})
    augmented = original.map(NegateAugmenter(schema), batched=True)
    judge = LabelChecker(*tiny_classifier(("negative", "positive")))
    report = augmentation_report(original, augmented, schema, checker=judge, fluency_model=None, embedder=None)
    assert "judge_ceiling" not in report.metrics["label"]
    assert "records no ceiling" in report.to_markdown()
    judge.training_info = {"eval_ceiling": {"dev": {"originals": 90.0, "human_counterfactuals": 86.5, "rows": 245}}}
    report = augmentation_report(original, augmented, schema, checker=judge, fluency_model=None, embedder=None)
    label = report.metrics["label"]
    assert label["judge_ceiling"] == 86.5 and label["judge_ceiling_on"] == "dev human counterfactuals (245 rows)"
    n = label["flip_rate"]["n"]
    assert f"of {n}; its ceiling, the share of dev human counterfactuals (245 rows) it gives their new label: " \
           f"86.5%" in report.to_markdown()


def test_report_needs_provenance_and_cli(tmp_path, capsys):
    schema = TaskSchema.sentiment()
    original = Dataset.from_dict({"text": ["the film was good", "the film was bad", "a dog"] * 8,
                                  "label": ["positive", "negative", "positive"] * 8})
    with pytest.raises(Exception, match="provenance columns"):
        augmentation_report(original, original, schema, fluency_model=None, embedder=None)
    augmented = original.map(NegateAugmenter(schema), batched=True)
    original.to_json(tmp_path / "orig.jsonl")
    augmented.save_to_disk(tmp_path / "aug")
    cli_main(["report", str(tmp_path / "orig.jsonl"), str(tmp_path / "aug"), "--task", "sentiment",
              "--no-models", "--out", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "24 rows in, 40 out: 16 counterfactuals."
    assert "Most common skips: skipped:no_verb (8)." in out and "report.md" in out and len(out.splitlines()) < 8
    cli_main(["report", str(tmp_path / "orig.jsonl"), str(tmp_path / "aug"), "--task", "sentiment",
              "--no-models", "--out", str(tmp_path / "rep"), "--full"])
    out = capsys.readouterr().out
    assert "| skipped:no_verb | 8 |" in out and "| text | edit_distance |" in out
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert data["counts"]["counterfactuals"] == 16 and not math.isnan(data["metrics"]["text"]["bleu"]["self_bleu"])


# The transport LP behind MoverScore: very uneven IDF weights once made HiGHS call it infeasible, which failed a
# whole RACE batch (its fidelity pick scores candidates with MoverScore). The family: any non-negative weights.
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

weights = st.lists(st.floats(min_value=0.0, max_value=1.0) | st.sampled_from([1e-20, 1e-12, 1e-6, 0.0]),
                   min_size=1, max_size=24).filter(lambda w: sum(w) > 0)


@settings(max_examples=150, deadline=None)
@given(weights, weights, st.integers(0, 2**32 - 1))
def test_emd_is_solved_for_any_weights_and_stays_within_the_cost_range(a, b, seed):
    cost = np.random.default_rng(seed).random((len(a), len(b)))
    value = intrinsic._emd(a, b, cost)
    assert cost.min() - 1e-6 <= value <= cost.max() + 1e-6  # HiGHS solves to a 1e-7 tolerance


def test_emd_of_a_distribution_with_itself_is_zero_and_point_masses_are_exact():
    w = np.array([0.5, 1e-15, 0.25, 0.25])
    cost = np.random.default_rng(0).random((4, 4))
    np.fill_diagonal(cost, 0.0)
    assert intrinsic._emd(w, w, cost) == pytest.approx(0.0, abs=1e-9)
    assert intrinsic._emd([1.0], [0.5, 0.5], np.array([[0.2, 0.4]])) == pytest.approx(0.3)
