"""The OpenAI-compatible client against a real server: ``transformers serve`` on 127.0.0.1 with the embedded
SmolLM2-135M-Instruct, started by this module (about 10 s), so the ``openai`` SDK path is exercised end to end:
chat and plain completions, per-row seeds, the LLM augmenter and CORE writing counterfactuals through it.

The fault-injection tests (``test_hardening.py``, ``test_secrets.py``) cover what a real server does not do on
purpose; vLLM's server is exercised by ``benchmarks/served_llm.py`` in ``.venv-vllm``.
"""

from __future__ import annotations

import pytest
from datasets import Dataset

from cfaug_hf import COREAugmenter, LLMCounterfactualAugmenter, OpenAICompatibleLLM, TaskSchema
from cfaug_hf.generation.local_server import serve_locally
from cfaug_hf.pretrained import SMOLLM2, local_copy, resolve_model

pytestmark = pytest.mark.integration

ROWS = Dataset.from_dict({"text": ["The acting was wonderful and the story moved me to tears.",
                                   "A boring, predictable film with terrible dialogue.",
                                   "I loved every minute of this charming comedy.",
                                   "The worst movie I have seen this year; the plot made no sense."],
                          "label": ["positive", "negative", "positive", "negative"]})


@pytest.fixture(scope="module")
def served():
    model = local_copy(resolve_model(SMOLLM2)).path
    with serve_locally(model, server="transformers") as url:
        yield url, model


def client(served, **kw):
    url, model = served
    return OpenAICompatibleLLM(base_url=url, model=model, api_key_env=None, max_tokens=kw.pop("max_tokens", 60), **kw)


def test_answers_depend_on_the_row_and_its_seed_not_on_the_batch(served):
    llm = client(served)
    prompts = ["Rewrite this review so that it is negative: I loved this film, the acting was great.",
               "Rewrite this review so that it is positive: The plot was dull and the jokes fell flat."]
    first = llm.generate_with_info(prompts * 2, seeds=[1, 2, 1, 2])
    assert first.errors == [None] * 4 and all(len(t) == 1 and t[0] for t in first.texts)
    assert first.texts[:2] == first.texts[2:]
    alone = [llm.generate([p], seeds=[s])[0] for p, s in zip(prompts[::-1], [2, 1])]
    assert alone == first.texts[:2][::-1]
    # One request a row and call; a server slowed past timeout_s by a loaded machine is retried (same seed, same
    # answer), which counts as a request too (a CI run once took 7 for that reason).
    assert llm.stats["requests"] - llm.stats["retries"] == 6 and llm.stats["errors"] == 0


def test_a_server_that_cannot_start_is_an_error_with_its_log(tmp_path):
    with pytest.raises(RuntimeError, match="exited with code"), serve_locally(tmp_path / "no-model", timeout_s=60):
        pass
    with pytest.raises(ValueError, match="server must be one of transformers, vllm"), serve_locally("m", server="tgi"):
        pass


def test_plain_completions_through_the_sdk(served):
    result = client(served, chat=False, max_tokens=12).generate_with_info(["The movie was"], seeds=[5])
    assert result.errors == [None] and result.texts[0][0]


def test_the_llm_augmenter_and_core_write_counterfactuals_through_a_served_llm(served, tmp_path):
    flipped = {"positive": "negative", "negative": "positive"}
    for aug in (LLMCounterfactualAugmenter(client(served, cache_dir=str(tmp_path / "cache")), TaskSchema.sentiment()),
                COREAugmenter(client(served), mode="editor_only")):
        out = aug.augment(ROWS, load_from_cache_file=False)
        stats = aug.stats
        assert stats.rows_in == 4 and "llm_error" not in stats.skipped, stats
        assert sum(stats.produced.values()) + sum(stats.skipped.values()) >= 4  # every row accounted for
        written = [(r["text"], r["label"], r["cf_original_label"]) for r in out if r["cf_is_counterfactual"]]
        assert len(written) == sum(stats.produced.values())
        for text, label, original in written:
            assert text not in ROWS["text"] and label == flipped[original]
        if isinstance(aug, COREAugmenter):
            assert written, "CORE wrote no counterfactual through the served LLM"
