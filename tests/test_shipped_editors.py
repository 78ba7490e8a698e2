"""The editors and the negative-claim generator shipped in the package: they load offline onto their PyPI base, carry
cards that say what they were trained on, and edit real text (integration tests with the real SmolLM2-135M)."""

from __future__ import annotations

import json

import pytest

from cfaug_hf import COREAugmenter, Editor, LabelChecker
from cfaug_hf.components.editor import EDITOR_DIR, EDITOR_TASKS
from cfaug_hf.data import CHECKER_DIR
from cfaug_hf.methods.crossaug.recipes import CLAIM_GENERATOR_DIR, default_claim_generator

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("folder", [*(EDITOR_DIR / t for t in EDITOR_TASKS), CLAIM_GENERATOR_DIR])
def test_shipped_folders_are_small_half_precision_adapters_with_cards(folder):
    from safetensors import safe_open

    config = json.loads(next(p for p in folder.glob("cfaug_*.json") if p.name != "cfaug_manifest.json").read_text())
    assert config["adapter"] and config["base_model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    weights = folder / "adapter_model.safetensors"
    assert weights.stat().st_size < 12_000_000
    with safe_open(str(weights), "pt") as f:
        assert {str(f.get_tensor(k).dtype) for k in f.keys()} == {"torch.float16"}
    card = (folder / "README.md").read_text()
    assert "built_by" in card or "scripts/build_editors.py" in card
    assert config["training"]["global_step"] > 0


@pytest.mark.parametrize("task", EDITOR_TASKS)
def test_shipped_editor_cards_state_their_training_data_and_measured_flip_rate(task):
    """A card states what the editor learned from, and under Evaluation the flip rates measured (by the picking
    checker and by an independent judge) and the hand reading."""
    card = (EDITOR_DIR / task / "README.md").read_text()
    training, evaluation = card.split("## Evaluation")
    assert "| data | CAD" in training
    evaluation = evaluation.split("## Configuration")[0]
    for figure in ("eval_held_out_quality", "eval_independent_judge", "eval_read_by_hand", '"flip_rate"',
                   "flip_rate_at_4_candidates", "of 50 correct"):
        assert figure in evaluation, figure


def test_the_shipped_nli_editor_learned_from_every_human_pair():
    """The benchmarks' quarter editors are measured; the package ships the one trained on all of CAD-SNLI train."""
    config = json.loads((EDITOR_DIR / "nli" / "cfaug_editor.json").read_text())["training"]
    assert "every training row" in config["data"] and config["train_rows"] == 3331
    assert config["eval_independent_judge"]["flip_rate_at_4_candidates"]["all"] > 50


def test_the_shipped_sentiment_editor_learned_from_every_human_pair():
    """The sentiment editor learned from every changed sentence of CAD IMDb train, and the figures its card states
    were measured on these very weights (loaded from the package's half-precision adapter)."""
    from pathlib import Path

    config = json.loads((EDITOR_DIR / "sentiment" / "cfaug_editor.json").read_text())["training"]
    assert "every training row" in config["data"] and config["train_rows"] == 9740
    judged = config["eval_independent_judge"]
    assert judged["flip_rate_at_4_candidates"]["all"] > 70 and judged["rows"] == 200
    quality = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "editors_quality.json"
    curve = json.loads(quality.read_text())["sentiment"]["curves"]["every pair"]
    assert curve["judge_flip_rate"]["4"] == judged["flip_rate_at_4_candidates"]
    assert curve["editor"]["weights"] == Editor.default("sentiment").weights_fingerprint()[:12]


def test_recording_an_editors_measured_quality_checks_the_weights(tmp_path, monkeypatch):
    """``build_editors --record LABEL --reading FILE`` writes a curve's figures and a hand reading into the card,
    only for the weights the curve was measured on (not by fingerprint: recording changes the card, and the
    fingerprint covers it)."""
    from cfaug_hf.testing import tiny_causal_lm
    from scripts import build_editors

    folder = tmp_path / "sentiment"
    Editor(*tiny_causal_lm(), num_return_sequences=4).save_pretrained(folder)
    editor = Editor.from_pretrained(folder)
    weights = editor.weights_fingerprint()[:12]
    curve = {"rows": 200, "judge": "a judge", "flip_rate": {"1": 40.0, "4": 62.0},
             "judge_flip_rate": {"human": {"all": 72.5}, "1": {"all": 38.0}, "4": {"all": 61.0}},
             "editor": {"fingerprint": editor.fingerprint()[:12], "weights": weights}}
    quality = tmp_path / "editors_quality.json"
    quality.write_text(json.dumps({"sentiment": {"curves": {"mine": curve, "other": {
        **curve, "editor": {"fingerprint": "f", "weights": "0" * 12}}}}}))
    monkeypatch.setattr(build_editors, "QUALITY", quality)
    reading = tmp_path / "reading.json"
    reading.write_text(json.dumps({"rows": 50, "mine": {"correct": [1, 2, 3], "garbled": [4]}}))
    build_editors.record("sentiment", folder, "mine", reading)
    again = Editor.from_pretrained(folder)
    assert again.weights_fingerprint()[:12] == weights and again.fingerprint() != editor.fingerprint()
    judged = again.training_info["eval_independent_judge"]
    assert judged["flip_rate_at_4_candidates"] == {"all": 61.0} and judged["picking_checker_at_4_candidates"] == 62.0
    assert again.training_info["eval_read_by_hand"].startswith("3 of 50 correct (garbled 1)")
    from cfaug_hf.sharing.cards import component_card

    evaluation = str(component_card(again, "sentiment")).split("## Evaluation")[1]
    assert "eval_independent_judge" in evaluation and "3 of 50 correct" in evaluation
    with pytest.raises(SystemExit, match="measured on weights 000000000000"):
        build_editors.record("sentiment", folder, "other", None)
    with pytest.raises(SystemExit, match="has no sentiment curve of that name .it has: mine, other"):
        build_editors.record("sentiment", folder, "missing", None)
    with pytest.raises(SystemExit, match="no verdicts under 'mine'"):
        reading.write_text(json.dumps({"rows": 50, "theirs": {"correct": []}}))
        build_editors.record("sentiment", folder, "mine", reading)


def test_shipped_sentiment_editor_flips_a_plain_sentence():
    editor = Editor.default("sentiment")
    assert editor.config.task == "sentiment" and "CAD IMDb" in editor.training_info["data"]
    checker = LabelChecker.from_pretrained(CHECKER_DIR / "sentiment")
    out = editor.edit(["The acting was terrible and the plot was boring."], ["positive"], seeds=[0])[0]
    assert out and "positive" in checker.predict(out)


def test_shipped_nli_editor_reads_the_premise():
    editor = Editor.default("nli")
    out = editor.edit(["A man is sleeping."], ["contradiction"], contexts=["A man is running in a park."],
                      seeds=[0])[0]
    assert out and all(o != "A man is sleeping." for o in out)


def test_default_editor_is_cores_and_each_caller_gets_its_own_settings():
    a, b = Editor.default("sentiment"), Editor.default("sentiment")
    a.config.num_return_sequences = 1
    assert b.config.num_return_sequences == 4 and a.model is b.model
    aug = COREAugmenter(mode="editor_only", checker=None)
    assert isinstance(aug.editor, Editor) and aug.editor.model is a.model


def test_shipped_claim_generator_negates_a_claim():
    generator = default_claim_generator()
    out = generator.generate(["Paris is the capital of France."])[0]
    assert len(out) == 5 and any(o and o != "Paris is the capital of France." for o in out)
