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
    card = (EDITOR_DIR / task / "README.md").read_text()
    assert "| data | CAD" in card and "held_out_quality" in card and '"flip_rate"' in card


def test_the_shipped_nli_editor_learned_from_every_human_pair():
    """The benchmarks' quarter editors are measured; the package ships the one trained on all of CAD-SNLI train."""
    config = json.loads((EDITOR_DIR / "nli" / "cfaug_editor.json").read_text())["training"]
    assert "every training row" in config["data"] and config["train_rows"] == 3331
    assert config["independent_judge"]["flip_rate_at_4_candidates"]["all"] > 50


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
