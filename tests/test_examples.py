"""Every example runs from a clean checkout, at a small size (examples/share_on_hub.py is run in test_hub.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfaug_hf import Generator
from cfaug_hf.testing import tiny_classifier, tiny_seq2seq

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str, cwd: Path) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_crossaug_train_classifier_compares_original_and_augmented(tmp_path):
    gen = Generator(*tiny_seq2seq(), num_beams=2, num_return_sequences=2, max_new_tokens=6)
    gen.save_pretrained(tmp_path / "gen")
    model, tok = tiny_classifier(("SUPPORTS", "REFUTES"))
    model.save_pretrained(tmp_path / "clf")
    tok.save_pretrained(tmp_path / "clf")
    out = run_example("crossaug_train_classifier.py", "--generator", str(tmp_path / "gen"), "--model",
                      str(tmp_path / "clf"), "--rows", "40", "--epochs", "1", "--max-length", "64", "--out",
                      str(tmp_path / "run"), cwd=tmp_path)
    assert "| training data | held-out | evidence hidden |" in out
    assert "| original |" in out and "| + CrossAug |" in out


@pytest.mark.integration
def test_icda_callback_example_runs_without_shared_data(tmp_path):
    out = run_example("icda_callback.py", "--docs", "40", "--epochs", "2", "--out", str(tmp_path / "icda"),
                      cwd=tmp_path)
    assert "epoch 2: trained on" in out and "rationale precision on the training reviews" in out
    assert (tmp_path / "icda" / "selector" / "cfaug_rationale.json").is_file()


def test_augment_callback_example_regenerates_each_epoch(tmp_path):
    Generator(*tiny_seq2seq(), num_beams=2, max_new_tokens=6).save_pretrained(tmp_path / "gen")
    model, tok = tiny_classifier(("SUPPORTS", "REFUTES"))
    model.save_pretrained(tmp_path / "clf")
    tok.save_pretrained(tmp_path / "clf")
    out = run_example("augment_callback.py", "--generator", str(tmp_path / "gen"), "--model", str(tmp_path / "clf"),
                      "--rows", "24", "--epochs", "2", "--mode", "hard", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert "epoch 1: trained on" in out and "epoch 2: trained on" in out
